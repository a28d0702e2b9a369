#pragma once
// forge-recon --demo's acquisition, simulated: a multi-slice smooth Shepp-Logan phantom, ring coil maps
// (root-sum-of-squares 1), a two-blob field map, and two scans of it simulated with the exact field-corrected
// operator (SENSE on Gdft) plus complex Gaussian noise:
//   - the imaging scan: a 2-interleave Archimedean spiral-out per slice, 16 ms readouts from TE 1 ms;
//   - the field-map scan: a fully sampled Cartesian 2-echo gradient echo on the same grid (TE 2.0 and 4.5 ms,
//     4 us dwell).
// Each scan comes as the scanner stores it (readouts: ISMRMRD's acquisitions, normalised trajectory, counters)
// and in forge's units (frames: k in cycles per FOV, t in seconds, coil-major data; docs/conventions.md), the
// frames being what forge's MRD reader (forge::io::problem_from_mrd) makes of the readouts, bit for bit.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/Core/DeprecatedFields.h"
#include "forge/Core/Geometry.h"

namespace forge {
namespace sim {

struct DemoOptions {
    std::size_t size = 64;       // N: an N x N image per slice (even, 16 to 256)
    std::size_t slices = 2;      // 1 to 16
    std::size_t coils = 8;       // 1 to 32
    double noise = 0.01;         // noise standard deviation relative to the data's RMS (>= 0)
    bool gpu = false;            // the imaging scan's SENSE apply on the GPU (forgeCol residency), where it is usable
    std::uint32_t seed = 12345;  // of the noise (std::mt19937)
    bool simulate = true;        // false: the data stay zero (the objects, readouts and frames only: I/O timing)
    // Throws forge::invalid_argument naming the option and its range.
    void check() const;
};

// One readout as ISMRMRD stores an acquisition.
struct Readout {
    std::size_t slice = 0, contrast = 0;  // slice, echo (idx.slice, idx.contrast)
    std::size_t line = 0;                 // interleave (spiral) or phase-encoding line (Cartesian): idx.e1
    std::size_t samples = 0, center_sample = 0;
    float dwell_us = 0;
    std::vector<float> traj;                // spiral: kx, ky per sample in k / N (|k| < 0.5); Cartesian: empty
    std::vector<std::complex<float>> data;  // samples fastest, then coils
};

// Every readout of one slice at one echo, in forge's units.
struct SimulatedFrame {
    std::size_t slice = 0, contrast = 0;
    double echo_time = 0;  // seconds
    Trajectory<float> k;   // cycles per FOV; t in seconds
    arma::cx_fvec y;       // coils x samples, coil-major (the readouts' data, noise included)
};

struct SimulatedScan {
    bool cartesian = false;              // k from the counters (line, sample) rather than from traj
    std::vector<double> echo_times_ms;   // per contrast
    std::size_t centre_line = 0;         // Cartesian: the line at k_y = 0
    std::vector<Readout> readouts;       // in acquisition order (slice, then echo, then line)
    std::vector<SimulatedFrame> frames;  // echo-major, slice within echo: problem_from_mrd's order
};

struct DemoAcquisitionFields {
    std::size_t N = 0, slices = 0, coils = 0;
    double fov_mm = 240, thickness_mm = 5;  // in-plane FOV, slice thickness (slices are contiguous)
    std::vector<float> slice_offset_mm;     // per slice: its centre along the slice axis
    std::vector<arma::fvec> truth;          // per slice: N x N magnitudes, x fastest
    std::vector<arma::cx_fvec> smaps;       // per slice: coils x N^2, coil-major; sum_c |S_c|^2 = 1
    std::vector<arma::fvec> field_map;      // per slice: N^2, rad/s
    SimulatedScan spiral;                   // the imaging scan
    SimulatedScan field_map_scan;           // the 2-echo Cartesian field-map scan
    std::size_t shots = 0;                  // spiral interleaves per slice
    double simulation_seconds = 0;          // simulating both scans' data
};
// DemoAcquisition's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct DemoAcquisition : DemoAcquisitionFields {
    FORGE_FIELD_ALIAS(fieldmap, field_map)
    FORGE_FIELD_ALIAS(fieldmap_scan, field_map_scan)
    FORGE_FIELD_ALIAS_COPIES(DemoAcquisition, DemoAcquisitionFields)
};
FORGE_FIELD_ALIASES_END

// Simulates forge-recon --demo's acquisition (both scans on the GPU with o.gpu, each frame one batched SENSE
// apply). Throws forge::invalid_argument for options out of range, and
// forge::cuda_error when o.gpu asks for a GPU and none is usable.
DemoAcquisition demo_acquisition(const DemoOptions& o = {});

}  // namespace sim
}  // namespace forge
