#pragma once
// Device kernels of map estimation (docs/map-estimation.md), declarations free of CUDA headers. Implemented in
// forge/Recon/cuda/CoilMapKernels.cu and FieldMapKernels.cu; on CPU-only builds forge/Recon/cuda/NoCuda.cpp throws
// forge::cuda_error. Every pointer is device memory; images are Nx x Ny x Nz, x fastest; columns of n2 pixels
// are stored back to back. Complex values are forgeComplex (interleaved re, im). Default stream; each call
// returns once its kernels are queued, the downloads of the host code wait for them.
#include <cmath>

#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace cuda {

struct MapGrid {
    uword Nx = 1, Ny = 1, Nz = 1;
    FORGE_HD uword n2() const { return Nx * Ny * Nz; }
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

// Linear interpolation of maps from the map grid M onto the image grid N (the same field of view), shared by the
// host loop and the device kernel so that both compute every pixel alike. Image pixel j of an axis sits at map
// coordinate M (j - N/2) / N + M/2, between map pixels i0 and i1 = i0 + 1 (clamped at the faces), weight f on i1.
struct AxisWeights {
    uword i0, i1;
    float f;
};
FORGE_HD AxisWeights axis_weights(uword j, uword N, uword M) {
    double u = double(M) * (double(j) - double(N / 2)) / double(N) + double(M / 2);
    u = u < 0 ? 0 : (u > double(M - 1) ? double(M - 1) : u);
    AxisWeights a;
    a.i0 = uword(u);
    a.i1 = a.i0 + 1 < M ? a.i0 + 1 : M - 1;
    a.f = float(u - double(a.i0));
    return a;
}

// The map pixels around one image pixel (up to 8, those of nonzero weight) with their weights; 'nearest' is the
// first of the largest weight.
struct PixelCorners {
    uword index[8];
    float weight[8];
    int count;
    uword nearest;
};
FORGE_HD PixelCorners pixel_corners(MapGrid M, MapGrid N, uword x, uword y, uword z) {
    const AxisWeights ax = axis_weights(x, N.Nx, M.Nx), ay = axis_weights(y, N.Ny, M.Ny),
                      az = axis_weights(z, N.Nz, M.Nz);
    const uword ix[2] = {ax.i0, ax.i1}, iy[2] = {ay.i0, ay.i1}, iz[2] = {az.i0, az.i1};
    const float fx[2] = {1 - ax.f, ax.f}, fy[2] = {1 - ay.f, ay.f}, fz[2] = {1 - az.f, az.f};
    PixelCorners p;
    p.count = 0;
    p.nearest = ix[0] + M.Nx * (iy[0] + M.Ny * iz[0]);
    float best = -1;
    for (int c = 0; c < 2; ++c)
        for (int b = 0; b < 2; ++b)
            for (int a = 0; a < 2; ++a) {
                const float w = fx[a] * fy[b] * fz[c];
                if (w == 0) continue;
                const uword i = ix[a] + M.Nx * (iy[b] + M.Ny * iz[c]);
                p.index[p.count] = i;
                p.weight[p.count] = w;
                ++p.count;
                if (w > best) {
                    best = w;
                    p.nearest = i;
                }
            }
    return p;
}

// The map grid's window amplitude (amp, m2 values) interpolated at an image pixel: the mask holds it against the
// map grid's level.
FORGE_HD double interpolated_amplitude(const double* amp, const PixelCorners& p) {
    double a = 0;
    for (int q = 0; q < p.count; ++q) a += p.weight[q] * amp[p.index[q]];
    return a;
}

// The maps of image pixel k (dst[c n2 + k], c < nc) from those of the map grid (src, nc x m2, coil-major, every
// pixel computed): interpolated, normalised to sum_c |S_c|^2 = 1, 0 where !inside. Where the corners' phases
// cancel (a phase singularity, squared norm below 1/4) the nearest map pixel's vector is taken instead.
FORGE_HD void interpolate_pixel_maps(const forgeComplex<float>* src, uword m2, uword nc, const PixelCorners& p,
                                     bool inside, forgeComplex<float>* dst, uword n2, uword k) {
    if (!inside) {
        for (uword c = 0; c < nc; ++c) dst[c * n2 + k] = forgeComplex<float>(0);
        return;
    }
    double norm = 0;
    for (uword c = 0; c < nc; ++c) {
        forgeComplex<float> v(0);
        for (int q = 0; q < p.count; ++q) v += p.weight[q] * src[c * m2 + p.index[q]];
        dst[c * n2 + k] = v;
        norm += double(v.re) * v.re + double(v.im) * v.im;
    }
    if (norm < 0.25) {
        norm = 0;
        for (uword c = 0; c < nc; ++c) {
            const forgeComplex<float> v = src[c * m2 + p.nearest];
            dst[c * n2 + k] = v;
            norm += double(v.re) * v.re + double(v.im) * v.im;
        }
    }
    const float scale = norm > 0 ? float(1 / sqrt(norm)) : 0.0f;
    for (uword c = 0; c < nc; ++c) dst[c * n2 + k] *= scale;
}

// inside[k] = 1 where interpolated_amplitude at image pixel k exceeds 'level', else 0 (n2 bytes); amp: the map
// grid's m2 amplitudes.
void coil_interpolated_inside(const double* amp, MapGrid M, double level, unsigned char* inside, MapGrid N);

// energy[k] = sum_c |X_c(k)|^2 in double (X: nc x n2, coil-major), for the share of the coil images' energy that a
// mask leaves out.
void coil_energy(const forgeComplex<float>* X, double* energy, MapGrid grid, uword nc);

// maps (nc x n2 on the image grid N) from mapsM (nc x m2 on the map grid M) by interpolate_pixel_maps, one
// thread per pixel; mask: n2 bytes, nonzero inside.
void coil_interpolate_maps(const forgeComplex<float>* mapsM, MapGrid M, const unsigned char* mask,
                           forgeComplex<float>* maps, MapGrid N, uword nc);

// ---------------------------------------------------------------- field map (FieldMapKernels.cu)

// Echo pair p: echoes m and n, dt = t_n - t_m (seconds).
struct EchoPair {
    unsigned m, n;
    double dt;
};

// a (n2 x npairs) = |y_m| |y_n|, phi = angle(y_m conj(y_n)), in double; curvSum[j] = sum_p a dt^2 (its maximum
// normalises a). echoes: ne x n2, echo-major.
void field_map_weights(const forgeComplex<float>* echoes, const EchoPair* pairs, uword npairs, double* a, double* phi,
                       double* curvSum, uword n2);

// Largest value of v (n entries; exact whatever the order).
double device_max(const double* v, uword n);

// a /= s (n entries).
void divide(double* a, double s, uword n);

// w = angle(window sum of y_0 conj(y_1)) / dt, the window (2 half + 1)^d clipped at the faces, in double: axis by
// axis (x, y, z), each pixel's sum by axis_window_sum, as the host sums it. scratch: 2 n2 complex doubles.
void field_map_start(const forgeComplex<float>* echoes, double* w, forgeComplex<double>* scratch, MapGrid grid,
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
void field_map_sqs_step(const double* a, const double* phi, const EchoPair* pairs, uword npairs, const double* w,
                        double* next, MapGrid grid, double beta);

}  // namespace cuda
}  // namespace forge
