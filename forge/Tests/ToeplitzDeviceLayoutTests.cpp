// The device apply of ToeplitzNormal without a GPU: its stages as cuda/ToeplitzApply.h defines them (the per-thread
// work of the pad, kernel-product and crop kernels, the plane-major layout of a chunk, 2D grids as Nx x 1 x Ny, the
// cuFFT plans' geometry) run on the host, with FFTW lines of the same lengths and strides in place of cuFFT, and with
// kernels computed here by a float64 sum, against the time-segmented normal in float64 (ToeplitzTestProblem.h).
#include <complex>
#include <vector>

#include "ToeplitzTestProblem.h"
#include "forge/CUDA/FftPlan.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"

using namespace toeplitz_test;
using forge::cuda::ToeplitzChunk;

namespace {

using C = forgeComplex<double>;

// The pair kernels of S segments in the device apply's standard layout (pair p's cell x + Px (y + Py z) at p P),
// pairs l <= m in row order, and their table (0 none, p + 1, -(p + 1) for the conjugate): K = FFT(q) / P with
// q(d) = sum_j conj(a_l) W a_m exp(+i 2 pi k . d) on the padded grid's offsets d = i / N (i - 2N for i >= N).
struct Kernels {
    std::vector<C> K;
    std::vector<long long> table;
};
Kernels make_kernels(const Grid& g, const Trajectory& tr, const arma::cx_mat& a, const uword* P) {
    const uword N[3] = {g.Nx, g.Ny, g.Nz}, S = a.n_cols, n1 = tr.kx.n_elem, cells = P[0] * P[1] * P[2];
    arma::cx_mat w(n1, S * (S + 1) / 2);  // pair data conj(a_l) W a_m
    Kernels k;
    k.table.assign(S * S, 0);
    for (uword l = 0, p = 0; l < S; ++l)
        for (uword m = l; m < S; ++m, ++p) {
            w.col(p) = arma::conj(a.col(l)) % tr.W % a.col(m);
            k.table[l * S + m] = (long long)p + 1;
            if (l != m) k.table[m * S + l] = -((long long)p + 1);
        }
    const auto offset = [&](int axis, uword i) {
        if (P[axis] == 1) return 0.0;
        return (i < N[axis] ? double(i) : double(i) - 2.0 * double(N[axis])) / double(N[axis]);
    };
    arma::cx_mat E(cells, n1);
    for (uword z = 0; z < P[2]; ++z)
        for (uword y = 0; y < P[1]; ++y)
            for (uword x = 0; x < P[0]; ++x) {
                const uword c = x + P[0] * (y + P[1] * z);
                const arma::vec ph = 2 * kPi * (tr.kx * offset(0, x) + tr.ky * offset(1, y) + tr.kz * offset(2, z));
                E.row(c) = arma::exp(std::complex<double>(0, 1) * ph).st();
            }
    arma::cx_mat Q = E * w / double(cells);  // cells x pairs, standard layout
    const forge::FftPlan<double> F(P[0], P[1], P[2]);
    F.execute(forge::FftMemory::host, reinterpret_cast<C*>(Q.memptr()), true, Q.n_cols);
    k.K.assign(reinterpret_cast<const C*>(Q.memptr()), reinterpret_cast<const C*>(Q.memptr()) + Q.n_elem);
    return k;
}

template <int S>
void mix_registers(const Kernels& k, C* grid, const ToeplitzChunk& c) {
    forge::cuda::ToeplitzPairTable t{};
    for (uword i = 0; i < uword(S) * S; ++i) t.t[i] = int(k.table[i]);
    for (uword cell = 0; cell < c.plane() * c.P[2]; ++cell)
        forge::cuda::toeplitz_mix_registers_at<double, S>(k.K.data(), t, grid, c, cell);
}
void mix_registers(const Kernels& k, C* grid, const ToeplitzChunk& c) {
    switch (c.S) {
        case 1: return mix_registers<1>(k, grid, c);
        case 2: return mix_registers<2>(k, grid, c);
        case 3: return mix_registers<3>(k, grid, c);
        case 4: return mix_registers<4>(k, grid, c);
        case 5: return mix_registers<5>(k, grid, c);
        case 6: return mix_registers<6>(k, grid, c);
        case 7: return mix_registers<7>(k, grid, c);
        case 8: return mix_registers<8>(k, grid, c);
        default: FAIL("no register kernel product for S = " << c.S);
    }
}

// One transform of the plane's axes or along z, as the cuFFT plans of ToeplitzFft do it (toeplitz_fft_geometry).
void plane_fft(const forge::cuda::ToeplitzFftGeometry& f, C* data, bool forward) {
    using Lines = forge::FftLines<double>;
    if (f.planeRank == 2) {  // {Py, Px}: x lines of every row, then y lines of every column, of each plane
        const uword Py = uword(f.planeN[0]), Px = uword(f.planeN[1]), Q = uword(f.planeBatch), D = uword(f.planeDist);
        Lines(Px, 1, {{Py, Px}, {Q, D}}, forward, data).run(data);
        Lines(Py, Px, {{Px, 1}, {Q, D}}, forward, data).run(data);
    } else if (f.planeRank == 1) {
        Lines(uword(f.planeN[0]), 1, {{uword(f.planeBatch), uword(f.planeDist)}}, forward, data).run(data);
    }
}
void column_fft(const forge::cuda::ToeplitzFftGeometry& f, C* data, bool forward) {
    if (f.columnN > 1)
        forge::FftLines<double>(uword(f.columnN), uword(f.columnStride), {{uword(f.columnBatch), 1}}, forward, data)
            .run(data);
}

// The device apply's sequence (DeviceApply.cpp) for one chunk of nv vectors, on the host.
arma::cx_vec emulate(const Grid& g, const Kernels& k, const arma::cx_mat& b, bool fieldFree, const arma::cx_vec& x,
                     uword nv, bool registers) {
    const uword N[3] = {g.Nx, g.Ny, g.Nz};
    const uword P[3] = {g.Nx > 1 ? 2 * g.Nx : 1, g.Ny > 1 ? 2 * g.Ny : 1, g.Nz > 1 ? 2 * g.Nz : 1};
    const ToeplitzChunk c = forge::cuda::make_toeplitz_chunk(N, P, b.n_cols, nv);
    const forge::cuda::ToeplitzFftGeometry f = forge::cuda::toeplitz_fft_geometry(c);
    std::vector<C> A(c.cells(), C(0, 0)), B(c.cells(), C(0, 0)), y(g.n2() * nv);
    const C* xs = reinterpret_cast<const C*>(x.memptr());
    const C* phases = fieldFree ? nullptr : reinterpret_cast<const C*>(b.memptr());  // S x n2
    const bool column = c.P[2] > 1;
    C* padded = column ? A.data() : B.data();
    for (uword i = 0; i < c.plane() * c.N[2]; ++i) forge::cuda::toeplitz_pad_at<double>(xs, phases, padded, c, i);
    if (column) {
        plane_fft(f, A.data(), true);
        B = A;  // cuFFT's out-of-place transform along z: b = FFT_z(a), a kept
        column_fft(f, B.data(), true);
    } else {
        plane_fft(f, B.data(), true);
    }
    C* u = B.data();
    if (registers) {
        mix_registers(k, B.data(), c);
    } else {
        for (uword cell = 0; cell < c.plane() * c.P[2]; ++cell)
            forge::cuda::toeplitz_mix_any_at<double>(k.K.data(), k.table.data(), B.data(), A.data(), c, cell);
        u = A.data();
    }
    column_fft(f, u, false);
    plane_fft(f, u, false);
    for (uword pix = 0; pix < g.n2(); ++pix) forge::cuda::toeplitz_crop_at<double>(u, phases, y.data(), c, pix);
    arma::cx_vec r(g.n2() * nv);
    for (uword i = 0; i < r.n_elem; ++i) r[i] = std::complex<double>(y[i].real(), y[i].imag());
    return r;
}

}  // namespace

TEST_CASE("ToeplitzNormal's device apply stages, run on the host, equal the segmented normal in float64",
          "[Toeplitz][apply]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        uword L, nv;
    };
    // 3D even and odd, 2D (as Nx x 1 x Ny), 1D along x, single columns in 3D and 2D, field-free, S = 9 (general
    // product only).
    const Case cases[] = {{{10, 9, 5}, 2, 3}, {{12, 10, 1}, 3, 2}, {{9, 8, 4}, 0, 2}, {{64, 1, 1}, 2, 2},
                          {{1, 20, 6}, 1, 2}, {{1, 24, 1}, 2, 1},  {{8, 6, 3}, 6, 2}, {{7, 6, 3}, 8, 2}};
    for (const Case& cs : cases) {
        const Grid& g = cs.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", L = " << cs.L << ", " << cs.nv << " vectors");
        const Trajectory tr = random_trajectory(g, g.n2() + 150, 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const SegmentedNormal ref(g, tr, fm, cs.L, double());
        const uword P[3] = {g.Nx > 1 ? 2 * g.Nx : 1, g.Ny > 1 ? 2 * g.Ny : 1, g.Nz > 1 ? 2 * g.Nz : 1};
        const Kernels k = make_kernels(g, tr, ref.a, P);
        const arma::cx_mat b = arma::cx_mat(ref.b);  // n2 x S: S phase maps back to back
        const arma::cx_vec x = complex_normal<double>(g.n2() * cs.nv);
        const arma::cx_vec r = arma::vectorise(ref(arma::reshape(x, g.n2(), cs.nv)));
        const bool fieldFree = cs.L == 0;
        if (b.n_cols <= forge::cuda::kToeplitzRegisterSegments) {
            const double e = rel_error(emulate(g, k, b, fieldFree, x, cs.nv, true), r);
            INFO("register kernel product: " << e);
            CHECK(e <= 1e-10);
        }
        const double e = rel_error(emulate(g, k, b, fieldFree, x, cs.nv, false), r);
        INFO("general kernel product: " << e);
        CHECK(e <= 1e-10);
    }
}
