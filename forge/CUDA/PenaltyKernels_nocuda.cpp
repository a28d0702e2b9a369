// CPU build: forgeCol never lives on the GPU, so these are unreachable through the public API; they
// exist so that code compiled against the same headers links, and fail loudly if reached.
#include "forge/CUDA/PenaltyKernels.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw cuda_error("forge was built without CUDA: device penalty kernels are unavailable");
}
}  // namespace

template <typename T1>
void fd_penalty_values(const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda();
}
template <typename T1>
void fd_penalty_gradient(const forgeComplex<T1>*, forgeComplex<T1>*, fd::Grid, fd::Potential, T1, T1) {
    no_cuda();
}
template <typename T1>
void fd_penalty_denoms(const forgeComplex<T1>*, const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda();
}

#define FORGE_PENALTY_KERNELS_INSTANTIATE(T1)                                                                      \
    template void fd_penalty_values<T1>(const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1);                \
    template void fd_penalty_gradient<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, fd::Grid, fd::Potential, T1, \
                                          T1);                                                                     \
    template void fd_penalty_denoms<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, T1*, fd::Grid,           \
                                        fd::Potential, T1);
FORGE_PENALTY_KERNELS_INSTANTIATE(float)
FORGE_PENALTY_KERNELS_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge
