// CUDA kernel of the Toeplitz normal operator's kernel product: one thread per cell of the padded grid and
// vector of the batch; and the kernels' expansion along a Cartesian axis.
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <typename T1>
__global__ void k_mix(const forgeComplex<T1>* __restrict__ K, const long long* __restrict__ table,
                      const forgeComplex<T1>* __restrict__ z, forgeComplex<T1>* __restrict__ u, uword P, uword S,
                      uword nbatch) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= P) return;
    // The batch in blockIdx.y: the vectors of one cell range read the same kernel values, close in time.
    const uword b = blockIdx.y;
    if (b >= nbatch) return;
    toeplitz::mix_at<T1>(K, table, z + b * S * P, u + b * S * P, P, S, k);
}

// One thread per output cell of one basis kernel (grid-stride); the G products in a fixed order.
template <typename T1>
__global__ void k_expand_axis(const forgeComplex<T1>* __restrict__ Q, const forgeComplex<T1>* __restrict__ E,
                              forgeComplex<T1>* __restrict__ out, uword lo, uword Pa, uword hi, uword G, uword nb) {
    const uword P = lo * Pa * hi, M = lo * hi, total = P * nb;
    for (uword o = uword(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += uword(gridDim.x) * blockDim.x) {
        const uword r = o / P, c = o % P;
        const uword i = c % lo, d = (c / lo) % Pa, h = c / (lo * Pa);
        const forgeComplex<T1>* q = Q + i + lo * h + M * r;
        forgeComplex<T1> s(0, 0);
        for (uword g = 0; g < G; ++g) s += E[d + Pa * g] * q[M * nb * g];
        out[o] = s;
    }
}

}  // namespace

template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>* Q, const forgeComplex<T1>* E, forgeComplex<T1>* out, uword lo,
                          uword Pa, uword hi, uword G, uword nb) {
    const uword total = lo * Pa * hi * nb;
    if (total == 0) return;
    const uword blocks = (total + kThreads - 1) / kThreads;
    k_expand_axis<T1><<<unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16), kThreads>>>(Q, E, out, lo, Pa, hi, G, nb);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_expand_axis");
}

template <typename T1>
void toeplitz_mix(const forgeComplex<T1>* K, const long long* table, const forgeComplex<T1>* z,
                  forgeComplex<T1>* u, uword P, uword S, uword nbatch, CUstream_st* stream) {
    if (P == 0 || nbatch == 0) return;
    for (uword b0 = 0; b0 < nbatch; b0 += 65535) {  // gridDim.y is at most 65535
        const uword nb = nbatch - b0 < 65535 ? nbatch - b0 : 65535;
        const dim3 grid(unsigned((P + kThreads - 1) / kThreads), unsigned(nb));
        k_mix<T1><<<grid, kThreads, 0, cudaStream_t(stream)>>>(K, table, z + b0 * S * P, u + b0 * S * P, P, S, nb);
        FORGE_CUDA_CHECK_LAUNCH("toeplitz_mix");
    }
}

template void toeplitz_mix<float>(const forgeComplex<float>*, const long long*, const forgeComplex<float>*,
                                  forgeComplex<float>*, uword, uword, uword, CUstream_st*);
template void toeplitz_mix<double>(const forgeComplex<double>*, const long long*, const forgeComplex<double>*,
                                   forgeComplex<double>*, uword, uword, uword, CUstream_st*);

template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

}  // namespace cuda
}  // namespace forge
