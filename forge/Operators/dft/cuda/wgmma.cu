// The exact DFT's coil batches with Hopper's warpgroup MMA: the B image of a batch, the product, their launch.
#include <algorithm>
#include <type_traits>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/dft/cuda/kernels.cuh"

namespace forge {
namespace cuda {
namespace dft {
namespace {

// Coil batches with Hopper's warpgroup MMA (wgmma.mma_async, compute capability 9.0, code built for sm_90a).
// The same product and the same hi/lo split as dft_mma_kernel (mma.cu), but a warpgroup (4 warps) multiplies 64
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

#if defined(FORGE_WGMMA)
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

// The B image of one batch of nb <= N / 2 vectors, for nTiles tiles of KT inputs: per tile
// [hi, lo][k-step of 8 inputs][N x 16 FP16], rows of the product Re and Im of each vector as in the
// comment above dft_mma_kernel (mma.cu), the vectors times 2^-e (maxBits), zeros past nIn and past nb.
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

template <int N>
constexpr LaunchShape wgmma_shape() {
    return {WgmmaShape<N>::ROWS, WgmmaShape<N>::THREADS, WgmmaShape<N>::KT};
}

}  // namespace

LaunchShape wgmma_launch_shape(int nt) {
    return nt == 8 ? wgmma_shape<64>() : nt == 4 ? wgmma_shape<32>() : nt == 2 ? wgmma_shape<16>() : wgmma_shape<8>();
}

void launch_wgmma(int nt, bool forward, PhaseSteps steps, int outBlocks, int splits, cudaStream_t stream,
                  const float4* outGeom, const float4* inGeom, int nOut, int nIn, int tilesPerSplit, int nTiles,
                  const float2* in, int nb, const unsigned* maxBits, uint4* image, float2* out) {
    auto go = [&](auto ntConst) {
        launch_dft_wgmma<8 * decltype(ntConst)::value>(forward, steps, outBlocks, splits, stream, outGeom, inGeom, nOut,
                                                       nIn, tilesPerSplit, nTiles, in, nb, maxBits, image, out);
    };
    switch (nt) {
        case 8: go(std::integral_constant<int, 8>{}); break;
        case 4: go(std::integral_constant<int, 4>{}); break;
        case 2: go(std::integral_constant<int, 2>{}); break;
        default: go(std::integral_constant<int, 1>{}); break;
    }
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

}  // namespace dft
}  // namespace cuda
}  // namespace forge
