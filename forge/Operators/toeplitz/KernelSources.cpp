// The sources of ToeplitzNormal's basis kernels q(d) = sum_j b_j exp(+i 2 pi k_j . d) on the padded grid's offsets
// d = m / N (m = -N .. N-1 per axis): the cost rule that picks the exact DFT or the NUFFT, and the NUFFT itself.
//
// The NUFFT: Gnufft's adjoint on the padded grid of N' = 2N cells per axis computes
//   sum_j b_j exp(+i 2 pi k'_j . r'),   r' = (x' - N'/2) / N',  x' = 0 .. N'-1,  k' in [-N'/2, N'/2],
// so with k' = 2k: k' r' = k (x' - N) / N, i.e. cell x' holds the offset m = x' - N (the centred order), and the
// circular order the apply reads has it at cell (x' + N) mod 2N. The kernel is needed only at integer m, where
// exp(+i 2 pi k m / N) is periodic in k with period N: samples outside [-N/2, N/2] are wrapped into it exactly.
#include "forge/Operators/toeplitz/detail/KernelSources.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/detail/FixedOrderProduct.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"
#include "forge/Operators/toeplitz/detail/AxisGroups.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"

namespace forge {
namespace toeplitz {

namespace {

constexpr double kNufftTolFloat = 1e-6, kNufftTolDouble = 1e-9;
// Auto takes a double NUFFT only when the exact build is estimated this many times more expensive: double users
// get exact kernels unless that costs an order of magnitude more time.
constexpr double kDoubleNufftFactor = 10;

// Seconds per unit of work of each part of a build: the cost rule's constants (ToeplitzNormal.h, "Kernel
// sources", gives the measurements they come from). Only their ratios decide, except for 'floor'.
struct CostModel {
    double phase;   // exact: one sample at one cell (its phase, shared by the batch of basis kernels)
    double mac;     // exact: one sample at one cell for one basis kernel
    double group;   // exact, grouped: fixed cost per group (its own adjoint)
    double expand;  // exact, grouped: per group, cell and basis kernel of the expansion along the axis
    double fft;     // NUFFT: per oversampled grid cell and basis kernel, times log2 of the grid's cells
    double tap;     // NUFFT: per sample, kernel tap and basis kernel (spreading)
    double sample;  // NUFFT: per sample, once (sorting the points for gridding)
    double plan;    // NUFFT: once (FFT plans, kernel polynomials)
    double floor;   // exact builds estimated under this many seconds are kept whatever the NUFFT's cost
};

// Host, float and double: 2 threads of the development machine's AMD EPYC (bench_toeplitz_build and single
// builds of 2D and 3D grids, 1 to 28 basis kernels). The double floor keeps exact kernels (rounding-level
// accuracy) wherever they are affordable.
constexpr CostModel kHostFloat{2.2e-9, 0.8e-9, 1e-3, 1e-9, 6e-9, 2e-9, 1e-7, 2e-2, 0.25};
constexpr CostModel kHostDouble{4e-9, 3.5e-9, 1e-3, 2e-9, 8e-9, 3e-9, 1e-7, 2e-2, 2.0};
// GPU (float): an H100. Exact builds fitted to measurements there (3D radial 64^3 / 512k and 96^3 / 1.5M samples,
// full DFTs: 1.8 s and 14.3 s; the stack of spirals 128x128x32 grouped along kz: 0.089 s of DFTs for 13 basis
// kernels, about 2 ms per group); the NUFFT from the H100's memory bandwidth (the grid's FFT and spreading) and the
// plan's sorting. (A fixed 0.12 s per NUFFT build, tried, kept forge-recon's 2D field-corrected slices on exact
// kernels, 0.4 s a slice against 0.23 s by NUFFT on an H100; the NUFFT's fixed cost there varied from 0.02 to 0.2 s.)
constexpr CostModel kDevice{7e-13, 1.5e-13, 2e-3, 2e-12, 4e-12, 2e-12, 5e-8, 2e-2, 0.02};

const CostModel& cost_model(const BuildShape& s) { return s.device ? kDevice : s.single ? kHostFloat : kHostDouble; }

// Index along one axis of the circular order (offset m at cell m mod P) of centred cell x (offset x - N).
inline uword circular_cell(uword x, uword N, uword P) { return P > 1 ? (x + N) % P : 0; }

// k' = 2 k on an axis of the padded grid, k wrapped into [-N/2, N/2] first (exact for the kernel's integer
// offsets); 0 on axes of one cell (Gnufft ignores them).
template <typename T1>
arma::Col<T1> nufft_coordinate(const arma::Col<T1>& k, uword N, uword P) {
    arma::Col<T1> out(k.n_elem, arma::fill::zeros);
    if (P < 2) return out;
    const double half = double(N) / 2;
    for (uword j = 0; j < k.n_elem; ++j) {
        double v = double(k[j]);
        if (v < -half || v > half) v -= double(N) * std::round(v / double(N));
        out[j] = T1(2 * std::min(half, std::max(-half, v)));
    }
    return out;
}

}  // namespace

double nufft_kernel_tolerance(bool single) { return single ? kNufftTolFloat : kNufftTolDouble; }

SourceCost estimate_source_cost(const BuildShape& s) {
    const CostModel& c = cost_model(s);
    SourceCost r;
    const double nb = double(s.nb), n1 = double(s.n1);
    const double cells = double(s.P[0]) * double(s.P[1]) * double(s.P[2]);
    const double perTerm = c.phase + nb * c.mac;
    if (s.groups > 0) {
        r.exact = n1 * double(s.slab) * perTerm + double(s.groups) * (c.group + nb * cells * c.expand);
    } else {
        r.exact = n1 * cells * perTerm;
    }
    const uword W = NufftOptions::width_for_tolerance(nufft_kernel_tolerance(s.single), s.single);
    int dims = 0;
    double grid = 1;
    for (int a = 0; a < 3; ++a) {
        if (s.P[a] < 2) continue;
        ++dims;
        grid *= 2.0 * double(s.P[a]);  // Gnufft's oversampling 2 of the padded grid
        if (2 * s.P[a] < W) {
            std::ostringstream m;
            m << "the padded grid's axis "
              << "xyz"[a] << " has " << s.P[a] << " cells (" << 2 * s.P[a]
              << " on the NUFFT's oversampled grid), fewer than the NUFFT's kernel of " << W << " cells";
            r.why_not = m.str();
        }
    }
    if (dims < 2) r.why_not = "the NUFFT needs at least two axes longer than 1 (a 2D or 3D grid)";
    if (!r.why_not.empty()) return r;
    const double taps = std::pow(double(W), dims);
    r.nufft = nb * (grid * c.fft * std::log2(grid) + n1 * taps * c.tap) + n1 * c.sample + c.plan;
    // By slabs across a Cartesian axis: per group a 2D NUFFT of the slab (oversampled 2x), then the expansion
    // along the axis; the groups share one plan when their in-plane samples are the same, else each group moves
    // the plan to its samples (set_points: a group's fixed cost).
    if (s.groups > 0 && s.axis < 3) {
        double slab = 1;
        bool two = true;
        for (int a = 0; a < 3; ++a) {
            if (a == s.axis) continue;
            two = two && s.P[a] >= 2 && 2 * s.P[a] >= W;
            slab *= 2.0 * double(s.P[a]);
        }
        if (two) {
            const double G = double(s.groups);
            const double bySlabs =
                nb * (G * slab * c.fft * std::log2(slab) + n1 * double(W * W) * c.tap + G * cells * c.expand) +
                n1 * c.sample + c.plan + (s.slab_shared ? 0 : G * c.group);
            if (bySlabs < r.nufft) {
                r.nufft = bySlabs;
                r.nufft_by_slabs = true;
            }
        }
    }
    return r;
}

KernelSource choose_kernel_source(KernelSource requested, const BuildShape& s) {
    if (requested == KernelSource::Exact) return KernelSource::Exact;
    const SourceCost cost = estimate_source_cost(s);
    if (requested == KernelSource::Nufft) {
        if (cost.nufft < 0) {
            throw invalid_argument(std::string(kName) + ": options.source = KernelSource::Nufft, but " + cost.why_not +
                                   "; use KernelSource::Exact or Auto");
        }
        return KernelSource::Nufft;
    }
    if (cost.nufft < 0) return KernelSource::Exact;
    const CostModel& c = cost_model(s);
    const double factor = s.single ? 1.0 : kDoubleNufftFactor;
    return cost.exact > c.floor && cost.exact > factor * cost.nufft ? KernelSource::Nufft : KernelSource::Exact;
}

template <typename T1>
forgeCol<forgeComplex<T1>> host_basis_nufft(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                            const arma::Col<T1>& kz, const uword* N, const uword* P,
                                            const std::function<void()>& vectorDone) {
    using C = std::complex<T1>;
    const uword n1 = B.n_rows, nb = B.n_cols, cells = P[0] * P[1] * P[2];
    NufftOptions o;
    o.tolerance = nufft_kernel_tolerance(std::is_same<T1, float>::value);
    const Gnufft<T1> G(n1, P[0], P[1], P[2], nufft_coordinate(kx, N[0], P[0]), nufft_coordinate(ky, N[1], P[1]),
                       nufft_coordinate(kz, N[2], P[2]), o);
    forgeCol<forgeComplex<T1>> basis(cells * nb), data(n1), image(cells);
    C* out = reinterpret_cast<C*>(basis.memptr());
    const C* img = reinterpret_cast<const C*>(image.memptr());
    for (uword r = 0; r < nb; ++r) {
        C* d = reinterpret_cast<C*>(data.memptr());
        for (uword j = 0; j < n1; ++j) d[j] = C(B(j, r));
        G.apply(data.memptr(), image.memptr(), 1, false, Residency::Host);
        C* q = out + cells * r;
        const long long rows = static_cast<long long>(P[1] * P[2]);
#pragma omp parallel for if (cells >= (1 << 16))
        for (long long yz = 0; yz < rows; ++yz) {
            const uword y = uword(yz) % P[1], z = uword(yz) / P[1];
            const uword cy = circular_cell(y, N[1], P[1]), cz = circular_cell(z, N[2], P[2]);
            const C* src = img + P[0] * uword(yz);
            C* dst = q + P[0] * (cy + P[1] * cz);
            for (uword x = 0; x < P[0]; ++x) dst[circular_cell(x, N[0], P[0])] = src[x];
        }
        vectorDone();
    }
    return basis;
}

template <typename T1>
forgeCol<forgeComplex<T1>> slab_basis_nufft(const PairData& B, const arma::Col<T1>* const k[3], const AxisGroups& grp,
                                            const uword* N, const uword* P, bool device) {
    using FC = forgeCol<forgeComplex<T1>>;
    using C = std::complex<T1>;
    const int a = grp.axis, s0 = a == 0 ? 1 : 0, s1 = a == 2 ? 1 : 2;  // the slab's axes, faster first
    const uword G = grp.count(), nb = B.n_basis(), M = grp.slab(), lo = grp.lo, hi = grp.hi, Pa = grp.Pa;
    const uword n1 = grp.order.size(), T = B.rows.n_rows;
    const auto coordinate = [&](uword g, int axis) {
        return nufft_coordinate(rows_of(*k[axis], grp.rows(g), grp.size(g)), N[axis], P[axis]);
    };
    const bool shared = slab_samples_shared(k, grp);
    NufftOptions o;
    o.tolerance = nufft_kernel_tolerance(std::is_same<T1, float>::value);
    Gnufft<T1> slab(grp.size(0), P[s0], P[s1], 1, coordinate(0, s0), coordinate(0, s1),
                    arma::Col<T1>(grp.size(0), arma::fill::zeros), o);
    if (device && !slab.gpu_enabled()) return {};
    const Residency where = device ? Residency::Device : Residency::Host;
    // The NUFFT's input, column (g nb + r) of a call: B's column r on group g's samples. B's distinct rows, and
    // each sample's row and scale in the groups' order, go to the GPU (a few MB, where B itself is n1 x nb);
    // the columns are gathered there.
    std::vector<unsigned> rowOf(device ? n1 : 0);
    arma::Col<T1> scaleOf(device ? n1 : 0);
    for (uword q = 0; q < rowOf.size(); ++q) {
        const uword j = grp.order[q];
        rowOf[q] = unsigned(B.of[j]);
        scaleOf[q] = T1(B.scale[j]);
    }
    FC rowsD;
    DeviceBuffer rowD, scaleD;
    if (device) {
        rowsD = FC(arma::conv_to<arma::Col<C>>::from(arma::vectorise(B.rows)));
        rowsD.put_on_gpu();
        rowD = DeviceBuffer(n1 * sizeof(unsigned));
        scaleD = DeviceBuffer(n1 * sizeof(T1));
        device::copy_to_device(rowD.get(), rowOf.data(), n1 * sizeof(unsigned));
        device::copy_to_device(scaleD.get(), scaleOf.memptr(), n1 * sizeof(T1));
    }
    // Q: slab g of basis kernel r at (g nb + r) M, the slab's cells in Gnufft's image order (s0 fastest), which is
    // the grid's order of the slab's cells (i + lo h).
    FC Q = device ? FC::device_uninitialized(M * nb * G) : FC(M * nb * G);
    // Groups per adjoint: their oversampled grids within about 1 GiB.
    const double gridBytes = double(slab.grid_elems()) * double(sizeof(C)) * double(nb);
    const uword perCall = shared ? std::max<uword>(1, std::min<uword>(G, uword(double(1ull << 30) / gridBytes))) : 1;
    for (uword g0 = 0; g0 < G; g0 += perCall) {
        const uword ng = std::min(perCall, G - g0), n = grp.size(g0), first = grp.start[g0];
        if (!shared && g0 > 0)
            slab.set_points(coordinate(g0, s0), coordinate(g0, s1), arma::Col<T1>(n, arma::fill::zeros));
        FC data = device ? FC::device_uninitialized(n * nb * ng) : FC(n * nb * ng);
        if (device) {
            cuda::toeplitz_gather_rows<T1>(rowsD.device_memptr(), T, rowD.as<unsigned>() + first,
                                           scaleD.as<T1>() + first, n, ng, nb, data.device_memptr());
        } else {
            C* d = reinterpret_cast<C*>(data.memptr());
            const long long columns = static_cast<long long>(ng * nb);
#pragma omp parallel for if (n * ng * nb >= (1 << 16))
            for (long long col = 0; col < columns; ++col) {
                const uword g = g0 + uword(col) / nb, r = uword(col) % nb;
                const uword* rows = grp.rows(g);
                const std::complex<double>* b = B.rows.colptr(r);
                C* out = d + n * uword(col);
                for (uword i = 0; i < n; ++i) out[i] = C(B.scale[rows[i]] * b[B.of[rows[i]]]);
            }
        }
        slab.apply(data.data_ptr(), Q.data_ptr() + M * nb * g0, nb * ng, false, where);
    }
    // The expansion along the axis: basis(i + lo d + lo Pa h, r) = sum_g E(d, g) Q(i + lo h, g, r).
    const arma::cx_mat E = axis_phases(grp, N[a], true);
    FC basis = device ? FC::device_uninitialized(M * Pa * nb) : FC(M * Pa * nb);
    if (device) {
        FC Ed(arma::conv_to<arma::Col<C>>::from(arma::vectorise(E)));
        Ed.put_on_gpu();
        cuda::toeplitz_expand_axis<T1>(Q.device_memptr(), Ed.device_memptr(), basis.device_memptr(), lo, Pa, hi, G, nb);
        device::synchronize();  // the plan's stream and Ed done before they go
        return basis;
    }
    const arma::Mat<C> Et = arma::conv_to<arma::Mat<C>>::from(E).st();
    const C* q = reinterpret_cast<const C*>(Q.memptr());
    C* out = reinterpret_cast<C*>(basis.memptr());
    for (uword r = 0; r < nb; ++r) {
        arma::Mat<C> Qr(M, G);
        for (uword g = 0; g < G; ++g) std::copy(q + M * (g * nb + r), q + M * (g * nb + r + 1), Qr.colptr(g));
        C* o = out + M * Pa * r;
        if (hi == 1) {  // the axis is the slowest: the product is the kernel's block
            arma::Mat<C> block(o, M, Pa, false, true);
            block = detail::fixed_order_product(Qr, Et);
            continue;
        }
        const arma::Mat<C> R = detail::fixed_order_product(Qr, Et);  // (i + lo h) x d
        detail::for_each_in_batch(hi, [&](std::size_t h) {
            for (uword d = 0; d < Pa; ++d)
                std::copy(R.colptr(d) + lo * h, R.colptr(d) + lo * (h + 1), o + lo * (d + Pa * h));
        });
    }
    return basis;
}

template <typename T1>
bool slab_samples_shared(const arma::Col<T1>* const k[3], const AxisGroups& grp) {
    const int a = grp.axis, s0 = a == 0 ? 1 : 0, s1 = a == 2 ? 1 : 2;
    const uword n0 = grp.size(0);
    const uword* r0 = grp.rows(0);
    const arma::Col<T1>&k0 = *k[s0], &k1 = *k[s1];
    for (uword g = 1; g < grp.count(); ++g) {
        if (grp.size(g) != n0) return false;
        const uword* r = grp.rows(g);
        for (uword i = 0; i < n0; ++i)
            if (k0[r[i]] != k0[r0[i]] || k1[r[i]] != k1[r0[i]]) return false;
    }
    return true;
}

forgeCol<forgeComplex<float>> device_columns(const arma::cx_mat& B) {
    forgeCol<forgeComplex<float>> data(B.n_elem);
    forgeComplex<float>* d = data.memptr();
    const std::complex<double>* b = B.memptr();
    const long long n = static_cast<long long>(B.n_elem);
#pragma omp parallel for if (n >= (1 << 18))
    for (long long i = 0; i < n; ++i) d[i] = forgeComplex<float>(float(b[i].real()), float(b[i].imag()));
    data.put_on_gpu();
    return data;
}

forgeCol<forgeComplex<float>> device_columns(const PairData& B) {
    using FC = forgeCol<forgeComplex<float>>;
    const uword n1 = B.n_samples(), nb = B.n_basis();
    std::vector<unsigned> row(B.of.begin(), B.of.end());
    const arma::fvec scale = arma::conv_to<arma::fvec>::from(B.scale);
    FC rows(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(B.rows)));
    rows.put_on_gpu();
    DeviceBuffer rowD(n1 * sizeof(unsigned)), scaleD(n1 * sizeof(float));
    device::copy_to_device(rowD.get(), row.data(), n1 * sizeof(unsigned));
    device::copy_to_device(scaleD.get(), scale.memptr(), n1 * sizeof(float));
    FC data = FC::device_uninitialized(n1 * nb);
    cuda::toeplitz_gather_rows<float>(rows.device_memptr(), B.rows.n_rows, rowD.as<unsigned>(), scaleD.as<float>(), n1,
                                      1, nb, data.device_memptr());
    device::synchronize();  // before the rows and indices go
    return data;
}

forgeCol<forgeComplex<float>> device_basis_nufft(const PairData& B, const arma::fvec& kx, const arma::fvec& ky,
                                                 const arma::fvec& kz, const uword* N, const uword* P) {
    NufftOptions o;
    o.tolerance = kNufftTolFloat;
    const Gnufft<float> G(B.n_samples(), P[0], P[1], P[2], nufft_coordinate(kx, N[0], P[0]),
                          nufft_coordinate(ky, N[1], P[1]), nufft_coordinate(kz, N[2], P[2]), o);
    if (!G.gpu_enabled()) return {};
    forgeCol<forgeComplex<float>> basis = G.adjoint(device_columns(B), B.n_basis());  // one plan execution
    device::synchronize();  // the plan's stream done before the plan and its workspace go
    return basis;
}

template bool slab_samples_shared<float>(const arma::fvec* const[3], const AxisGroups&);
template bool slab_samples_shared<double>(const arma::vec* const[3], const AxisGroups&);
template forgeCol<forgeComplex<float>> slab_basis_nufft<float>(const PairData&, const arma::fvec* const[3],
                                                               const AxisGroups&, const uword*, const uword*, bool);
template forgeCol<forgeComplex<double>> slab_basis_nufft<double>(const PairData&, const arma::vec* const[3],
                                                                 const AxisGroups&, const uword*, const uword*, bool);
template forgeCol<forgeComplex<float>> host_basis_nufft<float>(const arma::cx_mat&, const arma::fvec&,
                                                               const arma::fvec&, const arma::fvec&, const uword*,
                                                               const uword*, const std::function<void()>&);
template forgeCol<forgeComplex<double>> host_basis_nufft<double>(const arma::cx_mat&, const arma::vec&,
                                                                 const arma::vec&, const arma::vec&, const uword*,
                                                                 const uword*, const std::function<void()>&);

}  // namespace toeplitz
}  // namespace forge
