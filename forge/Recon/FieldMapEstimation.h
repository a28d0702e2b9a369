#pragma once
// Field maps (rad/s) from multi-echo images (docs/map-estimation.md).
//
// Penalized-likelihood estimate in the spirit of Funai and Fessler (IEEE TMI 27(10), 2008): with echoes
// y_m (complex images) at times t_m,
//
//   Psi(w) = sum_j sum_{m<n} a_jmn (1 - cos(phi_jmn - w_j (t_n - t_m)))  +  beta R(w)
//   a_jmn = |y_mj| |y_nj| / c,   phi_jmn = angle(y_mj conj(y_nj)),   R(w) = 1/2 sum over neighbour pairs (w_j - w_k)^2
//
// (c: the largest sum_{m<n} |y_mj| |y_nj| (t_n - t_m)^2 over the pixels, so the data term's curvature in w is
// at most 1 and beta weighs the penalty against the brightest pixel's data whatever the image scale and
// the echo times). Where the signal is low the data term vanishes and the penalty carries the neighbours'
// values over; the 1 - cos term never wraps.
// The sign follows forge's forward model exp(-i w t) (docs/conventions.md): a positive w makes the phase
// fall from echo to echo, so phi = +w (t_n - t_m).
// Start: the phase difference of the first two echoes after a (2 k + 1)^d window sum of y_1 conj(y_2)
// (a magnitude-weighted local average, robust where the signal is low). Iteration: separable quadratic
// surrogates (a majorize-minimize step per iteration): the data term's curvature at residual s (wrapped
// into [-pi, pi]) is bounded by a (t_n - t_m)^2 sin(s)/s (Funai et al.), the penalty's by the
// neighbour count times 2; the cost never increases.
#include <cstddef>
#include <vector>

#include <armadillo>

#include "forge/Core/Config.h"
#include "forge/Core/DeprecatedFields.h"
#include "forge/Core/Device.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"

namespace forge {

namespace recon {

struct FieldMapOptionsFields {
    double beta = 1e-2;    // penalty weight (see above); 0: the per-pixel maximum-likelihood estimate
    int iterations = 200;  // surrogate iterations (0: the smoothed phase difference alone)
    int init_kernel = 3;   // window of the starting phase difference, pixels per axis (odd)
    // Where the start and the iterations run: Auto (the value-initialised default) on the GPU when
    // device::available(), else on the host; Host; GPU (forge::cuda_error without a usable device). The
    // GPU's map equals the host's to float rounding (docs/map-estimation.md).
    Device device = Device::Auto;
};
// FieldMapOptions's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct FieldMapOptions : FieldMapOptionsFields {
    FORGE_FIELD_ALIAS(initKernel, init_kernel)
    FORGE_FIELD_ALIAS_COPIES(FieldMapOptions, FieldMapOptionsFields)
};
FORGE_FIELD_ALIASES_END

// The plain phase difference of echoes 0 and 1: angle(y_0 conj(y_1)) / (t_1 - t_0), rad/s.
arma::fvec phase_difference_field_map(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times);

// The penalized estimate above on an Nx x Ny x Nz grid (x fastest). 'cost' (optional) receives Psi after
// every iteration. Throws forge::invalid_argument naming the argument when there are fewer than two echoes,
// sizes disagree, times repeat or an option is out of range.
arma::fvec estimate_field_map(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times,
                              std::size_t Nx, std::size_t Ny, std::size_t Nz, const FieldMapOptions& options = {},
                              std::vector<double>* cost = nullptr);

// From a multi-echo scan: reconstructs the first frame of each echo (ReconFrame::contrast, at
// ReconFrame::echo_time) of every slice with 'settings' and no field correction (SENSE when 'scan' has
// coil maps), then estimates each slice's map; options.device Auto follows settings.gpu (false: the host). 'echoImages'
// (optional) receives the images, echo-major then slice. Throws forge::invalid_argument when the scan has fewer than
// two echo times.
std::vector<arma::fvec> estimate_field_map(const ReconProblem& scan, const ReconSettings& settings,
                                           const FieldMapOptions& options = {},
                                           std::vector<arma::cx_fvec>* echoImages = nullptr);

// The names before the field_map spelling, until forge 0.3.0.
FORGE_DEPRECATED("phase_difference_field_map")
inline arma::fvec phase_difference_fieldmap(const std::vector<arma::cx_fvec>& echoes,
                                            const std::vector<double>& times) {
    return phase_difference_field_map(echoes, times);
}
FORGE_DEPRECATED("estimate_field_map")
inline arma::fvec estimate_fieldmap(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times,
                                    std::size_t Nx, std::size_t Ny, std::size_t Nz, const FieldMapOptions& options = {},
                                    std::vector<double>* cost = nullptr) {
    return estimate_field_map(echoes, times, Nx, Ny, Nz, options, cost);
}
FORGE_DEPRECATED("estimate_field_map")
inline std::vector<arma::fvec> estimate_fieldmap(const ReconProblem& scan, const ReconSettings& settings,
                                                 const FieldMapOptions& options = {},
                                                 std::vector<arma::cx_fvec>* echoImages = nullptr) {
    return estimate_field_map(scan, settings, options, echoImages);
}

}  // namespace recon
}  // namespace forge
