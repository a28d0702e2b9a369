#pragma once
// A reconstruction problem in forge's units, independent of any file format: k-space in cycles per FOV,
// sample times in seconds, pixel positions in FOV units, field maps in rad/s, coil-major data
// (docs/conventions.md). forge/IO's problem_from_mrd() builds one from an ISMRMRD (MRD) file;
// forge::recon::reconstruct() (Reconstruct.h) solves it.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/Core/DeprecatedFields.h"
#include "forge/Core/Geometry.h"

namespace forge {
namespace recon {

// 4x4 voxel-to-world affine, row major, last row (0, 0, 0, 1): voxel (i, j, k) -> RAS+ mm (NIfTI's space).
using Affine = std::array<std::array<double, 4>, 4>;

// One reconstruction unit: a 2D slice or a 3D volume at one repetition/contrast.
struct ReconFrame {
    std::size_t slice = 0, frame = 0;  // slice index (2D multi-slice), frame index (repetition/contrast)
    std::size_t contrast = 0;          // echo index (ISMRMRD idx.contrast), 0-based in the order of the file's
    double echo_time = 0;              // the echo's TE (seconds): t of the k-space centre
    arma::fvec kx, ky, kz, t;          // n1 samples (cycles/FOV, seconds)
    arma::cx_fvec y;                   // nc * n1, coil-major

    // The samples as the operators take them (a copy), and from them (checked: equal lengths, finite, times given).
    Trajectory<float> trajectory() const { return Trajectory<float>(kx, ky, kz, t); }
    void set_trajectory(Trajectory<float> k) {
        k.check("ReconFrame::set_trajectory", true);
        kx = std::move(k.kx), ky = std::move(k.ky), kz = std::move(k.kz), t = std::move(k.t);
    }
};

struct ReconProblemFields {
    std::size_t Nx = 0, Ny = 0, Nz = 1;  // image grid of one frame (Nz = 1 for 2D)
    std::size_t nslices = 1, nframes = 1, nc = 1;
    std::array<double, 3> voxel_mm{{1, 1, 1}};
    Affine affine{};
    std::vector<ReconFrame> frames;                  // frame-major, slice within frame
    arma::fvec ix, iy, iz;                           // n2 pixel positions (FOV units)
    std::vector<arma::fvec> field_map;               // per slice: n2 (rad/s); empty: none
    std::vector<arma::cx_fvec> smaps;                // per slice: nc * n2, coil-major; empty: none
    std::vector<arma::fvec> reference;               // per slice: n2 magnitudes; empty: none
    std::size_t accel = 1;                           // acceleration factor of the acquisition (for messages)
    std::string source;                              // where the data came from (for messages)
    std::size_t n1total = 0, n1max = 0;              // samples per coil: in all frames, in the largest frame
    std::array<double, 3> fov_ratio{{1, 1, 1}};      // recon FOV / encoded FOV per axis
    std::array<std::size_t, 3> fft_grid{{0, 0, 0}};  // FFT grid holding every sample (0: none): fft_grid(P)
    std::size_t n2() const { return Nx * Ny * Nz; }

    ImageGrid grid() const { return ImageGrid(Nx, Ny, Nz); }
    // The grid (checked) and its pixel centres, PixelGeometry::on_grid's: (i - N/2) / N along each axis longer
    // than 1, 0 along the others, x fastest.
    void set_grid(const ImageGrid& g) {
        const PixelGeometry<float> p = PixelGeometry<float>::on_grid(g);
        Nx = g.nx, Ny = g.ny, Nz = g.nz;
        ix = p.x, iy = p.y, iz = p.z;
    }
    // Slice 'slice''s pixels as the operators take them: the positions and that slice's field map (empty when the
    // problem has none). Throws forge::invalid_argument for a slice beyond nslices or field maps not one per slice.
    PixelGeometry<float> pixels(std::size_t slice) const {
        if (slice >= nslices)
            throw invalid_argument("ReconProblem::pixels: slice " + std::to_string(slice) + " of " +
                                   std::to_string(nslices));
        if (!field_map.empty() && field_map.size() != nslices)
            throw invalid_argument("ReconProblem::pixels: " + std::to_string(field_map.size()) +
                                   " field maps, expected none or one per slice (" + std::to_string(nslices) + ")");
        return PixelGeometry<float>(ix, iy, iz, field_map.empty() ? arma::fvec() : field_map[slice]);
    }
};
// ReconProblem's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct ReconProblem : ReconProblemFields {
    FORGE_FIELD_ALIAS(fieldmap, field_map)
    FORGE_FIELD_ALIAS(fovRatio, fov_ratio)
    FORGE_FIELD_ALIAS(fftGrid, fft_grid)
    FORGE_FIELD_ALIAS_COPIES(ReconProblem, ReconProblemFields)
};
FORGE_FIELD_ALIASES_END

// Fills ix, iy, iz: pixel (x, y, z) at ((x - Nx/2)/Nx, (y - Ny/2)/Ny, (z - Nz/2)/Nz), x fastest (0 along an axis of
// length 1): ReconProblem::set_grid of the problem's own grid; none for a grid with no pixels.
inline void set_pixel_grid(ReconProblem& P) {
    if (P.n2() > 0) return P.set_grid(P.grid());
    P.ix.reset(), P.iy.reset(), P.iz.reset();
}

}  // namespace recon
}  // namespace forge
