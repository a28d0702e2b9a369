#pragma once
// Device finite-difference penalty kernels (declarations free of CUDA headers). Implemented in
// forge/Penalties/cuda/PenaltyKernels.cu; on CPU-only builds forge/Penalties/cuda/NoCuda.cpp throws forge::cuda_error.
// All pointers are device pointers of n = Nx*Ny*Nz elements; launches go to the legacy default stream, like forgeCol
// arithmetic.
#include "forge/Penalties/cuda/FiniteDifferenceKernels.h"
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace cuda {

// out[i] = sum_a psi(|d_a(x)(i)|)   (reduce with device::sum)
template <typename T1>
void fd_penalty_values(const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k, T1 delta);
// out[i] = beta * (C^H diag(w) C x)_i
template <typename T1>
void fd_penalty_gradient(const forgeComplex<T1>* x, forgeComplex<T1>* out, fd::Grid g, fd::Potential k, T1 delta,
                         T1 beta);
// out[i] = sum_a w(|d_a(x)(i)|) |d_a(dir)(i)|^2   (reduce with device::sum)
template <typename T1>
void fd_penalty_denoms(const forgeComplex<T1>* dir, const forgeComplex<T1>* x, T1* out, fd::Grid g, fd::Potential k,
                       T1 delta);

}  // namespace cuda
}  // namespace forge
