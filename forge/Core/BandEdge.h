#pragma once
// The k-space band of an image axis: [-N/2, N/2] cycles/FOV for N > 1 pixels (both edges are one sample, the grid
// being periodic in k with period N), [-1/2, 1/2] for an axis of one pixel. A coordinate within
// band_edge_tolerance(N/2) beyond an edge is that edge sample, not an error: trajectories stored in float and
// scaled from [-0.5, 0.5] (ISMRMRD's, BART's, gpuNUFFT's) land a rounding past it (-0.50000006 x 160 = -80.00001).
// Host and device code (Gnufft's host and GPU sorts) apply the same test.
#if defined(__CUDACC__)
#define FORGE_BAND_EDGE_HD __host__ __device__
#else
#define FORGE_BAND_EDGE_HD
#endif

namespace forge {

// 1e-4 cycles/FOV plus 8 float rounding steps at |k| = half (2^-24 relative each).
FORGE_BAND_EDGE_HD inline double band_edge_tolerance(double half) { return 1e-4 + half * 0x1p-21; }

// The band's half-width of an axis of n pixels.
FORGE_BAND_EDGE_HD inline double band_half_width(unsigned long long n) { return n > 1 ? double(n / 2) : 0.5; }

// Whether v lies in [-half, half] up to the tolerance (false for NaN and infinities).
FORGE_BAND_EDGE_HD inline bool within_band(double v, double half) {
    const double h = half + band_edge_tolerance(half);
    return v >= -h && v <= h;
}

}  // namespace forge
#undef FORGE_BAND_EDGE_HD
