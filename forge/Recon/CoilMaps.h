#pragma once
// Coil sensitivity maps from the data themselves (docs/map-estimation.md).
//
// 1. Low-resolution coil images: the samples of the central k-space box (|k| <= calibration/2 cycles/FOV
//    per axis; for Cartesian data no wider than the fully sampled centre) with a Hann taper and Pipe's
//    density compensation, through Gnufft's adjoint onto the map grid: the image grid, or where it is finer
//    than twice the calibration width, a coarser grid of 2 x calibration points per axis over the same FOV
//    (the images hold no finer detail). Any trajectory, 2D or 3D. Calibration samples whose coil amplitude is
//    over 1000 times the 99th percentile of theirs (a spike, a corrupt readout) are left out.
// 2. Local eigen-decomposition (Walsh et al., MRM 2000; Inati's adaptive combine): at each pixel the coil
//    covariance R = sum over a kernel^d window of x x^H (x: the coil vector of the low-resolution images);
//    its leading eigenvector (arma::eig_sym) is the map's direction, of unit norm, so sum_c |S_c|^2 = 1.
//    Its phase is chosen so that S^H x (the window's coil-combined value) is real and positive: for a
//    real object the maps equal the true ones; otherwise they carry the object's low-resolution phase.
//    Maps of a coarser map grid are interpolated (linearly, then normalised) onto the image grid.
// 3. Mask: pixels whose window amplitude a = sqrt(sum_c R_cc) exceeds the smallest of three levels, with the
//    holes the object encloses filled (flood fill of the background from the grid's faces); maps are 0 outside.
//    The levels: threshold x max a (the coil-shaded image's brightest spot), 2 x the background (the 10th
//    percentile of a: noise and blur where there is no object), and the level below which the pixels hold
//    max_dropped_energy of the window energy. So the mask keeps whatever stands out of the noise, and never
//    drops more than max_dropped_energy of the calibration image's energy, whatever a bright spot or coil
//    shading does to the maximum.
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include <armadillo>

#include "forge/Core/Device.h"
#include "forge/Recon/ReconProblem.h"

namespace forge {

namespace recon {

struct CoilMapOptions {
    // Width of the central k-space box, cycles/FOV per axis (>= 4), or 0 (the default) for 48 with 2D
    // non-Cartesian data and 24 otherwise: a spiral's off-resonance phase at TE can vary faster across the object
    // than 24 cycles/FOV resolve, and images that blur it cancel (docs/map-estimation.md); in 3D, 48^3 costs
    // eight times 24^3; Cartesian data are bounded by their fully sampled centre.
    double calibration = 0;
    int kernel = 5;           // covariance window, pixels per axis (odd, >= 1)
    double threshold = 0.05;  // mask: at most this fraction of the maximum window amplitude (0 keeps every pixel)
    // mask: at most this share of the window energy is dropped (0 keeps every pixel; step 3 above)
    double max_dropped_energy = 1e-3;
    // Where the stages run (docs/map-estimation.md): Auto (the value-initialised default) on the GPU when
    // device::available(), else on the host; Host; GPU (forge::cuda_error without a usable device). The GPU's
    // maps equal the host's to float rounding.
    Device device = Device::Auto;
};

// What one slice's estimation measured (estimate_coil_maps).
struct CoilMapStats {
    // Share of the low-resolution root-sum-of-squares image's energy (sum over coils and pixels of |x|^2)
    // outside the mask: the part of the object the maps' support drops (at most max_dropped_energy plus what
    // the hole fill adds back; over 1%, mask_dropped).
    double dropped_energy = 0;
    double level = 0;                            // the mask's window-amplitude level, relative to the largest
    bool mask_dropped = false;                   // dropped_energy was over 1%: the maps cover the whole grid instead
    std::size_t outliers = 0;                    // calibration samples left out as spikes (step 1 above)
    std::array<std::size_t, 3> grid{{1, 1, 1}};  // the map grid the eigenvectors were computed on
};

// Maps of one image grid from its coil images (n2 x nc, x fastest on Nx x Ny x Nz): nc * n2, coil-major.
// 'mask' (optional) receives 1 inside the object, 0 outside. Throws forge::invalid_argument naming the
// argument when sizes disagree or an option is out of range.
arma::cx_fvec coil_maps_from_images(const arma::cx_fmat& coilImages, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                                    const CoilMapOptions& options = {}, arma::uvec* mask = nullptr);

// Low-resolution coil images (n2 x nc) of one frame of P (step 1 above). 'usedWidth' (optional) receives
// the calibration width used per axis. Throws forge::invalid_argument when the fully sampled centre of
// Cartesian data is narrower than 6 lines (no calibration region), or when no sample is in the box.
arma::cx_fmat low_resolution_coil_images(const ReconProblem& P, const ReconFrame& frame,
                                         const CoilMapOptions& options = {},
                                         std::array<double, 3>* usedWidth = nullptr);

// What estimate_coil_maps() reuses across calls: the calibration samples' gridding plan and density weights, which
// depend only on the trajectory, the map grid and the device (the slices of a stream, estimated one call at a time,
// take the first one's). The maps equal those estimated without it. Not for concurrent calls.
class CoilMapCache {
public:
    CoilMapCache();
    ~CoilMapCache();
    CoilMapCache(const CoilMapCache&) = delete;
    CoilMapCache& operator=(const CoilMapCache&) = delete;
    struct Calibration;

private:
    std::unique_ptr<Calibration> calibration_;
    friend std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem&, const CoilMapOptions&,
                                                         std::vector<arma::uvec>*, std::array<double, 3>*,
                                                         std::vector<CoilMapStats>*, CoilMapCache*);
};

// Maps for every slice of P from the first frame of that slice (per slice: nc * n2, coil-major, as
// ReconProblem::smaps). 'masks' (optional) receives one mask per slice.
// 'stats' (optional) receives one CoilMapStats per slice. 'reuse' (optional) keeps the calibration's plan and
// density weights for later calls (frames of one call share them without it).
std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem& P, const CoilMapOptions& options = {},
                                              std::vector<arma::uvec>* masks = nullptr,
                                              std::array<double, 3>* usedWidth = nullptr,
                                              std::vector<CoilMapStats>* stats = nullptr,
                                              CoilMapCache* reuse = nullptr);

}  // namespace recon
}  // namespace forge
