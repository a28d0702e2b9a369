// The device field map against the host's where the echo images vanish outside the object (as SENSE
// reconstructions with masked coil maps do): the start is 0 there on both (window sums of zeros are exactly 0),
// so the maps agree at every pixel, not only inside the object.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Solvers/recon_solve.h"

TEST_CASE("GPU field map equals the host's at every pixel when the echoes vanish outside the object",
          "[gpu][maps][fieldmap]") {
    FORGE_INFO_SEED();
    const std::size_t N = 48, n2 = N * N;
    const arma::fvec rho = forge::sim::smooth_shepp_logan_slice(N, 0, 1);
    const std::vector<double> times = {2e-3, 4.5e-3};
    std::vector<arma::cx_fvec> echoes(2, arma::cx_fvec(n2, arma::fill::zeros));
    for (std::size_t e = 0; e < 2; ++e) {
        const arma::cx_vec nz = forge_test::complex_normal<double>(n2);
        for (std::size_t k = 0; k < n2; ++k) {
            if (!(rho[k] > 0)) continue;
            const double x = double(k % N) / double(N), y = double(k / N) / double(N);
            const double w = 2 * M_PI * (60 * std::sin(3 * x) * std::cos(2 * y) + 20);
            echoes[e][k] = std::complex<float>(double(rho[k]) * std::polar(1.0, -w * times[e]) + 0.01 * nz[k]);
        }
    }
    forge::recon::FieldMapOptions oh, od;
    oh.device = forge::ReconDevice::Host;
    od.device = forge::ReconDevice::GPU;
    for (int iterations : {0, 200}) {
        oh.iterations = od.iterations = iterations;
        const arma::fvec wh = forge::recon::estimate_field_map(echoes, times, N, N, 1, oh);
        const arma::fvec wd = forge::recon::estimate_field_map(echoes, times, N, N, 1, od);
        double worst = 0;
        std::size_t at = 0, zeroDiffer = 0;
        for (std::size_t k = 0; k < n2; ++k) {
            const double d = std::fabs(double(wd[k]) - double(wh[k])) / std::max(1.0, std::fabs(double(wh[k])));
            if (d > worst) {
                worst = d;
                at = k;
            }
            if ((wh[k] == 0.0f) != (wd[k] == 0.0f)) ++zeroDiffer;
        }
        INFO(iterations << " iterations: max |w_gpu - w_cpu| / max(1, |w_cpu|) " << worst << " at pixel (" << at % N
                        << ", " << at / N << "), rho there " << rho[at] << "; start 0 on one side only at "
                        << zeroDiffer << " pixels");
        // ulps of sin, atan2 and fused multiply-adds through 200 contracting steps; a start from the rounding
        // residue of the window sums where the echoes vanish was up to pi / dt (200 Hz) off
        CHECK(worst <= 1e-5);
        if (iterations == 0) CHECK(zeroDiffer == 0);
    }
}
