// Gfft: the centred Cartesian FFT must equal the exact DFT (Gdft, float64 brute force) on its grid.
#include <complex>
#include <type_traits>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"

using namespace forge_test;

namespace {
template <typename T1>
forge::Gdft<double> matching_gdft(const forge::Gfft<T1>& G) {
    arma::mat r = arma::conv_to<arma::mat>::from(G.image_coords());
    arma::mat k = arma::conv_to<arma::mat>::from(G.kspace_coords());
    arma::vec FM(G.n2(), arma::fill::zeros), t(G.n1(), arma::fill::zeros);
    return forge::Gdft<double>(G.n1(), G.n2(), k.col(0), k.col(1), k.col(2), r.col(0), r.col(1), r.col(2), FM, t);
}

template <typename T1>
void check_against_gdft(arma::uword Nx, arma::uword Ny, arma::uword Nz, double tol) {
    FORGE_INFO_SEED();
    INFO("grid " << Nx << " x " << Ny << " x " << Nz);
    forge::Gfft<T1> G(Nx, Ny, Nz);
    REQUIRE(G.n1() == Nx * Ny * Nz);
    REQUIRE(G.n2() == Nx * Ny * Nz);
    auto ref = matching_gdft(G);
    arma::Col<std::complex<T1>> x = complex_normal<T1>(G.n2());
    arma::Col<std::complex<T1>> y = complex_normal<T1>(G.n1());
    arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), yd = arma::conv_to<arma::cx_vec>::from(y);
    CHECK(rel_error(G * x, ref * xd) < tol);
    CHECK(rel_error(G / y, ref / yd) < tol);
}
}  // namespace

TEST_CASE("Gfft equals Gdft on a Cartesian grid, 2D and 3D", "[Gfft][fft]") {
    check_against_gdft<double>(16, 12, 1, 1e-12);
    check_against_gdft<double>(8, 6, 4, 1e-12);
    check_against_gdft<float>(16, 16, 1, 1e-5);
    check_against_gdft<float>(8, 8, 6, 1e-5);
    check_against_gdft<double>(10, 1, 1, 1e-12);  // 1D also works
}

TEST_CASE("Gfft adjointness and round trip G/(G*x) = N x", "[Gfft][fft]") {
    FORGE_INFO_SEED();
    forge::Gfft<double> G(32, 24, 6);
    check_adjoint(G, adjoint_tolerance<double>(), DotScale::Norms);
    arma::cx_vec x = complex_normal<double>(G.n2());
    CHECK(rel_error(G / (G * x), arma::cx_vec(double(G.n2()) * x)) < 1e-12);
    // Batched transforms equal the single ones.
    forge::forgeCol<forge::forgeComplex<double>> xx(arma::join_cols(x, 2.0 * x));
    arma::cx_vec yb = G.forward_batch(xx, 2).to_arma();
    arma::cx_vec y1 = G * x;
    CHECK(rel_error(yb.head(G.n1()), y1) < 1e-14);
    CHECK(rel_error(yb.tail(G.n1()), arma::cx_vec(2.0 * y1)) < 1e-14);
    arma::cx_vec xb = G.adjoint_batch(forge::forgeCol<forge::forgeComplex<double>>(yb), 2).to_arma();
    CHECK(rel_error(xb.tail(G.n2()), arma::cx_vec(2.0 * double(G.n2()) * x)) < 1e-12);
}

TEST_CASE("Gfft rejects bad sizes", "[Gfft][fft][errors]") {
    CHECK_THROWS_AS(forge::Gfft<float>(15, 16, 1), forge::invalid_argument);
    CHECK_THROWS_AS(forge::Gfft<float>(16, 0, 1), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::Gfft<float>(16, 16, 3), Catch::Contains("Nz = 3"));
    forge::Gfft<float> G(8, 8);
    arma::cx_fvec wrong(63, arma::fill::ones);
    CHECK_THROWS_WITH(G * wrong, Catch::Contains("expected n2 = 64"));
    CHECK_THROWS_AS(G / wrong, forge::invalid_argument);
}

TEST_CASE("Gfft rejects grids whose size product wraps or whose axes FFTW cannot plan", "[Gfft][fft][errors][sizes]") {
    const forge::uword a = forge::uword(1) << 22;  // a^3 = 2^66 wraps to 0 pixels
    CHECK_THROWS_AS(forge::Gfft<float>(a, a, a), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::Gfft<double>(a, a, a), Catch::Contains("Nx * Ny * Nz = 4194304 * 4194304 * 4194304"));
    // FFTW and cuFFT take int dimensions: 2^32 would become 0.
    CHECK_THROWS_WITH(forge::Gfft<float>(forge::uword(1) << 32, 1, 1),
                      Catch::Contains("Nx = 4294967296 exceeds 2147483647") && Catch::Contains("int"));
    // A batch whose length wraps: 64 * 2^58 = 2^64 -> 0.
    forge::Gfft<float> G(8, 8);
    CHECK_THROWS_WITH(G.forward_batch(forge::forgeCol<forge::forgeComplex<float>>(), forge::uword(1) << 58),
                      Catch::Contains("nbatch"));
}

TEST_CASE("Gfft host batch equals one transform per vector, float and double", "[Gfft][fft][batch]") {
    FORGE_INFO_SEED();
    auto check = [](auto tag, arma::uword Nx, arma::uword Ny, arma::uword Nz) {
        using T1 = decltype(tag);
        using Vec = forge::forgeCol<forge::forgeComplex<T1>>;
        const forge::Gfft<T1> G(Nx, Ny, Nz);
        const arma::uword n = G.n2(), nb = 5;
        const arma::Col<std::complex<T1>> xs = complex_normal<T1>(n * nb);
        const arma::Col<std::complex<T1>> fb = G.forward_batch(Vec(xs), nb).to_arma();
        const arma::Col<std::complex<T1>> ab = G.adjoint_batch(Vec(xs), nb).to_arma();
        REQUIRE(fb.n_elem == n * nb);
        REQUIRE(ab.n_elem == n * nb);
        for (arma::uword b = 0; b < nb; ++b) {
            const arma::Col<std::complex<T1>> xb = xs.subvec(b * n, (b + 1) * n - 1);
            INFO("grid " << Nx << " x " << Ny << " x " << Nz << ", vector " << b);
            // The same FFTW plan on the same data: equal to rounding (identical in practice).
            const double tol = std::is_same<T1, float>::value ? 1e-6 : 1e-14;
            CHECK(rel_error(fb.subvec(b * n, (b + 1) * n - 1), G * xb) < tol);
            CHECK(rel_error(ab.subvec(b * n, (b + 1) * n - 1), G / xb) < tol);
        }
    };
    check(float(), 16, 12, 1);
    check(double(), 8, 6, 4);
}

TEMPLATE_TEST_CASE("Gfft: adjoint, normal and batch checks", "[Gfft][fft][checks]", float, double) {
    FORGE_INFO_SEED();
    auto checks = [&](arma::uword Nx, arma::uword Ny, arma::uword Nz) {
        INFO("grid " << Nx << " x " << Ny << " x " << Nz);
        const forge::Gfft<TestType> G(Nx, Ny, Nz);
        check_adjoint(G, adjoint_tolerance<TestType>(), DotScale::Norms);
        check_normal(G, 0.0);
        check_normal(G, 0.0, 3);
        check_batch(G, 3, 0.0);
    };
    checks(16, 12, 1);
    checks(8, 6, 4);
}
