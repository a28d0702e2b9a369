// Gnufft::set_points: new samples on the same grid, kernel and FFT plans give bit for bit the operator a fresh
// constructor makes (host transforms, forward and adjoint, float and double, fewer and more samples); bad samples are
// refused as the constructor refuses them and leave the operator as it was; copies keep their samples.
#include <complex>
#include <limits>

#include "TestHelpers.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge_test;
using arma::uword;

namespace {
template <typename T>
forge::Trajectory<T> random_samples(const forge::ImageGrid& g, uword n1) {
    auto axis = [&](uword N) {
        return N > 1 ? uniform<T>(n1, -double(N) / 2, double(N) / 2) : arma::Col<T>(n1, arma::fill::zeros);
    };
    return forge::Trajectory<T>(axis(g.nx), axis(g.ny), axis(g.nz));
}

// Forward of x and adjoint of y through G, and through a freshly made operator on the same samples: equal bit for bit.
template <typename T>
void check_equals_fresh(const forge::Gnufft<T>& G, const forge::ImageGrid& grid, const forge::Trajectory<T>& k,
                        const forge::NufftOptions& o) {
    const forge::Gnufft<T> fresh(grid, k, o);
    REQUIRE(G.n1() == k.n_samples());
    REQUIRE(G.codomain_size() == k.n_samples());
    const arma::Col<std::complex<T>> x = complex_normal<T>(grid.n_pixels()), y = complex_normal<T>(k.n_samples());
    CHECK(arma::all(arma::Col<std::complex<T>>(G * x) == arma::Col<std::complex<T>>(fresh * x)));
    CHECK(arma::all(arma::Col<std::complex<T>>(G / y) == arma::Col<std::complex<T>>(fresh / y)));
    for (int d = 0; d < 3; ++d) CHECK(G.grid_positions(d) == fresh.grid_positions(d));
    // A batch of two through the new points, too.
    const arma::Col<std::complex<T>> xx = arma::join_cols(x, x);
    const forge::forgeCol<forge::forgeComplex<T>> b = G.forward_batch(forge::forgeCol<forge::forgeComplex<T>>(xx), 2);
    CHECK(arma::all(b.to_arma() == fresh.forward_batch(forge::forgeCol<forge::forgeComplex<T>>(xx), 2).to_arma()));
}
}  // namespace

TEMPLATE_TEST_CASE("Gnufft::set_points equals a fresh Gnufft bit for bit: 2D and 3D, fewer and more samples",
                   "[Gnufft][nufft][set_points]", float, double) {
    FORGE_INFO_SEED();
    struct Case {
        forge::ImageGrid grid;
        forge::NufftOptions options;
    };
    forge::NufftOptions wide;
    wide.oversampling = 1.5;
    wide.kernel_width = 7;
    const Case cases[] = {{forge::ImageGrid(32, 24), forge::NufftOptions()},
                          {forge::ImageGrid(12, 10, 8), wide},
                          {forge::ImageGrid(16, 1, 6), forge::NufftOptions()}};  // an axis of length 1 inside
    for (const Case& c : cases) {
        INFO("grid " << c.grid.to_string() << ", W " << c.options.kernel_width);
        const forge::Trajectory<TestType> k1 = random_samples<TestType>(c.grid, 700);
        forge::Gnufft<TestType> G(c.grid, k1, c.options);
        for (const uword n1 : {uword(300), uword(2500), uword(1)}) {
            INFO(n1 << " samples");
            const forge::Trajectory<TestType> k = random_samples<TestType>(c.grid, n1);
            G.set_points(k);
            check_equals_fresh(G, c.grid, k, c.options);
        }
        // The kx, ky, kz overload, back to the first samples.
        G.set_points(k1.kx, k1.ky, k1.kz);
        check_equals_fresh(G, c.grid, k1, c.options);
        CHECK(G.domain_shape() == c.grid);
    }
}

TEST_CASE("Gnufft::set_points keeps the grid, kernel and accuracy of the operator", "[Gnufft][nufft][set_points]") {
    const forge::ImageGrid grid(16, 16);
    forge::Gnufft<double> G(grid, random_samples<double>(grid, 100), forge::NufftOptions::for_tolerance(1e-8));
    const uword W = G.kernel_width(), gx = G.grid_size(0);
    const double beta = G.beta(), tol = G.tolerance();
    const std::vector<double> coef = G.kernel_coefficients();
    G.set_points(random_samples<double>(grid, 333));
    CHECK(G.kernel_width() == W);
    CHECK(G.grid_size(0) == gx);
    CHECK(G.beta() == beta);
    CHECK(G.tolerance() == tol);
    CHECK(G.kernel_coefficients() == coef);
    CHECK(G.n2() == 256);
}

TEST_CASE("Gnufft::set_points refuses bad samples as the constructor does, and the operator stays as it was",
          "[Gnufft][nufft][set_points][errors]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(16, 16);
    const forge::Trajectory<float> k = random_samples<float>(grid, 40);
    forge::Gnufft<float> G(grid, k);
    const arma::cx_fvec x = complex_normal<float>(256);
    const arma::cx_fvec before = G * x;

    const arma::fvec z10(10, arma::fill::zeros), kx10 = uniform<float>(10, -8, 8);
    CHECK_THROWS_WITH(G.set_points(kx10, arma::fvec(9, arma::fill::zeros), z10),
                      Catch::Contains("Gnufft::set_points: ky has 9 entries"));
    CHECK_THROWS_WITH(G.set_points(kx10, z10, arma::fvec(11, arma::fill::zeros)), Catch::Contains("kz has 11 entries"));
    CHECK_THROWS_WITH(G.set_points(arma::fvec(), arma::fvec(), arma::fvec()), Catch::Contains("must be at least 1"));
    arma::fvec bad = kx10;
    bad(3) = 8.5f;
    CHECK_THROWS_WITH(G.set_points(bad, z10, z10), Catch::Contains("kx[3] = 8.5 is outside [-8, 8] cycles/FOV"));
    bad(3) = -8.5f;
    CHECK_THROWS_WITH(G.set_points(z10, bad, z10), Catch::Contains("ky[3] = -8.5 is outside"));
    arma::fvec kz = z10;
    kz(0) = 1.0f;  // 2D grid: kz in [-1/2, 1/2]
    CHECK_THROWS_WITH(G.set_points(kx10, z10, kz), Catch::Contains("kz[0] = 1 is outside [-0.5, 0.5]"));
    bad = kx10;
    bad(2) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(G.set_points(bad, z10, z10), forge::invalid_argument);
    bad(2) = std::numeric_limits<float>::infinity();
    CHECK_THROWS_AS(G.set_points(forge::Trajectory<float>(bad, z10, z10)), forge::invalid_argument);
    // The constructor refuses the same samples.
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, forge::Trajectory<float>(kx10, z10, kz)),
                      Catch::Contains("kz[0] = 1 is outside [-0.5, 0.5]"));

    // Unchanged: the sizes and the transform.
    CHECK(G.n1() == 40);
    CHECK(arma::all(arma::cx_fvec(G * x) == before));
    CHECK_THROWS_WITH(G / arma::cx_fvec(10, arma::fill::ones), Catch::Contains("expected n1 = 40"));
    // The band edge +N/2 is a sample, as in the constructor.
    bad = kx10;
    bad(3) = 8.0f;
    CHECK_NOTHROW(G.set_points(bad, z10, z10));
    CHECK(G.n1() == 10);
    CHECK_THROWS_WITH(G / arma::cx_fvec(40, arma::fill::ones), Catch::Contains("expected n1 = 10"));
}

TEST_CASE("Gnufft::set_points on a copy leaves the original's samples", "[Gnufft][nufft][set_points]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(20, 12);
    const forge::Trajectory<float> k1 = random_samples<float>(grid, 500), k2 = random_samples<float>(grid, 800);
    const forge::Gnufft<float> G(grid, k1);
    forge::Gnufft<float> copy = G;
    copy.set_points(k2);
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels());
    CHECK(G.n1() == 500);
    CHECK(arma::all(arma::cx_fvec(G * x) == arma::cx_fvec(forge::Gnufft<float>(grid, k1) * x)));
    CHECK(arma::all(arma::cx_fvec(copy * x) == arma::cx_fvec(forge::Gnufft<float>(grid, k2) * x)));
}

TEST_CASE("Gnufft from forgeCol samples on the host equals Gnufft from arma columns", "[Gnufft][set_points]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(24, 20), forge::ImageGrid(12, 10, 8)}) {
        INFO("grid " << grid.to_string());
        const forge::Trajectory<float> k = random_samples<float>(grid, 700);
        const forge::NufftOptions o = forge::NufftOptions::for_tolerance(1e-4);
        const forge::Gnufft<float> G(k.n_samples(), grid.nx, grid.ny, grid.nz, forge::forgeCol<float>(k.kx),
                                     forge::forgeCol<float>(k.ky), forge::forgeCol<float>(k.kz), o);
        check_equals_fresh(G, grid, k, o);
        // Lengths are checked against n1 and named.
        CHECK_THROWS_WITH(forge::Gnufft<float>(k.n_samples(), grid.nx, grid.ny, grid.nz, forge::forgeCol<float>(k.kx),
                                               forge::forgeCol<float>(arma::fvec(k.ky.head(699))),
                                               forge::forgeCol<float>(k.kz), o),
                          Catch::Contains("ky has 699 entries"));
    }
}

TEST_CASE("Gnufft: a sample a float rounding past the band edge is the edge sample; farther is refused with its digits",
          "[nufft][band]") {
    FORGE_INFO_SEED();
    // gpuNUFFT's 3D radial trajectory holds -0.50000006 (float) of a 160-pixel axis: -80.0000096 cycles/FOV.
    const uword N = 160;
    const forge::ImageGrid grid{N, N};
    arma::fvec kx = uniform<float>(64, -80, 80), ky = uniform<float>(64, -80, 80), kz(64, arma::fill::zeros);
    kx[7] = -0.50000006f * float(N);
    ky[9] = 0.50000006f * float(N);
    REQUIRE(double(kx[7]) < -80.0);
    forge::Gnufft<float> G(grid, forge::Trajectory<float>(kx, ky, kz));
    arma::fvec ex = kx, ey = ky;
    ex[7] = -80.0f;
    ey[9] = 80.0f;
    forge::Gnufft<float> E(grid, forge::Trajectory<float>(ex, ey, kz));
    const arma::cx_fvec x = complex_normal<float>(N * N);
    const arma::cx_fvec a = G * x, b = E * x;
    CHECK(arma::norm(a - b) <= 1e-5 * arma::norm(b));  // the same samples, to float rounding
    CHECK(a.is_finite());
    // a thousandth of a cycle past the edge is no rounding: refused, with the digits that show it
    arma::fvec far = kx;
    far[7] = -80.001f;
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, forge::Trajectory<float>(far, ky, kz)),
                      Catch::Contains("kx[7] = -80.0009995 is outside [-80, 80] cycles/FOV (grid size x = 160)"));
    CHECK_THROWS_WITH(G.set_points(far, ky, kz), Catch::Contains("kx[7] = -80.0009995"));
}
