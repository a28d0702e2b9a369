// ToeplitzNormal's kernel build: its progress reports (and forge-recon's ETA around them), and the input it refuses
// before building anything.
#include <chrono>
#include <thread>
#include <vector>

#include "ToeplitzTestProblem.h"
#include "apps/forge-recon/Progress.h"

using namespace toeplitz_test;

TEST_CASE("ToeplitzNormal reports its kernel build's progress: steps 0 .. total, in order", "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Call {
        uword done, total;
        double seconds;
    };
    // Checks the calls of one build: done = 0 first, then one call per step up to total.
    auto check_calls = [](const std::vector<Call>& calls) {
        REQUIRE(calls.size() >= 3);
        const uword total = calls.front().total;
        CHECK(calls.front().done == 0);
        CHECK(calls.back().done == total);
        CHECK(calls.size() == total + 1);
        for (std::size_t i = 1; i < calls.size(); ++i) {
            CHECK(calls[i].total == total);
            CHECK(calls[i].done > calls[i - 1].done);
            CHECK(calls[i].seconds >= calls[i - 1].seconds);
        }
    };
    std::vector<Call> calls;
    const forge::ToeplitzBuildProgress record = [&](uword d, uword n, double s) { calls.push_back({d, n, s}); };

    // Full DFT in parts of the padded grid's cells (96 x 88 cells: two parts), field-free and with a field map; the
    // parts make the exact kernels.
    const Grid g{48, 44, 1};
    const Trajectory tr = random_trajectory(g, 2500, 8e-3);
    const forge::ToeplitzNormal<float> free(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                            as<float>(tr.W), host_build(forge::AxisGrouping::Auto, record));
    check_calls(calls);
    CHECK(calls.size() == 5);  // start, pair data, two parts of the DFT, FFTs
    CHECK(normal_error(free, ExactNormal(g, tr, arma::zeros(g.n2()))) <= toeplitz_tolerance(free, tr.kx.n_elem));
    calls.clear();
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
    const forge::ToeplitzNormal<double> field(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, 3,
                                              forge::TSInterp::MinMax, host_build(forge::AxisGrouping::Auto, record));
    check_calls(calls);
    CHECK(batch_error(field, SegmentedNormal(g, tr, fm, 3, double()), 1) <= 1e-11);

    // Grouped along a Cartesian z: one step per group.
    calls.clear();
    const Grid g3{10, 8, 6};
    const Trajectory stack = cartesian_along(g3, 2, 900, 0);
    const forge::ToeplitzNormal<float> grouped(g3.Nx, g3.Ny, g3.Nz, as<float>(stack.kx), as<float>(stack.ky),
                                               as<float>(stack.kz), as<float>(stack.W),
                                               host_build(forge::AxisGrouping::Auto, record));
    CHECK(grouped.grouped_axis() == 2);
    check_calls(calls);
    CHECK(calls.size() == arma::uvec(arma::find_unique(stack.kz)).n_elem + 3);
}

TEST_CASE("forge-recon's progress: the ETA extrapolates the iterations, not the Toeplitz kernel build", "[Toeplitz]") {
    forge_recon::Progress p(10, true);  // quiet: counts without printing
    p.build("recon", 0, 4, 0.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    p.build("recon", 4, 4, 0.3);
    p.iteration("recon", 1, 10, 1.0, 1.0);  // an iteration that took no time
    INFO("ETA " << p.eta() << " s after a 0.3 s build and one instant iteration of 10");
    CHECK(p.eta() < 0.25);  // counting the build as the first iteration's time would give 9 x 0.3 s
    CHECK(p.eta() >= 0.0);
}

TEST_CASE("ToeplitzNormal refuses bad input with a clear message", "[Toeplitz]") {
    const arma::fvec k = uniform<float>(50, -4, 4), W(50, arma::fill::ones),
                     t = arma::linspace<arma::fvec>(0, 1e-3, 50);
    using N = forge::ToeplitzNormal<float>;
    CHECK_THROWS_WITH(N(8, 8, 1, k, k.head(49), k, W),
                      Catch::Contains("ky has 49 entries, expected the length of kx = 50"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W.head(3)), Catch::Contains("W has 3 entries"));
    arma::fvec bad = k;
    bad[7] = NAN;
    CHECK_THROWS_WITH(N(8, 8, 1, bad, k, k, W), Catch::Contains("kx"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, arma::fvec(-W)), Catch::Contains("W must be non-negative"));
    CHECK_THROWS_WITH(N(8, 0, 1, k, k, k, W), Catch::Contains("each of Nx, Ny, Nz must be at least 1"));
    CHECK_THROWS_WITH(N(8, 8, 1, arma::fvec(), arma::fvec(), arma::fvec(), arma::fvec()),
                      Catch::Contains("kx is empty"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W, arma::fvec(63, arma::fill::zeros), t, 2),
                      Catch::Contains("field_map has 63 entries, expected Nx * Ny * Nz = 64"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W, arma::fvec(64, arma::fill::zeros), t.head(10), 2),
                      Catch::Contains("timeVec has 10 entries"));
    // Kernels that cannot fit are refused before anything of their size is allocated: at 256^3 pixels and
    // L = 40 they would take 925 GB, more than half of any machine's memory this runs on (at 128^3, 115 GB,
    // fit in half of a 256 GiB machine).
    const double need = N::kernel_bytes(128, 128, 128, 40);
    CHECK(need == 861.0 * 256 * 256 * 256 * 8);
    CHECK(N::kernel_bytes(256, 256, 256, 40) == 861.0 * 512 * 512 * 512 * 8);
    CHECK_THROWS_WITH(N(256, 256, 256, k, k, k, W, arma::fvec(256 * 256 * 256, arma::fill::zeros), t, 40),
                      Catch::Contains("the kernels of L = 40 segments would take up to"));
    CHECK_THROWS_WITH(N::choose_segments(arma::fvec(64, arma::fill::zeros), t, 0), Catch::Contains("targetError"));
}
