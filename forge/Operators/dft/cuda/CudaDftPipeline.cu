#include "forge/Operators/dft/CudaDftPipeline.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/Validation.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kTile = 256;  // threads per block = inputs per shared-memory tile
// The kernels take the phase in radians straight into __sincosf: the register side of each pair (the
// output's coordinates) is multiplied by 2 pi once per thread. The hardware sine takes turns, which the
// compiler makes by multiplying by float(1 / (2 pi)) rounded toward zero: that constant lies 0.68 x 2^-24
// (relative) below 1 / (2 pi) and the rounding loses 0.72 x 2^-24 on average, so with float(2 pi) (0.47 x
// 2^-24 above 2 pi) the turns come out 0.9 x 2^-24 too small, an error that grows with the phase. The next
// float above 2 pi (1.75 x 2^-24 above) leaves +0.35 x 2^-24. At 128x128x32 pixels and 131072 samples
// the error vs float64 is then 4.5e-6 forward and 9.2e-6 adjoint (6.7e-6 and 1.5e-5 with float(2 pi));
// reducing the phase to [-1/2, 1/2] turns before the sine gives 2.4e-6 and 6.9e-6 but takes 4 more of
// 17 instructions per pair, and the kernel is issue-bound (docs/benchmarks.md).
constexpr float kTwoPiUp = 6.2831859588623046875f;

int round_up(int n, int m) { return (n + m - 1) / m * m; }

// sin(pi x) / (pi x) on |x| <= 1: minimax polynomial in x^2 (max error 6e-8; the forge CPU loops use the
// same coefficients). Five fused multiply-adds on the FP32 pipe, no special-function unit.
__device__ __forceinline__ float sinc_poly(float x) {
    const float u = x * x;
    float q = fmaf(-0.0019387168576940894f, u, 0.02570377103984356f);
    q = fmaf(q, u, -0.1905253827571869f);
    q = fmaf(q, u, 0.8116899132728577f);
    q = fmaf(q, u, -1.6449296474456787f);
    return fmaf(q, u, 0.9999999403953552f);
}

// sincPG at any x (|x| < 2^23): x = 2m + r with m the nearest integer to x / 2 and |r| <= 1, so
// sin(pi x) = sin(pi r) and sincPG(x) = sinc_poly(r) r / x. Returns sinc_poly(r), and r + eps, x + eps in
// num, den: where m = 0, r equals x exactly and the ratio is 1 (x = 0 included); elsewhere |x| >= 1 and eps
// changes it by at most 1e-12. eps^3 is still a normal float, so three axes share one division.
__device__ __forceinline__ float sinc_parts(float x, float& num, float& den) {
    constexpr float kEps = 1e-12f;
    const float magic = 12582912.0f;
    const float m = __fsub_rn(__fadd_rn(0.5f * x, magic), magic);
    const float r = fmaf(-2.0f, m, x);
    num = r + kEps;
    den = x + kEps;
    return sinc_poly(r);
}

// sincPG(x) sincPG(y) sincPG(z), sincPG(x) = sin(pi x)/(pi x) (1 at 0). All three within [-1, 1] (the usual
// case: k/N lies in [-1/2, 1/2] and G t is small) costs three polynomials; otherwise one division more.
__device__ __forceinline__ float sinc3(float x, float y, float z) {
    if (fabsf(x) <= 1.0f && fabsf(y) <= 1.0f && fabsf(z) <= 1.0f) return sinc_poly(x) * sinc_poly(y) * sinc_poly(z);
    float nx, ny, nz, dx, dy, dz;
    const float q = sinc_parts(x, nx, dx) * sinc_parts(y, ny, dy) * sinc_parts(z, nz, dz);
    return q * __fdividef(nx * ny * nz, dx * dy * dz);
}

// The phase of a pair in radians: o is 2 pi times one side's coordinates, in the other side's.
__device__ __forceinline__ float phase_of(const float4& o, const float4& in) {
    return fmaf(o.x, in.x, fmaf(o.y, in.y, fmaf(o.z, in.z, o.w * in.w)));
}

// Sum over one split (a range of tiles) of the inner dimension, for NB vectors at once.
//   forward (kForward): outputs are samples, inputs pixels, phase sign -
//   adjoint:            outputs are pixels, inputs samples, phase sign +
// outGeom / inGeom: float4 (kx, ky, kz, t) for samples, (ix, iy, iz, fm_turns) for pixels.
// grads: float4 (Gx, Gy, Gz, 0) per pixel (only with kGrad).
// out: [split][b][nOut] partial sums when splits > 1, else the final [b][outStride] layout.
// Two outputs per thread: every shared-memory load of an input (its geometry and NB values) serves two
// phase evaluations, and the loop overhead is shared. Single vector: 13.3 instructions per pair (19 with one
// output per thread and the phase reduced in turns; docs/benchmarks.md has the history).
constexpr int kOutputsPerThread = 2;

template <int NB, bool kGrad, bool kForward>
__global__ void __launch_bounds__(kTile)
    dft_kernel(const float4* __restrict__ outGeom, const float4* __restrict__ inGeom, const float4* __restrict__ grads,
               int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* __restrict__ in, int inStride,
               float2* __restrict__ out, int outStride, float invNx, float invNy, float invNz) {
    constexpr int OPT = kOutputsPerThread;
    __shared__ float4 sGeom[kTile];
    __shared__ float4 sGrad[kGrad ? kTile : 1];
    // Values interleaved per input ([m][b]) so a thread reads two vectors' values with one 16-byte load.
    __shared__ __align__(16) float2 sVal[kTile][NB];

    float4 me[OPT], myGrad[OPT];
    float ax[OPT], ay[OPT], az[OPT], myT[OPT];
    int o[OPT];
#pragma unroll
    for (int r = 0; r < OPT; ++r) {
        o[r] = blockIdx.x * (kTile * OPT) + r * kTile + threadIdx.x;  // outGeom is padded: always readable
        me[r] = outGeom[o[r]];
        myGrad[r] = (kGrad && !kForward) ? grads[o[r]] : make_float4(0.f, 0.f, 0.f, 0.f);
        // Forward: the sample's own sinc offsets kx/numX etc. and its time, before the 2 pi scaling.
        ax[r] = me[r].x * invNx;
        ay[r] = me[r].y * invNy;
        az[r] = me[r].z * invNz;
        myT[r] = me[r].w;
        me[r] = make_float4(kTwoPiUp * me[r].x, kTwoPiUp * me[r].y, kTwoPiUp * me[r].z, kTwoPiUp * me[r].w);
    }

    float accRe[OPT][NB], accIm[OPT][NB];
#pragma unroll
    for (int r = 0; r < OPT; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) accRe[r][b] = accIm[r][b] = 0.f;

    const int tileBegin = blockIdx.y * tilesPerSplit;
    const int tileEnd = min(tileBegin + tilesPerSplit, nTiles);
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
        const int i = tile * kTile + threadIdx.x;
        sGeom[threadIdx.x] = inGeom[i];
        if (kGrad && kForward) sGrad[threadIdx.x] = grads[i];
#pragma unroll
        for (int b = 0; b < NB; ++b)  // 64-bit offset: b * inStride passes 2^31 from 2^28 inputs on (once per tile)
            sVal[threadIdx.x][b] = i < nIn ? in[size_t(b) * inStride + i] : make_float2(0.f, 0.f);
        __syncthreads();

        // Partial sums per tile, added to the running totals after it: two-level summation.
        float pRe[OPT][NB], pIm[OPT][NB];
#pragma unroll
        for (int r = 0; r < OPT; ++r)
#pragma unroll
            for (int b = 0; b < NB; ++b) pRe[r][b] = pIm[r][b] = 0.f;
#pragma unroll 2
        for (int m = 0; m < kTile; ++m) {
            const float4 g = sGeom[m];
            float2 v[NB];
            if constexpr (NB >= 2) {
#pragma unroll
                for (int q = 0; q < NB / 2; ++q) {
                    const float4 w = reinterpret_cast<const float4*>(sVal[m])[q];
                    v[2 * q] = make_float2(w.x, w.y);
                    v[2 * q + 1] = make_float2(w.z, w.w);
                }
            } else {
                v[0] = sVal[m][0];
            }
#pragma unroll
            for (int r = 0; r < OPT; ++r) {
                // Phase in radians: me is 2 pi (kx, ky, kz, t) of a sample (forward) or 2 pi (ix, iy, iz, fm) of
                // a pixel (adjoint), g the other side.
                const float t = kForward ? myT[r] : g.w;
                const float ph = phase_of(me[r], g);
                float sn, cs;
                __sincosf(ph, &sn, &cs);
                if (kGrad) {
                    float bfac;
                    if (kForward) {
                        const float4 gr = sGrad[m];
                        bfac = sinc3(fmaf(gr.x, t, ax[r]), fmaf(gr.y, t, ay[r]), fmaf(gr.z, t, az[r]));
                    } else {
                        bfac = sinc3(fmaf(myGrad[r].x, t, g.x * invNx), fmaf(myGrad[r].y, t, g.y * invNy),
                                     fmaf(myGrad[r].z, t, g.z * invNz));
                    }
                    sn *= bfac;
                    cs *= bfac;
                }
                if (!kForward) sn = -sn;  // adjoint: exp(+i phase)
#pragma unroll
                for (int b = 0; b < NB; ++b) {
                    // (v.x + i v.y)(cs - i sn)
                    pRe[r][b] = fmaf(cs, v[b].x, fmaf(sn, v[b].y, pRe[r][b]));
                    pIm[r][b] = fmaf(cs, v[b].y, fmaf(-sn, v[b].x, pIm[r][b]));
                }
            }
        }
#pragma unroll
        for (int r = 0; r < OPT; ++r)
#pragma unroll
            for (int b = 0; b < NB; ++b) {
                accRe[r][b] += pRe[r][b];
                accIm[r][b] += pIm[r][b];
            }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < OPT; ++r) {
        if (o[r] >= nOut) continue;
        if (gridDim.y > 1) {
            float2* dst = out + size_t(blockIdx.y) * NB * nOut;
#pragma unroll
            for (int b = 0; b < NB; ++b) dst[size_t(b) * nOut + o[r]] = make_float2(accRe[r][b], accIm[r][b]);
        } else {
#pragma unroll
            for (int b = 0; b < NB; ++b) out[size_t(b) * outStride + o[r]] = make_float2(accRe[r][b], accIm[r][b]);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Coil batches on the tensor cores. The phase factor E[o][i] = exp(sign i 2 pi phase) is shared by all
// vectors, so out = E x (outputs x vectors) is a matrix product whose left factor is generated on the fly.
// As a real product: [cos | sin] (rows = outputs, 2 x inputs) times B (2 x inputs, 2 x vectors), columns
// 2c and 2c+1 of B giving Re and Im of vector c:
//   Re: cos Re x - sign sin Im x        Im: cos Im x + sign sin Re x
// mma.sync m16n8k16 (FP16 in, FP32 accumulate) takes 8 inputs per step (columns 0-7 cos, 8-15 sin) and
// 4 vectors per n-tile of 8 columns. Float32 accuracy from FP16 operands: every factor is split as
// hi + lo (both FP16; |.| <= 1, so lo's rounding leaves at most 2^-25 absolute, subnormals included) and
// three products are summed, hi hi + hi lo + lo hi (lo lo is below 2^-22). The vectors are scaled by a
// power of two per vector so that |x| < 1 (max_abs_kernel), which is undone, exactly, on output.
// The tensor cores accumulate with truncation: each tile of kMmaTile inputs starts from zero and is added
// to the running sums in ordinary FP32 (summing straight into one accumulator measured 1e-4..1e-3 error).
// dft_mma_kernel (mma.sync) runs on compute capability 8.x and 10 on, and on 9.0 wherever the build has no
// sm_90a code, when the image that runs was built for sm_80 or later; on H100/H200 dft_wgmma_kernel (below)
// does the same product faster.
constexpr int kMmaTile = 64;  // inputs per shared-memory tile
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// Code built below sm_80 has dft_mma_kernel as a stub: its helpers below go unused there ("declared but never
// referenced"); the sm_80-and-later builds of this file still report unused code.
#pragma nv_diag_suppress 177
#endif

// a, b -> hi, lo as packed half2 with a = hi.x + lo.x and b = hi.y + lo.y to within 2^-25.
__device__ __forceinline__ void split_half2(float a, float b, uint32_t& hi, uint32_t& lo) {
    const __half2 h = __floats2half2_rn(a, b);
    const float2 f = __half22float2(h);
    const __half2 l = __floats2half2_rn(a - f.x, b - f.y);
    hi = reinterpret_cast<const uint32_t&>(h);
    lo = reinterpret_cast<const uint32_t&>(l);
}

__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// maxBits[b] = max over i of max(|Re x_b[i]|, |Im x_b[i]|), as the bits of a float (non-negative floats
// order like unsigned ints). maxBits must be zeroed before.
__global__ void max_abs_kernel(const float2* __restrict__ in, int n, unsigned* __restrict__ maxBits) {
    const int b = blockIdx.y;
    float m = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float2 v = in[size_t(b) * n + i];
        m = fmaxf(m, fmaxf(fabsf(v.x), fabsf(v.y)));
    }
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if ((threadIdx.x & 31) == 0) atomicMax(maxBits + b, __float_as_uint(m));
}

// e with max * 2^-e < 1 (0 for max = 0; a NaN or infinite vector keeps its NaN or Inf): the kernel uses
// x 2^-e and multiplies the sums by 2^e with ldexpf, which stays finite up to FLT_MAX.
__device__ __forceinline__ int unit_exponent(unsigned maxBits) {
    int e = 0;
    frexpf(__uint_as_float(maxBits), &e);
    return e;
}

template <int MT, int NT>
__device__ __forceinline__ void set_zero(float (&acc)[MT][NT][4]) {
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int q = 0; q < NT; ++q)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[m][q][e] = 0.f;
}

// How a thread gets the phases of its pairs in one m-tile and k-step (rows g, g + 8; inputs 2t, 2t + 1).
// Each phase from its own coordinates takes 4 operations. Pixels along a grid row differ only in x and the
// field map, so one phase follows from its neighbour's in 2: pixels 2k and 2k + 1 are the inputs of one
// step in the forward transform, and pixels 16j + g and 16j + g + 8 are the rows g and g + 8 of the
// adjoint. The plan checks which holds for its pixels (CudaDftPipeline::pixelPairsOnRows_,
// pixelRowsEightApart_). On an H100 at 8 coils this is 2% (forward) and 4% (adjoint) more coil-pairs/s; the
// error vs float64 grows by up to a third (at most 8.8e-6 in bench_gdft_gpu, docs/benchmarks.md).
enum PhaseSteps {
    kPhaseFull = 0,     // every phase from its own coordinates
    kPhaseInputs = 1,   // input 2t + 1 from input 2t: phase + o.x (x1 - x0) + o.w (w1 - w0); the geometry
                        // of odd inputs holds x1 - x0 and w1 - w0 (CudaDftPipeline::pixelSteps_)
    kPhaseRowsBy8 = 2,  // row g + 8 from row g: phase + (x8 - x0) in.x + (w8 - w0) in.w
};

// A fragments (hi, lo) of one m-tile for one k-step: rows g, g + 8 (o[0], o[1]: 2 pi times their
// coordinates; rowStep: o[1] - o[0] in x and w, for kPhaseRowsBy8) and inputs 2t, 2t + 1 (in0, in1), cos in
// registers 0-1 and sin in 2-3.
template <int kSteps = kPhaseFull>
__device__ __forceinline__ void phase_fragments(const float4 (&o)[2], const float2& rowStep, const float4& in0,
                                                const float4& in1, uint32_t (&hi)[4], uint32_t (&lo)[4]) {
    float s[2][2], c[2][2];
    if constexpr (kSteps == kPhaseRowsBy8) {
        const float p0 = phase_of(o[0], in0), p1 = phase_of(o[0], in1);
        __sincosf(p0, &s[0][0], &c[0][0]);
        __sincosf(p1, &s[0][1], &c[0][1]);
        __sincosf(fmaf(rowStep.x, in0.x, fmaf(rowStep.y, in0.w, p0)), &s[1][0], &c[1][0]);
        __sincosf(fmaf(rowStep.x, in1.x, fmaf(rowStep.y, in1.w, p1)), &s[1][1], &c[1][1]);
    } else if constexpr (kSteps == kPhaseInputs) {  // in1: (x1 - x0, -, -, w1 - w0)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float p0 = phase_of(o[r], in0);
            __sincosf(p0, &s[r][0], &c[r][0]);
            __sincosf(fmaf(o[r].x, in1.x, fmaf(o[r].w, in1.w, p0)), &s[r][1], &c[r][1]);
        }
    } else {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            __sincosf(phase_of(o[r], in0), &s[r][0], &c[r][0]);
            __sincosf(phase_of(o[r], in1), &s[r][1], &c[r][1]);
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        split_half2(c[r][0], c[r][1], hi[r], lo[r]);
        split_half2(s[r][0], s[r][1], hi[r + 2], lo[r + 2]);
    }
}
__device__ __forceinline__ void phase_fragments(const float4 (&o)[2], const float4& in0, const float4& in1,
                                                uint32_t (&hi)[4], uint32_t (&lo)[4]) {
    phase_fragments<kPhaseFull>(o, make_float2(0.f, 0.f), in0, in1, hi, lo);
}

// Launch shape per n-tile count (measured on an H100, 64x64x16 pixels, 131072 samples): MT m-tiles of 16
// outputs per warp (each B fragment serves MT of them), 8 warps per block and at least 2 blocks per
// multiprocessor, which caps the registers at 128 (a few spill) for more warps in flight: the kernels are
// latency-bound at 2-4 warps per scheduler (coil-pairs/s: 8 coils 6.5 -> 8.0e12, 16 coils 8.9 -> 10.5e12,
// 32 coils 9.8 -> 10.7e12). M_OUTER: generate and multiply one m-tile at a time (fewer live fragments;
// better up to four n-tiles, worse for eight).
template <int NT>
struct MmaShape {
    static constexpr int MT = NT <= 2 ? 4 : 2;
    static constexpr int WARPS = 8;
    static constexpr int MIN_BLOCKS = 2;
    static constexpr bool M_OUTER = NT <= 4;
};

// NT n-tiles (4 vectors each, nb <= 4 NT of them used), MmaShape<NT> for the rest.
template <int NT, bool kForward, int MT = MmaShape<NT>::MT, int WARPS = MmaShape<NT>::WARPS>
__global__ void __launch_bounds__(WARPS * 32, MmaShape<NT>::MIN_BLOCKS)
    dft_mma_kernel(const float4* __restrict__ outGeom, const float4* __restrict__ inGeom, int nOut, int nIn,
                   int tilesPerSplit, int nTiles, const float2* __restrict__ in, int nb,
                   const unsigned* __restrict__ maxBits, float2* __restrict__ out, int outStride) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();  // never launched: the plan uses it only where the image that runs is sm_80 or later (build_probe_kernel)
#else
    constexpr int kSteps = kMmaTile / 8;  // mma k-steps (8 inputs each) per tile
    __shared__ float4 sGeom[kMmaTile];
    // B fragments in the order the lanes read them: (hi of rows 2t, 2t+1 | hi of rows 2t+8, 2t+9 | lo | lo).
    __shared__ uint4 sB[kSteps][NT][32];
    __shared__ int sExponent[4 * NT];  // per vector: the inputs are used times 2^-e, the sums times 2^e
    if (threadIdx.x < 4 * NT) sExponent[threadIdx.x] = int(threadIdx.x) < nb ? unit_exponent(maxBits[threadIdx.x]) : 0;
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;  // mma fragment coordinates: group (row), thread in group
    const int rowBase = (blockIdx.x * WARPS + warp) * (MT * 16);
    float4 og[MT][2];  // this lane's rows g and g + 8 of each m-tile, times 2 pi (outGeom is padded)
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float4 v = outGeom[rowBase + m * 16 + g + 8 * r];
            og[m][r] = make_float4(kTwoPiUp * v.x, kTwoPiUp * v.y, kTwoPiUp * v.z, kTwoPiUp * v.w);
        }
    float tot[MT][NT][4];  // running sums
    set_zero(tot);
    const float sign = kForward ? -1.f : 1.f;
    const int tileBegin = blockIdx.y * tilesPerSplit;
    const int tileEnd = min(tileBegin + tilesPerSplit, nTiles);
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
        for (int k = threadIdx.x; k < kMmaTile; k += WARPS * 32) sGeom[k] = inGeom[tile * kMmaTile + k];
        for (int e = threadIdx.x; e < kSteps * NT * 32; e += WARPS * 32) {
            const int l = e & 31, q = (e >> 5) % NT, step = e / (32 * NT);
            const int lg = l >> 2, lt = l & 3;
            const int i0 = tile * kMmaTile + 8 * step + 2 * lt, c = 4 * q + (lg >> 1);
            float2 x0 = make_float2(0.f, 0.f), x1 = x0;
            if (c < nb) {
                const int shift = -sExponent[c];
                if (i0 < nIn) x0 = in[size_t(c) * nIn + i0];
                if (i0 + 1 < nIn) x1 = in[size_t(c) * nIn + i0 + 1];
                x0 = make_float2(ldexpf(x0.x, shift), ldexpf(x0.y, shift));
                x1 = make_float2(ldexpf(x1.x, shift), ldexpf(x1.y, shift));
            }
            uint4 w;
            if (lg & 1) {  // column 2c + 1: Im out = cos Im x + sign sin Re x
                split_half2(x0.y, x1.y, w.x, w.z);
                split_half2(sign * x0.x, sign * x1.x, w.y, w.w);
            } else {  // column 2c: Re out = cos Re x - sign sin Im x
                split_half2(x0.x, x1.x, w.x, w.z);
                split_half2(-sign * x0.y, -sign * x1.y, w.y, w.w);
            }
            sB[step][q][l] = w;
        }
        __syncthreads();
        float part[MT][NT][4];  // this tile's sums
        set_zero(part);
#pragma unroll 2
        for (int step = 0; step < kSteps; ++step) {
            const float4 in0 = sGeom[8 * step + 2 * t], in1 = sGeom[8 * step + 2 * t + 1];
            // Products with the small terms first: lo x hi, hi x lo, then hi x hi.
            if constexpr (MmaShape<NT>::M_OUTER) {
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    uint32_t ahi[4], alo[4];
                    phase_fragments(og[m], in0, in1, ahi, alo);
#pragma unroll
                    for (int q = 0; q < NT; ++q) {
                        const uint4 b = sB[step][q][lane];
                        mma_f16(part[m][q], ahi, b.z, b.w);
                        mma_f16(part[m][q], alo, b.x, b.y);
                        mma_f16(part[m][q], ahi, b.x, b.y);
                    }
                }
            } else {
                uint32_t ahi[MT][4], alo[MT][4];
#pragma unroll
                for (int m = 0; m < MT; ++m) phase_fragments(og[m], in0, in1, ahi[m], alo[m]);
#pragma unroll
                for (int q = 0; q < NT; ++q) {
                    const uint4 b = sB[step][q][lane];
#pragma unroll
                    for (int m = 0; m < MT; ++m) {
                        mma_f16(part[m][q], ahi[m], b.z, b.w);
                        mma_f16(part[m][q], alo[m], b.x, b.y);
                        mma_f16(part[m][q], ahi[m], b.x, b.y);
                    }
                }
            }
        }
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < NT; ++q)
#pragma unroll
                for (int e = 0; e < 4; ++e) tot[m][q][e] += part[m][q][e];
        __syncthreads();
    }
    // Accumulator (row, 2t | 2t + 1) of n-tile q is (Re, Im) of vector 4q + t.
    float2* dst = gridDim.y > 1 ? out + size_t(blockIdx.y) * nb * nOut : out;
    const int stride = gridDim.y > 1 ? nOut : outStride;
#pragma unroll
    for (int q = 0; q < NT; ++q) {
        const int c = 4 * q + t;
        if (c >= nb) continue;
        const int e = sExponent[c];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = rowBase + m * 16 + g + 8 * r;
                if (row < nOut)
                    dst[size_t(c) * stride + row] =
                        make_float2(ldexpf(tot[m][q][2 * r], e), ldexpf(tot[m][q][2 * r + 1], e));
            }
    }
#endif
}

// ---------------------------------------------------------------------------------------------------------
// Coil batches with Hopper's warpgroup MMA (wgmma.mma_async, compute capability 9.0, code built for sm_90a).
// The same product and the same hi/lo split as dft_mma_kernel, but a warpgroup (4 warps) multiplies 64
// outputs at a time, asynchronously: the phase factors of one step are generated in registers while the
// tensor cores multiply the previous step's. The B operand (the vectors) is read by the tensor cores from
// shared memory, so it is prepared once per batch by split_batch_kernel: scaled by 2^-e, split into FP16
// hi and lo and laid out as the K-major core matrices wgmma reads (8 columns x 8 inputs x 2 bytes each,
// the two k-halves 128 bytes apart, consecutive groups of 8 columns 256 bytes apart). The kernel copies a
// tile of that image with cp.async into one of two buffers while the other is multiplied.
// On an H100 (docs/benchmarks.md) it gives 1.1x the mma.sync kernel's coil-pairs/s at 4-8 vectors, where
// the sine/cosine generation limits both, and 1.6x at 16 and 2x at 32 vectors.

// Launch shape per real column count N (2 per vector, 8..64), measured on an H100 at 64x64x16 and
// 128x128x32 pixels with 131072 samples: MW m64-tiles of outputs per warpgroup, WG warpgroups per block
// (256 outputs per block for every N: the geometry is padded to 512), at least MIN_BLOCKS blocks per
// multiprocessor, KT inputs per shared-memory tile (a running sum starts from zero per tile: the tensor
// cores truncate when they accumulate).
// N = 16 (5-8 vectors), where generating the phase factors sets the pace, runs more warps per scheduler
// to hide the special-function unit's queue (FEW_REGISTERS): the running sums live in shared memory and
// each step waits for its own products (one set of A registers), so 64 registers give 4 blocks per
// multiprocessor without spills (kernel time at 8 coils: 9.2-9.5 -> 10.0-10.1e12 coil-pairs/s,
// docs/benchmarks.md).
template <int N>
struct WgmmaShape {
    static constexpr int MW = N == 64 ? 1 : 2;
    static constexpr int WG = N == 64 ? 4 : 2;
    static constexpr int MIN_BLOCKS = N == 64 ? 1 : N == 32 ? 2 : N == 16 ? 4 : 3;
    static constexpr int KT = N == 64 ? 64 : 128;
    static constexpr bool FEW_REGISTERS = N == 16;
    static constexpr int THREADS = WG * 128;
    static constexpr int ROWS = WG * MW * 64;
    static constexpr int TILE_SLOTS = 2 * (KT / 8) * N * 2;  // uint4 per tile image: [hi, lo][k-step][N x 16]
    static constexpr size_t SUMS_BYTES = FEW_REGISTERS ? size_t(MW) * (N / 2) * THREADS * sizeof(float) : 0;
    // two images, two geometries, the running sums
    static constexpr size_t SMEM = size_t(2 * TILE_SLOTS + 2 * KT) * sizeof(uint4) + SUMS_BYTES;
};

// uint4 index (8 FP16 values: 8 inputs of one column) of column n, k-half kh (cos 0, sin 1) in a step image.
__host__ __device__ constexpr int image_slot(int n, int kh) { return (n >> 3) * 16 + kh * 8 + (n & 7); }

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FORGE_WGMMA 1
// D (64 x N, f32) += A (64 x 16, FP16 in registers) B (16 x N, FP16 in shared memory, descriptor), or
// D = A B when accumulate is 0. One specialisation per N (the accumulator list is part of the instruction).
template <int N>
struct Wgmma;
template <>
struct Wgmma<8> {
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate));
    }
};
template <>
struct Wgmma<16> {
    __device__ static void mma(float (&d)[8], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, "
            "p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate));
    }
};
template <>
struct Wgmma<32> {
    __device__ static void mma(float (&d)[16], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
            "%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate));
    }
};
template <>
struct Wgmma<64> {
    __device__ static void mma(float (&d)[32], const uint32_t (&a)[4], uint64_t desc, int accumulate) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
            "%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, "
            "p, 1, 1, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate));
    }
};
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int K>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(K) : "memory");
}
// Orders the accumulators' reads after wgmma_wait (the compiler sees no dependence through the asm).
template <int R>
__device__ __forceinline__ void fence_registers(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// Shared memory written by ordinary stores or cp.async, read next by wgmma (the async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(uint32_t(__cvta_generic_to_shared(smem))),
                 "l"(gmem)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int K>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(K) : "memory");
}
// Shared-memory matrix descriptor: K-major, no swizzle; leading (k-half) offset 128 B, stride (8 columns)
// offset 256 B, the address and both offsets in units of 16 bytes.
__device__ __forceinline__ uint64_t image_descriptor(const void* smem) {
    const uint32_t a = uint32_t(__cvta_generic_to_shared(smem));
    return uint64_t((a & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
}
#endif

// Reports what the code that runs on this device was built for: built[0] the architecture (__CUDA_ARCH__:
// 800 for sm_80 code, and for compute_80 PTX that the driver compiled for a later GPU), built[1] whether it
// has sm_90a's features (wgmma). The binary's image for the device, not the device, decides which kernels exist.
__global__ void build_probe_kernel(int* built) {
#if defined(__CUDA_ARCH__)
    built[0] = __CUDA_ARCH__;
#endif
#if defined(FORGE_WGMMA)
    built[1] = 1;
#else
    built[1] = 0;
#endif
}

// The B image of one batch of nb <= N / 2 vectors, for nTiles tiles of KT inputs: per tile
// [hi, lo][k-step of 8 inputs][N x 16 FP16], rows of the product Re and Im of each vector as in the
// comment above dft_mma_kernel, the vectors times 2^-e (maxBits), zeros past nIn and past nb.
template <int N, bool kForward>
__global__ void split_batch_kernel(const float2* __restrict__ in, int nIn, int nb, int nTiles,
                                   const unsigned* __restrict__ maxBits, uint4* __restrict__ image) {
    constexpr int KT = WgmmaShape<N>::KT, KS = KT / 8, C = N / 2, kStepSlots = N * 2;
    const size_t items = size_t(nTiles) * KS * C;
    for (size_t e = blockIdx.x * size_t(blockDim.x) + threadIdx.x; e < items; e += size_t(gridDim.x) * blockDim.x) {
        const int c = int(e % C), step = int(e / C % KS);
        const size_t tile = e / (size_t(C) * KS);
        const size_t i0 = tile * KT + 8 * step;
        const int shift = c < nb ? -unit_exponent(maxBits[c]) : 0;
        float re[8], im[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            float2 v = make_float2(0.f, 0.f);
            if (c < nb && i0 + j < size_t(nIn)) v = in[size_t(c) * nIn + i0 + j];
            re[j] = ldexpf(v.x, shift);
            im[j] = ldexpf(v.y, shift);
        }
        uint32_t reHi[4], reLo[4], imHi[4], imLo[4];
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            split_half2(re[2 * p], re[2 * p + 1], reHi[p], reLo[p]);
            split_half2(im[2 * p], im[2 * p + 1], imHi[p], imLo[p]);
        }
        // Column 2c: cos Re x - sign sin Im x; column 2c + 1: cos Im x + sign sin Re x (sign -1 forward).
        // Negating an FP16 pair flips its two sign bits.
        constexpr uint32_t kNegIm = kForward ? 0u : 0x80008000u, kNegRe = kForward ? 0x80008000u : 0u;
        uint4* hi = image + (tile * 2 * KS + step) * kStepSlots;
        uint4* lo = hi + KS * kStepSlots;
        auto put = [&](int n, int kh, const uint32_t(&h)[4], const uint32_t(&l)[4], uint32_t neg) {
            hi[image_slot(n, kh)] = make_uint4(h[0] ^ neg, h[1] ^ neg, h[2] ^ neg, h[3] ^ neg);
            lo[image_slot(n, kh)] = make_uint4(l[0] ^ neg, l[1] ^ neg, l[2] ^ neg, l[3] ^ neg);
        };
        put(2 * c, 0, reHi, reLo, 0u);
        put(2 * c, 1, imHi, imLo, kNegIm);
        put(2 * c + 1, 0, imHi, imLo, 0u);
        put(2 * c + 1, 1, reHi, reLo, kNegRe);
    }
}

// Sum over one split of the inner dimension for nb <= N / 2 vectors (WgmmaShape<N>), from the image of
// split_batch_kernel, with phases as kSteps says (PhaseSteps). Each warp holds 16 rows of each of its
// warpgroup's MW m64-tiles; outputs as in dft_mma_kernel.
template <int N, int kSteps>
__global__ void __launch_bounds__(WgmmaShape<N>::THREADS, WgmmaShape<N>::MIN_BLOCKS)
    dft_wgmma_kernel(const float4* __restrict__ outGeom, const float4* __restrict__ inGeom, int nOut, int tilesPerSplit,
                     int nTiles, const uint4* __restrict__ image, int nb, const unsigned* __restrict__ maxBits,
                     float2* __restrict__ out, int outStride) {
#if !defined(FORGE_WGMMA)
    __trap();  // never launched: the plan probes for sm_90a code first (build_probe_kernel)
#else
    using S = WgmmaShape<N>;
    constexpr int MW = S::MW, KT = S::KT, KS = KT / 8, R = N / 2;
    static_assert(S::TILE_SLOTS % S::THREADS == 0 && KT <= S::THREADS, "one tile copy: whole rounds of threads");
    constexpr uint64_t kStepDescriptor = (N * 32) >> 4;  // one k-step's image, in the descriptor's 16-byte units
    extern __shared__ __align__(128) uint4 smem[];
    uint4* sImage = smem;                                                 // [2][TILE_SLOTS]
    float4* sGeom = reinterpret_cast<float4*>(smem + 2 * S::TILE_SLOTS);  // [2][KT]
    // S::FEW_REGISTERS: the running sums, [MW * R][THREADS] (each thread its own column: no conflicts)
    float* sSums = reinterpret_cast<float*>(sGeom + 2 * KT);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int rowBase = blockIdx.x * S::ROWS + (warp >> 2) * (MW * 64) + (warp & 3) * 16;
    float4 og[MW][2];  // rows g and g + 8 of this warp's 16 in each m-tile, times 2 pi (outGeom is padded)
#pragma unroll
    for (int m = 0; m < MW; ++m)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float4 v = outGeom[rowBase + m * 64 + g + 8 * r];
            og[m][r] = make_float4(kTwoPiUp * v.x, kTwoPiUp * v.y, kTwoPiUp * v.z, kTwoPiUp * v.w);
        }
    float2 rowStep[MW];  // row g + 8 minus row g in x and w (kPhaseRowsBy8)
#pragma unroll
    for (int m = 0; m < MW; ++m) rowStep[m] = make_float2(og[m][1].x - og[m][0].x, og[m][1].w - og[m][0].w);
    // Running sums (in registers unless S::FEW_REGISTERS); this tile's sums (written by the tensor cores).
    float tot[S::FEW_REGISTERS ? 1 : MW][S::FEW_REGISTERS ? 1 : R], part[MW][R];
    auto running = [&](int m, int e) -> float& {
        if constexpr (S::FEW_REGISTERS)
            return sSums[(m * R + e) * S::THREADS + threadIdx.x];
        else
            return tot[m][e];
    };
#pragma unroll
    for (int m = 0; m < MW; ++m)
#pragma unroll
        for (int e = 0; e < R; ++e) running(m, e) = part[m][e] = 0.f;
    const int tileBegin = blockIdx.y * tilesPerSplit;
    const int tileEnd = min(tileBegin + tilesPerSplit, nTiles);
    auto load = [&](int tile, int buf) {
        const uint4* src = image + size_t(tile) * S::TILE_SLOTS;
        uint4* dst = sImage + buf * S::TILE_SLOTS;
#pragma unroll
        for (int k = 0; k < S::TILE_SLOTS / S::THREADS; ++k)
            cp_async16(dst + k * S::THREADS + threadIdx.x, src + k * S::THREADS + threadIdx.x);
        if (threadIdx.x < KT) cp_async16(sGeom + buf * KT + threadIdx.x, inGeom + size_t(tile) * KT + threadIdx.x);
        cp_async_commit();
    };
    if (tileBegin < tileEnd) load(tileBegin, 0);
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
        const int buf = (tile - tileBegin) & 1;
        if (tile + 1 < tileEnd) {
            load(tile + 1, buf ^ 1);  // its buffer was released by the barrier that ended the last tile
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        fence_proxy_async();
        __syncthreads();
        const uint64_t descHi = image_descriptor(sImage + buf * S::TILE_SLOTS);
        const uint64_t descLo = descHi + KS * kStepDescriptor;
        const float4* geom = sGeom + buf * KT;
#pragma unroll
        for (int step = 0; step < KS; ++step) {
            const float4 in0 = geom[8 * step + 2 * t], in1 = geom[8 * step + 2 * t + 1];
            uint32_t ahi[MW][4], alo[MW][4];
#pragma unroll
            for (int m = 0; m < MW; ++m) phase_fragments<kSteps>(og[m], rowStep[m], in0, in1, ahi[m], alo[m]);
            wgmma_fence();
            // Small terms first: hi x lo (from zero at a tile's first step), lo x hi, then hi x hi.
#pragma unroll
            for (int m = 0; m < MW; ++m) {
                Wgmma<N>::mma(part[m], ahi[m], descLo + step * kStepDescriptor, step > 0);
                Wgmma<N>::mma(part[m], alo[m], descHi + step * kStepDescriptor, 1);
                Wgmma<N>::mma(part[m], ahi[m], descHi + step * kStepDescriptor, 1);
            }
            wgmma_commit();
            // The previous step's products (with FEW_REGISTERS this step's) are done: their A registers may
            // be reused.
            if constexpr (S::FEW_REGISTERS)
                wgmma_wait<0>();
            else
                wgmma_wait<1>();
        }
        wgmma_wait<0>();
#pragma unroll
        for (int m = 0; m < MW; ++m) {
            fence_registers(part[m]);
#pragma unroll
            for (int e = 0; e < R; ++e) running(m, e) += part[m][e];
        }
        __syncthreads();  // every warpgroup is done with this tile's buffers
    }
    // Accumulator 4j + 2r (+1) of an m-tile: row g + 8r, columns 8j + 2t (+1) = Re (Im) of vector 4j + t.
    float2* dst = gridDim.y > 1 ? out + size_t(blockIdx.y) * nb * nOut : out;
    const int stride = gridDim.y > 1 ? nOut : outStride;
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
        const int c = 4 * j + t;
        if (c >= nb) continue;
        const int e = unit_exponent(maxBits[c]);
#pragma unroll
        for (int m = 0; m < MW; ++m)
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = rowBase + m * 64 + g + 8 * r;
                if (row < nOut)
                    dst[size_t(c) * stride + row] =
                        make_float2(ldexpf(running(m, 4 * j + 2 * r), e), ldexpf(running(m, 4 * j + 2 * r + 1), e));
            }
    }
#endif
}

// Adds the splits' partial sums in a fixed order: out[b][o] = sum_s partial[s][b][o].
__global__ void sum_splits_kernel(const float2* __restrict__ partial, int splits, int nb, int nOut,
                                  float2* __restrict__ out, int outStride) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (o >= nOut) return;
    float re = 0.f, im = 0.f;
    for (int s = 0; s < splits; ++s) {
        const float2 v = partial[(size_t(s) * nb + b) * nOut + o];
        re += v.x;
        im += v.y;
    }
    out[size_t(b) * outStride + o] = make_float2(re, im);
}

template <int NB>
void launch_dft(bool grad, bool forward, dim3 grid, cudaStream_t stream, const float4* outGeom, const float4* inGeom,
                const float4* grads, int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* in, int inStride,
                float2* out, int outStride, float ix, float iy, float iz) {
    if (grad) {
        if (forward) {
            dft_kernel<NB, true, true><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                   nTiles, in, inStride, out, outStride, ix, iy, iz);
        } else {
            dft_kernel<NB, true, false><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                    nTiles, in, inStride, out, outStride, ix, iy, iz);
        }
    } else {
        if (forward) {
            dft_kernel<NB, false, true><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                    nTiles, in, inStride, out, outStride, ix, iy, iz);
        } else {
            dft_kernel<NB, false, false><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                     nTiles, in, inStride, out, outStride, ix, iy, iz);
        }
    }
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::dft_kernel");
}

// One coil-batch launch on the tensor cores for nb <= 4 NT vectors.
template <int NT, bool kForward>
void launch_dft_mma(int outBlocks, int splits, cudaStream_t stream, const float4* outGeom, const float4* inGeom,
                    int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* in, int nb, const unsigned* maxBits,
                    float2* out) {
    dft_mma_kernel<NT, kForward>
        <<<dim3(outBlocks, splits), MmaShape<NT>::WARPS * 32, 0, stream>>>(outGeom, inGeom, nOut, nIn, tilesPerSplit,
                                                                           nTiles, in, nb, maxBits, out, nOut);
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::dft_mma_kernel");
}

// One coil-batch launch on wgmma for nb <= N / 2 vectors: the B image (image: nTiles tiles), then the sums
// with phases as steps (PhaseSteps) says.
template <int N>
void launch_dft_wgmma(bool forward, PhaseSteps steps, int outBlocks, int splits, cudaStream_t stream,
                      const float4* outGeom, const float4* inGeom, int nOut, int nIn, int tilesPerSplit, int nTiles,
                      const float2* in, int nb, const unsigned* maxBits, uint4* image, float2* out) {
    using S = WgmmaShape<N>;
    const size_t items = size_t(nTiles) * (S::KT / 8) * (N / 2);
    const int blocks = int(std::min<size_t>((items + 255) / 256, 65535));
    if (forward) {
        split_batch_kernel<N, true><<<blocks, 256, 0, stream>>>(in, nIn, nb, nTiles, maxBits, image);
    } else {
        split_batch_kernel<N, false><<<blocks, 256, 0, stream>>>(in, nIn, nb, nTiles, maxBits, image);
    }
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::split_batch_kernel");
    const auto kernel = steps == kPhaseInputs    ? dft_wgmma_kernel<N, kPhaseInputs>
                        : steps == kPhaseRowsBy8 ? dft_wgmma_kernel<N, kPhaseRowsBy8>
                                                 : dft_wgmma_kernel<N, kPhaseFull>;
    kernel<<<dim3(outBlocks, splits), S::THREADS, S::SMEM, stream>>>(outGeom, inGeom, nOut, tilesPerSplit, nTiles,
                                                                     image, nb, maxBits, out, nOut);
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::dft_wgmma_kernel");
}

// Lets the wgmma kernels have their shared memory (more than the default 48 KB for N >= 32) on the current
// device.
void allow_wgmma_shared_memory() {
    auto allow = [](auto kernel, size_t bytes) {
        FORGE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    };
    auto allowSteps = [&](auto nConst) {
        constexpr int N = decltype(nConst)::value;
        allow(dft_wgmma_kernel<N, kPhaseFull>, WgmmaShape<N>::SMEM);
        allow(dft_wgmma_kernel<N, kPhaseInputs>, WgmmaShape<N>::SMEM);
        allow(dft_wgmma_kernel<N, kPhaseRowsBy8>, WgmmaShape<N>::SMEM);
    };
    allowSteps(std::integral_constant<int, 8>{});
    allowSteps(std::integral_constant<int, 16>{});
    allowSteps(std::integral_constant<int, 32>{});
    allowSteps(std::integral_constant<int, 64>{});
}

// Outputs and threads per block and inputs per tile of one launch.
struct LaunchShape {
    int rows, threads, tileLen;
};
template <int NT>
constexpr LaunchShape mma_shape() {
    return {MmaShape<NT>::WARPS * MmaShape<NT>::MT * 16, MmaShape<NT>::WARPS * 32, kMmaTile};
}
template <int N>
constexpr LaunchShape wgmma_shape() {
    return {WgmmaShape<N>::ROWS, WgmmaShape<N>::THREADS, WgmmaShape<N>::KT};
}
// For the wgmma or mma.sync kernel with nt n-tiles (4 vectors each), else for the FP32 kernel.
LaunchShape launch_shape(bool wgmma, bool tensor, int nt) {
    if (wgmma) {
        return nt == 8   ? wgmma_shape<64>()
               : nt == 4 ? wgmma_shape<32>()
               : nt == 2 ? wgmma_shape<16>()
                         : wgmma_shape<8>();
    }
    if (tensor) return nt == 8 ? mma_shape<8>() : nt == 4 ? mma_shape<4>() : nt == 2 ? mma_shape<2>() : mma_shape<1>();
    return {kTile * kOutputsPerThread, kTile, kTile};
}

// Vectors per launch: batches of 4 or more go to the tensor cores (32, 16, 8 or 4 at a time; at 4
// vectors they already beat the FP32 kernel: 4.8e12 against 4.0e12 vector-pairs/s), the last 1-3 and all
// GdftR2 batches (its sinc factor is not shared by the tensor-core path) to dft_kernel.
int vectors_per_launch(uword left, bool tensorCores) {
    if (tensorCores && left >= 4) return left >= 32 ? 32 : left >= 16 ? 16 : left >= 8 ? 8 : 4;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

// What the code this device runs was built for (build_probe_kernel): asked once per device, which then
// gets the wgmma kernels' shared-memory limits when it has them. The device must be current.
struct BuiltCode {
    int arch = 0;        // __CUDA_ARCH__ of the image that runs
    bool wgmma = false;  // sm_90a code
};
BuiltCode built_code(int device) {
    static std::mutex m;
    static std::map<int, BuiltCode> known;
    std::lock_guard<std::mutex> lock(m);
    if (auto it = known.find(device); it != known.end()) return it->second;
    DeviceBuffer flag(2 * sizeof(int));
    build_probe_kernel<<<1, 1>>>(flag.as<int>());
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::build_probe_kernel");
    int built[2] = {0, 0};
    FORGE_CUDA_CHECK(cudaMemcpy(built, flag.get(), sizeof(built), cudaMemcpyDeviceToHost));
    const BuiltCode code{built[0], built[1] == 1};
    if (code.wgmma) allow_wgmma_shared_memory();
    return known[device] = code;
}

const char* batch_kernel_name(CudaDftPipeline::BatchKernel k) {
    using K = CudaDftPipeline::BatchKernel;
    return k == K::wgmma ? "wgmma" : k == K::mma ? "mma.sync" : "fp32";
}

// The fastest batch kernel the device and the build have, or the one FORGE_CUDA_BATCH_KERNEL names.
CudaDftPipeline::BatchKernel choose_batch_kernel(int device, int major, int minor) {
    using K = CudaDftPipeline::BatchKernel;
    // mma.sync needs sm_80 code (compute_75 PTX on an 8.x GPU has none: dft_mma_kernel traps there).
    const BuiltCode code = built_code(device);
    const K best = major == 9 && minor == 0 && code.wgmma      ? K::wgmma
                   : major >= 8 && code.arch >= 800 ? K::mma
                                                    : K::fp32;
    const char* env = std::getenv("FORGE_CUDA_BATCH_KERNEL");
    if (!env || !*env) return best;
    const std::string want(env);
    for (K k : {K::fp32, K::mma, K::wgmma}) {
        if (want != batch_kernel_name(k)) continue;
        if (int(k) > int(best)) {  // the enumerators are in order of speed
            throw invalid_argument("FORGE_CUDA_BATCH_KERNEL: '" + want + "' does not run on device " +
                                   std::to_string(device) + " (compute capability " + std::to_string(major) + "." +
                                   std::to_string(minor) + ") with this build; the fastest here is " +
                                   batch_kernel_name(best));
        }
        return k;
    }
    throw invalid_argument("FORGE_CUDA_BATCH_KERNEL: '" + want + "' is not wgmma, mma.sync or fp32");
}

void require_pointer(const void* p, const char* name) {
    if (!p) throw invalid_argument(std::string("CudaDftPipeline: ") + name + " is a null pointer");
}

}  // namespace

CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options) : maxBatch_(options.max_batch) {
    const char* where = "CudaDftPipeline";
    check_sizes(where, geom.n1, geom.n2);
    if (geom.n2 < 1) throw invalid_argument("CudaDftPipeline: geometry.n2 (pixels) must be at least 1, got 0");
    for (auto [p, name] : {std::pair{geom.ix, "geometry.ix"},
                           {geom.iy, "geometry.iy"},
                           {geom.iz, "geometry.iz"},
                           {geom.fm_turns, "geometry.fm_turns"}}) {
        require_pointer(p, name);
    }
    const int gradientMaps = (geom.Gx != nullptr) + (geom.Gy != nullptr) + (geom.Gz != nullptr);
    if (gradientMaps != 0 && gradientMaps != 3) {
        throw invalid_argument("CudaDftPipeline: geometry.Gx, Gy, Gz: give all three gradient maps or none");
    }
    hasGradients_ = gradientMaps == 3;
    if (hasGradients_) {
        const uword numX = geom.numX, numY = geom.numY, numZ = geom.numZ;
        const uword grid = numX < 1 || numY < 1 || numZ < 1
                               ? 0
                               : checked_product(where, {{"numX", numX}, {"numY", numY}, {"numZ", numZ}});
        if (grid == 0 || (geom.partial_grid ? grid < geom.n2 : grid != geom.n2)) {
            std::ostringstream m;
            m << "CudaDftPipeline: grid " << numX << " x " << numY << " x " << numZ << " does not hold n2 = " << geom.n2
              << " pixels";
            throw invalid_argument(m.str());
        }
        if (std::max({numX, numY, numZ}) > kMaxLength)
            throw invalid_argument("CudaDftPipeline: grid axis longer than CudaDftPipeline::kMaxLength");
        numX_ = int(numX);
        numY_ = int(numY);
        numZ_ = int(numZ);
    }
    numPixels_ = int(geom.n2);
    // Pixels 2k and 2k + 1, and pixels 16j + g and 16j + g + 8 (g < 8), on the same grid row (same y and z):
    // the coil-batch kernels then step the phase along x (PhaseSteps). Both hold for forge's grids with an
    // even, respectively a multiple-of-16, row length.
    pixelPairsOnRows_ = pixelRowsEightApart_ = true;
    for (uword k = 0; k + 1 < geom.n2; k += 2)
        if (geom.iy[k] != geom.iy[k + 1] || geom.iz[k] != geom.iz[k + 1]) {
            pixelPairsOnRows_ = false;
            break;
        }
    for (uword k = 0; k + 8 < geom.n2; k = k % 16 == 7 ? k + 9 : k + 1)
        if (geom.iy[k] != geom.iy[k + 8] || geom.iz[k] != geom.iz[k + 8]) {
            pixelRowsEightApart_ = false;
            break;
        }
    if (!device::available()) throw cuda_error("CudaDftPipeline: no CUDA device is available");
    device_ = resolve_device(where, options.device);
    DeviceGuard guard(device_);
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device_));
    int major = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    int minor = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_));
    batchKernel_ = choose_batch_kernel(device_, major, minor);

    // Padded to whole pairs of tiles: batched kernels read two tiles of outputs per block.
    const int pp = round_up(numPixels_, 2 * kTile);
    std::vector<float> p(4 * size_t(pp), 0.f);
    for (size_t k = 0; k < size_t(numPixels_); ++k) {  // size_t: 4 * k passes 2^31 from 2^29 pixels on
        p[4 * k] = geom.ix[k];
        p[4 * k + 1] = geom.iy[k];
        p[4 * k + 2] = geom.iz[k];
        p[4 * k + 3] = geom.fm_turns[k];
    }
    pixels_ = DeviceBuffer(p.size() * sizeof(float));
    device::copy_to_device(pixels_.get(), p.data(), p.size() * sizeof(float));
    if (pixelPairsOnRows_ && batchKernel_ == BatchKernel::wgmma) {
        // The wgmma kernels' forward inputs: odd pixels as their steps from the even one before (x, field map).
        for (size_t k = 1; k < size_t(pp); k += 2) {
            p[4 * k] -= p[4 * (k - 1)];
            p[4 * k + 3] -= p[4 * (k - 1) + 3];
        }
        pixelSteps_ = DeviceBuffer(p.size() * sizeof(float));
        device::copy_to_device(pixelSteps_.get(), p.data(), p.size() * sizeof(float));
    }
    if (hasGradients_) {
        std::vector<float> g(4 * size_t(pp), 0.f);
        for (size_t k = 0; k < size_t(numPixels_); ++k) {
            g[4 * k] = geom.Gx[k];
            g[4 * k + 1] = geom.Gy[k];
            g[4 * k + 2] = geom.Gz[k];
        }
        gradients_ = DeviceBuffer(g.size() * sizeof(float));
        device::copy_to_device(gradients_.get(), g.data(), g.size() * sizeof(float));
    }
    current_ = std::make_shared<DftPoints>();
    upload_into(*current_, geom.kx, geom.ky, geom.kz, geom.t, geom.n1);
    pointUploads_ = 1;
    if (options.stream) {
        stream_ = options.stream;
    } else {
        cudaStream_t st = nullptr;
        FORGE_CUDA_CHECK(cudaStreamCreate(&st));  // blocking stream: ordered with the legacy default stream
        stream_ = st;
        ownsStream_ = true;
    }
}

CudaDftPipeline::~CudaDftPipeline() {
    if (stream_) {
        // Finish queued work before the buffers it reads are freed; nothing can be thrown from here.
        if (cudaStreamSynchronize(stream_) != cudaSuccess) cudaGetLastError();
        if (ownsStream_ && cudaStreamDestroy(stream_) != cudaSuccess) cudaGetLastError();
    }
}

void CudaDftPipeline::upload_into(DftPoints& pts, const float* kx, const float* ky, const float* kz, const float* t,
                                  uword n1) const {
    check_sizes("CudaDftPipeline::set_points", n1, uword(numPixels_));
    if (n1 < 1) throw invalid_argument("CudaDftPipeline::set_points: n1 (samples) must be at least 1, got 0");
    for (auto [p, name] : {std::pair{kx, "kx"}, {ky, "ky"}, {kz, "kz"}, {t, "t"}}) require_pointer(p, name);
    const size_t ps = size_t(round_up(int(n1), 2 * kTile));
    std::vector<float> s(4 * ps, 0.f);
    for (size_t j = 0; j < size_t(n1); ++j) {  // size_t: 4 * j passes 2^31 from 2^29 samples on
        s[4 * j] = kx[j];
        s[4 * j + 1] = ky[j];
        s[4 * j + 2] = kz[j];
        s[4 * j + 3] = t[j];
    }
    DeviceGuard guard(device_);
    if (pts.capacity_ < ps) {
        pts.samples_ = DeviceBuffer(s.size() * sizeof(float));
        pts.capacity_ = ps;
    }
    device::copy_to_device(pts.samples_.get(), s.data(), s.size() * sizeof(float));
    pts.n1_ = n1;
    pts.device_ = device_;
}

void CudaDftPipeline::set_points(const float* kx, const float* ky, const float* kz, const float* t, uword n1) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uword padded = uword(round_up(int(std::min<uword>(n1, kMaxLength)), 2 * kTile));
    if (current_ && current_.use_count() == 1 && current_->capacity_ >= padded) {
        // Reuse the allocation; the transforms already queued on the stream read it, so let them finish.
        synchronize();
        upload_into(*current_, kx, ky, kz, t, n1);
    } else {
        auto fresh = std::make_shared<DftPoints>();
        upload_into(*fresh, kx, ky, kz, t, n1);
        current_ = std::move(fresh);
    }
    ++pointUploads_;
}

std::shared_ptr<const DftPoints> CudaDftPipeline::upload_points(const float* kx, const float* ky, const float* kz,
                                                                const float* t, uword n1) const {
    auto fresh = std::make_shared<DftPoints>();
    upload_into(*fresh, kx, ky, kz, t, n1);
    std::lock_guard<std::mutex> lock(mutex_);
    ++pointUploads_;
    return fresh;
}

void CudaDftPipeline::set_points(std::shared_ptr<const DftPoints> points) {
    if (!points) throw invalid_argument("CudaDftPipeline::set_points: points is a null pointer");
    if (points->device_ != device_) {
        throw invalid_argument("CudaDftPipeline::set_points: points live on device " + std::to_string(points->device_) +
                               ", the plan on device " + std::to_string(device_));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::const_pointer_cast<DftPoints>(std::move(points));
}

std::shared_ptr<const DftPoints> CudaDftPipeline::points() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
}

uword CudaDftPipeline::num_samples() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_->n1_;
}

uword CudaDftPipeline::point_uploads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pointUploads_;
}

void CudaDftPipeline::run(const DftPoints& points, const float* d_in, float* d_out, uword nbatch, bool forward) const {
    require_pointer(d_in, "d_in");
    require_pointer(d_out, "d_out");
    if (nbatch < 1) throw invalid_argument("CudaDftPipeline::execute: batch must be at least 1, got 0");
    if (maxBatch_ && nbatch > maxBatch_) {
        throw invalid_argument("CudaDftPipeline::execute: batch = " + std::to_string(nbatch) +
                               " exceeds the plan's options.max_batch = " + std::to_string(maxBatch_));
    }
    if (points.device_ != device_ || !points.samples_) {
        throw invalid_argument("CudaDftPipeline::execute: the points were not made on this plan's device");
    }
    DeviceGuard guard(device_);
    const int numSamples = int(points.n1_);
    const int nOut = forward ? numSamples : numPixels_;
    const int nIn = forward ? numPixels_ : numSamples;
    const float4* outGeom = forward ? points.samples_.as<float4>() : pixels_.as<float4>();
    const float4* inGeom = forward ? pixels_.as<float4>() : points.samples_.as<float4>();
    const float4* grads = hasGradients_ ? gradients_.as<float4>() : nullptr;
    // Pixels along grid rows: the wgmma kernels step the phase across them (PhaseSteps), forward from the
    // pixel steps.
    const PhaseSteps steps =
        forward ? (pixelSteps_ ? kPhaseInputs : kPhaseFull) : (pixelRowsEightApart_ ? kPhaseRowsBy8 : kPhaseFull);
    const float4* wgmmaInGeom = steps == kPhaseInputs ? pixelSteps_.as<float4>() : inGeom;
    // Per-call scratch: stream-ordered allocations from forge's pool of the device (reused across calls).
    const cudaMemPool_t scratchPool = device::detail::device_pool(device_).pool;
    const float2* in = reinterpret_cast<const float2*>(d_in);
    float2* out = reinterpret_cast<float2*>(d_out);
    cudaStream_t stream = stream_;

    const float invNx = 1.0f / numX_, invNy = 1.0f / numY_, invNz = 1.0f / numZ_;
    // The batch is walked in 64 bits (its total length may pass 2^31); each launch takes at most 32 vectors.
    for (uword b0 = 0; b0 < nbatch;) {
        const bool tensor = batchKernel_ != BatchKernel::fp32 && !hasGradients_ && nbatch - b0 >= 4;
        const int nb = vectors_per_launch(nbatch - b0, tensor);
        const int nt = (nb + 3) / 4;  // n-tiles: 4 vectors, 8 real columns each
        // wgmma reads the vectors from a prepared image (8 bytes per input and column); without the memory
        // for it the batch goes to the mma.sync kernel, which needs none.
        uint4* image = nullptr;
        bool wgmma = tensor && batchKernel_ == BatchKernel::wgmma;
        if (wgmma) {
            const size_t bytes = size_t(round_up(nIn, 128)) * 8 * (8 * nt);
            if (cudaMallocFromPoolAsync(reinterpret_cast<void**>(&image), bytes, scratchPool, stream) != cudaSuccess) {
                cudaGetLastError();
                image = nullptr;
                wgmma = false;
            }
        }
        // Split the inner sum when the outputs alone would leave the GPU idle: aim for ~16 blocks of
        // 256 threads (or as many warps) per multiprocessor, each split keeping at least 4 tiles of work.
        const auto [rowsPerBlock, threads, tileLen] = launch_shape(wgmma, tensor, nt);
        const int nTiles = round_up(nIn, tileLen) / tileLen;
        const int outBlocks = round_up(nOut, rowsPerBlock) / rowsPerBlock;
        const int blocksWanted = 16 * multiprocessors_ * (kTile / threads);
        int splits = std::max(1, (blocksWanted + outBlocks - 1) / outBlocks);
        splits = std::min(splits, std::max(1, nTiles / 4));
        const int tilesPerSplit = (nTiles + splits - 1) / splits;
        splits = (nTiles + tilesPerSplit - 1) / tilesPerSplit;

        const float2* inB = in + size_t(b0) * nIn;
        float2* outB = out + size_t(b0) * nOut;
        float2* partial = nullptr;
        if (splits > 1) {
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&partial),
                                                     size_t(splits) * nb * nOut * sizeof(float2), scratchPool, stream));
        }
        float2* dst = splits > 1 ? partial : outB;
        if (tensor) {
            unsigned* maxBits = nullptr;
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&maxBits), nb * sizeof(unsigned),
                                                     scratchPool, stream));
            FORGE_CUDA_CHECK(cudaMemsetAsync(maxBits, 0, nb * sizeof(unsigned), stream));
            max_abs_kernel<<<dim3(std::min(64, (nIn + 255) / 256), nb), 256, 0, stream>>>(inB, nIn, maxBits);
            FORGE_CUDA_CHECK_LAUNCH("forge::cuda::max_abs_kernel");
            auto go = [&](auto ntConst) {
                constexpr int NT = decltype(ntConst)::value;
                if (wgmma) {
                    launch_dft_wgmma<8 * NT>(forward, steps, outBlocks, splits, stream, outGeom, wgmmaInGeom, nOut, nIn,
                                             tilesPerSplit, nTiles, inB, nb, maxBits, image, dst);
                } else {
                    (forward ? launch_dft_mma<NT, true> : launch_dft_mma<NT, false>)(outBlocks, splits, stream, outGeom,
                                                                                     inGeom, nOut, nIn, tilesPerSplit,
                                                                                     nTiles, inB, nb, maxBits, dst);
                }
            };
            switch (nt) {
                case 8: go(std::integral_constant<int, 8>{}); break;
                case 4: go(std::integral_constant<int, 4>{}); break;
                case 2: go(std::integral_constant<int, 2>{}); break;
                default: go(std::integral_constant<int, 1>{}); break;
            }
            if (image) FORGE_CUDA_CHECK(cudaFreeAsync(image, stream));
            FORGE_CUDA_CHECK(cudaFreeAsync(maxBits, stream));
        } else {
            const dim3 grid(outBlocks, splits);
            auto go = [&](auto nbConst) {
                launch_dft<decltype(nbConst)::value>(hasGradients_, forward, grid, stream, outGeom, inGeom, grads, nOut,
                                                     nIn, tilesPerSplit, nTiles, inB, nIn, dst, nOut, invNx, invNy,
                                                     invNz);
            };
            switch (nb) {
                case 8: go(std::integral_constant<int, 8>{}); break;
                case 4: go(std::integral_constant<int, 4>{}); break;
                case 2: go(std::integral_constant<int, 2>{}); break;
                default: go(std::integral_constant<int, 1>{}); break;
            }
        }
        if (splits > 1) {
            const dim3 rgrid((nOut + 255) / 256, nb);
            sum_splits_kernel<<<rgrid, 256, 0, stream>>>(partial, splits, nb, nOut, outB, nOut);
            FORGE_CUDA_CHECK_LAUNCH("forge::cuda::sum_splits_kernel");
            FORGE_CUDA_CHECK(cudaFreeAsync(partial, stream));
        }
        b0 += nb;
    }
}

void CudaDftPipeline::execute(Direction direction, const float* d_in, float* d_out, uword batch) {
    const std::shared_ptr<const DftPoints> p = points();  // held for the call: a concurrent set_points may rebind
    run(*p, d_in, d_out, batch, direction == Direction::forward);
}

void CudaDftPipeline::execute(const DftPoints& points, Direction direction, const float* d_in, float* d_out,
                              uword batch) const {
    run(points, d_in, d_out, batch, direction == Direction::forward);
}

void CudaDftPipeline::execute_host(Direction direction, const float* h_in, float* h_out, uword batch) {
    require_pointer(h_in, "h_in");
    require_pointer(h_out, "h_out");
    if (batch < 1) throw invalid_argument("CudaDftPipeline::execute_host: batch must be at least 1, got 0");
    const std::shared_ptr<const DftPoints> p = points();
    const bool forward = direction == Direction::forward;
    const uword nIn = forward ? uword(numPixels_) : p->n1_, nOut = forward ? p->n1_ : uword(numPixels_);
    DeviceGuard guard(device_);
    const uword inLen = checked_product("CudaDftPipeline::execute_host", {{"input length", nIn}, {"batch", batch}},
                                        uword(-1) / (2 * sizeof(float)));
    const uword outLen = checked_product("CudaDftPipeline::execute_host", {{"output length", nOut}, {"batch", batch}},
                                         uword(-1) / (2 * sizeof(float)));
    DeviceBuffer din(inLen * 2 * sizeof(float)), dout(outLen * 2 * sizeof(float));
    device::copy_to_device(din.get(), h_in, din.bytes());
    run(*p, din.as<float>(), dout.as<float>(), batch, forward);
    synchronize();
    device::copy_to_host(h_out, dout.get(), dout.bytes());
}

const char* CudaDftPipeline::batch_kernel() const { return batch_kernel_name(batchKernel_); }

void CudaDftPipeline::synchronize() const { FORGE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace cuda
}  // namespace forge
