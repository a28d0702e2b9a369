#pragma once
// What the exact DFT's GPU kernels share, and how the plan (plan.cu) launches each family: the FP32 tiles
// (fp32.cu), mma.sync on the tensor cores (mma.cu) and Hopper's warpgroup MMA (wgmma.cu). The device helpers
// below are inlined into every kernel that uses them; the launch functions take device pointers and queue
// their work on the given stream. Private to forge/Operators/dft (CUDA headers; never installed).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

// wgmma exists only in code built for sm_90a (compute capability 9.0 with its architecture-specific
// features): the wgmma kernels are stubs elsewhere, and the plan asks the code that runs which it has
// (build_probe_kernel in plan.cu).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FORGE_WGMMA 1
#endif

namespace forge {
namespace cuda {
namespace dft {

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

// The phase of a pair in radians: o is 2 pi times one side's coordinates, in the other side's.
__device__ __forceinline__ float phase_of(const float4& o, const float4& in) {
    return fmaf(o.x, in.x, fmaf(o.y, in.y, fmaf(o.z, in.z, o.w * in.w)));
}

// ---------------------------------------------------------------------------------------------------------
// Shared by the tensor-core kernels (mma.cu explains the product and the split).

// a, b -> hi, lo as packed half2 with a = hi.x + lo.x and b = hi.y + lo.y to within 2^-25.
__device__ __forceinline__ void split_half2(float a, float b, uint32_t& hi, uint32_t& lo) {
    const __half2 h = __floats2half2_rn(a, b);
    const float2 f = __half22float2(h);
    const __half2 l = __floats2half2_rn(a - f.x, b - f.y);
    hi = reinterpret_cast<const uint32_t&>(h);
    lo = reinterpret_cast<const uint32_t&>(l);
}

// e with max * 2^-e < 1 (0 for max = 0; a NaN or infinite vector keeps its NaN or Inf): the kernel uses
// x 2^-e and multiplies the sums by 2^e with ldexpf, which stays finite up to FLT_MAX.
__device__ __forceinline__ int unit_exponent(unsigned maxBits) {
    int e = 0;
    frexpf(__uint_as_float(maxBits), &e);
    return e;
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

// ---------------------------------------------------------------------------------------------------------
// Launches (host). nOut outputs, nIn inputs, the inner sum split into blocks of tilesPerSplit of the nTiles
// tiles (grid.y / splits: 1, or the number of partial sums written to out, [split][vector][nOut]); otherwise
// out holds the final [vector][outStride] (fp32) or [vector][nOut] (tensor cores) layout. Geometry is float4
// per output and input, padded to whole tiles (outGeom to whole blocks of outputs).

// Outputs and threads per block and inputs per tile of one launch.
struct LaunchShape {
    int rows, threads, tileLen;
};

// FP32 tiles (fp32.cu), nb = 1, 2, 4 or 8 vectors; grads and invNx, invNy, invNz with gradient maps (GdftR2).
LaunchShape fp32_launch_shape();
void launch_fp32(int nb, bool grad, bool forward, dim3 grid, cudaStream_t stream, const float4* outGeom,
                 const float4* inGeom, const float4* grads, int nOut, int nIn, int tilesPerSplit, int nTiles,
                 const float2* in, int inStride, float2* out, int outStride, float invNx, float invNy, float invNz);

// Tensor cores: maxBits[b] (zeroed before) becomes the largest |Re|, |Im| of vector b, as float bits; the
// kernels scale each vector by the power of two unit_exponent gives.
void launch_max_abs(const float2* in, int nIn, int nb, unsigned* maxBits, cudaStream_t stream);
// mma.sync (mma.cu), nt = 1, 2, 4 or 8 n-tiles of 4 vectors, nb <= 4 nt vectors.
LaunchShape mma_launch_shape(int nt);
void launch_mma(int nt, bool forward, int outBlocks, int splits, cudaStream_t stream, const float4* outGeom,
                const float4* inGeom, int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* in, int nb,
                const unsigned* maxBits, float2* out);
// wgmma (wgmma.cu), nt as for mma.sync; image: scratch for nTiles tiles of the vectors' FP16 image
// (round_up(nIn, 128) * 8 * 8 nt bytes); inGeom as steps says (PhaseSteps).
LaunchShape wgmma_launch_shape(int nt);
void launch_wgmma(int nt, bool forward, PhaseSteps steps, int outBlocks, int splits, cudaStream_t stream,
                  const float4* outGeom, const float4* inGeom, int nOut, int nIn, int tilesPerSplit, int nTiles,
                  const float2* in, int nb, const unsigned* maxBits, uint4* image, float2* out);
// Lets the wgmma kernels have their shared memory (more than the default 48 KB for N >= 32) on the current
// device.
void allow_wgmma_shared_memory();

}  // namespace dft
}  // namespace cuda
}  // namespace forge
