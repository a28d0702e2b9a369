// forge::recon::reconstruct on the GPU: its SENSE solves divide the data and the coil maps by powers of two on the
// device (ReconOptions::data_scale; the maps uploaded once, scaled there) and give the host's images, whatever the
// scale of the data and the maps.
#include <armadillo>
#include <catch2/catch.hpp>

#include "ReconTestProblems.h"
#include "TestHelpers.h"
#include "forge/Recon/Reconstruct.h"

using forge::recon::EncodingOperator;
using forge::recon::ReconProblem;
using forge::recon::ReconSettings;

TEST_CASE("reconstruct on the GPU gives the host's SENSE images, the data and maps scaled on the device",
          "[gpu][recon][scale]") {
    FORGE_INFO_SEED();
    // two slices of a 16x14 grid, 3 coils, one trajectory, a field map each
    const ReconProblem P = forge_test::random_slices(16, 14, 2, 3, 400, 200, [](std::size_t) { return true; });
    // data near 1e-6 and maps near 6e4: both divided by powers of two far from 1 (the image by 2^-36)
    ReconProblem Q = P;
    for (auto& fr : Q.frames) fr.y *= std::ldexp(1.0f, -20);
    for (auto& m : Q.smaps) m *= std::ldexp(1.0f, 16);
    for (const EncodingOperator op : {EncodingOperator::Toeplitz, EncodingOperator::Dft}) {
        INFO("operator " << forge::recon::operator_name(op));
        ReconSettings S;
        S.op = op;
        S.iterations = 12;
        S.tolerance = 0;  // every iteration: the paths compare iterate for iterate
        S.toeplitz_rhs = forge::recon::ToeplitzRhs::Exact;
        const forge::recon::ReconResult host = forge::recon::reconstruct(P, true, S);
        S.gpu = true;
        const forge::recon::ReconResult gpu = forge::recon::reconstruct(P, true, S);
        const forge::recon::ReconResult scaled = forge::recon::reconstruct(Q, true, S);
        for (std::size_t s = 0; s < P.nslices; ++s) {
            INFO("slice " << s);
            REQUIRE(arma::norm(host.complex_image[s]) > 0);
            CHECK(forge_test::rel_error(gpu.complex_image[s], host.complex_image[s]) < 5e-3);
            const arma::cx_fvec back = scaled.complex_image[s] * std::ldexp(1.0f, 36);
            CHECK(forge_test::rel_error(back, gpu.complex_image[s]) < 1e-5);
        }
    }
}
