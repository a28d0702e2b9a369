// CUDA kernel of the Toeplitz kernel build: the kernels' expansion along a Cartesian axis.
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

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

template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

}  // namespace cuda
}  // namespace forge
