// CUDA kernel of the Toeplitz normal operator's kernel product: one thread per cell of the padded grid and
// vector of the batch.
#include <cuda_runtime.h>

#include "forge/CUDA/CudaCheck.h"
#include "forge/CUDA/ToeplitzKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <typename T1>
__global__ void k_mix(const forgeComplex<T1>* __restrict__ K, const uword* __restrict__ pairs, uword npairs,
                      const forgeComplex<T1>* __restrict__ z, forgeComplex<T1>* __restrict__ u, uword P, uword S,
                      uword nbatch) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= P) return;
    // The batch in blockIdx.y: the vectors of one cell range read the same kernel values, close in time.
    const uword b = blockIdx.y;
    if (b >= nbatch) return;
    toeplitz::mix_at<T1>(K, pairs, npairs, z + b * S * P, u + b * S * P, P, S, k);
}

}  // namespace

template <typename T1>
void toeplitz_mix(const forgeComplex<T1>* K, const uword* pairs, uword npairs, const forgeComplex<T1>* z,
                  forgeComplex<T1>* u, uword P, uword S, uword nbatch) {
    if (P == 0 || nbatch == 0) return;
    for (uword b0 = 0; b0 < nbatch; b0 += 65535) {  // gridDim.y is at most 65535
        const uword nb = nbatch - b0 < 65535 ? nbatch - b0 : 65535;
        const dim3 grid(unsigned((P + kThreads - 1) / kThreads), unsigned(nb));
        k_mix<T1><<<grid, kThreads>>>(K, pairs, npairs, z + b0 * S * P, u + b0 * S * P, P, S, nb);
        FORGE_CUDA_CHECK_LAUNCH("toeplitz_mix");
    }
}

template void toeplitz_mix<float>(const forgeComplex<float>*, const uword*, uword, const forgeComplex<float>*,
                                  forgeComplex<float>*, uword, uword, uword);
template void toeplitz_mix<double>(const forgeComplex<double>*, const uword*, uword, const forgeComplex<double>*,
                                   forgeComplex<double>*, uword, uword, uword);

}  // namespace cuda
}  // namespace forge
