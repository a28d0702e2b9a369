// ToeplitzNormal with kernels built by NUFFT (ToeplitzOptions::source = KernelSource::Nufft) against the exact
// float64 G^H W G (brute-force Gdft<double>) and the same time segmentation in float64, against the kernels of the
// exact DFT build; what KernelSource::Auto picks; option values it refuses.
#include <algorithm>
#include <string>
#include <vector>

#include "ToeplitzTestProblem.h"

using namespace toeplitz_test;

namespace {

// A random trajectory with a fifth of its samples moved outside the grid's band (up to 0.8 N): the kernel is
// periodic in k at its integer offsets, so the NUFFT wraps them; the exact G^H W G takes them as they are.
Trajectory beyond_band(const Grid& g, uword n1) {
    Trajectory tr = random_trajectory(g, n1, 6e-3);
    for (uword j = 0; j < n1; j += 5) {
        tr.kx[j] *= 1.6;
        if (g.Ny > 1) tr.ky[j] *= 1.6;
        if (g.Nz > 1) tr.kz[j] *= 1.6;
    }
    return tr;
}

}  // namespace

TEST_CASE("ToeplitzNormal with NUFFT kernels equals the exact G^H W G: 2D, 3D, odd sizes, axes of length 1",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    for (const Grid& g :
         {Grid{16, 12, 1}, Grid{15, 9, 1}, Grid{10, 8, 6}, Grid{9, 7, 5}, Grid{1, 12, 10}, Grid{12, 1, 8}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = beyond_band(g, 2 * g.n2());
        const ExactNormal ref(g, tr, arma::zeros(g.n2()));
        const auto Nf = field_free<float>(g, tr, with_source(forge::KernelSource::Nufft));
        const auto Nd = field_free<double>(g, tr, with_source(forge::KernelSource::Nufft));
        CHECK(Nf.kernel_source() == forge::KernelSource::Nufft);
        CHECK(Nd.kernel_source() == forge::KernelSource::Nufft);
        CHECK(Nf.grouped_axis() == 3);
        CHECK(Nf.build_times().dft > 0);
        CHECK(Nf.build_times().dft <= Nf.build_times().total);
        CHECK(normal_error(Nf, ref) <= toeplitz_tolerance(Nf, tr.kx.n_elem, 1e-6));
        CHECK(normal_error(Nd, ref) <= 1e-9);
    }
}

TEST_CASE("ToeplitzNormal's NUFFT kernels equal the exact DFT's kernels at every offset", "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    for (const Grid& g : {Grid{14, 10, 1}, Grid{8, 9, 6}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = beyond_band(g, 3 * g.n2());
        const arma::cx_vec qf = kernel_columns(field_free<float>(g, tr, with_source(forge::KernelSource::Nufft)));
        const arma::cx_vec qd = kernel_columns(field_free<double>(g, tr, with_source(forge::KernelSource::Nufft)));
        const arma::cx_vec q = kernel_columns(field_free<double>(g, tr, with_source(forge::KernelSource::Exact)));
        const double scale = arma::abs(q).max();  // q(0) = sum_j W_j
        CHECK(arma::abs(qf - q).max() <= 2e-6 * scale);
        CHECK(arma::abs(qd - q).max() <= 1e-10 * scale);
    }
}

TEST_CASE("ToeplitzNormal with NUFFT kernels and a field map: the time segmentation's operator, and the exact one",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    for (const Grid& g : {Grid{16, 14, 1}, Grid{10, 8, 6}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 2 * g.n2(), 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const auto nufft = with_source(forge::KernelSource::Nufft);
        // Against the same segmentation in float64: the kernels' own error.
        const uword L = 3;
        const auto Nf = field_corrected<float>(g, tr, fm, L, nufft);
        const auto Nd = field_corrected<double>(g, tr, fm, L, nufft);
        CHECK(Nf.kernel_source() == forge::KernelSource::Nufft);
        CHECK(batch_error(Nf, SegmentedNormal(g, tr, fm, L, float()), 2) <= toeplitz_tolerance(Nf, tr.kx.n_elem, 1e-6));
        CHECK(batch_error(Nd, SegmentedNormal(g, tr, fm, L, double()), 2) <= 1e-9);
        // Against the exact G^H W G: L chosen for 1e-3 meets it with NUFFT kernels too.
        const uword Lc = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), 1e-3);
        const ExactNormal exact(g, tr, fm);
        CHECK(normal_error(field_corrected<float>(g, tr, fm, Lc, nufft), exact) <= 1e-3);
        CHECK(normal_error(field_corrected<double>(g, tr, fm, Lc, nufft), exact) <= 1e-3);
    }
}

TEST_CASE("ToeplitzNormal with NUFFT kernels on a stack (a Cartesian axis): by slabs, or on the whole grid without "
          "grouping; the exact operator",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 6};
    const Trajectory tr = shared_stack(g, 2, 3 * g.Nx * g.Ny, 0);  // the same in-plane samples in every plane
    const ExactNormal ref(g, tr, arma::zeros(g.n2()));
    const auto N = field_free<float>(g, tr, with_source(forge::KernelSource::Nufft));
    CHECK(N.kernel_source() == forge::KernelSource::Nufft);
    CHECK(N.grouped_axis() == 2);  // 2D NUFFTs of the slabs across z, expanded along z
    CHECK(normal_error(N, ref) <= toeplitz_tolerance(N, tr.kx.n_elem, 1e-6));
    const auto whole = field_free<float>(g, tr, with_source(forge::KernelSource::Nufft, forge::AxisGrouping::Off));
    CHECK(whole.kernel_source() == forge::KernelSource::Nufft);
    CHECK(whole.grouped_axis() == 3);
    CHECK(normal_error(whole, ref) <= toeplitz_tolerance(whole, tr.kx.n_elem, 1e-6));
    const auto E = field_free<float>(g, tr, with_source(forge::KernelSource::Exact));
    CHECK(E.kernel_source() == forge::KernelSource::Exact);
    CHECK(E.grouped_axis() == 2);
}

TEST_CASE("ToeplitzNormal's NUFFT build reports its progress: steps 0 .. total, in order",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    struct Call {
        uword done, total;
    };
    std::vector<Call> calls;
    forge::ToeplitzOptions o = with_source(forge::KernelSource::Nufft);
    o.progress = [&](uword d, uword n, double) { calls.push_back({d, n}); };
    const Grid g{48, 44, 1};
    const Trajectory tr = random_trajectory(g, 2000, 8e-3);
    const auto N = field_corrected<float>(g, tr, smooth_field_map(g, 2 * kPi * 80), 3, o);
    REQUIRE(calls.size() >= 3);
    CHECK(calls.front().done == 0);
    CHECK(calls.back().done == calls.front().total);
    for (std::size_t i = 1; i < calls.size(); ++i) {
        CHECK(calls[i].total == calls.front().total);
        CHECK(calls[i].done > calls[i - 1].done);
    }
    CHECK(N.kernel_source() == forge::KernelSource::Nufft);
}

TEST_CASE("KernelSource::Auto: exact where it is cheap or the grid is 1D, NUFFT where the exact DFTs cost more",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    const auto autoSource = with_source(forge::KernelSource::Auto);
    CHECK(forge::ToeplitzOptions().source == forge::KernelSource::Auto);
    // Small: the exact build, whatever the precision.
    const Grid small{16, 12, 1};
    const Trajectory trs = random_trajectory(small, 500, 0);
    CHECK(field_free<float>(small, trs, autoSource).kernel_source() == forge::KernelSource::Exact);
    CHECK(field_free<double>(small, trs, autoSource).kernel_source() == forge::KernelSource::Exact);
    // 64 x 48 with 8192 samples: the exact DFTs (8192 x 12288 phases) are estimated at about 0.3 s in float, above
    // the 0.25 s floor and far above the NUFFT's, and at about 0.75 s in double, under its 2 s floor.
    const Grid mid{64, 48, 1};
    const Trajectory trm = random_trajectory(mid, 8192, 0);
    CHECK(field_free<float>(mid, trm, autoSource).kernel_source() == forge::KernelSource::Nufft);
    CHECK(field_free<double>(mid, trm, autoSource).kernel_source() == forge::KernelSource::Exact);
    // 128 x 128 with 16384 samples: double's exact DFTs (about 8 s) are far above ten times the NUFFT's.
    const Grid big{128, 128, 1};
    const Trajectory trb = random_trajectory(big, 16384, 0);
    CHECK(field_free<double>(big, trb, autoSource).kernel_source() == forge::KernelSource::Nufft);
    // One axis longer than 1: the NUFFT cannot take it, Auto takes the exact DFT.
    const Grid line{256, 1, 1};
    const Trajectory trl = random_trajectory(line, 20000, 0);
    CHECK(field_free<float>(line, trl, autoSource).kernel_source() == forge::KernelSource::Exact);
}

TEST_CASE("ToeplitzOptions: bad kernel source, build and grouping values and impossible NUFFTs are refused",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    const Grid g{16, 12, 1};
    const Trajectory tr = random_trajectory(g, 300, 0);
    forge::ToeplitzOptions o;
    o.source = static_cast<forge::KernelSource>(7);
    CHECK_THROWS_AS(field_free<float>(g, tr, o), forge::invalid_argument);
    CHECK_THROWS_WITH(field_free<float>(g, tr, o), Catch::Contains("options.source = 7"));
    o = forge::ToeplitzOptions();
    o.build = static_cast<forge::KernelBuild>(5);
    CHECK_THROWS_WITH(field_free<float>(g, tr, o), Catch::Contains("options.build = 5"));
    o = forge::ToeplitzOptions();
    o.grouping = static_cast<forge::AxisGrouping>(-1);
    CHECK_THROWS_WITH(field_free<float>(g, tr, o), Catch::Contains("options.grouping = -1"));
    // A NUFFT needs two axes longer than 1, each long enough for its kernel (11 cells in double, 8 in float).
    const Grid line{32, 1, 1};
    const Trajectory trl = random_trajectory(line, 100, 0);
    CHECK_THROWS_WITH(field_free<float>(line, trl, with_source(forge::KernelSource::Nufft)),
                      Catch::Contains("KernelSource::Nufft") && Catch::Contains("two axes"));
    const Grid thin{16, 2, 1};
    const Trajectory trt = random_trajectory(thin, 100, 0);
    CHECK_THROWS_WITH(field_free<double>(thin, trt, with_source(forge::KernelSource::Nufft)),
                      Catch::Contains("KernelSource::Nufft") && Catch::Contains("axis y"));
    CHECK(field_free<float>(thin, trt, with_source(forge::KernelSource::Nufft)).kernel_source() ==
          forge::KernelSource::Nufft);
}

TEST_CASE("ToeplitzNormal's pair data for samples that share readout times (spokes): the segmented normal",
          "[Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    // 40 spokes of 30 samples with the same 30 readout times, some zero weights (a spoke's samples among them):
    // the build works on the 30 distinct rows of interpolators and weights them per sample.
    const Grid g{14, 12, 1};
    Trajectory tr = random_trajectory(g, 1200, 0);
    for (uword j = 0; j < 1200; ++j) tr.t[j] = 6e-3 * double(j % 30) / 30;
    for (uword j = 0; j < 1200; j += 7) tr.W[j] = 0;
    for (uword j = 60; j < 90; ++j) tr.W[j] = 0;
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 100);
    for (const forge::KernelSource source : {forge::KernelSource::Exact, forge::KernelSource::Nufft}) {
        INFO("source " << int(source));
        const auto Nd = field_corrected<double>(g, tr, fm, 4, with_source(source));
        const auto Nf = field_corrected<float>(g, tr, fm, 4, with_source(source));
        CHECK(Nd.kernel_count() == 15);
        CHECK(batch_error(Nd, SegmentedNormal(g, tr, fm, 4, double()), 2) <=
              (source == forge::KernelSource::Exact ? 1e-11 : 1e-9));
        CHECK(batch_error(Nf, SegmentedNormal(g, tr, fm, 4, float()), 2) <=
              toeplitz_tolerance(Nf, tr.kx.n_elem, source == forge::KernelSource::Nufft ? 1e-6 : 0));
    }
}
