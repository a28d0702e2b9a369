// GPU test of forge-recon --demo's simulation: with gpu both scans (the spiral and the Cartesian field-map scan) are
// simulated by one batched SENSE apply on the device per frame, equal to the host's exact Gdft to float rounding,
// noise included (the same generator, so the same draws on the same RMS).
#include <cmath>

#include "TestHelpers.h"
#include "forge/Sim/DemoAcquisition.h"

TEST_CASE("demo_acquisition on the GPU simulates both scans as the host does", "[gpu][sim][demo]") {
    forge::sim::DemoOptions o;
    o.size = 32;
    o.slices = 2;
    o.coils = 4;
    o.seed = 987;
    const forge::sim::DemoAcquisition host = forge::sim::demo_acquisition(o);
    o.gpu = true;
    const forge::sim::DemoAcquisition gpu = forge::sim::demo_acquisition(o);
    for (const auto scan : {&forge::sim::DemoAcquisition::spiral, &forge::sim::DemoAcquisition::field_map_scan}) {
        const auto& h = (host.*scan).frames;
        const auto& g = (gpu.*scan).frames;
        REQUIRE(h.size() == g.size());
        for (std::size_t f = 0; f < h.size(); ++f) {
            REQUIRE(h[f].y.n_elem == g[f].y.n_elem);
            const double rel = double(arma::norm(arma::cx_vec(arma::conv_to<arma::cx_vec>::from(g[f].y) -
                                                              arma::conv_to<arma::cx_vec>::from(h[f].y)))) /
                               double(arma::norm(arma::conv_to<arma::cx_vec>::from(h[f].y)));
            INFO((scan == &forge::sim::DemoAcquisition::spiral ? "spiral" : "field-map scan")
                 << " frame " << f << ": |gpu - host| / |host| = " << rel);
            // float sums of 1024 pixels in a different order, and 1% noise drawn on an RMS that differs as little
            CHECK(rel < 1e-4);
            CHECK(rel >= 0);
        }
    }
}
