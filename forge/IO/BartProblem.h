#pragma once
// BART's non-Cartesian arrays (Cfl.h) as forge-recon's input: k-space, trajectory and optional coil maps in
// BART's layout and units, turned into the content of an ISMRMRD file so that problem_from_mrd() validates and
// lays them out as it does every ISMRMRD input (docs/forge-recon.md, "BART input").
//
// BART's trajectory unit is forge's: cycles per FOV, an N-pixel axis holding k in [-N/2, N/2] (BART's nufft
// applies exp(-2 pi i k . r) with r in pixels from the centre pixel N/2, over N: forge's convention,
// docs/conventions.md). A radial `bart traj -r -x 256` with 2x readout oversampling spans [-127.5, 127.5] and
// is scaled by 0.5 (`bart scale 0.5`) for a 128-pixel image, as BART's own examples do.
#include <array>
#include <cstddef>
#include <string>

#include "forge/IO/Cfl.h"
#include "forge/IO/Mrd.h"
#include "forge/Recon/ReconProblem.h"

namespace forge {
namespace io {

// BART's dimension indices (src/misc/mri.h) that forge-recon reads.
constexpr std::size_t kBartCoilDim = 3, kBartMapsDim = 4, kBartTimeDim = 10, kBartSliceDim = 13;

// The image matrix BART's nufft chooses for a trajectory [3, ...] (estimate_im_dims in src/noncart/nufft.c):
// per axis 2 * floor((2 max|k| + 1.5) / 2), and 1 where every k of the axis is 0.
// Throws input_error when a coordinate is not finite or has an imaginary part.
std::array<std::size_t, 3> bart_image_matrix(const CflArray& traj, const std::string& trajName);

// Checks that k-space [1, samples, readouts, coils, ...] and the trajectory [3, samples, readouts, ...] fit each
// other: the same samples and readouts; dims 10 (time) and 13 (slices) of the trajectory 1 or equal to the
// k-space's; every other dimension of either 1 (ESPIRiT's maps dimension, echoes, ... are not supported).
// Samples per readout at most 65535 (an ISMRMRD acquisition's limit). Throws input_error naming the file and
// the dimension. Needs only the headers (read_cfl_dims), so a mismatch is found before the values are read.
void check_bart_dims(const CflDims& kspace, const std::string& kspaceName, const CflDims& traj,
                     const std::string& trajName);

// Checks the coil maps' dims [x, y, z, coils, 1, ..., slices at 13] against k-space's coils and slices; their
// first three sizes are the image matrix. Throws input_error naming the file (maps with several ESPIRiT sets,
// dim 4 > 1, are refused: `bart ecalib -m1` or `bart slice 4 0` give one).
std::array<std::size_t, 3> check_bart_maps_dims(const CflDims& maps, const std::string& mapsName,
                                                const CflDims& kspace);

// Sample times of BART input, which BART's arrays do not carry: t = echo_time + dwell * j for sample j (0-based)
// of every readout, in seconds (a spiral-out's readout starts at TE). dwell 0: no times.
struct BartSampleTimes {
    double dwell = 0;      // seconds per sample (> 0 when given)
    double echo_time = 0;  // seconds, the time of each readout's first sample (>= 0)
};

// The arrays as ISMRMRD content: one acquisition per readout, time point (repetition) and slice, its samples
// coil by coil; the trajectory in ISMRMRD's normalised units (k / matrix); the header's encoded and recon
// matrix 'matrix' with a FOV of matrix x voxel_mm (BART's files carry no geometry: the image sits at the
// scanner's origin, read/phase/slice along x/y/z). Sample times: none (dwell 0, no TE) unless 'times' has a
// dwell, which then goes into every acquisition's sample_time_us with center_sample 0, and the echo time into
// the header's TE, so that problem_from_mrd() gives t = echo_time + dwell * j.
// Throws input_error naming the file for a non-finite value or a coordinate outside [-N/2, N/2] of its axis
// (after check_bart_dims), and for a dwell that is not positive and finite or an echo time that is negative or
// not finite.
MrdFile mrd_from_bart(const CflArray& kspace, const std::string& kspaceName, const CflArray& traj,
                      const std::string& trajName, const std::array<std::size_t, 3>& matrix,
                      const std::array<double, 3>& voxel_mm = {{1, 1, 1}}, const BartSampleTimes& times = {});

// Checks an array of sample times [1, samples, readouts(, time at 10, slices at 13)] against k-space's dims:
// the same samples and readouts, dims 10 and 13 1 or the k-space's, every other dimension 1. Throws input_error
// naming the file and the dimension.
void check_bart_times_dims(const CflDims& times, const std::string& timesName, const CflDims& kspace);

// Sets every frame's sample times from 'times' (seconds, real; checked by check_bart_times_dims against the
// k-space 'P' came from through mrd_from_bart): sample j of readout r of repetition f and slice s takes
// times[0, j, r, ..., f (or 0), ..., s (or 0)]. Throws input_error naming the file and the sample for a value
// that is not finite, has an imaginary part or is negative.
void set_bart_sample_times(recon::ReconProblem& P, const CflArray& times, const std::string& timesName);

// The maps [x, y, z, coils, ..., slices at 13] as attach_smaps() takes them: dims {x, y, z * slices, coils},
// x fastest, then y, z, slice, coil.
Array bart_maps_array(const CflArray& maps);

}  // namespace io
}  // namespace forge
