// CUDA kernel of the Toeplitz kernel build's combination of basis kernels into pair kernels (KernelCombine.h).
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/toeplitz/cuda/KernelCombine.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// One thread per cell c (grid-stride) and chunk of pairs (blockIdx.y): the chunk's sums in registers; the
// coefficients are the same for every thread of the block (broadcast reads).
template <typename T1>
__global__ void k_combine(const forgeComplex<T1>* __restrict__ basis, const forgeComplex<T1>* __restrict__ coef,
                          forgeComplex<T1>* __restrict__ out, uword P, uword nb, uword npairs, uword Px, uword Py,
                          bool alternate) {
    const uword p0 = uword(blockIdx.y) * kCombineChunk;
    const uword np = npairs - p0 < kCombineChunk ? npairs - p0 : kCombineChunk;
    for (uword c = uword(blockIdx.x) * blockDim.x + threadIdx.x; c < P; c += uword(gridDim.x) * blockDim.x) {
        forgeComplex<T1> acc[kCombineChunk];
#pragma unroll
        for (uword q = 0; q < kCombineChunk; ++q) acc[q] = forgeComplex<T1>(0, 0);
        for (uword r = 0; r < nb; ++r) {
            const forgeComplex<T1> b = basis[r * P + c];
#pragma unroll
            for (uword q = 0; q < kCombineChunk; ++q)
                if (q < np) acc[q] += coef[(p0 + q) * nb + r] * b;
        }
        T1 s = 1;
        if (alternate) {
            const uword x = c % Px, y = (c / Px) % Py, z = c / (Px * Py);
            if ((x + y + z) & 1) s = -1;
        }
#pragma unroll
        for (uword q = 0; q < kCombineChunk; ++q)
            if (q < np) out[(p0 + q) * P + c] = acc[q] * s;
    }
}

}  // namespace

template <typename T1>
void toeplitz_combine_kernels(const forgeComplex<T1>* basis, const forgeComplex<T1>* coef, forgeComplex<T1>* out,
                              uword P, uword nb, uword npairs, uword Px, uword Py, bool alternate) {
    if (P == 0 || npairs == 0) return;
    const uword chunks = (npairs + kCombineChunk - 1) / kCombineChunk;
    for (uword c0 = 0; c0 < chunks; c0 += 65535) {  // gridDim.y is at most 65535
        const uword nc = chunks - c0 < 65535 ? chunks - c0 : 65535;
        const uword blocks = (P + kThreads - 1) / kThreads;
        const dim3 grid(unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16), unsigned(nc));
        k_combine<T1><<<grid, kThreads>>>(basis, coef + c0 * kCombineChunk * nb, out + c0 * kCombineChunk * P, P, nb,
                                          npairs - c0 * kCombineChunk, Px, Py, alternate);
        FORGE_CUDA_CHECK_LAUNCH("toeplitz_combine_kernels");
    }
}

template void toeplitz_combine_kernels<float>(const forgeComplex<float>*, const forgeComplex<float>*,
                                              forgeComplex<float>*, uword, uword, uword, uword, uword, bool);
template void toeplitz_combine_kernels<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                               forgeComplex<double>*, uword, uword, uword, uword, uword, bool);

}  // namespace cuda
}  // namespace forge
