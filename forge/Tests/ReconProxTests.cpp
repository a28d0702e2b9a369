// forge::recon::reconstruct with the proximal penalties (forge-recon's --penalty l1-wavelet | tv-exact): an image on
// radial SENSE data on both solver paths (A and A^H per iteration; the Toeplitz normal), lambda independent of the
// data's and maps' scale, the cost reported per iteration, and the error for an odd grid with wavelets.
#include <cmath>
#include <complex>

#include "ReconTestProblems.h"
#include "TestHelpers.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Recon/Metrics.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

using namespace forge_test;
using forge::recon::EncodingOperator;
using forge::recon::PenaltyKind;
using forge::recon::ReconProblem;
using forge::recon::ReconSettings;

namespace {
double quality(const ReconProblem& P, const arma::cx_fvec& x) {
    return forge::recon::magnitude_quality({arma::abs(x)}, P.reference).nrmse;
}
}  // namespace

TEST_CASE("reconstruct with l1-wavelet and tv-exact: an image on both paths, independent of the data's scale",
          "[recon][prox]") {
    FORGE_INFO_SEED();
    const ReconProblem P = radial_problem(32, 4, 24, 0.02);
    ReconProblem Q = P;
    Q.smaps[0] *= 1e3f;
    Q.frames[0].y *= 1e6f;
    for (PenaltyKind pen : {PenaltyKind::L1Wavelet, PenaltyKind::TVExact})
        for (EncodingOperator op : {EncodingOperator::Nufft, EncodingOperator::Toeplitz}) {
            INFO((pen == PenaltyKind::L1Wavelet ? "l1-wavelet" : "tv-exact")
                 << " on " << forge::recon::operator_name(op));
            ReconSettings S;
            S.op = op;
            S.penalty = pen;
            S.lambda = 0.005;
            S.iterations = 30;
            S.tolerance = 0;
            std::vector<double> costs;
            S.on_iteration = [&costs](const std::string&, const PcgIterationInfo& i, std::size_t) {
                costs.push_back(i.cost);
            };
            const arma::cx_fvec x = forge::recon::reconstruct(P, false, S).complex_image[0];
            REQUIRE(costs.size() == 30);
            CHECK(costs.back() < costs.front());
            const double q = quality(P, x);
            INFO("NRMSE " << q);
            CHECK(q < 0.2);
            S.on_iteration = nullptr;
            const arma::cx_fvec xq = forge::recon::reconstruct(Q, false, S).complex_image[0];
            CHECK(rel_error(arma::cx_fvec(xq / 1e3f), x) < 1e-3);  // maps x1e3, data x1e6: image x1e3
        }
}

TEST_CASE("reconstruct with l1-wavelet refuses an odd image size naming it", "[recon][prox]") {
    ReconProblem P = radial_problem(15, 2, 8, 0);
    ReconSettings S;
    S.op = EncodingOperator::Dft;  // (the NUFFT refuses odd grids itself)
    S.penalty = PenaltyKind::L1Wavelet;
    S.iterations = 2;
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, false, S), Catch::Matchers::Contains("nx = 15 is odd"));
}
