// The CPU-only build's stand-in for this folder's .cu files (PenaltyKernels, ProxKernels): compiled instead of them
// without CUDA, so that the penalties link. The penalties reach these only for a device-resident vector, which
// cannot exist here; each throws forge::cuda_error if it ever is.
#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Penalties/cuda/PenaltyKernels.h"
#include "forge/Penalties/cuda/ProxDevice.h"

// ---------------------------------------------------------------- PenaltyKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_PenaltyKernels() { throw_no_cuda_feature("device penalty kernels are unavailable"); }
}  // namespace

template <typename T1>
void fd_penalty_values(const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda_PenaltyKernels();
}
template <typename T1>
void fd_penalty_gradient(const forgeComplex<T1>*, forgeComplex<T1>*, fd::Grid, fd::Potential, T1, T1) {
    no_cuda_PenaltyKernels();
}
template <typename T1>
void fd_penalty_denoms(const forgeComplex<T1>*, const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda_PenaltyKernels();
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

// ---------------------------------------------------------------- ProxKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_prox() { throw_no_cuda_feature("device proximal penalty kernels are unavailable"); }
}  // namespace

template <typename T1>
void prox_soft_threshold(forgeComplex<T1>*, uword, T1, prox::Dims, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_abs_values(const forgeComplex<T1>*, T1*, uword, prox::Dims, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_wavelet_pass(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, int, prox::Filters<T1>, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_cyclic_shift(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, prox::Shift, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_primal(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, T1, prox::TvGrid) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_dual_step(const forgeComplex<T1>*, forgeComplex<T1>*, forgeComplex<T1>*, T1, T1, bool, prox::TvGrid) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_values(const forgeComplex<T1>*, T1*, bool, prox::TvGrid) {
    no_cuda_prox();
}

#define FORGE_PROX_KERNELS_INSTANTIATE(T1)                                                                           \
    template void prox_soft_threshold<T1>(forgeComplex<T1>*, uword, T1, prox::Dims, bool);                           \
    template void prox_abs_values<T1>(const forgeComplex<T1>*, T1*, uword, prox::Dims, bool);                        \
    template void prox_wavelet_pass<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, int,                 \
                                        prox::Filters<T1>, bool);                                                    \
    template void prox_cyclic_shift<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, prox::Shift, bool);  \
    template void prox_tv_primal<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, T1,        \
                                     prox::TvGrid);                                                                  \
    template void prox_tv_dual_step<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, forgeComplex<T1>*, T1, T1, bool, \
                                        prox::TvGrid);                                                               \
    template void prox_tv_values<T1>(const forgeComplex<T1>*, T1*, bool, prox::TvGrid);
FORGE_PROX_KERNELS_INSTANTIATE(float)
FORGE_PROX_KERNELS_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge
