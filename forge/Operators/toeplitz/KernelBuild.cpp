// ToeplitzNormal's kernel build: the pair data and their compression, the basis kernels by adjoint DFTs (all the
// padded grid's cells, or one slab per group of a Cartesian axis) or by NUFFTs (KernelSources.cpp, which also
// holds the rule that chooses), on the GPU (Gdft<float>'s or Gnufft<float>'s pipeline) or on the host, then their
// FFTs and the pairs' combinations, kept in the layout of the apply that will read them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/DeviceOps.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/detail/FixedOrderProduct.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/cpu/HostApply.h"
#include "forge/Operators/toeplitz/cuda/KernelCombine.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"
#include "forge/Operators/toeplitz/detail/AxisGroups.h"
#include "forge/Operators/toeplitz/detail/KernelSources.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"

namespace forge {

using toeplitz::axis_phases;
using toeplitz::AxisGroups;
using toeplitz::cell_offset;
using toeplitz::find_cartesian_axis;
using toeplitz::gib;
using toeplitz::kName;
using toeplitz::rows_of;
using toeplitz::to_host_layout;

namespace {

// Parts the host DFTs of a kernel build are split into, for its progress: the padded grid's cells in up to 16
// parts of at least 4096 cells (each part's adjoint still gives every thread many cells).
uword dft_parts(uword cells) { return std::max<uword>(1, std::min<uword>(16, cells / 4096)); }

// The basis kernels on the host (P x nb, column r: the adjoint DFT of column r of B at the cells' offsets), with
// a Gdft of precision TB, in 'parts' parts of the cells, partDone() after each.
template <typename T1, typename TB>
forgeCol<forgeComplex<TB>> host_basis_direct(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                             const arma::Col<T1>& kz, const arma::vec& ox, const arma::vec& oy,
                                             const arma::vec& oz, uword parts, const std::function<void()>& partDone) {
    using CB = std::complex<TB>;
    const uword n1 = B.n_rows, P = ox.n_elem, nb = B.n_cols;
    const auto cast = [](const arma::vec& v) { return arma::conv_to<arma::Col<TB>>::from(v); };
    const arma::Col<TB> gx = arma::conv_to<arma::Col<TB>>::from(kx), gy = arma::conv_to<arma::Col<TB>>::from(ky),
                        gz = arma::conv_to<arma::Col<TB>>::from(kz), zero1(n1, arma::fill::zeros);
    const forgeCol<forgeComplex<TB>> data(arma::conv_to<arma::Col<CB>>::from(arma::vectorise(B)));
    forgeCol<forgeComplex<TB>> basis(P * nb);
    auto* out = reinterpret_cast<CB*>(basis.memptr());
    for (uword c = 0; c < parts; ++c) {
        const uword c0 = P * c / parts, c1 = P * (c + 1) / parts, n = c1 - c0;
        if (n > 0) {
            const arma::span cells(c0, c1 - 1);
            const Gdft<TB> Gk(n1, n, gx, gy, gz, cast(ox(cells)), cast(oy(cells)), cast(oz(cells)),
                              arma::Col<TB>(n, arma::fill::zeros), zero1);
            const forgeCol<forgeComplex<TB>> a = Gk.adjoint(data, nb);  // n x nb
            const auto* q = reinterpret_cast<const CB*>(a.memptr());
            for (uword r = 0; r < nb; ++r) std::copy(q + n * r, q + n * (r + 1), out + P * r + c0);
        }
        partDone();
    }
    return basis;
}

// The same for samples grouped along a Cartesian axis: per group, the adjoint DFT of its samples on one slab of
// cells (sx, sy, sz: the slab's offsets, 0 along the axis), then out(d, slab cell) = sum_g E(d, g) Q_g(slab cell),
// one matrix product per block of the grid.
template <typename T1, typename TB>
forgeCol<forgeComplex<TB>> host_basis_grouped(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                              const arma::Col<T1>& kz, const AxisGroups& grp, const arma::cx_mat& E,
                                              const arma::vec& sx, const arma::vec& sy, const arma::vec& sz,
                                              const std::function<void()>& groupDone) {
    using CB = std::complex<TB>;
    const uword nb = B.n_cols, G = grp.count(), M = grp.slab(), lo = grp.lo, hi = grp.hi, Pa = grp.Pa;
    const auto cast = [](const arma::Col<T1>& v) { return arma::conv_to<arma::Col<TB>>::from(v); };
    // Q laid out lo x G x hi x nb: for each (slowest cell h, kernel r) a lo x G block.
    arma::Col<CB> Q(M * G * nb);
    std::unique_ptr<Gdft<TB>> first;
    for (uword g = 0; g < G; ++g) {
        const uword* rows = grp.order.data() + grp.start[g];
        const uword n = grp.start[g + 1] - grp.start[g];
        const arma::Col<TB> gx = cast(rows_of(kx, rows, n)), gy = cast(rows_of(ky, rows, n)),
                            gz = cast(rows_of(kz, rows, n)), zero1(n, arma::fill::zeros);
        std::unique_ptr<Gdft<TB>> other;
        if (!first) {
            first = std::make_unique<Gdft<TB>>(n, M, gx, gy, gz, arma::conv_to<arma::Col<TB>>::from(sx),
                                               arma::conv_to<arma::Col<TB>>::from(sy),
                                               arma::conv_to<arma::Col<TB>>::from(sz),
                                               arma::Col<TB>(M, arma::fill::zeros), zero1);
        } else {
            other = std::make_unique<Gdft<TB>>(*first, n, gx, gy, gz, zero1);
        }
        const Gdft<TB>& Gg = other ? *other : *first;
        const forgeCol<forgeComplex<TB>> data(arma::conv_to<arma::Col<CB>>::from(arma::vectorise(rows_of(B, rows, n))));
        const forgeCol<forgeComplex<TB>> a = Gg.adjoint(data, nb);  // M x nb
        const auto* q = reinterpret_cast<const CB*>(a.memptr());
        for (uword r = 0; r < nb; ++r)
            for (uword h = 0; h < hi; ++h)
                std::copy(q + M * r + lo * h, q + M * r + lo * (h + 1), Q.memptr() + lo * (g + G * (h + hi * r)));
        groupDone();
    }
    forgeCol<forgeComplex<TB>> basis(lo * Pa * hi * nb);
    auto* out = reinterpret_cast<CB*>(basis.memptr());
    const arma::Mat<CB> Ec = arma::conv_to<arma::Mat<CB>>::from(E);
    if (lo == 1) {  // the axis is the fastest: one product (Pa x G) (G x hi nb)
        arma::Mat<CB> o(out, Pa, hi * nb, false, true);
        o = detail::fixed_order_product(Ec, arma::Mat<CB>(Q.memptr(), G, hi * nb, false, true));
    } else {
        const arma::Mat<CB> Et = Ec.st();
        detail::for_each_in_batch(hi * nb, [&](std::size_t b) {
            arma::Mat<CB> o(out + lo * Pa * b, lo, Pa, false, true);
            o = detail::fixed_order_product(arma::Mat<CB>(Q.memptr() + lo * G * b, lo, G, false, true), Et);
        });
    }
    return basis;
}

// The kernels of the pairs (columns of D ~= B V^H) on the host from their basis kernels (P x nb, in the circular
// cell order, or the centred order with 'centred'): the FFT of each basis kernel and the pairs' combinations,
// divided by P; in the host apply's layout. The centred order is the circular one shifted by N = P / 2 along each
// axis, so its FFT is the circular order's times (-1)^(kx + ky + kz).
template <typename T1, typename TB>
forgeCol<forgeComplex<T1>> host_kernels_from(forgeCol<forgeComplex<TB>> basis, const arma::cx_mat& V, const uword* Pd,
                                             bool centred = false) {
    using CB = std::complex<TB>;
    const uword P = Pd[0] * Pd[1] * Pd[2], nb = V.n_cols, npairs = V.n_rows;
    auto* b = reinterpret_cast<CB*>(basis.memptr());
    const FftPlan<TB> fft(Pd[0], Pd[1], Pd[2]);
    fft.execute(FftMemory::host, reinterpret_cast<forgeComplex<TB>*>(b), true, nb);  // the kernels on the threads
    if (centred) {
        const long long rows = static_cast<long long>(Pd[1] * Pd[2] * nb);
#pragma omp parallel for if (P * nb >= (1 << 16))
        for (long long row = 0; row < rows; ++row) {
            const uword y = uword(row) % Pd[1], z = (uword(row) / Pd[1]) % Pd[2];
            CB* line = b + Pd[0] * uword(row);
            for (uword x = 1 - (y + z) % 2; x < Pd[0]; x += 2) line[x] = -line[x];  // x + y + z odd
        }
    }
    const arma::Mat<CB> basisMat(b, P, nb, false, true);
    // column p: pair p (a fixed-order product: the same kernels on any number of threads)
    const arma::Mat<CB> K =
        detail::fixed_order_product(basisMat, arma::conv_to<arma::Mat<CB>>::from(V.t() / double(P)));
    forgeCol<forgeComplex<T1>> out(npairs * P);
    to_host_layout(K.memptr(), reinterpret_cast<T1*>(out.memptr()), npairs, Pd);
    return out;
}

// The basis kernels on the GPU by the exact DFT (Gdft<float>'s pipeline; grouped: one adjoint per group on the
// slab's cells, all on the first group's plan, then the expansion along the axis). Empty when Gdft has no device
// plan for these sizes.
forgeCol<forgeComplex<float>> device_basis_exact(const toeplitz::PairData& B, const arma::fvec& kx, const arma::fvec& ky,
                                                 const arma::fvec& kz, const AxisGroups& grp, const arma::cx_mat& E,
                                                 const arma::vec& ox, const arma::vec& oy, const arma::vec& oz,
                                                 uword P) {
    using FC = forgeCol<forgeComplex<float>>;
    const uword n1 = kx.n_elem, nb = B.n_basis();
    const arma::fvec fx = arma::conv_to<arma::fvec>::from(ox), fy = arma::conv_to<arma::fvec>::from(oy),
                     fz = arma::conv_to<arma::fvec>::from(oz);
    if (grp.axis == 3) {
        const arma::fvec zeroP(P, arma::fill::zeros), zero1(n1, arma::fill::zeros);
        const Gdft<float> Gk(n1, P, kx, ky, kz, fx, fy, fz, zeroP, zero1);
        if (!Gk.gpu_enabled()) return {};
        // One batched adjoint: each sample-cell phase is evaluated once for all basis kernels.
        FC basis = Gk.adjoint(toeplitz::device_columns(B), nb);
        device::synchronize();  // done before the plan goes
        return basis;
    }
    const uword G = grp.count(), M = grp.slab();
    std::unique_ptr<Gdft<float>> first;
    FC Q;
    for (uword g = 0; g < G; ++g) {
        const uword* rows = grp.order.data() + grp.start[g];
        const uword n = grp.start[g + 1] - grp.start[g];
        const arma::fvec gx = rows_of(kx, rows, n), gy = rows_of(ky, rows, n), gz = rows_of(kz, rows, n),
                         zero1(n, arma::fill::zeros);
        std::unique_ptr<Gdft<float>> other;
        if (!first) {
            first =
                std::make_unique<Gdft<float>>(n, M, gx, gy, gz, fx, fy, fz, arma::fvec(M, arma::fill::zeros), zero1);
            if (!first->gpu_enabled()) return {};
            Q = FC::device_uninitialized(M * nb * G);
        } else {
            other = std::make_unique<Gdft<float>>(*first, n, gx, gy, gz, zero1);
        }
        const Gdft<float>& Gg = other ? *other : *first;
        const FC a = Gg.adjoint(toeplitz::device_columns(B.gather(rows, n)), nb);  // M x nb
        device::copy_on_device(Q.device_memptr() + M * nb * g, a.device_memptr(), M * nb * sizeof(forgeComplex<float>));
    }
    FC Ed(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(E)));
    Ed.put_on_gpu();
    FC basis = FC::device_uninitialized(P * nb);
    cuda::toeplitz_expand_axis<float>(Q.device_memptr(), Ed.device_memptr(), basis.device_memptr(), grp.lo, grp.Pa,
                                      grp.hi, G, nb);
    device::synchronize();
    return basis;
}

// The kernels of the pairs (columns of D ~= B V^H) on the GPU from their basis kernels (P x nb on the device, in
// the circular cell order, or the centred order with 'centred'): their FFTs by the apply's plan, then one launch
// for all the pairs' combinations (divided by P; the centred order's shift undone by a sign per cell).
forgeCol<forgeComplex<float>> device_kernels_from(forgeCol<forgeComplex<float>>& basis, const arma::cx_mat& V,
                                                  const uword* Pd, const FftPlan<float>& fft, bool centred) {
    using FC = forgeCol<forgeComplex<float>>;
    const uword P = Pd[0] * Pd[1] * Pd[2], nb = V.n_cols, npairs = V.n_rows;
    fft.execute(FftMemory::device, basis.device_memptr(), true, nb);
    arma::cx_fvec coef(npairs * nb);  // row p of conj(V) / P, contiguous
    for (uword p = 0; p < npairs; ++p)
        for (uword r = 0; r < nb; ++r) coef[p * nb + r] = std::complex<float>(std::conj(V(p, r)) / double(P));
    FC c(coef);
    c.put_on_gpu();
    FC K = FC::device_uninitialized(npairs * P);
    cuda::toeplitz_combine_kernels<float>(basis.device_memptr(), c.device_memptr(), K.device_memptr(), P, nb, npairs,
                                          Pd[0], Pd[1], centred);
    device::synchronize();  // before c leaves; on the operator's device, which may not be the caller's
    return K;
}

// Refuses option values outside their enumerations (a cast integer), naming the option.
void check_build_options(const ToeplitzOptions& o) {
    const auto bad = [](const char* what, int v, const char* expected) {
        throw invalid_argument(std::string(kName) + ": options." + what + " = " + std::to_string(v) + "; expected " +
                               expected);
    };
    if (o.build != Device::Auto && o.build != Device::Host && o.build != Device::GPU)
        bad("build", int(o.build), "Device::Auto, Host or GPU");
    if (o.grouping != AxisGrouping::Auto && o.grouping != AxisGrouping::Off)
        bad("grouping", int(o.grouping), "AxisGrouping::Auto or Off");
    if (o.source != KernelSource::Auto && o.source != KernelSource::Exact && o.source != KernelSource::Nufft)
        bad("source", int(o.source), "KernelSource::Auto, Exact or Nufft");
}

}  // namespace

template <typename T1>
template <typename C>
void ToeplitzNormal<T1>::build(const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                               const arma::Col<T1>& W, const arma::Mat<C>& a, const ToeplitzOptions& options) {
    check_build_options(options);
    const Device where = options.build;
    const ToeplitzBuildProgress& progress = options.progress;
    const auto t0 = std::chrono::steady_clock::now();
    auto since = [](std::chrono::steady_clock::time_point a) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    };
    const uword n1 = kx.n_elem;
    if (n1 == 0) throw invalid_argument(std::string(kName) + ": kx is empty; the trajectory needs at least one sample");
    require_length(kName, "ky", ky.n_elem, n1, "the length of kx");
    require_length(kName, "kz", kz.n_elem, n1, "the length of kx");
    require_finite(kName, "kx", kx.memptr(), n1);
    require_finite(kName, "ky", ky.memptr(), n1);
    require_finite(kName, "kz", kz.memptr(), n1);
    arma::vec w = arma::ones<arma::vec>(n1);
    if (!W.is_empty()) {
        require_length(kName, "W", W.n_elem, n1, "the length of kx (or empty for ones)");
        require_finite(kName, "W", W.memptr(), n1);
        if (W.min() < T1(0)) {
            throw invalid_argument(std::string(kName) +
                                   ": W must be non-negative (the data weights of G^H W G); "
                                   "its minimum is " +
                                   std::to_string(double(W.min())));
        }
        w = arma::conv_to<arma::vec>::from(W);
    }
    const bool single = std::is_same<T1, float>::value;
    if (where == Device::GPU && !single)
        throw invalid_argument(std::string(kName) + ": options.build = Device::GPU needs float (the GPU kernels "
                                                    "are single precision); use Device::Auto or Host for double");
    if (where == Device::GPU && !device::available())
        throw cuda_error(std::string(kName) + ": options.build = Device::GPU but no CUDA device is usable (built "
                                              "with CUDA: " + (device::built_with_cuda() ? "yes" : "no") + ")");
    const bool gpuBuild = single && where != Device::Host && device::available();
    toeplitz::BuildShape shape;
    shape.n1 = n1;
    shape.device = gpuBuild;
    shape.single = single;
    for (int d = 0; d < 3; ++d) shape.N[d] = N_[d], shape.P[d] = P_[d];
    // A requested NUFFT the grid cannot take is refused before any work.
    if (options.source == KernelSource::Nufft) toeplitz::choose_kernel_source(KernelSource::Nufft, shape);

    // Steps of the progress: the pair data, the DFTs (on the host: parts of the cells, the groups of a Cartesian
    // axis, or the NUFFT's basis kernels in as many steps; on the GPU one step for all), the FFTs and combinations
    // of the kernels.
    const arma::Col<T1>* const k[3] = {&kx, &ky, &kz};
    const AxisGroups grp = options.grouping == AxisGrouping::Auto ? find_cartesian_axis<T1>(k, P_) : AxisGroups();
    const uword dftSteps = grp.axis == 3 ? dft_parts(P_total_) : grp.count(), totalSteps = dftSteps + 2;
    uword stepsDone = 0;
    const auto step = [&](uword n) {
        if (n == 0) return;
        stepsDone += n;
        if (progress) progress(stepsDone, totalSteps, since(t0));
    };
    if (progress) progress(0, totalSteps, since(t0));

    // Pair data conj(a_l) W a_m for l <= m (pairs that vanish identically carry no kernel), compressed.
    // The products of min-max interpolators are far from independent: their singular values fall from 1 to a
    // few 1e-2 and then by four orders at once (measured: 13 of 28 above 1e-5 for L = 6). Float kernels drop the
    // directions below 1e-5 of the largest, a relative error of that order in the kernels, below float
    // kernels' own precision in the applied operator and far below the segmentation's error. Double keeps all.
    toeplitz::PairData pd = toeplitz::pair_data(a, w, single ? 1e-5 : 0.0);
    pairs_ = std::move(pd.pairs);
    npairs_ = pairs_.size() / 2;
    table_.assign(S_ * S_, 0);
    for (uword p = 0; p < npairs_; ++p) {
        const uword l = pairs_[2 * p], m = pairs_[2 * p + 1];
        table_[l * S_ + m] = static_cast<long long>(p) + 1;
        if (l != m) table_[m * S_ + l] = -(static_cast<long long>(p) + 1);
    }
    const arma::cx_mat V = std::move(pd.V);
    ndft_ = pd.n_basis();
    times_.pair_data = since(t0);
    step(1);

    shape.nb = ndft_;
    shape.groups = grp.axis < 3 ? grp.count() : 0;
    shape.slab = grp.axis < 3 ? grp.slab() : 0;
    shape.axis = grp.axis;
    shape.slab_shared = grp.axis < 3 && toeplitz::slab_samples_shared<T1>(k, grp);
    source_ = toeplitz::choose_kernel_source(options.source, shape);
    const bool nufft = source_ == KernelSource::Nufft;
    // The NUFFT by slabs across the Cartesian axis where that is the cheaper NUFFT, else on the whole grid.
    const bool slabs = nufft && toeplitz::estimate_source_cost(shape).nufft_by_slabs;

    // Offsets of the padded grid's cells; with a Cartesian axis only those of one slab across it (0 along it).
    [[maybe_unused]] const uword P = P_total_;
    groupedAxis_ = nufft && !slabs ? 3 : uword(grp.axis);
    uword extent[3] = {P_[0], P_[1], P_[2]};
    if (grp.axis < 3) extent[grp.axis] = 1;
    const uword cells = nufft ? 0 : extent[0] * extent[1] * extent[2];
    arma::vec ox(cells), oy(cells), oz(cells);
    if (!nufft)
        for (uword z = 0; z < extent[2]; ++z)
            for (uword y = 0; y < extent[1]; ++y)
                for (uword x = 0; x < extent[0]; ++x) {
                    const uword c = x + extent[0] * (y + extent[1] * z);
                    ox[c] = cell_offset(x, N_[0], P_[0]);
                    oy[c] = cell_offset(y, N_[1], P_[1]);
                    oz[c] = cell_offset(z, N_[2], P_[2]);
                }
    const arma::cx_mat E = !nufft && grp.axis < 3 ? axis_phases(grp, N_[grp.axis]) : arma::cx_mat();

    bool onGpu = false;
    if constexpr (std::is_same<T1, float>::value) {  // double: always on the host
        if (gpuBuild) try {
                const toeplitz::DeviceScope scope(device_);
                const auto tDft = std::chrono::steady_clock::now();
                forgeCol<forgeComplex<float>> basis =
                    slabs   ? toeplitz::slab_basis_nufft<float>(pd, k, grp, N_, P_, true)
                    : nufft ? toeplitz::device_basis_nufft(pd, kx, ky, kz, N_, P_)
                            : device_basis_exact(pd, kx, ky, kz, grp, E, ox, oy, oz, P);
                if (basis.n_elem > 0) {
                    device::synchronize();
                    times_.dft = since(tDft);
                    step(dftSteps);
                    // The apply's plan, made once here.
                    cache_->fft = std::make_unique<FftPlan<T1>>(P_[0], P_[1], P_[2],
                                                                toeplitz::device_fft_options(stream_, device_));
                    cache_->device = device_kernels_from(basis, V, P_, *cache_->fft, nufft);
                    onGpu = true;
                }
            } catch (const cuda_error& e) {
                std::ostringstream m;
                m << kName << ": building " << npairs_ << " kernels of " << P << " cells (" << gib(kernel_bytes())
                  << ", plus " << ndft_ << " basis kernels) on the GPU failed: " << e.what();
                throw cuda_error(m.str());
            }
    }
    if (!onGpu) {
        const auto tDft = std::chrono::steady_clock::now();
        const std::function<void()> partDone = [&] { step(1); };
        forgeCol<forgeComplex<T1>> basis;
        // B in full (n1 x nb) for the host sources that take it; the slabs gather their columns themselves.
        const arma::cx_mat B = slabs ? arma::cx_mat() : pd.full();
        if (slabs) {
            basis = toeplitz::slab_basis_nufft<T1>(pd, k, grp, N_, P_, false);
            step(dftSteps);
        } else if (nufft) {
            uword r = 0;  // the basis kernels spread over the progress's DFT steps
            const std::function<void()> vectorDone = [&] {
                ++r;
                step(dftSteps * r / ndft_ - dftSteps * (r - 1) / ndft_);
            };
            basis = toeplitz::host_basis_nufft<T1>(B, kx, ky, kz, N_, P_, vectorDone);
        } else {
            basis = grp.axis == 3 ? host_basis_direct<T1, T1>(B, kx, ky, kz, ox, oy, oz, dftSteps, partDone)
                                  : host_basis_grouped<T1, T1>(B, kx, ky, kz, grp, E, ox, oy, oz, partDone);
        }
        times_.dft = since(tDft);
        cache_->host = host_kernels_from<T1, T1>(std::move(basis), V, P_, slabs);
        host_kernels();  // the host apply's plans and first scratch now: part of the build, not of the first apply
    }
    device::synchronize();
    builtOnGpu_ = onGpu;
    times_.total = since(t0);
    step(totalSteps - stepsDone);
}

#define FORGE_TOEPLITZ_BUILD_INSTANTIATE(T1, C)                                                                  \
    template void ToeplitzNormal<T1>::build<C>(const arma::Col<T1>&, const arma::Col<T1>&, const arma::Col<T1>&, \
                                               const arma::Col<T1>&, const arma::Mat<C>&, const ToeplitzOptions&);
FORGE_TOEPLITZ_BUILD_INSTANTIATE(float, std::complex<double>)
FORGE_TOEPLITZ_BUILD_INSTANTIATE(float, std::complex<float>)
FORGE_TOEPLITZ_BUILD_INSTANTIATE(double, std::complex<double>)

}  // namespace forge
