#pragma once
// k-space trajectories in cycles per FOV (docs/conventions.md) unless said otherwise.
#include <cmath>
#include <cstddef>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace sim {

struct Trajectory2D {
    arma::vec kx, ky;
};

// Interleave 'shot' of 'shots' of an Archimedean spiral-out from k = 0 at a constant angular rate: sample j
// of n at radius 0.5 j/n and angle 2 pi (turns j/n + shot/shots), in ISMRMRD's normalised units (k divided
// by the matrix size, so |k| < 0.5). forge-recon --demo's trajectory.
inline Trajectory2D spiral_interleave_normalised(std::size_t n, std::size_t turns, std::size_t shot,
                                                 std::size_t shots) {
    Trajectory2D k{arma::vec(n), arma::vec(n)};
    for (std::size_t j = 0; j < n; ++j) {
        const double tau = double(j) / double(n);
        const double r = 0.5 * tau;
        const double th = 2 * M_PI * double(turns) * tau + 2 * M_PI * double(shot) / double(shots);
        k.kx[j] = r * std::cos(th);
        k.ky[j] = r * std::sin(th);
    }
    return k;
}

// Single-shot Archimedean spiral out to |k| = kmax * radius_scale with 'turns' turns, at constant speed along
// the path (sample j at tau = sqrt((j + 0.5) / n), radius kmax tau radius_scale, angle 2 pi turns tau).
// radius_scale slightly below 1 keeps the samples inside [-N/2, N/2) when kmax = N/2.
inline Trajectory2D constant_speed_spiral(uword n, double kmax, double turns, double radius_scale = 1.0) {
    constexpr double kPi = 3.14159265358979323846;
    Trajectory2D k{arma::vec(n), arma::vec(n)};
    for (uword j = 0; j < n; ++j) {
        const double tau = std::sqrt((j + 0.5) / double(n));
        const double r = kmax * tau * radius_scale, th = 2 * kPi * turns * tau;
        k.kx(j) = r * std::cos(th);
        k.ky(j) = r * std::sin(th);
    }
    return k;
}

// Radial spokes through the centre: spoke s at angle rotation + pi s / spokes, nread samples at radii
// (j - nread/2 + 1/2) / nread * extent (symmetric about k = 0, which no sample hits), spoke-major.
inline Trajectory2D radial_spokes(uword spokes, uword nread, double extent, double rotation = 0.0) {
    constexpr double kPi = 3.14159265358979323846;
    Trajectory2D k{arma::vec(spokes * nread), arma::vec(spokes * nread)};
    for (uword s = 0; s < spokes; ++s)
        for (uword j = 0; j < nread; ++j) {
            const double rad = (double(j) - nread / 2.0 + 0.5) / nread * extent, th = rotation + kPi * s / spokes;
            k.kx(s * nread + j) = rad * std::cos(th);
            k.ky(s * nread + j) = rad * std::sin(th);
        }
    return k;
}

// The Nx x Ny Cartesian grid k = (x - Nx/2, y - Ny/2), x fastest.
inline Trajectory2D cartesian_grid(uword Nx, uword Ny) {
    Trajectory2D k{arma::vec(Nx * Ny), arma::vec(Nx * Ny)};
    for (uword y = 0; y < Ny; ++y)
        for (uword x = 0; x < Nx; ++x) {
            k.kx(x + Nx * y) = double(x) - double(Nx / 2);
            k.ky(x + Nx * y) = double(y) - double(Ny / 2);
        }
    return k;
}

}  // namespace sim
}  // namespace forge
