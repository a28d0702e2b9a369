#pragma once
// Synthetic off-resonance field maps, in rad/s (docs/conventions.md), x fastest.
#include <cmath>
#include <cstddef>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace sim {

// N x N map: two Gaussian off-resonance blobs (+70 Hz, -50 Hz) and a 30 Hz/FOV linear shim term; slice s
// moves the blobs by 0.03 s FOV. forge-recon --demo's field map.
inline arma::fvec two_blob_field_map(std::size_t N, std::size_t slice = 0) {
    arma::fvec fm(N * N);
    const double sh = 0.03 * double(slice);
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
            const double b1 =
                std::exp(-((px - 0.10 - sh) * (px - 0.10 - sh) + (py - 0.15) * (py - 0.15)) / (2 * 0.12 * 0.12));
            const double b2 =
                std::exp(-((px + 0.15) * (px + 0.15) + (py + 0.10 + sh) * (py + 0.10 + sh)) / (2 * 0.15 * 0.15));
            const double hz = 70.0 * b1 - 50.0 * b2 + 30.0 * px;
            fm[x + N * y] = float(2 * M_PI * hz);
        }
    return fm;
}

// A Gaussian bump plus linear terms at the pixels (ix, iy) (FOV units), scaled to max |f| = maxHz; in rad/s.
inline arma::vec bump_and_ramp_field_map(const arma::vec& ix, const arma::vec& iy, double maxHz) {
    constexpr double kPi = 3.14159265358979323846;
    arma::vec fHz(ix.n_elem);
    for (uword k = 0; k < ix.n_elem; ++k) {
        const double x = ix(k), y = iy(k);
        fHz(k) =
            std::exp(-((x - 0.1) * (x - 0.1) + (y + 0.05) * (y + 0.05)) / (2 * 0.15 * 0.15)) - 0.4 + 0.8 * x + 0.3 * y;
    }
    fHz *= maxHz / arma::max(arma::abs(fHz));
    return 2 * kPi * fHz;
}

// The names before the field_map spelling, until forge 0.3.0.
FORGE_DEPRECATED("two_blob_field_map")
inline arma::fvec two_blob_fieldmap(std::size_t N, std::size_t slice = 0) { return two_blob_field_map(N, slice); }
FORGE_DEPRECATED("bump_and_ramp_field_map")
inline arma::vec bump_and_ramp_fieldmap(const arma::vec& ix, const arma::vec& iy, double maxHz) {
    return bump_and_ramp_field_map(ix, iy, maxHz);
}

}  // namespace sim
}  // namespace forge
