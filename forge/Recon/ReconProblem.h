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
};

struct ReconProblem {
    std::size_t Nx = 0, Ny = 0, Nz = 1;  // image grid of one frame (Nz = 1 for 2D)
    std::size_t nslices = 1, nframes = 1, nc = 1;
    std::array<double, 3> voxel_mm{{1, 1, 1}};
    Affine affine{};
    std::vector<ReconFrame> frames;                 // frame-major, slice within frame
    arma::fvec ix, iy, iz;                          // n2 pixel positions (FOV units)
    std::vector<arma::fvec> fieldmap;               // per slice: n2 (rad/s); empty: none
    std::vector<arma::cx_fvec> smaps;               // per slice: nc * n2, coil-major; empty: none
    std::vector<arma::fvec> reference;              // per slice: n2 magnitudes; empty: none
    std::size_t accel = 1;                          // acceleration factor of the acquisition (for messages)
    std::string source;                             // where the data came from (for messages)
    std::size_t n1total = 0, n1max = 0;             // samples per coil: in all frames, in the largest frame
    std::array<double, 3> fovRatio{{1, 1, 1}};      // recon FOV / encoded FOV per axis
    std::array<std::size_t, 3> fftGrid{{0, 0, 0}};  // FFT grid holding every sample (0: none); see fft_grid()
    std::size_t n2() const { return Nx * Ny * Nz; }
};

// Fills ix, iy, iz: pixel (x, y, z) at ((x - Nx/2)/Nx, (y - Ny/2)/Ny, (z - Nz/2)/Nz), x fastest.
inline void set_pixel_grid(ReconProblem& P) {
    const std::size_t n2 = P.n2();
    P.ix.set_size(n2);
    P.iy.set_size(n2);
    P.iz.set_size(n2);
    for (std::size_t z = 0; z < P.Nz; ++z)
        for (std::size_t y = 0; y < P.Ny; ++y)
            for (std::size_t x = 0; x < P.Nx; ++x) {
                const std::size_t i = x + P.Nx * (y + P.Ny * z);
                P.ix[i] = float((double(x) - double(P.Nx / 2)) / double(P.Nx));
                P.iy[i] = float((double(y) - double(P.Ny / 2)) / double(P.Ny));
                P.iz[i] = P.Nz > 1 ? float((double(z) - double(P.Nz / 2)) / double(P.Nz)) : 0.0f;
            }
}

}  // namespace recon
}  // namespace forge
