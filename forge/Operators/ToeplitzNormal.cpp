#include "forge/Operators/ToeplitzNormal.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <type_traits>

#include "forge/CUDA/GridSelectKernels.h"
#include "forge/CUDA/ToeplitzKernels.h"
#include "forge/Core/DeviceOps.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/Gdft.h"
#include "forge/Operators/Gfft.h"

#ifdef FORGE_HAS_CUDA
#include "forge/CUDA/CudaFft.h"
#endif

namespace forge {

namespace {

constexpr const char* kName = "ToeplitzNormal";
constexpr double kPi = 3.14159265358979323846;

uword pair_count(uword L) { return (L + 1) * (L + 2) / 2; }

// Offset (FOV units) of padded-grid cell c along an axis of N pixels and P = 2N cells: cells 0..N-1 hold the
// offsets 0..N-1, cells N..2N-1 the offsets -N..-1 (circular order, so the product of FFTs is the convolution).
double cell_offset(uword c, uword N, uword P) {
    if (P == 1) return 0;
    return (c < N ? double(c) : double(c) - double(P)) / double(N);
}

std::string gib(double bytes) {
    std::ostringstream m;
    m.precision(3);
    m << bytes / double(uword(1) << 30) << " GiB";
    return m.str();
}

// The columns of the pair data D (n1 x npairs) that carry the kernels: D ~= B V^H with B = D V, V the
// eigenvectors of D^H D whose singular values exceed 'relTol' times the largest. relTol = 0: B = D, V = I.
void compress_pairs(const arma::cx_mat& D, double relTol, arma::cx_mat& B, arma::cx_mat& V) {
    if (relTol <= 0 || D.n_cols < 2) {
        B = D;
        V = arma::eye<arma::cx_mat>(D.n_cols, D.n_cols);
        return;
    }
    const arma::cx_mat gram = D.t() * D;
    arma::vec lambda;
    arma::cx_mat E;
    if (!arma::eig_sym(lambda, E, gram)) {  // fall back to the uncompressed pairs
        compress_pairs(D, 0, B, V);
        return;
    }
    const double cut = lambda.max() * relTol * relTol;
    const arma::uvec keep = arma::find(lambda > cut);
    if (keep.n_elem == 0 || keep.n_elem >= D.n_cols) {
        compress_pairs(D, 0, B, V);
        return;
    }
    V = E.cols(keep);
    B = D * V;
}

// A trajectory's samples grouped by their (exactly equal) coordinate along one axis of the padded grid, when the
// axis is Cartesian enough to pay: G <= Pa / 2 distinct values on an axis of Pa > 1 cells, the axis with the
// largest saving Pa / G. axis = 3: none.
struct AxisGroups {
    int axis = 3;
    uword lo = 1, Pa = 1, hi = 1;  // cells of the faster axes, of the axis, of the slower axes
    std::vector<uword> order;      // the samples, group by group
    std::vector<uword> start;      // group g: order[start[g] .. start[g+1])
    std::vector<double> value;     // k of group g along the axis
    uword count() const { return value.size(); }
    uword slab() const { return lo * hi; }
};

template <typename T1>
AxisGroups find_cartesian_axis(const arma::Col<T1>* const k[3], const uword* P) {
    AxisGroups best;
    double bestSaving = 1;
    for (int a = 0; a < 3; ++a) {
        if (P[a] < 2) continue;
        const uword G = arma::Col<T1>(arma::unique(*k[a])).n_elem;
        if (2 * G > P[a]) continue;
        const double saving = double(P[a]) / double(G);
        if (saving > bestSaving) {
            bestSaving = saving;
            best.axis = a;
        }
    }
    if (best.axis == 3) return best;
    const int a = best.axis;
    best.Pa = P[a];
    for (int b = 0; b < a; ++b) best.lo *= P[b];
    for (int b = a + 1; b < 3; ++b) best.hi *= P[b];
    const arma::Col<T1>& ka = *k[a];
    const arma::uvec idx = arma::stable_sort_index(ka);
    best.order.assign(idx.begin(), idx.end());
    for (uword j = 0; j < idx.n_elem; ++j)
        if (j == 0 || ka[idx[j]] != ka[idx[j - 1]]) {
            best.start.push_back(j);
            best.value.push_back(double(ka[idx[j]]));
        }
    best.start.push_back(idx.n_elem);
    return best;
}

// Phases of the groups along the axis, E(d, g) = exp(+i 2 pi k_g d) on the axis's cell offsets (Pa x G), in
// double: k_g d reaches N / 2 cycles, whose float rounding alone would cost the kernels' float accuracy.
arma::cx_mat axis_phases(const AxisGroups& g, uword N) {
    arma::cx_mat E(g.Pa, g.count());
    for (uword j = 0; j < g.count(); ++j)
        for (uword d = 0; d < g.Pa; ++d) E(d, j) = std::polar(1.0, 2 * kPi * g.value[j] * cell_offset(d, N, g.Pa));
    return E;
}

// Rows 'rows' of a sample-indexed column (or of each column of a matrix).
template <typename T>
arma::Col<T> rows_of(const arma::Col<T>& v, const uword* rows, uword n) {
    arma::Col<T> r(n);
    for (uword i = 0; i < n; ++i) r[i] = v[rows[i]];
    return r;
}
arma::cx_mat rows_of(const arma::cx_mat& B, const uword* rows, uword n) {
    arma::cx_mat r(n, B.n_cols);
    for (uword c = 0; c < B.n_cols; ++c)
        for (uword i = 0; i < n; ++i) r(i, c) = B(rows[i], c);
    return r;
}

// The basis kernels on the host (P x nb, column r: the adjoint DFT of column r of B at the cells' offsets), with
// a Gdft of precision TB.
template <typename T1, typename TB>
forgeCol<forgeComplex<TB>> host_basis_direct(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                             const arma::Col<T1>& kz, const arma::vec& ox, const arma::vec& oy,
                                             const arma::vec& oz) {
    using CB = std::complex<TB>;
    const uword n1 = B.n_rows, P = ox.n_elem, nb = B.n_cols;
    const arma::Col<TB> zeroP(P, arma::fill::zeros), zero1(n1, arma::fill::zeros);
    const Gdft<TB> Gk(n1, P, arma::conv_to<arma::Col<TB>>::from(kx), arma::conv_to<arma::Col<TB>>::from(ky),
                      arma::conv_to<arma::Col<TB>>::from(kz), arma::conv_to<arma::Col<TB>>::from(ox),
                      arma::conv_to<arma::Col<TB>>::from(oy), arma::conv_to<arma::Col<TB>>::from(oz), zeroP, zero1);
    const forgeCol<forgeComplex<TB>> data(arma::conv_to<arma::Col<CB>>::from(arma::vectorise(B)));
    return Gk.adjoint(data, nb);
}

// The same for samples grouped along a Cartesian axis: per group, the adjoint DFT of its samples on one slab of
// cells (sx, sy, sz: the slab's offsets, 0 along the axis), then out(d, slab cell) = sum_g E(d, g) Q_g(slab cell),
// one matrix product per block of the grid.
template <typename T1, typename TB>
forgeCol<forgeComplex<TB>> host_basis_grouped(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                              const arma::Col<T1>& kz, const AxisGroups& grp, const arma::cx_mat& E,
                                              const arma::vec& sx, const arma::vec& sy, const arma::vec& sz) {
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
    }
    forgeCol<forgeComplex<TB>> basis(lo * Pa * hi * nb);
    auto* out = reinterpret_cast<CB*>(basis.memptr());
    const arma::Mat<CB> Ec = arma::conv_to<arma::Mat<CB>>::from(E);
    if (lo == 1) {  // the axis is the fastest: one product (Pa x G) (G x hi nb)
        arma::Mat<CB> o(out, Pa, hi * nb, false, true);
        o = Ec * arma::Mat<CB>(Q.memptr(), G, hi * nb, false, true);
    } else {
        const arma::Mat<CB> Et = Ec.st();
        detail::for_each_in_batch(hi * nb, [&](std::size_t b) {
            arma::Mat<CB> o(out + lo * Pa * b, lo, Pa, false, true);
            o = arma::Mat<CB>(Q.memptr() + lo * G * b, lo, G, false, true) * Et;
        });
    }
    return basis;
}

// The kernels of the pairs (columns of D ~= B V^H) on the host from their basis kernels (P x nb): the FFT of each
// basis kernel and the pairs' combinations, divided by P.
template <typename T1, typename TB>
forgeCol<forgeComplex<T1>> host_kernels_from(forgeCol<forgeComplex<TB>> basis, const arma::cx_mat& V, const uword* Pd) {
    using CB = std::complex<TB>;
    const uword P = Pd[0] * Pd[1] * Pd[2], nb = V.n_cols, npairs = V.n_rows;
    auto* b = reinterpret_cast<CB*>(basis.memptr());
    detail::FftwPlan<TB> fft(Pd[0], Pd[1], Pd[2]);
    detail::for_each_in_batch(nb, [&](std::size_t r) { fft.forward(b + r * P); });
    const arma::Mat<CB> basisMat(b, P, nb, false, true);
    const arma::Mat<CB> K = basisMat * arma::conv_to<arma::Mat<CB>>::from(V.t() / double(P));  // column p: pair p
    forgeCol<forgeComplex<T1>> out(npairs * P);
    auto* h = reinterpret_cast<std::complex<T1>*>(out.memptr());
    for (uword i = 0; i < npairs * P; ++i) h[i] = std::complex<T1>(K[i]);
    return out;
}

}  // namespace

// The kernels where they were built, their copy on the other side once needed, and the GPU's FFT plan. Copies of
// the operator share it; the mutex guards the lazily made members.
template <typename T1>
struct ToeplitzNormal<T1>::Cache {
    std::mutex mutex;
    ForgeVec host;       // npairs x P on the host (empty until built or copied)
    ForgeVec device;     // npairs x P on the GPU (empty until built or uploaded)
    DeviceBuffer table;  // table_ on the GPU
#ifdef FORGE_HAS_CUDA
    std::unique_ptr<cuda::CudaFftPlan<T1>> fft;
#endif
    std::unique_ptr<detail::FftwPlan<T1>> fftw;
    bool deviceReady = false;
};

template <typename T1>
void ToeplitzNormal<T1>::set_grid(uword Nx, uword Ny, uword Nz, uword L) {
    const uword n2 = checked_product(kName, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
    if (n2 == 0) {
        std::ostringstream m;
        m << kName << ": the image grid " << Nx << " x " << Ny << " x " << Nz
          << " is empty; each of Nx, Ny, Nz must be "
          << "at least 1";
        throw invalid_argument(m.str());
    }
    const uword N[3] = {Nx, Ny, Nz};
    const char* names[3] = {"2 Nx", "2 Ny", "2 Nz"};
    for (int d = 0; d < 3; ++d) {
        N_[d] = N[d];
        P_[d] = N[d] > 1 ? 2 * N[d] : 1;
        checked_product(kName, {{names[d], P_[d]}}, detail::kMaxFftAxis, "FFTW and cuFFT take int dimensions");
    }
    P_total_ = checked_product(kName, {{"2 Nx", P_[0]}, {"2 Ny", P_[1]}, {"2 Nz", P_[2]}});
    // Kernels that cannot fit are refused here, before anything of the grid's size is allocated (a bare
    // std::bad_alloc would name neither the grid nor the memory it needs).
    const double bytes = kernel_bytes(Nx, Ny, Nz, L), mem = detail::physical_memory_bytes();
    if (mem > 0 && bytes > 0.5 * mem) {
        std::ostringstream m;
        if (L == 0) {
            m << kName << ": the kernel of the " << Nx << " x " << Ny << " x " << Nz << " image grid would take "
              << gib(bytes) << " (" << P_total_ << " complex cells on the padded grid " << P_[0] << " x " << P_[1]
              << " x " << P_[2] << "), more than half of this machine's " << gib(mem)
              << "; use a smaller grid or the exact operator's normal";
        } else {
            m << kName << ": the kernels of L = " << L << " segments would take up to " << gib(bytes) << " ("
              << pair_count(L) << " kernels of " << P_total_ << " complex cells), more than half of this machine's "
              << gib(mem) << "; ask for a larger error (fewer segments) or use the exact operator";
        }
        throw invalid_argument(m.str());
    }
    this->set_sizes(n2, n2);
    cell_.resize(n2);
    for (uword z = 0; z < Nz; ++z)
        for (uword y = 0; y < Ny; ++y)
            for (uword x = 0; x < Nx; ++x) cell_[x + Nx * (y + Ny * z)] = x + P_[0] * (y + P_[1] * z);
    cache_ = std::make_shared<Cache>();
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, KernelBuild where,
                                   AxisGrouping grouping)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(Nx, Ny, Nz, 0);
    S_ = 1;
    build(kx, ky, kz, W, arma::ones<arma::cx_mat>(kx.n_elem, 1), where, grouping);
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& fieldMap,
                                   const arma::Col<T1>& timeVec, uword L, TSInterp type, KernelBuild where,
                                   AxisGrouping grouping)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(Nx, Ny, Nz, L);
    const uword n2 = this->domain_size();
    require_length(kName, "fieldMap", fieldMap.n_elem, n2, "Nx * Ny * Nz");
    require_length(kName, "timeVec", timeVec.n_elem, kx.n_elem, "the number of samples (length of kx)");
    const TSFactors f = TimeSegmentationCore<T1>::segment_factors(fieldMap, timeVec, L, type);
    S_ = L + 1;
    arma::Col<std::complex<T1>> phase(S_ * n2);
    const long long nPhase = static_cast<long long>(S_ * n2);
#pragma omp parallel for if (nPhase > 65536)
    for (long long i = 0; i < nPhase; ++i) {
        const uword l = uword(i) / n2, k = uword(i) % n2;
        phase[uword(i)] = std::complex<T1>(std::polar(1.0, -double(fieldMap[k]) * f.tau(l)));
    }
    phases_ = std::make_shared<StackedDiagonal<T1>>(phase, S_, "ToeplitzNormal segment phases");
    build(kx, ky, kz, W, f.a, where, grouping);
}

template <typename T1>
uword ToeplitzNormal<T1>::choose_segments(const arma::Col<T1>& fieldMap, const arma::Col<T1>& timeVec,
                                          double targetError, TSInterp type, uword Lmax) {
    if (!(targetError > 0) || !std::isfinite(targetError))
        throw invalid_argument(std::string(kName) + "::choose_segments: targetError must be a positive number");
    return TimeSegmentationCore<T1>::choose_segments(fieldMap, timeVec, targetError / 2, type, Lmax).L;
}

template <typename T1>
double ToeplitzNormal<T1>::kernel_bytes(uword Nx, uword Ny, uword Nz, uword L) {
    const double cells = double(Nx > 1 ? 2 * Nx : 1) * double(Ny > 1 ? 2 * Ny : 1) * double(Nz > 1 ? 2 * Nz : 1);
    return double(pair_count(L)) * cells * sizeof(std::complex<T1>);
}

template <typename T1>
void ToeplitzNormal<T1>::build(const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                               const arma::Col<T1>& W, const arma::cx_mat& a, KernelBuild where,
                               AxisGrouping grouping) {
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

    // Pair data conj(a_l) W a_m for l <= m; pairs that vanish identically carry no kernel.
    arma::cx_mat D(n1, pair_count(S_ - 1));
    pairs_.clear();
    uword np = 0;
    for (uword l = 0; l < S_; ++l)
        for (uword m = l; m < S_; ++m) {
            D.col(np) = arma::conj(a.col(l)) % w % a.col(m);
            if (arma::any(arma::abs(D.col(np)) > 0)) {
                pairs_.push_back(l);
                pairs_.push_back(m);
                ++np;
            }
        }
    if (np == 0) {  // W = 0: the zero operator, one zero kernel keeps the apply uniform
        pairs_ = {0, 0};
        np = 1;
        D.col(0).zeros();
    }
    D.resize(n1, np);
    npairs_ = np;
    table_.assign(S_ * S_, 0);
    for (uword p = 0; p < npairs_; ++p) {
        const uword l = pairs_[2 * p], m = pairs_[2 * p + 1];
        table_[l * S_ + m] = static_cast<long long>(p) + 1;
        if (l != m) table_[m * S_ + l] = -(static_cast<long long>(p) + 1);
    }

    // The products of min-max interpolators are far from independent: their singular values fall from 1 to a
    // few 1e-2 and then by four orders at once (measured: 13 of 28 above 1e-5 for L = 6). Float kernels drop the
    // directions below 1e-5 of the largest, a relative error of that order in the kernels, below float
    // kernels' own precision in the applied operator and far below the segmentation's error. Double keeps all.
    arma::cx_mat B, V;
    compress_pairs(D, std::is_same<T1, float>::value ? 1e-5 : 0.0, B, V);
    ndft_ = B.n_cols;
    times_.pair_data = since(t0);

    // Offsets of the padded grid's cells; with a Cartesian axis only those of one slab across it (0 along it).
    [[maybe_unused]] const uword P = P_total_;
    const arma::Col<T1>* const k[3] = {&kx, &ky, &kz};
    const AxisGroups grp = grouping == AxisGrouping::Auto ? find_cartesian_axis<T1>(k, P_) : AxisGroups();
    groupedAxis_ = uword(grp.axis);
    uword extent[3] = {P_[0], P_[1], P_[2]};
    if (grp.axis < 3) extent[grp.axis] = 1;
    const uword cells = extent[0] * extent[1] * extent[2];
    arma::vec ox(cells), oy(cells), oz(cells);
    for (uword z = 0; z < extent[2]; ++z)
        for (uword y = 0; y < extent[1]; ++y)
            for (uword x = 0; x < extent[0]; ++x) {
                const uword c = x + extent[0] * (y + extent[1] * z);
                ox[c] = cell_offset(x, N_[0], P_[0]);
                oy[c] = cell_offset(y, N_[1], P_[1]);
                oz[c] = cell_offset(z, N_[2], P_[2]);
            }
    const arma::cx_mat E = grp.axis < 3 ? axis_phases(grp, N_[grp.axis]) : arma::cx_mat();

    bool onGpu = false;
    (void)where;  // CPU builds and double: always on the host
#ifdef FORGE_HAS_CUDA
    if constexpr (std::is_same<T1, float>::value) {
        if (where == KernelBuild::Auto && device::available()) try {
                using FC = forgeCol<forgeComplex<float>>;
                const auto tDft = std::chrono::steady_clock::now();
                FC basis;
                if (grp.axis == 3) {
                    const arma::fvec zeroP(P, arma::fill::zeros), zero1(n1, arma::fill::zeros);
                    Gdft<float> Gk(n1, P, kx, ky, kz, arma::conv_to<arma::fvec>::from(ox),
                                   arma::conv_to<arma::fvec>::from(oy), arma::conv_to<arma::fvec>::from(oz), zeroP,
                                   zero1);
                    if (Gk.gpu_enabled()) {
                        FC data(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(B)));
                        data.putOnGPU();
                        // One batched adjoint: each sample-cell phase is evaluated once for all basis kernels.
                        basis = Gk.adjoint(data, ndft_);
                    }
                } else {
                    // One adjoint per group on the slab's cells, all on the first group's plan; then the
                    // expansion along the axis.
                    const uword G = grp.count(), M = grp.slab();
                    std::unique_ptr<Gdft<float>> first;
                    FC Q;
                    for (uword g = 0; g < G; ++g) {
                        const uword* rows = grp.order.data() + grp.start[g];
                        const uword n = grp.start[g + 1] - grp.start[g];
                        const arma::fvec gx = rows_of(kx, rows, n), gy = rows_of(ky, rows, n),
                                         gz = rows_of(kz, rows, n), zero1(n, arma::fill::zeros);
                        std::unique_ptr<Gdft<float>> other;
                        if (!first) {
                            first = std::make_unique<Gdft<float>>(n, M, gx, gy, gz, arma::conv_to<arma::fvec>::from(ox),
                                                                  arma::conv_to<arma::fvec>::from(oy),
                                                                  arma::conv_to<arma::fvec>::from(oz),
                                                                  arma::fvec(M, arma::fill::zeros), zero1);
                            if (!first->gpu_enabled()) break;
                            Q = FC::device_uninitialized(M * ndft_ * G);
                        } else {
                            other = std::make_unique<Gdft<float>>(*first, n, gx, gy, gz, zero1);
                        }
                        const Gdft<float>& Gg = other ? *other : *first;
                        FC data(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(rows_of(B, rows, n))));
                        data.putOnGPU();
                        const FC a = Gg.adjoint(data, ndft_);  // M x ndft
                        device::copy_on_device(Q.device_memptr() + M * ndft_ * g, a.device_memptr(),
                                               M * ndft_ * sizeof(forgeComplex<float>));
                    }
                    if (Q.n_elem > 0) {
                        FC Ed(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(E)));
                        Ed.putOnGPU();
                        basis = FC::device_uninitialized(P * ndft_);
                        cuda::toeplitz_expand_axis<float>(Q.device_memptr(), Ed.device_memptr(), basis.device_memptr(),
                                                          grp.lo, grp.Pa, grp.hi, G, ndft_);
                        device::synchronize();
                    }
                }
                if (basis.n_elem > 0) {
                    device::synchronize();
                    times_.dft = since(tDft);
                    // The apply's plan, made once here.
                    cache_->fft = std::make_unique<cuda::CudaFftPlan<T1>>(int(P_[0]), int(P_[1]), int(P_[2]));
                    cache_->fft->exec(reinterpret_cast<float*>(basis.device_memptr()), true, ndft_);
                    ForgeVec K = ForgeVec::device_uninitialized(npairs_ * P);
                    forgeComplex<float>* kk = K.device_memptr();
                    const forgeComplex<float>* b = basis.device_memptr();
                    for (uword p = 0; p < npairs_; ++p) {
                        device::fill(kk + p * P, forgeComplex<float>(0, 0), P);
                        for (uword r = 0; r < ndft_; ++r) {
                            const std::complex<double> c = std::conj(V(p, r)) / double(P);
                            device::axpby(forgeComplex<float>(float(c.real()), float(c.imag())), b + r * P,
                                          forgeComplex<float>(1, 0), kk + p * P, P);
                        }
                    }
                    cache_->device = std::move(K);
                    onGpu = true;
                }
            } catch (const cuda_error& e) {
                std::ostringstream m;
                m << kName << ": building " << npairs_ << " kernels of " << P << " cells (" << gib(kernel_bytes())
                  << ", plus " << ndft_ << " basis kernels) on the GPU failed: " << e.what();
                throw cuda_error(m.str());
            }
    }
#endif
    if (!onGpu) {
        const auto tDft = std::chrono::steady_clock::now();
        forgeCol<forgeComplex<T1>> basis = grp.axis == 3
                                               ? host_basis_direct<T1, T1>(B, kx, ky, kz, ox, oy, oz)
                                               : host_basis_grouped<T1, T1>(B, kx, ky, kz, grp, E, ox, oy, oz);
        times_.dft = since(tDft);
        cache_->host = host_kernels_from<T1, T1>(std::move(basis), V, P_);
    }
    device::synchronize();
    builtOnGpu_ = onGpu;
    times_.total = since(t0);
}

template <typename T1>
const typename ToeplitzNormal<T1>::ForgeVec& ToeplitzNormal<T1>::host_kernels() const {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->host.n_elem == 0) {
        ForgeVec h = cache_->device;
        h.getFromGPU();
        cache_->host = std::move(h);
    }
    if (!cache_->fftw) cache_->fftw = std::make_unique<detail::FftwPlan<T1>>(P_[0], P_[1], P_[2]);
    return cache_->host;
}

template <typename T1>
void ToeplitzNormal<T1>::prepare_device() const {
#ifdef FORGE_HAS_CUDA
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->deviceReady) return;
    if (cache_->device.n_elem == 0) {
        ForgeVec d = cache_->host;
        d.putOnGPU();
        cache_->device = std::move(d);
    }
    DeviceBuffer table(table_.size() * sizeof(long long));
    device::copy_to_device(table.get(), table_.data(), table_.size() * sizeof(long long));
    cache_->table = std::move(table);
    if (!cache_->fft) cache_->fft = std::make_unique<cuda::CudaFftPlan<T1>>(int(P_[0]), int(P_[1]), int(P_[2]));
    if (phases_) phases_->prepare_device();
    cache_->deviceReady = true;
#endif
}

template <typename T1>
void ToeplitzNormal<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
    const ForgeVec& K = host_kernels();
    const uword n2 = this->domain_size(), P = P_total_, S = S_;
    const forgeComplex<T1>* b = phases_ ? phases_->weights().memptr() : nullptr;  // S x n2
    // Vectors in chunks whose padded grids stay near 256 MiB (at least one vector).
    const uword perVector = 2 * S * P * sizeof(Elem);
    const uword chunk = std::max<uword>(1, (uword(256) << 20) / perVector);
    std::vector<Elem> z(std::min(chunk, nbatch) * S * P), u(z.size());
    for (uword v0 = 0; v0 < nbatch; v0 += chunk) {
        const uword nv = std::min(chunk, nbatch - v0);
        // Pad each segment's b_m .* x into its grid and transform: one grid per (vector, segment).
        detail::for_each_in_batch(nv * S, [&](std::size_t g) {
            const uword v = g / S, m = g % S;
            const Elem* x = in + (v0 + v) * n2;
            Elem* grid = z.data() + g * P;
            std::fill(grid, grid + P, Elem(0, 0));
            for (uword k = 0; k < n2; ++k) grid[cell_[k]] = b ? b[m * n2 + k] * x[k] : x[k];
            cache_->fftw->forward(reinterpret_cast<std::complex<T1>*>(grid));
        });
        const uword cells = nv * P;
        const bool par = detail::parallel_elementwise(cells, 2 * S * sizeof(Elem));
#pragma omp parallel for if (par)
        for (long long i = 0; i < static_cast<long long>(cells); ++i) {
            const uword v = uword(i) / P, k = uword(i) % P;
            toeplitz::mix_at<T1>(K.memptr(), table_.data(), z.data() + v * S * P, u.data() + v * S * P, P, S,
                                 k);
        }
        detail::for_each_in_batch(nv * S, [&](std::size_t g) {
            cache_->fftw->backward(reinterpret_cast<std::complex<T1>*>(u.data() + g * P));
        });
        // Crop, and sum the segments weighted by conj(b_l).
        for (uword v = 0; v < nv; ++v) {
            Elem* y = out + (v0 + v) * n2;
            const Elem* uv = u.data() + v * S * P;
            for (uword k = 0; k < n2; ++k) {
                Elem s(0, 0);
                for (uword l = 0; l < S; ++l)
                    s += b ? conj(b[l * n2 + k]) * uv[l * P + cell_[k]] : uv[l * P + cell_[k]];
                y[k] = s;
            }
        }
    }
}

template <typename T1>
void ToeplitzNormal<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
#ifdef FORGE_HAS_CUDA
    prepare_device();
    const uword n2 = this->domain_size(), P = P_total_, S = S_, grids = nbatch * S;
    const cuda::BoxGeometry box{N_[0], N_[1], N_[2], P_[0], P_[1], P_[2], 0, 0, 0};
    ForgeVec images;  // nbatch x S segment images b_m .* x, later the cropped segment results
    const Elem* src = in;
    if (phases_) {
        images = this->scratch(Residency::Device, grids * n2);
        phases_->apply(in, images.device_memptr(), nbatch, true, Residency::Device);
        src = images.device_memptr();
    }
    ForgeVec z = this->scratch(Residency::Device, grids * P), u = this->scratch(Residency::Device, grids * P);
    cuda::box_pad<T1>(src, z.device_memptr(), box, grids);
    cache_->fft->exec(reinterpret_cast<T1*>(z.device_memptr()), true, grids);
    cuda::toeplitz_mix<T1>(cache_->device.device_memptr(), cache_->table.template as<long long>(),
                           z.device_memptr(), u.device_memptr(), P, S, nbatch);
    cache_->fft->exec(reinterpret_cast<T1*>(u.device_memptr()), false, grids);
    if (phases_) {
        cuda::box_crop<T1>(u.device_memptr(), images.device_memptr(), box, grids);
        phases_->apply(images.device_memptr(), out, nbatch, false, Residency::Device);
    } else {
        cuda::box_crop<T1>(u.device_memptr(), out, box, grids);
    }
#else
    (void)in, (void)out, (void)nbatch;
    throw residency_error(std::string(kName) + ": the input is on the GPU but forge was built without CUDA");
#endif
}

template class ToeplitzNormal<float>;
template class ToeplitzNormal<double>;

}  // namespace forge
