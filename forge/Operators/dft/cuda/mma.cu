// The exact DFT's coil batches on the tensor cores with mma.sync (compute capability 8.0 and later), and the
// per-vector scaling both tensor-core kernels (this one and wgmma.cu's) use.
#include <algorithm>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/dft/cuda/kernels.cuh"

namespace forge {
namespace cuda {
namespace dft {
namespace {

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
// sm_90a code, when the image that runs was built for sm_80 or later; on H100/H200 dft_wgmma_kernel (wgmma.cu)
// does the same product faster.
constexpr int kMmaTile = 64;  // inputs per shared-memory tile
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// Code built below sm_80 has dft_mma_kernel as a stub: its helpers below go unused there ("declared but never
// referenced"); the sm_80-and-later builds of this file still report unused code.
#pragma nv_diag_suppress 177
#endif

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

template <int MT, int NT>
__device__ __forceinline__ void set_zero(float (&acc)[MT][NT][4]) {
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int q = 0; q < NT; ++q)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[m][q][e] = 0.f;
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

template <int NT>
constexpr LaunchShape mma_shape() {
    return {MmaShape<NT>::WARPS * MmaShape<NT>::MT * 16, MmaShape<NT>::WARPS * 32, kMmaTile};
}

}  // namespace

void launch_max_abs(const float2* in, int nIn, int nb, unsigned* maxBits, cudaStream_t stream) {
    max_abs_kernel<<<dim3(std::min(64, (nIn + 255) / 256), nb), 256, 0, stream>>>(in, nIn, maxBits);
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::max_abs_kernel");
}

LaunchShape mma_launch_shape(int nt) {
    return nt == 8 ? mma_shape<8>() : nt == 4 ? mma_shape<4>() : nt == 2 ? mma_shape<2>() : mma_shape<1>();
}

void launch_mma(int nt, bool forward, int outBlocks, int splits, cudaStream_t stream, const float4* outGeom,
                const float4* inGeom, int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* in, int nb,
                const unsigned* maxBits, float2* out) {
    auto go = [&](auto ntConst) {
        constexpr int NT = decltype(ntConst)::value;
        (forward ? launch_dft_mma<NT, true> : launch_dft_mma<NT, false>)(outBlocks, splits, stream, outGeom, inGeom,
                                                                         nOut, nIn, tilesPerSplit, nTiles, in, nb,
                                                                         maxBits, out);
    };
    switch (nt) {
        case 8: go(std::integral_constant<int, 8>{}); break;
        case 4: go(std::integral_constant<int, 4>{}); break;
        case 2: go(std::integral_constant<int, 2>{}); break;
        default: go(std::integral_constant<int, 1>{}); break;
    }
}

}  // namespace dft
}  // namespace cuda
}  // namespace forge
