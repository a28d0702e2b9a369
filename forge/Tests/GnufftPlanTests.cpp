// Gnufft's host plan (cpu/SortPoints.cpp): the parallel slab sort gives the same plan whatever the thread count (the
// transforms bit for bit), positions in grid units as the documented formula gives them, set_points on large
// trajectories equal to fresh operators, the serial checks' messages for bad samples found by the parallel pass, and
// plan_times() filled in.
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "TestHelpers.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge_test;
using arma::uword;

namespace {
// Enough samples that the sort runs on several threads (it stays on one below 16384).
constexpr uword kMany = 40000;

template <typename T>
forge::Trajectory<T> random_samples(const forge::ImageGrid& g, uword n1) {
    auto axis = [&](uword N) {
        return N > 1 ? uniform<T>(n1, -double(N) / 2, double(N) / 2) : arma::Col<T>(n1, arma::fill::zeros);
    };
    return forge::Trajectory<T>(axis(g.nx), axis(g.ny), axis(g.nz));
}
// Most samples in a small patch near the centre (crowded slabs and tiles), some on both band edges.
template <typename T>
forge::Trajectory<T> clustered_samples(const forge::ImageGrid& g, uword n1) {
    forge::Trajectory<T> k = random_samples<T>(g, n1);
    const uword N[3] = {g.nx, g.ny, g.nz};
    arma::Col<T>* c[3] = {&k.kx, &k.ky, &k.kz};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 1) continue;
        for (uword j = 0; j < n1; ++j) {
            if (j % 10 != 0) (*c[d])(j) = T((*c[d])(j) / T(N[d]) * 3);  // within +-1.5 cycles/FOV
        }
        (*c[d])(1) = T(N[d] / 2);
        (*c[d])(2) = -T(N[d] / 2);
    }
    return k;
}

struct Threads {
    explicit Threads(int n) {
#ifdef _OPENMP
        saved = omp_get_max_threads();
        omp_set_num_threads(n);
#else
        (void)n;
#endif
    }
    ~Threads() {
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
    }
    int saved = 1;
};

template <typename T>
using CVec = arma::Col<std::complex<T>>;

template <typename T>
void check_thread_independent(const forge::ImageGrid& grid, const forge::Trajectory<T>& k) {
    const CVec<T> x = complex_normal<T>(grid.n_pixels()), y = complex_normal<T>(k.n_samples());
    CVec<T> f1, a1, f3, a3;
    std::vector<T> u1[3];
    {
        Threads one(1);
        const forge::Gnufft<T> G(grid, k);
        for (int d = 0; d < 3; ++d) u1[d] = G.grid_positions(d);
        f1 = G * x;
        a1 = G / y;
    }
    Threads three(3);  // more threads than this machine may have: still one plan
    const forge::Gnufft<T> G(grid, k);
    f3 = G * x;
    a3 = G / y;
    CHECK(arma::all(f1 == f3));
    CHECK(arma::all(a1 == a3));
    for (int d = 0; d < 3; ++d) CHECK(G.grid_positions(d) == u1[d]);
    // Positions in grid units: u = k G / N in double, wrapped into [0, G), then rounded to T (0 on axes of length 1).
    const arma::Col<T>* kc[3] = {&k.kx, &k.ky, &k.kz};
    const uword N[3] = {grid.nx, grid.ny, grid.nz};
    uword wrong = 0;
    for (int d = 0; d < 3; ++d) {
        const double Gd = double(G.grid_size(d));
        for (uword j = 0; j < k.n_samples(); ++j) {
            T want = T(0);
            if (N[d] > 1) {
                double u = double((*kc[d])(j)) * Gd / double(N[d]);
                if (u < 0) u += Gd;
                want = T(u);
                if (want >= T(Gd)) want = T(0);
            }
            wrong += G.grid_positions(d)[j] != want;
        }
    }
    CHECK(wrong == 0);
    // And the plan is the operator's: close to the exact DFT on a subset of samples.
    const uword ns = 60;
    const arma::uvec sub = arma::regspace<arma::uvec>(0, k.n_samples() / ns, k.n_samples() - 1).head(ns);
    forge::Gfft<double> cart(grid.nx, grid.ny, grid.nz);
    const arma::mat r = cart.image_coords();
    const arma::vec kx = arma::conv_to<arma::vec>::from(k.kx), ky = arma::conv_to<arma::vec>::from(k.ky),
                    kz = arma::conv_to<arma::vec>::from(k.kz);
    forge::Gdft<double> exact(ns, grid.n_pixels(), arma::vec(kx(sub)), arma::vec(ky(sub)), arma::vec(kz(sub)), r.col(0),
                              r.col(1), r.col(2), arma::vec(grid.n_pixels(), arma::fill::zeros),
                              arma::vec(ns, arma::fill::zeros));
    const arma::cx_vec ref = exact * arma::conv_to<arma::cx_vec>::from(x);
    CHECK(rel_error(arma::conv_to<arma::cx_vec>::from(CVec<T>(f3(sub))), ref) < 1e-3);
}
}  // namespace

TEMPLATE_TEST_CASE("Gnufft host plan: the parallel sort gives the same transforms bit for bit on 1 and 3 threads",
                   "[Gnufft][nufft][plan]", float, double) {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid :
         {forge::ImageGrid(64, 48), forge::ImageGrid(24, 20, 16), forge::ImageGrid(32, 1, 12)}) {
        INFO("grid " << grid.to_string());
        SECTION("random") { check_thread_independent<TestType>(grid, random_samples<TestType>(grid, kMany)); }
        SECTION("clustered, with band edges") {
            check_thread_independent<TestType>(grid, clustered_samples<TestType>(grid, kMany));
        }
    }
}

TEST_CASE("Gnufft host plan: set_points on large trajectories (grow and shrink) equals a fresh operator",
          "[Gnufft][nufft][plan][set_points]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(40, 36, 10);
    forge::Gnufft<float> G(grid, random_samples<float>(grid, kMany));
    for (const uword n1 : {uword(3 * kMany), uword(kMany / 2), uword(20000)}) {
        INFO(n1 << " samples");
        const forge::Trajectory<float> k =
            n1 == 20000 ? clustered_samples<float>(grid, n1) : random_samples<float>(grid, n1);
        G.set_points(k);
        const forge::Gnufft<float> fresh(grid, k);
        const CVec<float> x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(n1);
        CHECK(arma::all(CVec<float>(G * x) == CVec<float>(fresh * x)));
        CHECK(arma::all(CVec<float>(G / y) == CVec<float>(fresh / y)));
    }
}

TEST_CASE("Gnufft host plan: the parallel check names the first bad sample as the serial checks do",
          "[Gnufft][nufft][plan][validation]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(32, 32);
    const forge::Trajectory<float> good = random_samples<float>(grid, kMany);
    forge::Gnufft<float> G(grid, good);
    const CVec<float> x = complex_normal<float>(grid.n_pixels());
    const CVec<float> before = G * x;
    Threads two(2);
    // ky is out of band early, kx is not finite late: kx is checked first (all of it), so kx names the error.
    forge::Trajectory<float> k = good;
    k.ky(5000) = 17.f;
    k.kx(30001) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(G.set_points(k), Catch::Contains("Gnufft::set_points: kx[30001] is nan"));
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, k), Catch::Contains("Gnufft: kx[30001] is nan"));
    k.kx(30001) = 0.f;
    CHECK_THROWS_WITH(G.set_points(k),
                      Catch::Contains(
                          "Gnufft::set_points: ky[5000] = 17 is outside [-16, 16] cycles/FOV (grid size y = 32)"));
    // Out of band on the axis of length 1 of a 2D image.
    k.ky(5000) = 0.f;
    k.kz(12345) = 0.75f;
    CHECK_THROWS_WITH(G.set_points(k), Catch::Contains("kz[12345] = 0.75 is outside [-0.5, 0.5]"));
    // The operator kept its samples.
    CHECK(G.n1() == kMany);
    CHECK(arma::all(CVec<float>(G * x) == before));
}

TEST_CASE("Gnufft::plan_times: a host operator reports its check, sort and FFTW plan", "[Gnufft][nufft][plan]") {
    const forge::ImageGrid grid(48, 40, 8);
    const forge::Gnufft<double> G(grid, random_samples<double>(grid, kMany));
    const forge::Gnufft<double>::PlanTimes t = G.plan_times();
    CHECK(t.host_check > 0);
    CHECK(t.host_sort > 0);
    CHECK(t.fft_plan > 0);
    CHECK(t.upload == 0);
    CHECK(t.device_sort == 0);
    CHECK_THROWS_AS(G.grid_positions(3), forge::invalid_argument);
}

TEST_CASE("Gnufft::set_points from host forgeCols equals the arma::Col overload", "[Gnufft][nufft][plan][set_points]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(30, 26, 6);
    const forge::Trajectory<double> k0 = random_samples<double>(grid, 500), k = random_samples<double>(grid, kMany);
    forge::Gnufft<double> A(grid, k0), B(grid, k0);
    A.set_points(k.kx, k.ky, k.kz);
    B.set_points(forge::forgeCol<double>(k.kx), forge::forgeCol<double>(k.ky), forge::forgeCol<double>(k.kz));
    const CVec<double> x = complex_normal<double>(grid.n_pixels());
    CHECK(arma::all(CVec<double>(A * x) == CVec<double>(B * x)));
    arma::vec bad = k.kx;
    bad(4321) = 15.5;
    CHECK_THROWS_WITH(B.set_points(forge::forgeCol<double>(bad), forge::forgeCol<double>(k.ky),
                                   forge::forgeCol<double>(k.kz)),
                      Catch::Contains("Gnufft::set_points: kx[4321] = 15.5 is outside [-15, 15]"));
}
