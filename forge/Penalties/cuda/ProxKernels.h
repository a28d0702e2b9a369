#pragma once
// Per-element arithmetic of the proximal penalties (soft threshold, the periodic orthogonal wavelet filter bank,
// the dual step of exact total variation), shared by the host loops (forge/Penalties/*.cpp) and the CUDA kernels
// (forge/Penalties/cuda/ProxKernels.cu), so the CPU and the GPU compute the same formulas. Free of CUDA headers:
// FORGE_HD makes the functions __host__ __device__ under nvcc.
//
// Image layout: pixel i = x + nx*(y + ny*z) (x fastest), as forge/Penalties/cuda/FiniteDifferenceKernels.h.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace prox {

FORGE_HD float p_sqrt(float v) { return sqrtf(v); }
FORGE_HD double p_sqrt(double v) { return sqrt(v); }

template <typename T1>
FORGE_HD T1 abs2(forgeComplex<T1> v) {
    return v.re * v.re + v.im * v.im;
}

// Complex soft threshold: v max(0, 1 - tau/|v|), the prox of tau |.| on C (the phase is kept).
template <typename T1>
FORGE_HD forgeComplex<T1> soft(forgeComplex<T1> v, T1 tau) {
    const T1 a = p_sqrt(abs2(v));
    if (a <= tau) return forgeComplex<T1>(0, 0);
    return v * ((a - tau) / a);
}

// A grid of up to three axes, and a box [0, len[a]) inside it (the active band of a wavelet level).
struct Dims {
    uword n[3];    // the full grid: nx, ny, nz
    uword len[3];  // the box: the active length on each axis (the full length at the first level)
};

FORGE_HD uword stride_of(const Dims& d, int axis) { return axis == 0 ? 1 : axis == 1 ? d.n[0] : d.n[0] * d.n[1]; }

FORGE_HD void coords(const Dims& d, uword i, uword c[3]) {
    c[0] = i % d.n[0];
    c[1] = (i / d.n[0]) % d.n[1];
    c[2] = i / (d.n[0] * d.n[1]);
}

// An orthonormal two-channel filter bank: lo = the scaling filter h (sum h^2 = 1), hi[m] = (-1)^m h[L-1-m].
constexpr int kMaxTaps = 8;
template <typename T1>
struct Filters {
    T1 lo[kMaxTaps];
    T1 hi[kMaxTaps];
    int taps;
};

// One analysis step along 'axis' of the box, periodic on its length m (even): the entry at box coordinate c < m/2 is
// the approximation a[c] = sum_k lo[k] x[(2c + k) mod m], at c >= m/2 the detail d[c - m/2] (hi). Entries outside
// the box are copied.
template <typename T1>
FORGE_HD forgeComplex<T1> analysis_at(uword i, const forgeComplex<T1>* in, const Dims& d, int axis,
                                      const Filters<T1>& f) {
    uword c[3];
    coords(d, i, c);
    if (c[0] >= d.len[0] || c[1] >= d.len[1] || c[2] >= d.len[2]) return in[i];
    const uword m = d.len[axis], half = m / 2, s = stride_of(d, axis);
    const uword base = i - c[axis] * s;
    const bool low = c[axis] < half;
    const uword k0 = 2 * (low ? c[axis] : c[axis] - half);
    const T1* h = low ? f.lo : f.hi;
    forgeComplex<T1> acc(0, 0);
    for (int k = 0; k < f.taps; ++k) acc += in[base + ((k0 + uword(k)) % m) * s] * h[k];
    return acc;
}

// The inverse (and adjoint) of analysis_at: x[c] = sum over taps k with k = c (mod 2) of lo[k] a[j] + hi[k] d[j],
// j = ((c - k) mod m) / 2.
template <typename T1>
FORGE_HD forgeComplex<T1> synthesis_at(uword i, const forgeComplex<T1>* in, const Dims& d, int axis,
                                       const Filters<T1>& f) {
    uword c[3];
    coords(d, i, c);
    if (c[0] >= d.len[0] || c[1] >= d.len[1] || c[2] >= d.len[2]) return in[i];
    const uword m = d.len[axis], half = m / 2, s = stride_of(d, axis);
    const uword base = i - c[axis] * s;
    forgeComplex<T1> acc(0, 0);
    for (int k = int(c[axis] % 2); k < f.taps; k += 2) {
        const uword j = ((c[axis] + m * uword(kMaxTaps) - uword(k)) % m) / 2;
        acc += in[base + j * s] * f.lo[k] + in[base + (half + j) * s] * f.hi[k];
    }
    return acc;
}

// A cyclic shift of the grid, s[a] < n[a] on each axis.
struct Shift {
    uword s[3];
};

// Where pixel i goes under the shift c -> (c + s) mod n (forward), or under its inverse.
FORGE_HD uword shifted_index(const Dims& d, uword i, const Shift& sh, bool forward) {
    uword c[3];
    coords(d, i, c);
    for (int a = 0; a < 3; ++a) c[a] = forward ? (c[a] + sh.s[a]) % d.n[a] : (c[a] + d.n[a] - sh.s[a]) % d.n[a];
    return c[0] + d.n[0] * (c[1] + d.n[1] * c[2]);
}

// Whether wavelet coefficient i lies in the coarsest approximation band (the box d.len after the last level).
FORGE_HD bool in_box(const Dims& d, uword i) {
    uword c[3];
    coords(d, i, c);
    return c[0] < d.len[0] && c[1] < d.len[1] && c[2] < d.len[2];
}

// ---- exact total variation: TV(u) = sum_i |(D u)(i)|, D the forward differences u(i + s_a) - u(i) along each axis
// of length > 1 (none across the last pixel of an axis); |.| the Euclidean norm over the axes (isotropic) or the sum
// of their moduli (anisotropic). The dual variable p holds one complex value per axis and pixel, p[a * n + i].

struct TvGrid {
    uword n[3];
    int axes[3];  // the axes of length > 1
    int n_axes;
    uword n_pixels;
};

// Whether pixel i has a forward neighbour along axis a.
FORGE_HD bool has_next(const TvGrid& g, uword i, int a) {
    const uword s = a == 0 ? 1 : a == 1 ? g.n[0] : g.n[0] * g.n[1];
    return (i / s) % g.n[a] != g.n[a] - 1;
}
FORGE_HD uword axis_stride(const TvGrid& g, int a) { return a == 0 ? 1 : a == 1 ? g.n[0] : g.n[0] * g.n[1]; }

// (D^H p)(i) = sum_a p_a(i - s_a) [a difference ends at i] - p_a(i) [one starts at i].
template <typename T1>
FORGE_HD forgeComplex<T1> div_at(const TvGrid& g, uword i, const forgeComplex<T1>* p) {
    forgeComplex<T1> s(0, 0);
    for (int k = 0; k < g.n_axes; ++k) {
        const int a = g.axes[k];
        const uword st = axis_stride(g, a);
        const forgeComplex<T1>* pa = p + uword(k) * g.n_pixels;
        if ((i / st) % g.n[a] != 0) s += pa[i - st];
        if (has_next(g, i, a)) s -= pa[i];
    }
    return s;
}

// TV's value at pixel i.
template <typename T1>
FORGE_HD T1 tv_value_at(const TvGrid& g, uword i, const forgeComplex<T1>* u, bool isotropic) {
    T1 s = 0;
    for (int k = 0; k < g.n_axes; ++k) {
        const int a = g.axes[k];
        if (!has_next(g, i, a)) continue;
        const T1 d2 = abs2(u[i + axis_stride(g, a)] - u[i]);
        s += isotropic ? d2 : p_sqrt(d2);
    }
    return isotropic ? p_sqrt(s) : s;
}

// One projected (accelerated) gradient step of the dual at pixel i: q = r + c (D u)(i), p_new = the projection of q
// on the unit ball (per pixel over the axes if isotropic, per entry if anisotropic), r = p_new + beta (p_new - p).
template <typename T1>
FORGE_HD void tv_dual_step_at(const TvGrid& g, uword i, const forgeComplex<T1>* u, forgeComplex<T1>* p,
                              forgeComplex<T1>* r, T1 c, T1 beta, bool isotropic) {
    forgeComplex<T1> q[3];
    T1 norm2 = 0;
    for (int k = 0; k < g.n_axes; ++k) {
        const int a = g.axes[k];
        const uword j = uword(k) * g.n_pixels + i;
        const forgeComplex<T1> du = has_next(g, i, a) ? u[i + axis_stride(g, a)] - u[i] : forgeComplex<T1>(0, 0);
        q[k] = has_next(g, i, a) ? r[j] + du * c : forgeComplex<T1>(0, 0);
        norm2 += abs2(q[k]);
    }
    const T1 iso_scale = norm2 > T1(1) ? T1(1) / p_sqrt(norm2) : T1(1);
    for (int k = 0; k < g.n_axes; ++k) {
        const uword j = uword(k) * g.n_pixels + i;
        T1 sc = iso_scale;
        if (!isotropic) {
            const T1 a2 = abs2(q[k]);
            sc = a2 > T1(1) ? T1(1) / p_sqrt(a2) : T1(1);
        }
        const forgeComplex<T1> pn = q[k] * sc;
        r[j] = pn + (pn - p[j]) * beta;
        p[j] = pn;
    }
}

}  // namespace prox
}  // namespace forge
