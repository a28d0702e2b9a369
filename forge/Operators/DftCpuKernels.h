#pragma once
// CPU inner loops of the exact DFT (internal to forge; not installed API).
//
// The phase is kept in turns (cycles) and reduced to [-1/2, 1/2] with rint before the trigonometry, so
// sin/cos only ever see a small argument. In float the sine and cosine are short polynomials on
// [-pi/4, pi/4] after a quadrant split, which the compiler vectorises (scalar sinf/cosf does not; see
// docs/benchmarks.md for the factor). In double the standard library keeps 1e-15 accuracy.
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace forge {
namespace dftcpu {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Nearest integer to x for |x| < 2^22, by adding and subtracting 1.5 * 2^23: plain SSE2 arithmetic, so the
// loop vectorises on any x86-64 (rintf needs SSE4.1's roundps, without which it is a scalar libm call).
#pragma omp declare simd notinbranch
inline float nearest_int(float x) {
    const float magic = 12582912.0f;
    return (x + magic) - magic;
}

// sin(2 pi p), cos(2 pi p) for |p| < 2^20 turns, by reduction to the nearest quarter turn.
#pragma omp declare simd notinbranch
inline void sincos_turns(float p, float& s, float& c) {
    const float q = nearest_int(4.0f * p);     // quarter turns
    const float f = p - 0.25f * q;             // |f| <= 1/8 turn
    const float x = f * 6.28318530717958648f;  // |x| <= pi/4
    const float x2 = x * x;
    const float sp =
        x * (1.0f + x2 * (-1.6666667e-1f + x2 * (8.3333333e-3f + x2 * (-1.98412698e-4f + x2 * 2.75573192e-6f))));
    const float cp =
        1.0f +
        x2 * (-0.5f + x2 * (4.16666667e-2f + x2 * (-1.38888889e-3f + x2 * (2.48015873e-5f + x2 * -2.75573192e-7f))));
    const int qi = static_cast<int>(q) & 3;
    const float cs = (qi & 1) ? sp : cp;
    const float sn = (qi & 1) ? cp : sp;
    c = (qi == 1 || qi == 2) ? -cs : cs;
    s = (qi & 2) ? -sn : sn;
}

inline void sincos_turns(double p, double& s, double& c) {
    const double r = p - std::rint(p);
    s = std::sin(kTwoPi * r);
    c = std::cos(kTwoPi * r);
}

// sincPG(x) = sin(pi x) / (pi x), 1 at 0.
#pragma omp declare simd notinbranch
inline float sinc_pg(float x) {
    float s, c;
    sincos_turns(0.5f * x, s, c);
    const float px = 3.14159265358979f * x;
    return std::fabs(px) < 1e-6f ? 1.0f : s / px;
}
inline double sinc_pg(double x) {
    if (x == 0.0) return 1.0;
    const double px = 3.14159265358979323846 * x;
    double s, c;
    sincos_turns(0.5 * x, s, c);
    return std::fabs(px) < 1e-12 ? 1.0 : s / px;
}

// Geometry in structure-of-arrays form with the field map pre-divided by 2 pi (turns per second).
template <typename T>
struct DftGeometryView {
    const T *kx, *ky, *kz, *t;        // n1
    const T *ix, *iy, *iz, *fmTurns;  // n2
    const T *gx, *gy, *gz;            // n2, null without gradients
    T invNx, invNy, invNz;
    long long n1, n2;
};

// One output of the forward transform for NB vectors at once (the phase, its sine/cosine and the sinc
// factor are evaluated once per pair for all NB): out[b] = sum over pixels k of m_bk exp(-i 2 pi phase_jk) [* B_jk].
// in_re/in_im hold the split real and imaginary parts, vector b at offset b * stride.
template <bool kGrad, int NB, typename T>
inline void forward_one(const DftGeometryView<T>& g, long long j, const T* in_re, const T* in_im, long long stride,
                        double* out_re, double* out_im) {
    const T kxj = g.kx[j], kyj = g.ky[j], kzj = g.kz[j], tj = g.t[j];
    const T ax = kxj * g.invNx, ay = kyj * g.invNy, az = kzj * g.invNz;
    constexpr long long kChunk = 2048;  // float partial sums per chunk, chunks summed in double
    double acc_re[NB] = {}, acc_im[NB] = {};
    for (long long k0 = 0; k0 < g.n2; k0 += kChunk) {
        const long long k1 = std::min(g.n2, k0 + kChunk);
        T sr[NB] = {}, si[NB] = {};
#pragma omp simd reduction(+ : sr[:NB], si[:NB])
        for (long long k = k0; k < k1; ++k) {
            const T p = kxj * g.ix[k] + kyj * g.iy[k] + kzj * g.iz[k] + g.fmTurns[k] * tj;
            T s, c;
            sincos_turns(p, s, c);
            if constexpr (kGrad) {
                const T b = sinc_pg(ax + g.gx[k] * tj) * sinc_pg(ay + g.gy[k] * tj) * sinc_pg(az + g.gz[k] * tj);
                s *= b;
                c *= b;
            }
            for (int v = 0; v < NB; ++v) {
                const T re = in_re[v * stride + k], im = in_im[v * stride + k];
                // (re + i im)(c - i s)
                sr[v] += c * re + s * im;
                si[v] += c * im - s * re;
            }
        }
        for (int v = 0; v < NB; ++v) {
            acc_re[v] += sr[v];
            acc_im[v] += si[v];
        }
    }
    for (int v = 0; v < NB; ++v) {
        out_re[v] = acc_re[v];
        out_im[v] = acc_im[v];
    }
}

// One output of the adjoint for NB vectors: out[b] = sum over samples j of d_bj exp(+i 2 pi phase_jk) [* B_jk].
template <bool kGrad, int NB, typename T>
inline void adjoint_one(const DftGeometryView<T>& g, long long k, const T* in_re, const T* in_im, long long stride,
                        double* out_re, double* out_im) {
    const T ixk = g.ix[k], iyk = g.iy[k], izk = g.iz[k], fk = g.fmTurns[k];
    const T gxk = kGrad ? g.gx[k] : T(0), gyk = kGrad ? g.gy[k] : T(0), gzk = kGrad ? g.gz[k] : T(0);
    constexpr long long kChunk = 2048;
    double acc_re[NB] = {}, acc_im[NB] = {};
    for (long long j0 = 0; j0 < g.n1; j0 += kChunk) {
        const long long j1 = std::min(g.n1, j0 + kChunk);
        T sr[NB] = {}, si[NB] = {};
#pragma omp simd reduction(+ : sr[:NB], si[:NB])
        for (long long j = j0; j < j1; ++j) {
            const T tj = g.t[j];
            const T p = g.kx[j] * ixk + g.ky[j] * iyk + g.kz[j] * izk + fk * tj;
            T s, c;
            sincos_turns(p, s, c);
            if constexpr (kGrad) {
                const T b = sinc_pg(g.kx[j] * g.invNx + gxk * tj) * sinc_pg(g.ky[j] * g.invNy + gyk * tj) *
                            sinc_pg(g.kz[j] * g.invNz + gzk * tj);
                s *= b;
                c *= b;
            }
            for (int v = 0; v < NB; ++v) {
                const T re = in_re[v * stride + j], im = in_im[v * stride + j];
                // (re + i im)(c + i s)
                sr[v] += c * re - s * im;
                si[v] += c * im + s * re;
            }
        }
        for (int v = 0; v < NB; ++v) {
            acc_re[v] += sr[v];
            acc_im[v] += si[v];
        }
    }
    for (int v = 0; v < NB; ++v) {
        out_re[v] = acc_re[v];
        out_im[v] = acc_im[v];
    }
}

}  // namespace dftcpu
}  // namespace forge
