#pragma once
// Per-pixel finite-difference penalty arithmetic shared by the host loops (forge/Penalties/FiniteDifferencePenalty.cpp)
// and the CUDA kernels (forge/Penalties/cuda/PenaltyKernels.cu), so the CPU and GPU compute the same formulas.
// Free of CUDA headers: FORGE_HD makes the functions __host__ __device__ under nvcc.
//
// Image layout: pixel i = x + Nx*(y + Ny*z) (x fastest). For each axis a with length > 1 the first
// difference at pixel i is d_a(i) = v(i + stride_a) - v(i), defined where i has a forward neighbour
// (no wrap-around). The potential is applied to |d|:
//   Quadratic:   psi(t) = t^2 / 2,                              weight w(t) = psi'(t)/t = 1
//   Charbonnier: psi(t) = delta^2 (sqrt(1 + (t/delta)^2) - 1),  weight w(t) = 1/sqrt(1 + (t/delta)^2)
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"
#include "forge/Penalties/FiniteDifferencePotential.h"

namespace forge {
namespace fd {

// The image grid as the kernels read it (FiniteDifferencePenalty keeps an ImageGrid; this header stays free of
// Armadillo for nvcc).
struct Grid {
    uword Nx, Ny, Nz;
};

FORGE_HD float fd_sqrt(float v) { return sqrtf(v); }
FORGE_HD double fd_sqrt(double v) { return sqrt(v); }

// psi(|d|) from t2 = |d|^2; the Charbonnier form is rewritten as t2 / (sqrt(1 + t2/delta^2) + 1) so it
// keeps full relative precision for |d| << delta.
template <typename T1>
FORGE_HD T1 potential(Potential k, T1 t2, T1 delta) {
    if (k == Potential::Quadratic) return T1(0.5) * t2;
    return t2 / (fd_sqrt(T1(1) + t2 / (delta * delta)) + T1(1));
}
template <typename T1>
FORGE_HD T1 weight(Potential k, T1 t2, T1 delta) {
    if (k == Potential::Quadratic) return T1(1);
    return T1(1) / fd_sqrt(T1(1) + t2 / (delta * delta));
}
template <typename T1>
FORGE_HD T1 abs2(forgeComplex<T1> v) {
    return v.re * v.re + v.im * v.im;
}

// Axis a's stride and length; axes of length 1 have no differences.
FORGE_HD void axis(const Grid& g, int a, uword& stride, uword& len) {
    if (a == 0) {
        stride = 1;
        len = g.Nx;
    } else if (a == 1) {
        stride = g.Nx;
        len = g.Ny;
    } else {
        stride = g.Nx * g.Ny;
        len = g.Nz;
    }
}

// sum over axes of psi(|d_a(i)|) for the differences starting at pixel i.
template <typename T1>
FORGE_HD T1 value_at(uword i, const forgeComplex<T1>* x, const Grid& g, Potential k, T1 delta) {
    T1 s = 0;
    for (int a = 0; a < 3; ++a) {
        uword stride, len;
        axis(g, a, stride, len);
        if (len < 2 || (i / stride) % len == len - 1) continue;
        s += potential(k, abs2(x[i + stride] - x[i]), delta);
    }
    return s;
}

// (C^H diag(w(|Cx|)) C x)_i, gathered per pixel: + w d for the difference ending at i, - w d for the one
// starting at i.
template <typename T1>
FORGE_HD forgeComplex<T1> gradient_at(uword i, const forgeComplex<T1>* x, const Grid& g, Potential k, T1 delta) {
    forgeComplex<T1> s(0, 0);
    for (int a = 0; a < 3; ++a) {
        uword stride, len;
        axis(g, a, stride, len);
        if (len < 2) continue;
        const uword c = (i / stride) % len;
        if (c + 1 < len) {
            forgeComplex<T1> d = x[i + stride] - x[i];
            s -= d * weight(k, abs2(d), delta);
        }
        if (c > 0) {
            forgeComplex<T1> d = x[i] - x[i - stride];
            s += d * weight(k, abs2(d), delta);
        }
    }
    return s;
}

// sum over axes of w(|d_a(x)(i)|) |d_a(dir)(i)|^2: the curvature of the penalty along dir (exact for the
// quadratic, the Huber-majorizer curvature for Charbonnier, which is >= the true one).
template <typename T1>
FORGE_HD T1 denom_at(uword i, const forgeComplex<T1>* dir, const forgeComplex<T1>* x, const Grid& g, Potential k,
                     T1 delta) {
    T1 s = 0;
    for (int a = 0; a < 3; ++a) {
        uword stride, len;
        axis(g, a, stride, len);
        if (len < 2 || (i / stride) % len == len - 1) continue;
        const T1 w = weight(k, abs2(x[i + stride] - x[i]), delta);
        s += w * abs2(dir[i + stride] - dir[i]);
    }
    return s;
}

}  // namespace fd
}  // namespace forge
