// Warm starts (ReconSettings::start, PcgOptions::tolerance_from_zero): a frame started from the previous frame's
// image of its slice stops where a start from zero would (its gradient within the same tolerance of the gradient at
// zero), in fewer iterations, and its image agrees with the cold start's to that tolerance.
#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Recon/Reconstruct.h"

using forge::recon::ReconProblem;
using forge::recon::ReconSettings;

namespace {
// One 16x14 slice, 4 coils with random smooth-ish maps, two frames of one trajectory: frame 1's data are frame 0's
// plus 2% of other random data (an image that changed a little between frames).
ReconProblem series() {
    ReconProblem P;
    P.Nx = 16;
    P.Ny = 14;
    P.nslices = 1;
    P.nframes = 2;
    P.nc = 4;
    forge::recon::set_pixel_grid(P);
    const std::size_t n1 = 400;
    const arma::fvec kx = forge_test::uniform<float>(n1, -8, 8), ky = forge_test::uniform<float>(n1, -7, 7);
    const arma::cx_fvec y0 = forge_test::complex_normal<float>(n1 * P.nc);
    for (std::size_t f = 0; f < 2; ++f) {
        forge::recon::ReconFrame fr;
        fr.frame = f;
        fr.kx = kx;
        fr.ky = ky;
        fr.kz = arma::fvec(n1, arma::fill::zeros);
        fr.t = arma::fvec(n1, arma::fill::zeros);
        fr.y = f == 0 ? y0 : arma::cx_fvec(y0 + 0.02f * forge_test::complex_normal<float>(n1 * P.nc));
        P.frames.push_back(fr);
    }
    P.smaps.push_back(forge_test::complex_normal<float>(P.n2() * P.nc));
    P.n1total = 2 * n1;
    P.n1max = n1;
    return P;
}
}  // namespace

TEST_CASE("Warm start: the previous frame's image, the cold start's stopping point, fewer iterations",
          "[recon][warm]") {
    FORGE_INFO_SEED();
    const ReconProblem P = series();
    for (auto op : {forge::recon::EncodingOperator::Dft, forge::recon::EncodingOperator::Toeplitz}) {
        INFO("operator " << forge::recon::operator_name(op));
        ReconSettings S;
        S.op = op;
        S.iterations = 200;
        S.tolerance = 1e-3;
        S.toeplitz_rhs = forge::recon::ToeplitzRhs::Exact;
        S.frames = {0};
        const arma::cx_fvec first = forge::recon::reconstruct(P, false, S).complex_image[0];
        S.frames = {1};
        const forge::recon::ReconResult cold = forge::recon::reconstruct(P, false, S);
        S.start = {first};
        const forge::recon::ReconResult warm = forge::recon::reconstruct(P, false, S);
        REQUIRE(cold.solves.size() == 1);
        REQUIRE(warm.solves.size() == 1);
        const forge::SolverReport &c = cold.solves[0].report, &w = warm.solves[0].report;
        CHECK(c.stop_reason == forge::StopReason::Tolerance);
        CHECK(w.stop_reason == forge::StopReason::Tolerance);
        // The warm solve began nearer (its first gradient is a fraction of the gradient at zero) and stopped within
        // the same absolute tolerance as the cold one.
        CHECK(w.initial_gradient_norm < 0.2 * c.initial_gradient_norm);
        CHECK(w.final_gradient_norm <= 1e-3 * c.initial_gradient_norm * 1.001);
        CHECK(w.iterations < c.iterations);
        // Both images near the minimiser: a solve to 1e-7 from zero.
        S.start.clear();
        S.tolerance = 1e-7;
        S.iterations = 2000;
        const arma::cx_fvec best = forge::recon::reconstruct(P, false, S).complex_image[1];
        const double scale = arma::norm(best);
        const arma::cx_fvec &xc = cold.complex_image[1], &xw = warm.complex_image[1];
        INFO("cold " << arma::norm(xc - best) / scale << ", warm " << arma::norm(xw - best) / scale << " ("
                     << c.iterations << " against " << w.iterations << " iterations)");
        CHECK(arma::norm(xw - best) / scale < 0.01);
        CHECK(arma::norm(xc - best) / scale < 0.01);
        CHECK(arma::norm(xw - xc) / scale < 0.01);
    }
}

TEST_CASE("Warm start: a start of the wrong size is refused by name", "[recon][warm]") {
    const ReconProblem P = series();
    ReconSettings S;
    S.iterations = 2;
    S.start = {arma::cx_fvec(7, arma::fill::ones)};
    CHECK_THROWS_AS(forge::recon::reconstruct(P, false, S), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, false, S), Catch::Contains("settings.start[0] holds 7 values"));
}

TEST_CASE("Warm start across a call's frames equals frame-by-frame calls started from the previous image",
          "[recon][warm]") {
    FORGE_INFO_SEED();
    const ReconProblem P = series();
    ReconSettings S;
    S.iterations = 100;
    S.tolerance = 1e-3;
    S.warm_start = true;
    const forge::recon::ReconResult whole = forge::recon::reconstruct(P, false, S);  // frame 1 from frame 0's image
    S.warm_start = false;
    const forge::recon::ReconResult cold = forge::recon::reconstruct(P, false, S);
    REQUIRE(whole.solves.size() == 2);
    CHECK(whole.solves[1].report.iterations < cold.solves[1].report.iterations);
    CHECK(arma::approx_equal(whole.complex_image[0], cold.complex_image[0], "absdiff", 0.0f));  // frame 0: cold
    // as a stream runs it: one call a frame, the previous image given
    S.frames = {0};
    const arma::cx_fvec first = forge::recon::reconstruct(P, false, S).complex_image[0];
    S.frames = {1};
    S.start = {first};
    const forge::recon::ReconResult second = forge::recon::reconstruct(P, false, S);
    CHECK(arma::approx_equal(second.complex_image[1], whole.complex_image[1], "absdiff", 0.0f));  // the same bits
    const double scale = arma::norm(cold.complex_image[1]);
    CHECK(arma::norm(whole.complex_image[1] - cold.complex_image[1]) / scale < 0.01);
}
