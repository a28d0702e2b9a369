#pragma once
// Phantoms for tests, the forge-recon demo, examples and benchmarks: the modified Shepp-Logan head
// (Toft's intensities), sharp-edged or with smooth (about one pixel wide) edges. Images are x fastest.
// forge/Sim depends only on forge/Core and Armadillo.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace sim {

// An ellipse of the phantom: intensity added inside, semi-axes a, b, centre (x0, y0), rotation in degrees;
// coordinates in [-1, 1].
struct Ellipse {
    double value, a, b, x0, y0, phi_deg;
};

// The modified Shepp-Logan phantom (P. Toft, 1996): the original ellipses with higher-contrast intensities.
inline const std::array<Ellipse, 10>& shepp_logan_ellipses() {
    static const std::array<Ellipse, 10> E{{{1.0, .69, .92, 0, 0, 0},
                                            {-.8, .6624, .874, 0, -.0184, 0},
                                            {-.2, .11, .31, .22, 0, -18},
                                            {-.2, .16, .41, -.22, 0, 18},
                                            {.1, .21, .25, 0, .35, 0},
                                            {.1, .046, .046, 0, .1, 0},
                                            {.1, .046, .046, 0, -.1, 0},
                                            {.1, .046, .023, -.08, -.605, 0},
                                            {.1, .023, .023, 0, -.606, 0},
                                            {.1, .023, .046, .06, -.605, 0}}};
    return E;
}

// The sharp-edged phantom at (x, y) in [-1, 1]^2: the sum of the intensities of the ellipses holding it.
inline double shepp_logan_value(double x, double y) {
    constexpr double kPi = 3.14159265358979323846;
    double v = 0;
    for (const auto& e : shepp_logan_ellipses()) {
        const double p = e.phi_deg * kPi / 180, c = std::cos(p), s = std::sin(p);
        const double u = (x - e.x0) * c + (y - e.y0) * s, w = -(x - e.x0) * s + (y - e.y0) * c;
        if ((u * u) / (e.a * e.a) + (w * w) / (e.b * e.b) <= 1.0) v += e.value;
    }
    return v;
}

// N x N sharp-edged phantom spanning the grid: pixel (x, y) at ((x - N/2) / (N/2), (y - N/2) / (N/2)).
inline arma::vec shepp_logan(uword N) {
    arma::vec img(N * N, arma::fill::zeros);
    for (uword yi = 0; yi < N; ++yi)
        for (uword xi = 0; xi < N; ++xi)
            img(xi + N * yi) =
                shepp_logan_value((double(xi) - N / 2.0) / (N / 2.0), (double(yi) - N / 2.0) / (N / 2.0));
    return img;
}

// N x N phantom in FOV units (pixel (x, y) at ((x - N/2)/N, (y - N/2)/N)), the ellipses scaled by 0.46 so
// the head fills most of the FOV, with smooth edges (a tanh step about 1.6 pixels wide, so the object is
// nearly band-limited to |k| < N/2) and a small bright marker at (+0.25, -0.30) that shows the orientation.
// Slice s of n shrinks the head by up to 8% towards the last slice. forge-recon --demo's truth.
inline arma::fvec smooth_shepp_logan_slice(std::size_t N, std::size_t slice, std::size_t nslices) {
    const double sc = 0.46;  // ellipse units [-1, 1] -> FOV units
    const double shrink = 1.0 - 0.08 * (nslices > 1 ? double(slice) / double(nslices - 1) : 0.0);
    const auto& E = shepp_logan_ellipses();
    arma::fvec img(N * N, arma::fill::zeros);
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
            double v = 0;
            for (const auto& e : E) {
                const double c = std::cos(e.phi_deg * M_PI / 180), s = std::sin(e.phi_deg * M_PI / 180);
                const double u = px / (sc * shrink) - e.x0, w = py / (sc * shrink) - e.y0;
                const double xr = c * u + s * w, yr = -s * u + c * w;
                const double rho = std::sqrt((xr * xr) / (e.a * e.a) + (yr * yr) / (e.b * e.b));
                const double dpix = (rho - 1.0) * std::min(e.a, e.b) * sc * shrink * double(N);
                v += e.value * 0.5 * (1.0 - std::tanh(dpix / 0.8));
            }
            const double mx = px - 0.25, my = py + 0.30;  // orientation marker
            const double dm = (std::sqrt(mx * mx + my * my) - 0.045) * double(N);
            const double wm = 0.5 * (1.0 - std::tanh(dm / 0.8));
            v = v * (1.0 - wm) + 1.0 * wm;
            img[x + N * y] = float(v);
        }
    return img;
}

}  // namespace sim
}  // namespace forge
