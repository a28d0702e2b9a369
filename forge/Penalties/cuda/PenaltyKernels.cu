// CUDA finite-difference penalty kernels: one thread per pixel, gathering its differences (no atomics).
// The per-pixel formulas are the same FORGE_HD functions the host loops use (FiniteDifferenceKernels.h).
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Penalties/cuda/PenaltyKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uword n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <typename T1>
__global__ void k_values(const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k, T1 delta, uword n) {
    uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fd::value_at(i, x, g, k, delta);
}
template <typename T1>
__global__ void k_gradient(const forgeComplex<T1>* x, forgeComplex<T1>* out, fd::Grid g, fd::Potential k, T1 delta,
                           T1 beta, uword n) {
    uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fd::gradient_at(i, x, g, k, delta) * beta;
}
template <typename T1>
__global__ void k_denoms(const forgeComplex<T1>* dir, const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k,
                         T1 delta, uword n) {
    uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fd::denom_at(i, dir, x, g, k, delta);
}

}  // namespace

template <typename T1>
void fd_penalty_values(const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k, T1 delta) {
    const uword n = g.Nx * g.Ny * g.Nz;
    if (n == 0) return;
    k_values<T1><<<blocks_for(n), kThreads>>>(x, out, g, k, delta, n);
    FORGE_CUDA_CHECK_LAUNCH("fd_penalty_values");
}
template <typename T1>
void fd_penalty_gradient(const forgeComplex<T1>* x, forgeComplex<T1>* out, fd::Grid g, fd::Potential k, T1 delta,
                         T1 beta) {
    const uword n = g.Nx * g.Ny * g.Nz;
    if (n == 0) return;
    k_gradient<T1><<<blocks_for(n), kThreads>>>(x, out, g, k, delta, beta, n);
    FORGE_CUDA_CHECK_LAUNCH("fd_penalty_gradient");
}
template <typename T1>
void fd_penalty_denoms(const forgeComplex<T1>* dir, const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k,
                       T1 delta) {
    const uword n = g.Nx * g.Ny * g.Nz;
    if (n == 0) return;
    k_denoms<T1><<<blocks_for(n), kThreads>>>(dir, x, out, g, k, delta, n);
    FORGE_CUDA_CHECK_LAUNCH("fd_penalty_denoms");
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
