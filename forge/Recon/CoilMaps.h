#pragma once
// Coil sensitivity maps from the data themselves (docs/map-estimation.md).
//
// 1. Low-resolution coil images: the samples of the central k-space box (|k| <= calibration/2 cycles/FOV
//    per axis; for Cartesian data no wider than the fully sampled centre) with a Hann taper and Pipe's
//    density compensation, through Gnufft's adjoint onto the full image grid. Any trajectory, 2D or 3D.
// 2. Local eigen-decomposition (Walsh et al., MRM 2000; Inati's adaptive combine): at each pixel the coil
//    covariance R = sum over a kernel^d window of x x^H (x: the coil vector of the low-resolution images);
//    its leading eigenvector (arma::eig_sym) is the map's direction, of unit norm, so sum_c |S_c|^2 = 1.
//    Its phase is chosen so that S^H x (the window's coil-combined value) is real and positive: for a
//    real object the maps equal the true ones; otherwise they carry the object's low-resolution phase.
// 3. Mask: pixels whose window-summed coil energy exceeds threshold x its maximum, with the holes the
//    object encloses filled (flood fill of the background from the grid's faces); maps are 0 outside.
#include <array>
#include <cstddef>
#include <vector>

#include <armadillo>

#include "forge/Recon/ReconProblem.h"

namespace forge {
enum class ReconDevice;  // forge/Solvers/recon_solve.h: Auto (0), Host, GPU

namespace recon {

struct CoilMapOptions {
    double calibration = 24;  // width of the central k-space box, cycles/FOV per axis (>= 4)
    int kernel = 5;           // covariance window, pixels per axis (odd, >= 1)
    double threshold = 0.05;  // mask: fraction of the maximum window energy (0 keeps every pixel)
    // Where the stages run (docs/map-estimation.md): Auto (the value-initialised default) on the GPU when
    // device::available(), else on the host; Host; GPU (forge::cuda_error without a usable device). The GPU's
    // maps equal the host's to float rounding.
    ReconDevice device{};
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

// Maps for every slice of P from the first frame of that slice (per slice: nc * n2, coil-major, as
// ReconProblem::smaps). 'masks' (optional) receives one mask per slice.
std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem& P, const CoilMapOptions& options = {},
                                              std::vector<arma::uvec>* masks = nullptr,
                                              std::array<double, 3>* usedWidth = nullptr);

}  // namespace recon
}  // namespace forge
