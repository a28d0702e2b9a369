#pragma once
// Device kernels of map estimation (docs/map-estimation.md), declarations free of CUDA headers. Implemented in
// forge/Recon/cuda/CoilMapKernels.cu and FieldMapKernels.cu; on CPU-only builds forge/CUDA/NoCuda.cpp throws
// forge::cuda_error. Every pointer is device memory; images are Nx x Ny x Nz, x fastest; columns of n2 pixels
// are stored back to back. Complex values are forgeComplex (interleaved re, im). Default stream; each call
// returns once its kernels are queued, the downloads of the host code wait for them.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace cuda {

struct MapGrid {
    uword Nx = 1, Ny = 1, Nz = 1;
    uword n2() const { return Nx * Ny * Nz; }
};

// ---------------------------------------------------------------- coil maps (CoilMapKernels.cu)

// Largest coil count the device eigenvector kernel takes (one thread per matrix entry, a block per pixel).
constexpr uword kMaxDeviceCoils = 32;

// cols (n2 x (nc + nc (nc + 1) / 2)): the nc coil images X copied, then the products x_i conj(x_j) for i <= j in
// the host's pair order (i major), every column then summed over a (2 half + 1)^d window clipped at the faces
// (running sums in double per line, as the host's prefix sums; each axis's result rounded to float, as the host
// stores it). 'scratch' holds as many values as cols.
void coil_covariance(const forgeComplex<float>* X, forgeComplex<float>* cols, forgeComplex<float>* scratch,
                     MapGrid grid, uword nc, uword half);

// amp[k] = sqrt(max(sum_c Re R_cc(k), 0)) in double: the window amplitude the mask thresholds.
void coil_window_amplitude(const forgeComplex<float>* cols, double* amp, MapGrid grid, uword nc);

// total (npairs entries, double): sum over the pixels with mask[k] of each pair's covariance column.
// Deterministic: fixed partial sums added in a fixed order.
void coil_covariance_total(const forgeComplex<float>* cols, const unsigned char* mask, forgeComplex<double>* total,
                           MapGrid grid, uword nc);

// Per pixel with mask[k] (nc <= kMaxDeviceCoils): the leading eigenvector of the window covariance in double
// (repeated squaring of the trace-normalised matrix until it is rank one to double precision), its phase fixed
// as the host does (S^H xs real and positive; where that vanishes, u0^H S real and positive); maps (nc x n2,
// coil-major) receives it rounded to float, 0 outside the mask. flags[k] = 1 where the device gave no answer
// (a zero matrix, or no convergence in its squarings: nearly equal leading eigenvalues), which the host then
// recomputes with eig_sym; 0 elsewhere.
void coil_leading_eigenvectors(const forgeComplex<float>* cols, const unsigned char* mask,
                               const forgeComplex<double>* u0, forgeComplex<float>* maps, unsigned char* flags,
                               MapGrid grid, uword nc);

// ---------------------------------------------------------------- field map (FieldMapKernels.cu)

// Echo pair p: echoes m and n, dt = t_n - t_m (seconds).
struct EchoPair {
    unsigned m, n;
    double dt;
};

// a (n2 x npairs) = |y_m| |y_n|, phi = angle(y_m conj(y_n)), in double; curvSum[j] = sum_p a dt^2 (its maximum
// normalises a). echoes: ne x n2, echo-major.
void fieldmap_weights(const forgeComplex<float>* echoes, const EchoPair* pairs, uword npairs, double* a, double* phi,
                      double* curvSum, uword n2);

// Largest value of v (n entries; exact whatever the order).
double device_max(const double* v, uword n);

// a /= s (n entries).
void divide(double* a, double s, uword n);

// w = angle(window sum of y_0 conj(y_1)) / dt, the window (2 half + 1)^d clipped at the faces, in double: axis by
// axis (x, y, z), each pixel's sum by axis_window_sum, as the host sums it. scratch: 2 n2 complex doubles.
void fieldmap_start(const forgeComplex<float>* echoes, double* w, forgeComplex<double>* scratch, MapGrid grid,
                    uword half, double dt);

// The start's window sum along one axis at element i of a line of n complex doubles (interleaved re, im; element t
// at line[2 t stride]): the elements max(i - half, 0) .. min(i + half, n - 1) added in ascending order from 0.
// Host and device both call this, so their starts add the same values in the same order; a direct sum also keeps
// a window of zeros exactly 0 (running or prefix sums leave a residue there of the line's rounding, whose angle,
// the start where the echoes vanish, is then arbitrary: up to pi / dt apart between two summation orders).
FORGE_HD void axis_window_sum(const double* line, uword n, uword stride, uword i, uword half, double* out) {
    const uword lo = i >= half ? i - half : 0, hi = i + half < n - 1 ? i + half : n - 1;
    double re = 0, im = 0;
    for (uword t = lo; t <= hi; ++t) {
        re += line[2 * t * stride];
        im += line[2 * t * stride + 1];
    }
    out[0] = re;
    out[1] = im;
}

// One separable-quadratic-surrogate step (FieldMapEstimation.h): next = w - grad / curv, every pixel.
void fieldmap_sqs_step(const double* a, const double* phi, const EchoPair* pairs, uword npairs, const double* w,
                       double* next, MapGrid grid, double beta);

}  // namespace cuda
}  // namespace forge
