// GfftSampled: the FFT on an encoded grid with a sampling selection and a zero-pad/crop must equal the
// exact DFT (Gdft, float64 brute force) at the same k on the image grid, and its adjoint must be exact.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"

using namespace forge_test;

namespace {

struct Samples {
    arma::vec kx, ky, kz;
};

// Pixel coordinates of an Nx x Ny x Nz image (FOV units, x fastest), written out independently of forge.
arma::mat pixel_coords(arma::uword Nx, arma::uword Ny, arma::uword Nz) {
    arma::mat c(Nx * Ny * Nz, 3);
    for (arma::uword z = 0; z < Nz; ++z)
        for (arma::uword y = 0; y < Ny; ++y)
            for (arma::uword x = 0; x < Nx; ++x) {
                const arma::uword i = x + Nx * (y + Ny * z);
                c(i, 0) = Nx > 1 ? (double(x) - double(Nx / 2)) / double(Nx) : 0.0;
                c(i, 1) = Ny > 1 ? (double(y) - double(Ny / 2)) / double(Ny) : 0.0;
                c(i, 2) = Nz > 1 ? (double(z) - double(Nz / 2)) / double(Nz) : 0.0;
            }
    return c;
}

forge::Gdft<double> reference(const arma::uword* N, const Samples& s, const arma::vec& fm = arma::vec(),
                              const arma::vec& t = arma::vec()) {
    const arma::mat r = pixel_coords(N[0], N[1], N[2]);
    const arma::uword n1 = s.kx.n_elem, n2 = r.n_rows;
    return forge::Gdft<double>(n1, n2, s.kx, s.ky, s.kz, r.col(0), r.col(1), r.col(2),
                               fm.is_empty() ? arma::vec(n2, arma::fill::zeros) : fm,
                               t.is_empty() ? arma::vec(n1, arma::fill::zeros) : t);
}

// Cartesian samples on the k-space lattice of an M grid for an N image (step N/M cycles per image FOV):
// a random subset of the grid points (each kept with probability 'keep'), a few of them twice, some moved
// by a whole period N (same phase on the pixel lattice), all in random order.
Samples lattice_samples(const arma::uword* N, const arma::uword* M, double keep) {
    std::vector<std::array<double, 3>> pts;
    const arma::vec u = uniform<double>(M[0] * M[1] * M[2], 0, 1);
    arma::uword i = 0;
    for (arma::uword z = 0; z < M[2]; ++z)
        for (arma::uword y = 0; y < M[1]; ++y)
            for (arma::uword x = 0; x < M[0]; ++x, ++i) {
                if (u(i) > keep) continue;
                const arma::uword g[3] = {x, y, z};
                std::array<double, 3> k{};
                for (int d = 0; d < 3; ++d)
                    k[d] = N[d] > 1 ? (double(g[d]) - double(M[d] / 2)) * double(N[d]) / double(M[d]) : 0.0;
                pts.push_back(k);
            }
    const arma::uword n = pts.size();
    for (arma::uword j = 0; j < n / 10; ++j) pts.push_back(pts[(j * 7) % n]);  // repeated samples
    for (arma::uword j = 0; j < pts.size(); j += 5)                            // a period away
        for (int d = 0; d < 3; ++d)
            if (N[d] > 1) pts[j][d] += (j % 2 ? 1.0 : -1.0) * double(N[d]);
    std::shuffle(pts.begin(), pts.end(), rng());
    Samples s;
    s.kx.set_size(pts.size());
    s.ky.set_size(pts.size());
    s.kz.set_size(pts.size());
    for (arma::uword j = 0; j < pts.size(); ++j) {
        s.kx(j) = pts[j][0];
        s.ky(j) = pts[j][1];
        s.kz(j) = pts[j][2];
    }
    return s;
}

template <typename T1>
void check_against_gdft(arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword Mx, arma::uword My, arma::uword Mz,
                        double keep, double tol) {
    FORGE_INFO_SEED();
    const arma::uword N[3] = {Nx, Ny, Nz}, M[3] = {Mx, My, Mz};
    INFO("image " << Nx << " x " << Ny << " x " << Nz << ", FFT grid " << Mx << " x " << My << " x " << Mz);
    const Samples s = lattice_samples(N, M, keep);
    const arma::Col<T1> kx = arma::conv_to<arma::Col<T1>>::from(s.kx), ky = arma::conv_to<arma::Col<T1>>::from(s.ky),
                        kz = arma::conv_to<arma::Col<T1>>::from(s.kz);
    REQUIRE(forge::GfftSampled<T1>::on_grid(Nx, Ny, Nz, Mx, My, Mz, kx, ky, kz));
    forge::GfftSampled<T1> G(Nx, Ny, Nz, Mx, My, Mz, kx, ky, kz);
    REQUIRE(G.n1() == s.kx.n_elem);
    REQUIRE(G.n2() == Nx * Ny * Nz);
    const auto ref = reference(N, s);
    const arma::Col<std::complex<T1>> x = complex_normal<T1>(G.n2()), y = complex_normal<T1>(G.n1());
    const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), yd = arma::conv_to<arma::cx_vec>::from(y);
    CHECK(rel_error(G * x, ref * xd) < tol);
    CHECK(rel_error(G / y, ref / yd) < tol);
}

}  // namespace

TEST_CASE("GfftSampled equals Gdft on a fully sampled grid", "[GfftSampled][fft]") {
    check_against_gdft<double>(16, 12, 1, 16, 12, 1, 1.0, 1e-12);
    check_against_gdft<float>(32, 32, 1, 32, 32, 1, 1.0, 1e-5);
    check_against_gdft<double>(8, 6, 4, 8, 6, 4, 1.0, 1e-12);
}

TEST_CASE("GfftSampled equals Gdft with readout oversampling, undersampling and repeated samples",
          "[GfftSampled][fft]") {
    // ISMRMRD's 2x readout oversampling: FFT grid twice the image along x, kx on half-integers.
    check_against_gdft<double>(16, 12, 1, 32, 12, 1, 0.6, 1e-12);
    check_against_gdft<float>(32, 16, 1, 64, 16, 1, 0.5, 1e-5);
    // 3D, larger grid along x and z, a quarter of the points.
    check_against_gdft<double>(8, 6, 4, 16, 6, 8, 0.25, 1e-12);
    // Asymmetric echo: only the k-space half kx > -4 of a 16-point readout, all lines.
    FORGE_INFO_SEED();
    const arma::uword N[3] = {16, 8, 1};
    Samples s;
    std::vector<double> kx, ky;
    for (int y = -4; y < 4; ++y)
        for (int x = -3; x < 8; ++x) kx.push_back(x), ky.push_back(y);
    s.kx = arma::vec(kx);
    s.ky = arma::vec(ky);
    s.kz = arma::vec(kx.size(), arma::fill::zeros);
    forge::GfftSampled<double> G(16, 8, 1, 16, 8, 1, s.kx, s.ky, s.kz);
    const auto ref = reference(N, s);
    const arma::cx_vec x = complex_normal<double>(G.n2()), y = complex_normal<double>(G.n1());
    CHECK(rel_error(G * x, ref * x) < 1e-12);
    CHECK(rel_error(G / y, ref / y) < 1e-12);
}

TEST_CASE("GfftSampled adjoint is exact and batches equal single transforms", "[GfftSampled][fft]") {
    FORGE_INFO_SEED();
    const arma::uword N[3] = {20, 12, 1}, M[3] = {40, 16, 1};
    const Samples s = lattice_samples(N, M, 0.4);
    forge::GfftSampled<double> G(N[0], N[1], N[2], M[0], M[1], M[2], s.kx, s.ky, s.kz);
    check_adjoint(G, adjoint_tolerance<double>(), DotScale::Norms);
    forge::GfftSampled<float> Gf(N[0], N[1], N[2], M[0], M[1], M[2], arma::conv_to<arma::fvec>::from(s.kx),
                                 arma::conv_to<arma::fvec>::from(s.ky), arma::conv_to<arma::fvec>::from(s.kz));
    check_adjoint(Gf, adjoint_tolerance<float>(), DotScale::Norms);

    check_batch(G, 2, 1e-14);  // the bound of the batch checks this replaced
    check_batch(G, 3, 0.0);
    check_batch(Gf, 3, 0.0);
    check_normal(G, 0.0);
    check_normal(Gf, 0.0, 3);
}

TEST_CASE("GfftSampled inside SENSE and TimeSegmentation matches Gdft", "[GfftSampled][fft][ts]") {
    FORGE_INFO_SEED();
    const arma::uword N[3] = {16, 16, 1}, M[3] = {32, 16, 1}, nc = 3;
    const Samples s = lattice_samples(N, M, 0.5);
    forge::GfftSampled<double> G(N[0], N[1], N[2], M[0], M[1], M[2], s.kx, s.ky, s.kz);
    const arma::cx_vec maps = complex_normal<double>(G.n2() * nc);
    forge::SENSE<double, forge::GfftSampled<double>> E(G, maps, nc);
    REQUIRE(E.coil_batching());
    const auto ref = reference(N, s);
    forge::SENSE<double, forge::Gdft<double>> Eref(ref, maps, nc);
    const arma::cx_vec x = complex_normal<double>(G.n2()), y = complex_normal<double>(G.n1() * nc);
    CHECK(rel_error(E * x, Eref * x) < 1e-12);
    CHECK(rel_error(E / y, Eref / y) < 1e-12);

    // A field map: time segmentation around GfftSampled approaches the field-corrected Gdft.
    arma::vec fm = 2 * 3.14159265358979 * 40 * uniform<double>(G.n2(), -1, 1);
    arma::vec t(G.n1());
    for (arma::uword j = 0; j < t.n_elem; ++j) t(j) = 1e-3 + 5e-6 * double(j % 32);  // readouts of 32 samples
    const auto refFm = reference(N, s, fm, t);
    forge::TimeSegmentation<double, forge::GfftSampled<double>> T(G, fm, t, 6, forge::TSInterp::MinMax);
    CHECK(rel_error(T * x, refFm * x) < 1e-3);
}

TEST_CASE("GfftSampled rejects off-grid samples and bad grids", "[GfftSampled][fft][errors]") {
    arma::fvec kx{0.5f, -3.0f, 2.5f}, ky{1, 2, -4}, kz(3, arma::fill::zeros);
    CHECK(forge::GfftSampled<float>::on_grid(8, 8, 1, 16, 8, 1, kx, ky, kz));
    CHECK_FALSE(forge::GfftSampled<float>::on_grid(8, 8, 1, 8, 8, 1, kx, ky, kz));  // half-integers need M = 2N
    CHECK_THROWS_WITH(forge::GfftSampled<float>(8, 8, 1, 8, 8, 1, kx, ky, kz),
                      Catch::Contains("kx[0]") && Catch::Contains("not on the FFT grid"));
    arma::fvec kyOff{1, 2.3f, -4};
    CHECK_FALSE(forge::GfftSampled<float>::on_grid(8, 8, 1, 16, 8, 1, kx, kyOff, kz));
    CHECK_THROWS_WITH(forge::GfftSampled<float>(8, 8, 1, 16, 8, 1, kx, kyOff, kz), Catch::Contains("ky[1]"));
    CHECK_THROWS_WITH(forge::GfftSampled<float>(8, 8, 1, 6, 8, 1, kx, ky, kz),
                      Catch::Contains("at least the image size"));
    CHECK_THROWS_AS(forge::GfftSampled<float>(8, 8, 1, 17, 8, 1, kx, ky, kz), forge::invalid_argument);
    CHECK_THROWS_AS(forge::GfftSampled<float>(8, 8, 1, 16, 8, 1, kx, arma::fvec(2), kz), forge::invalid_argument);
    forge::GfftSampled<float> G(8, 8, 1, 16, 8, 1, kx, ky, kz);
    CHECK_THROWS_WITH(G * arma::cx_fvec(63), Catch::Contains("expected n2 = 64"));
    CHECK_THROWS_WITH(G / arma::cx_fvec(4), Catch::Contains("expected n1 = 3"));
}
