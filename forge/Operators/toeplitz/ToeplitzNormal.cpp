#include "forge/Operators/toeplitz/ToeplitzNormal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "forge/Operators/cuda/GridSelectKernels.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"
#include "forge/Core/DeviceOps.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"

#include "forge/CUDA/FftPlan.h"

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

// The host apply's kernel layout: per slab x and row z of the padded grid, the rows of all pairs one after another
// (the kernel product reads one contiguous block per row), each as Py real parts then Py imaginary parts.
// to_host_layout: from the standard layout (pair p's cell x + Px (y + Py z) at p P + that, complex) to it;
// from_host_layout: back.
template <typename TS, typename T1>
void to_host_layout(const std::complex<TS>* standard, T1* host, uword npairs, const uword* P) {
    const uword Px = P[0], Py = P[1], Pz = P[2], cells = Px * Py * Pz;
#pragma omp parallel for if (npairs * cells >= (1 << 18))
    for (long long xi = 0; xi < static_cast<long long>(Px); ++xi) {
        const uword x = uword(xi);
        for (uword z = 0; z < Pz; ++z)
            for (uword p = 0; p < npairs; ++p) {
                T1* row = host + ((x * Pz + z) * npairs + p) * 2 * Py;
                const std::complex<TS>* q = standard + p * cells + x + Px * Py * z;
                for (uword y = 0; y < Py; ++y) {
                    row[y] = T1(q[Px * y].real());
                    row[Py + y] = T1(q[Px * y].imag());
                }
            }
    }
}
template <typename T1>
void from_host_layout(const T1* host, std::complex<T1>* standard, uword npairs, const uword* P) {
    const uword Px = P[0], Py = P[1], Pz = P[2], cells = Px * Py * Pz;
#pragma omp parallel for if (npairs * cells >= (1 << 18))
    for (long long pi = 0; pi < static_cast<long long>(npairs); ++pi) {
        const uword p = uword(pi);
        for (uword x = 0; x < Px; ++x)
            for (uword z = 0; z < Pz; ++z) {
                const T1* row = host + ((x * Pz + z) * npairs + p) * 2 * Py;
                std::complex<T1>* q = standard + p * cells + x + Px * Py * z;
                for (uword y = 0; y < Py; ++y) q[Px * y] = std::complex<T1>(row[y], row[Py + y]);
            }
    }
}

// The kernels of the pairs (columns of D ~= B V^H) on the host from their basis kernels (P x nb): the FFT of each
// basis kernel and the pairs' combinations, divided by P; in the host apply's layout.
template <typename T1, typename TB>
forgeCol<forgeComplex<T1>> host_kernels_from(forgeCol<forgeComplex<TB>> basis, const arma::cx_mat& V, const uword* Pd) {
    using CB = std::complex<TB>;
    const uword P = Pd[0] * Pd[1] * Pd[2], nb = V.n_cols, npairs = V.n_rows;
    auto* b = reinterpret_cast<CB*>(basis.memptr());
    const FftPlan<TB> fft(Pd[0], Pd[1], Pd[2]);
    fft.execute(FftMemory::host, reinterpret_cast<forgeComplex<TB>*>(b), true, nb);  // the kernels on the threads
    const arma::Mat<CB> basisMat(b, P, nb, false, true);
    const arma::Mat<CB> K = basisMat * arma::conv_to<arma::Mat<CB>>::from(V.t() / double(P));  // column p: pair p
    forgeCol<forgeComplex<T1>> out(npairs * P);
    to_host_layout(K.memptr(), reinterpret_cast<T1*>(out.memptr()), npairs, Pd);
    return out;
}

// Scratch of the host apply: 64-byte aligned (so every line the plans run on has the alignment they were planned on).
template <typename T1>
struct GridBuffer {
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<forgeComplex<T1>, Free> data;
    uword cells = 0;
    void reserve(uword n) {
        if (n <= cells) return;
        const std::size_t bytes = (n * sizeof(forgeComplex<T1>) + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, bytes);
        if (!p) throw std::bad_alloc();
        data.reset(static_cast<forgeComplex<T1>*>(p));
        cells = n;
    }
};

// A pitch of at least n cells whose bytes are an odd multiple of 64: rows (and slabs) start on cache lines, with
// the alignment every FFTW plan of the apply was made for, and strided passes over them (the z transforms, the
// transposes) do not fall into a few cache sets as with a power-of-two pitch (measured on the development machine:
// the 256-point columns of a 256 x 256 grid at pitch 256 took over 10x the time at pitch 264).
uword odd_pitch(uword n) {
    uword p = (n + 7) / 8 * 8;
    if ((p / 8) % 2 == 0) p += 8;
    return p;
}

// The host apply's layout and plans. After the transform along x (the first, on the rows of the image, y < Ny and
// z < Nz), the grids hold only those lines: a grid is Px slabs (one per x) of Nz rows of Ny cells. Then each slab
// is independent until the inverse along x: per x, the slabs of a vector's S segments are copied into a thread's
// buffer (S segments of Pz rows of Py cells, row pitch Ry, the cells beyond the image zero), transformed along y
// (the rows z < Nz) and z (every column), multiplied by the kernels, transformed back along z and y (the rows
// z < Nz) and their image part copied back: the whole padded slab stays in the thread's cache, and only half (2D)
// or a quarter (3D) of the padded grid passes through memory.
//   forward  per plane z < Nz of each grid: pad the image rows (b_m .* x) into the thread's work plane (Ny rows,
//            pitch Rx), transform along x, write to the slabs (transposed: y fastest);
//   slabs    per x, for every vector: the above;
//   backward per plane z < Nz of each grid: read the slabs into the work plane (transposed), transform along x,
//            write the image's Nx x Ny cells to the grid's image (n2 per grid);
//   sum      per image row of each vector: sum_l conj(b_l) .* image_l.
// Every FFT runs on contiguous rows, or on the columns of a buffer in cache (z), where FFTW_ESTIMATE plans come
// close to measured ones (FFTW_MEASURE: about 10% faster applies at 96 x 96 for 0.6 s of planning). In-place column
// transforms of the whole padded grid, the first version of this apply, took 1.5x-2x the time of contiguous rows
// with a transpose under FFTW_ESTIMATE.
template <typename T1>
struct HostFft {
    uword Nx, Ny, Nz, Px, Py, Pz, S;
    uword Rx;      // row pitch of a work plane
    uword Ry;      // row pitch of a slab in a thread's buffer
    uword seg;     // a segment's padded slab in a thread's buffer: Pz rows of pitch Ry
    uword slab;    // a slab in a grid: Nz rows of Ny cells
    uword cells;   // a grid: Px slabs
    uword thread;  // a thread's scratch: its work plane, its S padded slabs, its kernel product rows
    std::unique_ptr<FftLines<T1>> xF, xB, yF, yB, zF, zB;
    HostFft(const uword* N, const uword* P, uword segments, GridBuffer<T1>& buf)
        : Nx(N[0]), Ny(N[1]), Nz(N[2]), Px(P[0]), Py(P[1]), Pz(P[2]), S(segments), Rx(odd_pitch(P[0])),
          Ry(odd_pitch(P[1])), seg(odd_pitch(P[2] * Ry)), slab(odd_pitch(N[1] * N[2])), cells(P[0] * slab),
          thread(round8(N[1] * Rx) + S * seg + round8(2 * S * P[1])) {
        buf.reserve(thread);
        forgeComplex<T1>* d = buf.data.get();
        using L = std::initializer_list<typename FftLines<T1>::Loop>;
        xF = std::make_unique<FftLines<T1>>(Px, 1, L{{Ny, Rx}}, true, d);
        xB = std::make_unique<FftLines<T1>>(Px, 1, L{{Ny, Rx}}, false, d);
        yF = std::make_unique<FftLines<T1>>(Py, 1, L{{Nz, Ry}, {S, seg}}, true, d);
        yB = std::make_unique<FftLines<T1>>(Py, 1, L{{Nz, Ry}, {S, seg}}, false, d);
        zF = std::make_unique<FftLines<T1>>(Pz, Ry, L{{Py, 1}, {S, seg}}, true, d);
        zB = std::make_unique<FftLines<T1>>(Pz, Ry, L{{Py, 1}, {S, seg}}, false, d);
    }
    static uword round8(uword n) { return (n + 7) / 8 * 8; }
};

// The device apply's FFT plan: cuFFT only (the host apply has its line plans).
[[maybe_unused]] FftPlanOptions device_fft_options() {
    FftPlanOptions o;
    o.host = false;
    return o;
}

}  // namespace

// The kernels where they were built, their copy on the other side once needed, and the GPU's FFT plan; for host
// applies their plans and a pool of scratch buffers (an apply takes one, or makes one when all are in use, and
// gives it back). Copies of the operator share it; the mutex guards the lazily made members and the pool.
template <typename T1>
struct ToeplitzNormal<T1>::Cache {
    std::mutex mutex;
    ForgeVec host;       // npairs x P on the host in the host apply's layout (empty until built or copied)
    ForgeVec device;     // npairs x P on the GPU (empty until built or uploaded)
    DeviceBuffer table;  // table_ on the GPU
    std::unique_ptr<FftPlan<T1>> fft;  // the device apply's: cuFFT only
    std::unique_ptr<HostFft<T1>> hostFft;
    std::vector<std::unique_ptr<GridBuffer<T1>>> pool;
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
                                   AxisGrouping grouping, const ToeplitzBuildProgress& progress)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(Nx, Ny, Nz, 0);
    S_ = 1;
    build(kx, ky, kz, W, arma::ones<arma::cx_mat>(kx.n_elem, 1), where, grouping, progress);
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& fieldMap,
                                   const arma::Col<T1>& timeVec, uword L, TSInterp type, KernelBuild where,
                                   AxisGrouping grouping, const ToeplitzBuildProgress& progress)
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
    build(kx, ky, kz, W, f.a, where, grouping, progress);
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
                               AxisGrouping grouping, const ToeplitzBuildProgress& progress) {
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

    // Steps of the progress: the pair data, the DFTs (on the host: parts of the cells, or the groups of a Cartesian
    // axis; on the GPU one step for all), the FFTs and combinations of the kernels.
    const arma::Col<T1>* const k[3] = {&kx, &ky, &kz};
    const AxisGroups grp = grouping == AxisGrouping::Auto ? find_cartesian_axis<T1>(k, P_) : AxisGroups();
    const uword dftSteps = grp.axis == 3 ? dft_parts(P_total_) : grp.count(), totalSteps = dftSteps + 2;
    uword stepsDone = 0;
    const auto step = [&](uword n) {
        stepsDone += n;
        if (progress) progress(stepsDone, totalSteps, since(t0));
    };
    if (progress) progress(0, totalSteps, since(t0));

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
    step(1);

    // Offsets of the padded grid's cells; with a Cartesian axis only those of one slab across it (0 along it).
    [[maybe_unused]] const uword P = P_total_;
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
                        data.put_on_gpu();
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
                        data.put_on_gpu();
                        const FC a = Gg.adjoint(data, ndft_);  // M x ndft
                        device::copy_on_device(Q.device_memptr() + M * ndft_ * g, a.device_memptr(),
                                               M * ndft_ * sizeof(forgeComplex<float>));
                    }
                    if (Q.n_elem > 0) {
                        FC Ed(arma::conv_to<arma::cx_fvec>::from(arma::vectorise(E)));
                        Ed.put_on_gpu();
                        basis = FC::device_uninitialized(P * ndft_);
                        cuda::toeplitz_expand_axis<float>(Q.device_memptr(), Ed.device_memptr(), basis.device_memptr(),
                                                          grp.lo, grp.Pa, grp.hi, G, ndft_);
                        device::synchronize();
                    }
                }
                if (basis.n_elem > 0) {
                    device::synchronize();
                    times_.dft = since(tDft);
                    step(dftSteps);
                    // The apply's plan, made once here.
                    cache_->fft = std::make_unique<FftPlan<T1>>(P_[0], P_[1], P_[2], device_fft_options());
                    cache_->fft->execute(FftMemory::device, basis.device_memptr(), true, ndft_);
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
        const std::function<void()> partDone = [&] { step(1); };
        forgeCol<forgeComplex<T1>> basis =
            grp.axis == 3 ? host_basis_direct<T1, T1>(B, kx, ky, kz, ox, oy, oz, dftSteps, partDone)
                          : host_basis_grouped<T1, T1>(B, kx, ky, kz, grp, E, ox, oy, oz, partDone);
        times_.dft = since(tDft);
        cache_->host = host_kernels_from<T1, T1>(std::move(basis), V, P_);
        host_kernels();  // the host apply's plans and first scratch now: part of the build, not of the first apply
    }
    device::synchronize();
    builtOnGpu_ = onGpu;
    times_.total = since(t0);
    step(totalSteps - stepsDone);
}

template <typename T1>
const typename ToeplitzNormal<T1>::ForgeVec& ToeplitzNormal<T1>::host_kernels() const {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->host.n_elem == 0) {  // built on the GPU: a copy in the host apply's layout
        ForgeVec h = cache_->device;
        h.get_from_gpu();
        ForgeVec k(h.n_elem);
        to_host_layout(reinterpret_cast<const std::complex<T1>*>(h.memptr()), reinterpret_cast<T1*>(k.memptr()),
                       npairs_, P_);
        cache_->host = std::move(k);
    }
    if (!cache_->hostFft) {  // planned on a first grid buffer, which then goes to the pool
        auto buf = std::make_unique<GridBuffer<T1>>();
        cache_->hostFft = std::make_unique<HostFft<T1>>(N_, P_, S_, *buf);
        cache_->pool.push_back(std::move(buf));
    }
    return cache_->host;
}

template <typename T1>
void ToeplitzNormal<T1>::prepare_device() const {
#ifdef FORGE_HAS_CUDA
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->deviceReady) return;
    if (cache_->device.n_elem == 0) {  // built on the host: a copy in the standard layout
        ForgeVec d(cache_->host.n_elem);
        from_host_layout(reinterpret_cast<const T1*>(cache_->host.memptr()),
                         reinterpret_cast<std::complex<T1>*>(d.memptr()), npairs_, P_);
        d.put_on_gpu();
        cache_->device = std::move(d);
    }
    DeviceBuffer table(table_.size() * sizeof(long long));
    device::copy_to_device(table.get(), table_.data(), table_.size() * sizeof(long long));
    cache_->table = std::move(table);
    if (!cache_->fft) cache_->fft = std::make_unique<FftPlan<T1>>(P_[0], P_[1], P_[2], device_fft_options());
    cache_->fft->prepare_device();
    if (phases_) phases_->prepare_device();
    cache_->deviceReady = true;
#endif
}

template <typename T1>
void ToeplitzNormal<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
    const ForgeVec& K = host_kernels();
    const HostFft<T1>& f = *cache_->hostFft;
    const uword n2 = this->domain_size();
    // Vectors in chunks whose grids and images stay near 256 MiB (at least one vector).
    const uword perVector = S_ * (f.cells + HostFft<T1>::round8(n2)) * sizeof(Elem);
    const uword chunk = std::max<uword>(1, (uword(256) << 20) / perVector), nv = std::min(chunk, nbatch);
    int threads = 1;
#ifdef _OPENMP
    // Threads when the apply takes about a millisecond or more on one (about 10 ns per padded cell and segment):
    // below that the fork and the barriers between the stages cost more than they save, and on a loaded machine
    // a waiting thread spins away the time of the ones at work (Parallel.h).
    if (!omp_in_parallel() && nv * S_ * P_total_ >= (uword(1) << 17)) threads = omp_get_max_threads();
#endif
    // A buffer from the pool (concurrent applies each get their own), returned when done.
    std::unique_ptr<GridBuffer<T1>> buf;
    {
        std::lock_guard<std::mutex> lock(cache_->mutex);
        if (!cache_->pool.empty()) {
            buf = std::move(cache_->pool.back());
            cache_->pool.pop_back();
        }
    }
    if (!buf) buf = std::make_unique<GridBuffer<T1>>();
    struct GiveBack {
        Cache& cache;
        std::unique_ptr<GridBuffer<T1>>& buf;
        ~GiveBack() {
            std::lock_guard<std::mutex> lock(cache.mutex);
            cache.pool.push_back(std::move(buf));
        }
    } giveBack{*cache_, buf};
    buf->reserve(uword(threads) * f.thread + nv * S_ * (f.cells + HostFft<T1>::round8(n2)));
    for (uword v0 = 0; v0 < nbatch; v0 += chunk)
        apply_host_chunk(K.memptr(), in + v0 * n2, out + v0 * n2, std::min(chunk, nbatch - v0), buf->data.get(),
                         threads);
}

// One chunk of nv vectors. 'scratch': the threads' scratch, then nv x S grids, then their images (HostFft has the
// layout). Every stage is an OpenMP loop over independent items (a grid's plane, a slab of all vectors, an image
// row), each computed the same way whatever thread takes it: the result depends neither on the thread count nor
// on other applies running at the same time.
template <typename T1>
void ToeplitzNormal<T1>::apply_host_chunk(const Elem* K, const Elem* in, Elem* out, uword nv, Elem* scratch,
                                          int threads) const {
    const HostFft<T1>& f = *cache_->hostFft;
    const uword n2 = this->domain_size(), S = S_, ng = nv * S;
    const uword Nx = f.Nx, Ny = f.Ny, Nz = f.Nz, Px = f.Px, Py = f.Py, Pz = f.Pz, Rx = f.Rx, Ry = f.Ry;
    const uword imageCells = HostFft<T1>::round8(n2), kernelSlab = 2 * Pz * Py * npairs_;  // reals of a slab
    Elem* const grids = scratch + uword(threads) * f.thread;
    Elem* const images = grids + ng * f.cells;
    const Elem* b = phases_ ? phases_->weights().memptr() : nullptr;  // S x n2
    const T1* Kr = reinterpret_cast<const T1*>(K);
    const auto* pr = pairs_.data();
    const uword npairs = npairs_;
    const auto ll = [](uword n) { return static_cast<long long>(n); };
    constexpr uword kBlock = 16;  // transposes in blocks of 16 x 16 cells, which stay in L1

#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#ifdef _OPENMP
        Elem* const W = scratch + uword(omp_get_thread_num()) * f.thread;  // work plane: Ny rows of pitch Rx
#else
        Elem* const W = scratch;
#endif
        Elem* const B = W + HostFft<T1>::round8(Ny * Rx);  // padded slabs: S segments of Pz rows of pitch Ry
        T1* const mix = reinterpret_cast<T1*>(B + S * f.seg);  // kernel product: S rows of Py, real then imaginary

        // Forward along x, plane by plane, into the slabs.
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < ll(ng * Nz); ++i) {
            const uword g = uword(i) / Nz, z = uword(i) % Nz, v = g / S, m = g % S;
            const Elem* x = in + v * n2 + z * Nx * Ny;
            const Elem* bm = b ? b + m * n2 + z * Nx * Ny : nullptr;
            for (uword y = 0; y < Ny; ++y) {
                Elem* row = W + y * Rx;
                const Elem* xr = x + y * Nx;
                if (bm) {
                    const Elem* br = bm + y * Nx;
                    for (uword c = 0; c < Nx; ++c) row[c] = br[c] * xr[c];
                } else {
                    std::memcpy(static_cast<void*>(row), xr, Nx * sizeof(Elem));
                }
                std::memset(static_cast<void*>(row + Nx), 0, (Px - Nx) * sizeof(Elem));
            }
            f.xF->run(W);
            Elem* G = grids + g * f.cells + z * Ny;  // row z of slab x at x * f.slab
            for (uword x0 = 0; x0 < Px; x0 += kBlock)
                for (uword y0 = 0; y0 < Ny; y0 += kBlock) {
                    const uword x1 = std::min(Px, x0 + kBlock), y1 = std::min(Ny, y0 + kBlock);
                    for (uword c = x0; c < x1; ++c)
                        for (uword y = y0; y < y1; ++y) G[c * f.slab + y] = W[y * Rx + c];
                }
        }

        // The slabs: y and z, the kernel product, z and y back.
#pragma omp for schedule(dynamic, 1)
        for (long long xi = 0; xi < ll(Px); ++xi) {
            const uword x = uword(xi);
            const T1* Kx = Kr + x * kernelSlab;  // row z of pair p at + 2 Py (z npairs + p)
            for (uword v = 0; v < nv; ++v) {
                for (uword m = 0; m < S; ++m) {
                    Elem* Bm = B + m * f.seg;
                    const Elem* G = grids + (v * S + m) * f.cells + x * f.slab;
                    for (uword z = 0; z < Nz; ++z) {
                        std::memcpy(static_cast<void*>(Bm + z * Ry), G + z * Ny, Ny * sizeof(Elem));
                        std::memset(static_cast<void*>(Bm + z * Ry + Ny), 0, (Py - Ny) * sizeof(Elem));
                    }
                    for (uword z = Nz; z < Pz; ++z) std::memset(static_cast<void*>(Bm + z * Ry), 0, Py * sizeof(Elem));
                }
                f.yF->run(B);  // all S segments in one call
                f.zF->run(B);
                // u_l = sum_m K(l, m) .* z_m, row by row, on real and imaginary parts apart (the kernels' host
                // layout): a pair l < m adds K .* z_m to u_l and conj(K) .* z_l to u_m, a diagonal pair
                // Re(K) .* z_l (the table of mix_at, ToeplitzKernels.h).
                for (uword z = 0; z < Pz; ++z) {
                    const T1* Kz = Kx + 2 * z * npairs * Py;
                    if (S == 1) {
                        T1* u = reinterpret_cast<T1*>(B + z * Ry);
                        for (uword c = 0; c < Py; ++c) {
                            u[2 * c] *= Kz[c];
                            u[2 * c + 1] *= Kz[c];
                        }
                        continue;
                    }
                    T1* const zt = mix;               // z_m: S rows of Py real parts then Py imaginary parts
                    T1* const at = mix + 2 * S * Py;  // u_l, the same
                    for (uword m = 0; m < S; ++m) {
                        const T1* zm = reinterpret_cast<const T1*>(B + m * f.seg + z * Ry);
                        T1* zr = zt + 2 * m * Py;
                        T1* zi = zr + Py;
                        for (uword c = 0; c < Py; ++c) {
                            zr[c] = zm[2 * c];
                            zi[c] = zm[2 * c + 1];
                        }
                    }
                    std::fill(at, at + 2 * S * Py, T1(0));
                    for (uword p = 0; p < npairs; ++p) {
                        const uword l = pr[2 * p], m = pr[2 * p + 1];
                        const T1* __restrict qr = Kz + 2 * p * Py;
                        const T1* __restrict qi = qr + Py;
                        const T1* __restrict zrl = zt + 2 * l * Py;
                        const T1* __restrict zil = zrl + Py;
                        T1* __restrict arl = at + 2 * l * Py;
                        T1* __restrict ail = arl + Py;
                        if (l == m) {
#pragma omp simd
                            for (uword c = 0; c < Py; ++c) {
                                arl[c] += qr[c] * zrl[c];
                                ail[c] += qr[c] * zil[c];
                            }
                            continue;
                        }
                        const T1* __restrict zrm = zt + 2 * m * Py;
                        const T1* __restrict zim = zrm + Py;
                        T1* __restrict arm = at + 2 * m * Py;
                        T1* __restrict aim = arm + Py;
#pragma omp simd
                        for (uword c = 0; c < Py; ++c) {
                            arl[c] += qr[c] * zrm[c] - qi[c] * zim[c];
                            ail[c] += qr[c] * zim[c] + qi[c] * zrm[c];
                            arm[c] += qr[c] * zrl[c] + qi[c] * zil[c];
                            aim[c] += qr[c] * zil[c] - qi[c] * zrl[c];
                        }
                    }
                    for (uword l = 0; l < S; ++l) {
                        T1* ul = reinterpret_cast<T1*>(B + l * f.seg + z * Ry);
                        const T1* ar = at + 2 * l * Py;
                        const T1* ai = ar + Py;
                        for (uword c = 0; c < Py; ++c) {
                            ul[2 * c] = ar[c];
                            ul[2 * c + 1] = ai[c];
                        }
                    }
                }
                f.zB->run(B);
                f.yB->run(B);
                for (uword l = 0; l < S; ++l) {
                    const Elem* Bl = B + l * f.seg;
                    Elem* G = grids + (v * S + l) * f.cells + x * f.slab;
                    for (uword z = 0; z < Nz; ++z)
                        std::memcpy(static_cast<void*>(G + z * Ny), Bl + z * Ry, Ny * sizeof(Elem));
                }
            }
        }

        // Backward along x, plane by plane, into the images.
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < ll(ng * Nz); ++i) {
            const uword g = uword(i) / Nz, z = uword(i) % Nz;
            const Elem* G = grids + g * f.cells + z * Ny;
            for (uword y0 = 0; y0 < Ny; y0 += kBlock)
                for (uword x0 = 0; x0 < Px; x0 += kBlock) {
                    const uword x1 = std::min(Px, x0 + kBlock), y1 = std::min(Ny, y0 + kBlock);
                    for (uword y = y0; y < y1; ++y)
                        for (uword c = x0; c < x1; ++c) W[y * Rx + c] = G[c * f.slab + y];
                }
            f.xB->run(W);
            Elem* img = images + g * imageCells + z * Nx * Ny;
            for (uword y = 0; y < Ny; ++y) std::memcpy(static_cast<void*>(img + y * Nx), W + y * Rx, Nx * sizeof(Elem));
        }

        // The segments summed, weighted by conj(b_l): one image row per item.
#pragma omp for schedule(dynamic, 16)
        for (long long i = 0; i < ll(nv * Nz * Ny); ++i) {
            const uword v = uword(i) / (Nz * Ny), pix = (uword(i) % (Nz * Ny)) * Nx;
            Elem* yr = out + v * n2 + pix;
            const Elem* u = images + v * S * imageCells + pix;
            if (!b) {
                std::memcpy(static_cast<void*>(yr), u, Nx * sizeof(Elem));
                continue;
            }
            for (uword c = 0; c < Nx; ++c) yr[c] = conj(b[pix + c]) * u[c];
            for (uword l = 1; l < S; ++l) {
                const Elem* ul = u + l * imageCells;
                const Elem* bl = b + l * n2 + pix;
                for (uword c = 0; c < Nx; ++c) yr[c] += conj(bl[c]) * ul[c];
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
    cache_->fft->execute(FftMemory::device, z.device_memptr(), true, grids);
    cuda::toeplitz_mix<T1>(cache_->device.device_memptr(), cache_->table.template as<long long>(),
                           z.device_memptr(), u.device_memptr(), P, S, nbatch);
    cache_->fft->execute(FftMemory::device, u.device_memptr(), false, grids);
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
