#pragma once
// Device kernels of the proximal penalties (declarations free of CUDA headers). Implemented in
// forge/Penalties/cuda/ProxKernels.cu with the per-element functions of ProxKernels.h; on CPU-only builds
// forge/Penalties/cuda/NoCuda.cpp throws forge::cuda_error. All pointers are device pointers; launches go to the
// legacy default stream, like forgeCol arithmetic.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"
#include "forge/Penalties/cuda/ProxKernels.h"

namespace forge {
namespace cuda {

// x[i] = soft(x[i], tau) for the n entries, except (skip_box) those inside the box d.len.
template <typename T1>
void prox_soft_threshold(forgeComplex<T1>* x, uword n, T1 tau, prox::Dims d, bool skip_box);
// out[i] = |x[i]|, 0 inside the box d.len when skip_box (reduce with device::sum).
template <typename T1>
void prox_abs_values(const forgeComplex<T1>* x, T1* out, uword n, prox::Dims d, bool skip_box);
// One analysis (or synthesis) pass of the periodic filter bank along 'axis' of the box d.len (out != in).
template <typename T1>
void prox_wavelet_pass(const forgeComplex<T1>* in, forgeComplex<T1>* out, prox::Dims d, int axis, prox::Filters<T1> f,
                       bool analysis);
// out[shifted_index(i)] = in[i] (forward) or its inverse, on the full grid d.n.
template <typename T1>
void prox_cyclic_shift(const forgeComplex<T1>* in, forgeComplex<T1>* out, prox::Dims d, prox::Shift s, bool forward);
// u = v - tau D^H r.
template <typename T1>
void prox_tv_primal(const forgeComplex<T1>* v, const forgeComplex<T1>* r, forgeComplex<T1>* u, T1 tau, prox::TvGrid g);
// The dual step of tv_dual_step_at at every pixel.
template <typename T1>
void prox_tv_dual_step(const forgeComplex<T1>* u, forgeComplex<T1>* p, forgeComplex<T1>* r, T1 c, T1 beta,
                       bool isotropic, prox::TvGrid g);
// out[i] = TV's value at pixel i (reduce with device::sum).
template <typename T1>
void prox_tv_values(const forgeComplex<T1>* u, T1* out, bool isotropic, prox::TvGrid g);

}  // namespace cuda
}  // namespace forge
