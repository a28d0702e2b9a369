// The geometry constructors of the grid operators (Gfft, GfftSampled, Gnufft, ToeplitzNormal: an ImageGrid, a
// Trajectory, options) make bit for bit the operators of the positional ones, and each reports its image grid as
// domain_shape().
#include <complex>

#include "TestHelpers.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

using namespace forge_test;
using arma::uword;

namespace {
// A and B give equal results, bit for bit, forward and adjoint on random vectors.
template <typename T, typename A, typename B>
void check_same_operator(const A& a, const B& b) {
    REQUIRE(a.domain_size() == b.domain_size());
    REQUIRE(a.codomain_size() == b.codomain_size());
    const arma::Col<std::complex<T>> x = complex_normal<T>(a.domain_size()), y = complex_normal<T>(a.codomain_size());
    CHECK(arma::all(arma::Col<std::complex<T>>(a * x) == arma::Col<std::complex<T>>(b * x)));
    CHECK(arma::all(arma::Col<std::complex<T>>(a / y) == arma::Col<std::complex<T>>(b / y)));
}

template <typename T>
arma::Col<T> band(uword n1, uword N) {
    return N > 1 ? uniform<T>(n1, -double(N) / 2, double(N) / 2) : arma::Col<T>(n1, arma::fill::zeros);
}
}  // namespace

TEMPLATE_TEST_CASE("Gfft(ImageGrid) equals Gfft(Nx, Ny, Nz); domain_shape() is the grid", "[Gfft][fft][geometry]", float,
                   double) {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(8, 6), forge::ImageGrid(4, 6, 2), forge::ImageGrid(6)}) {
        INFO("grid " << grid.to_string());
        const forge::Gfft<TestType> a(grid), b(grid.nx, grid.ny, grid.nz);
        check_same_operator<TestType>(a, b);
        CHECK(a.domain_shape() == grid);
        CHECK(b.domain_shape() == grid);
    }
}

TEMPLATE_TEST_CASE("GfftSampled(image, FFT grid, trajectory) equals the positional form; domain_shape() is the image",
                   "[GfftSampled][fft][geometry]", float, double) {
    FORGE_INFO_SEED();
    const forge::ImageGrid image(8, 6), fft(16, 6);
    // Samples on the FFT grid's k-space lattice: multiples of N/M = 1/2 along x, integers along y, repeated ones too.
    const uword n1 = 40;
    arma::Col<TestType> kx(n1), ky(n1), kz(n1, arma::fill::zeros);
    const arma::Col<TestType> u = uniform<TestType>(n1, 0, 1);
    for (uword j = 0; j < n1; ++j) {
        kx[j] = TestType(0.5 * double(int(u[j] * 16) - 8));
        ky[j] = TestType(int(u[(j * 7) % n1] * 6) - 3);
    }
    const forge::GfftSampled<TestType> a(image, fft, forge::Trajectory<TestType>(kx, ky, kz));
    const forge::GfftSampled<TestType> b(8, 6, 1, 16, 6, 1, kx, ky, kz);
    check_same_operator<TestType>(a, b);
    CHECK(a.domain_shape() == image);
    CHECK(b.domain_shape() == image);
}

TEMPLATE_TEST_CASE("Gnufft(ImageGrid, Trajectory, options) equals the positional form; domain_shape() is the grid",
                   "[Gnufft][nufft][geometry]", float, double) {
    FORGE_INFO_SEED();
    forge::NufftOptions o;
    o.oversampling = 1.75;
    o.kernel_width = 6;
    for (const forge::ImageGrid grid : {forge::ImageGrid(20, 16), forge::ImageGrid(10, 8, 6)}) {
        INFO("grid " << grid.to_string());
        const uword n1 = 600;
        const forge::Trajectory<TestType> k(band<TestType>(n1, grid.nx), band<TestType>(n1, grid.ny),
                                            band<TestType>(n1, grid.nz), arma::Col<TestType>(n1, arma::fill::ones));
        const forge::Gnufft<TestType> a(grid, k, o), b(n1, grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, o);
        check_same_operator<TestType>(a, b);
        CHECK(a.kernel_width() == 6);
        CHECK(a.domain_shape() == grid);
        CHECK(b.domain_shape() == grid);
        // The geometry form checks k as the positional one does.
        const forge::Trajectory<TestType> shortKy(k.kx, arma::Col<TestType>(n1 - 1, arma::fill::zeros), k.kz);
        CHECK_THROWS_WITH(forge::Gnufft<TestType>(grid, shortKy), Catch::Contains("ky has 599 entries"));
    }
}

TEMPLATE_TEST_CASE("ToeplitzNormal(ImageGrid, Trajectory, W[, field_map, L], options) equals the positional forms",
                   "[Toeplitz][geometry]", float, double) {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(10, 7, 3);  // odd sizes are allowed here
    const uword n1 = 400;
    const forge::Trajectory<TestType> k(band<TestType>(n1, grid.nx), band<TestType>(n1, grid.ny),
                                        band<TestType>(n1, grid.nz), arma::linspace<arma::Col<TestType>>(0, 5e-3, n1));
    const arma::Col<TestType> W = uniform<TestType>(n1, 0.5, 1.5);
    const arma::Col<TestType> fm = uniform<TestType>(grid.n_pixels(), -300, 300);
    forge::ToeplitzOptions o;
    o.build = forge::KernelBuild::Host;

    const forge::ToeplitzNormal<TestType> a(grid, k, W, o), b(grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, W, o);
    check_same_operator<TestType>(a, b);
    CHECK(a.domain_shape() == grid);
    CHECK(b.domain_shape() == grid);

    const forge::ToeplitzNormal<TestType> c(grid, k, W, fm, 3, forge::TSInterp::Hanning, o);
    const forge::ToeplitzNormal<TestType> d(grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, W, fm, k.t, 3,
                                            forge::TSInterp::Hanning, o);
    check_same_operator<TestType>(c, d);
    CHECK(c.segments() == 3);
    CHECK(c.domain_shape() == grid);
    // Default interpolator (min-max) and options.
    const forge::ToeplitzNormal<TestType> e(grid, k, W, fm, 2), f(grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, W, fm,
                                                                   k.t, 2, forge::TSInterp::MinMax);
    check_same_operator<TestType>(e, f);
    // The field-corrected form needs the readout times.
    const forge::Trajectory<TestType> noTimes(k.kx, k.ky, k.kz);
    CHECK_THROWS_WITH(forge::ToeplitzNormal<TestType>(grid, noTimes, W, fm, 2),
                      Catch::Contains("no readout times (k.t is empty)"));
}
