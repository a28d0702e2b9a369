// forge::sim::demo_acquisition without simulation (DemoOptions::simulate = false, for timing the rest of the demo's
// pipeline): the same objects, readouts and frames as a simulated acquisition, the data zero.
#include <algorithm>
#include <complex>

#include "TestHelpers.h"
#include "forge/Sim/DemoAcquisition.h"

TEST_CASE("demo_acquisition with simulate = false gives the simulated acquisition's layout with zero data",
          "[sim][demo]") {
    forge::sim::DemoOptions o;
    o.size = 16;
    o.slices = 2;
    o.coils = 3;
    const forge::sim::DemoAcquisition sim = forge::sim::demo_acquisition(o);
    o.simulate = false;
    const forge::sim::DemoAcquisition none = forge::sim::demo_acquisition(o);
    for (const auto scan : {&forge::sim::DemoAcquisition::spiral, &forge::sim::DemoAcquisition::field_map_scan}) {
        const auto &a = sim.*scan, &b = none.*scan;
        REQUIRE(a.frames.size() == b.frames.size());
        REQUIRE(a.readouts.size() == b.readouts.size());
        for (std::size_t f = 0; f < a.frames.size(); ++f) {
            CHECK(arma::approx_equal(a.frames[f].k.kx, b.frames[f].k.kx, "absdiff", 0.0f));
            CHECK(arma::approx_equal(a.frames[f].k.t, b.frames[f].k.t, "absdiff", 0.0f));
            REQUIRE(b.frames[f].y.n_elem == a.frames[f].y.n_elem);
            CHECK(arma::norm(a.frames[f].y) > 0);
            CHECK(arma::norm(b.frames[f].y) == 0);
        }
        for (std::size_t r = 0; r < a.readouts.size(); ++r) {
            CHECK(a.readouts[r].traj == b.readouts[r].traj);
            REQUIRE(b.readouts[r].data.size() == a.readouts[r].data.size());
            CHECK(std::all_of(b.readouts[r].data.begin(), b.readouts[r].data.end(),
                              [](const std::complex<float>& v) { return v == std::complex<float>(0, 0); }));
        }
    }
    CHECK(arma::approx_equal(sim.smaps[1], none.smaps[1], "absdiff", 0.0f));
}
