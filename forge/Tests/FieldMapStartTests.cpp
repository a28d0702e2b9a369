// The field map's start (estimate_field_map with 0 iterations): angle of the window-summed y_0 conj(y_1) over dt.
// Its window sums (cuda::axis_window_sum, shared by the host and the device) against a float64 brute-force sum,
// and exactly 0 over windows where the echoes vanish: there the start's angle is that of the sum's rounding, so
// any residue (running or prefix sums) would set an arbitrary start, and host and device would disagree by up to
// pi / dt where the object ends.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/cuda/MapKernels.h"
#include "forge/Solvers/recon_solve.h"

namespace {
using cxd = std::complex<double>;
}

TEST_CASE("Field-map start: axis window sums equal a float64 brute-force sum, exactly 0 over zeros",
          "[maps][fieldmap]") {
    FORGE_INFO_SEED();
    for (std::size_t stride : {1, 5}) {
        const std::size_t n = 40;
        for (std::size_t half : {1, 2, 7}) {
            // large values on the first half of the line, exact zeros after
            std::vector<cxd> v(n * stride, cxd(0));
            const arma::cx_vec r = forge_test::complex_normal<double>(n) * 1e3;
            for (std::size_t i = 0; i < n / 2; ++i) v[i * stride] = r[i];
            for (std::size_t i = 0; i < n; ++i) {
                cxd s;
                forge::cuda::axis_window_sum(reinterpret_cast<const double*>(v.data()), n, stride, i, half,
                                             reinterpret_cast<double*>(&s));
                long double re = 0, im = 0;
                const std::size_t lo = i >= half ? i - half : 0, hi = std::min(n - 1, i + half);
                for (std::size_t t = lo; t <= hi; ++t) {
                    re += v[t * stride].real();
                    im += v[t * stride].imag();
                }
                INFO("stride " << stride << " half " << half << " i " << i);
                if (lo >= n / 2) {
                    REQUIRE(s.real() == 0.0);
                    REQUIRE(s.imag() == 0.0);
                }
                REQUIRE(std::abs(s - cxd(double(re), double(im))) <= 1e-13 * 1e3 * double(2 * half + 1));
            }
        }
    }
}

TEST_CASE("Field-map start: where the echoes vanish over the window it is 0, elsewhere the float64 angle",
          "[maps][fieldmap]") {
    FORGE_INFO_SEED();
    const std::size_t Nx = 24, Ny = 20, Nz = 3, n2 = Nx * Ny * Nz;
    const std::vector<double> times = {2e-3, 4.5e-3};
    // an object (random amplitude and phase) on x < 12 of every plane, exact zeros beyond
    std::vector<arma::cx_fvec> echoes(2, arma::cx_fvec(n2, arma::fill::zeros));
    for (std::size_t e = 0; e < 2; ++e) {
        const arma::cx_vec r = forge_test::complex_normal<double>(n2);
        for (std::size_t k = 0; k < n2; ++k)
            if (k % Nx < 12) echoes[e][k] = std::complex<float>(r[k] * 50.0);
    }
    forge::recon::FieldMapOptions o;
    o.device = forge::ReconDevice::Host;
    o.iterations = 0;
    for (int kernel : {3, 5}) {
        o.init_kernel = kernel;
        const long h = kernel / 2;
        const arma::fvec w = forge::recon::estimate_field_map(echoes, times, Nx, Ny, Nz, o);
        for (std::size_t k = 0; k < n2; ++k) {
            const long x = long(k % Nx), y = long((k / Nx) % Ny), z = long(k / (Nx * Ny));
            long double re = 0, im = 0;
            for (long c = std::max(0L, z - h); c <= std::min(long(Nz) - 1, z + h); ++c)
                for (long b = std::max(0L, y - h); b <= std::min(long(Ny) - 1, y + h); ++b)
                    for (long a = std::max(0L, x - h); a <= std::min(long(Nx) - 1, x + h); ++a) {
                        const std::size_t j = std::size_t(a + long(Nx) * (b + long(Ny) * c));
                        const cxd p = cxd(echoes[0][j]) * std::conj(cxd(echoes[1][j]));
                        re += p.real();
                        im += p.imag();
                    }
            INFO("kernel " << kernel << " pixel " << x << "," << y << "," << z);
            if (x - h >= 12) {
                REQUIRE(w[k] == 0.0f);
            } else {
                const double ref = std::atan2(double(im), double(re)) / (times[1] - times[0]);
                REQUIRE(std::fabs(double(w[k]) - ref) <= 1e-6 * std::max(1.0, std::fabs(ref)));
            }
        }
    }
}
