#pragma once
// Synthetic coil sensitivity maps, coil-major (coil c's map at [c * n2, (c + 1) * n2)), as SENSE takes them.
#include <cmath>
#include <complex>
#include <cstddef>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace sim {

// nc loops on a circle of radius 0.7 FOV around an N x N grid (FOV units, x fastest): magnitude
// 1 / (1 + d^2 / 0.25) at distance d from the loop, a phase rising towards it. Slice s turns the ring by
// 0.1 s rad. forge-recon --demo's maps.
inline arma::cx_fvec ring_coil_maps(std::size_t N, std::size_t nc, std::size_t slice = 0) {
    arma::cx_fvec m(N * N * nc);
    for (std::size_t c = 0; c < nc; ++c) {
        const double ang = 2 * M_PI * double(c) / double(nc) + 0.1 * double(slice);
        const double cx = 0.7 * std::cos(ang), cy = 0.7 * std::sin(ang);
        for (std::size_t y = 0; y < N; ++y)
            for (std::size_t x = 0; x < N; ++x) {
                const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
                const double d2 = (px - cx) * (px - cx) + (py - cy) * (py - cy);
                const double mag = 1.0 / (1.0 + d2 / 0.25);
                const double ph = ang + 2.0 * (px * std::cos(ang) + py * std::sin(ang));
                m[c * N * N + x + N * y] = std::complex<float>(float(mag * std::cos(ph)), float(mag * std::sin(ph)));
            }
    }
    return m;
}

// The maps (nc * n2, coil-major) scaled pixel by pixel so that sum_c |S_c|^2 = 1 (pixels where all vanish stay 0).
inline arma::cx_fvec normalise_coil_maps(arma::cx_fvec m, std::size_t nc) {
    const std::size_t n2 = m.n_elem / nc;
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += std::norm(m[c * n2 + k]);
        if (e > 0)
            for (std::size_t c = 0; c < nc; ++c) m[c * n2 + k] /= float(std::sqrt(e));
    }
    return m;
}

// nc coils at radius 0.6 FOV around the pixels (ix, iy) (FOV units): Gaussian magnitude of width 0.45 FOV,
// each with its own constant phase 0.8 c and a gentle phase ramp towards the coil.
inline arma::cx_vec gaussian_coil_maps(const arma::vec& ix, const arma::vec& iy, uword nc) {
    constexpr double kPi = 3.14159265358979323846;
    const uword n2 = ix.n_elem;
    arma::cx_vec maps(n2 * nc);
    for (uword c = 0; c < nc; ++c) {
        const double a = 2 * kPi * c / nc + 0.3, cx = 0.6 * std::cos(a), cy = 0.6 * std::sin(a);
        for (uword k = 0; k < n2; ++k) {
            const double dx = ix(k) - cx, dy = iy(k) - cy;
            const double mag = std::exp(-(dx * dx + dy * dy) / (2 * 0.45 * 0.45));
            maps(c * n2 + k) = std::polar(mag, 0.8 * c + 2.0 * (dx * std::cos(a) + dy * std::sin(a)));
        }
    }
    return maps;
}

}  // namespace sim
}  // namespace forge
