// CUDA kernels of the proximal penalties: one thread per entry or pixel, each writing only its own outputs (no
// atomics, so the results are deterministic). The per-element formulas are the FORGE_HD functions the host loops
// use (ProxKernels.h).
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Penalties/cuda/ProxDevice.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uword n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }
__device__ uword thread_index() { return uword(blockIdx.x) * blockDim.x + threadIdx.x; }

template <typename T1>
__global__ void k_soft(forgeComplex<T1>* x, uword n, T1 tau, prox::Dims d, bool skip_box) {
    const uword i = thread_index();
    if (i < n && !(skip_box && prox::in_box(d, i))) x[i] = prox::soft(x[i], tau);
}
template <typename T1>
__global__ void k_abs(const forgeComplex<T1>* x, T1* out, uword n, prox::Dims d, bool skip_box) {
    const uword i = thread_index();
    if (i < n) out[i] = (skip_box && prox::in_box(d, i)) ? T1(0) : prox::p_sqrt(prox::abs2(x[i]));
}
template <typename T1>
__global__ void k_wavelet(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword n, prox::Dims d, int axis,
                          prox::Filters<T1> f, bool analysis) {
    const uword i = thread_index();
    if (i < n) out[i] = analysis ? prox::analysis_at(i, in, d, axis, f) : prox::synthesis_at(i, in, d, axis, f);
}
template <typename T1>
__global__ void k_shift(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword n, prox::Dims d, prox::Shift s,
                        bool forward) {
    const uword i = thread_index();
    if (i < n) out[prox::shifted_index(d, i, s, forward)] = in[i];
}
template <typename T1>
__global__ void k_tv_primal(const forgeComplex<T1>* v, const forgeComplex<T1>* r, forgeComplex<T1>* u, T1 tau,
                            prox::TvGrid g) {
    const uword i = thread_index();
    if (i < g.n_pixels) u[i] = v[i] - prox::div_at(g, i, r) * tau;
}
template <typename T1>
__global__ void k_tv_dual(const forgeComplex<T1>* u, forgeComplex<T1>* p, forgeComplex<T1>* r, T1 c, T1 beta,
                          bool isotropic, prox::TvGrid g) {
    const uword i = thread_index();
    if (i < g.n_pixels) prox::tv_dual_step_at(g, i, u, p, r, c, beta, isotropic);
}
template <typename T1>
__global__ void k_tv_values(const forgeComplex<T1>* u, T1* out, bool isotropic, prox::TvGrid g) {
    const uword i = thread_index();
    if (i < g.n_pixels) out[i] = prox::tv_value_at(g, i, u, isotropic);
}

uword grid_size(const prox::Dims& d) { return d.n[0] * d.n[1] * d.n[2]; }

}  // namespace

template <typename T1>
void prox_soft_threshold(forgeComplex<T1>* x, uword n, T1 tau, prox::Dims d, bool skip_box) {
    if (n == 0) return;
    k_soft<T1><<<blocks_for(n), kThreads>>>(x, n, tau, d, skip_box);
    FORGE_CUDA_CHECK_LAUNCH("prox_soft_threshold");
}
template <typename T1>
void prox_abs_values(const forgeComplex<T1>* x, T1* out, uword n, prox::Dims d, bool skip_box) {
    if (n == 0) return;
    k_abs<T1><<<blocks_for(n), kThreads>>>(x, out, n, d, skip_box);
    FORGE_CUDA_CHECK_LAUNCH("prox_abs_values");
}
template <typename T1>
void prox_wavelet_pass(const forgeComplex<T1>* in, forgeComplex<T1>* out, prox::Dims d, int axis, prox::Filters<T1> f,
                       bool analysis) {
    const uword n = grid_size(d);
    if (n == 0) return;
    k_wavelet<T1><<<blocks_for(n), kThreads>>>(in, out, n, d, axis, f, analysis);
    FORGE_CUDA_CHECK_LAUNCH("prox_wavelet_pass");
}
template <typename T1>
void prox_cyclic_shift(const forgeComplex<T1>* in, forgeComplex<T1>* out, prox::Dims d, prox::Shift s, bool forward) {
    const uword n = grid_size(d);
    if (n == 0) return;
    k_shift<T1><<<blocks_for(n), kThreads>>>(in, out, n, d, s, forward);
    FORGE_CUDA_CHECK_LAUNCH("prox_cyclic_shift");
}
template <typename T1>
void prox_tv_primal(const forgeComplex<T1>* v, const forgeComplex<T1>* r, forgeComplex<T1>* u, T1 tau, prox::TvGrid g) {
    if (g.n_pixels == 0) return;
    k_tv_primal<T1><<<blocks_for(g.n_pixels), kThreads>>>(v, r, u, tau, g);
    FORGE_CUDA_CHECK_LAUNCH("prox_tv_primal");
}
template <typename T1>
void prox_tv_dual_step(const forgeComplex<T1>* u, forgeComplex<T1>* p, forgeComplex<T1>* r, T1 c, T1 beta,
                       bool isotropic, prox::TvGrid g) {
    if (g.n_pixels == 0) return;
    k_tv_dual<T1><<<blocks_for(g.n_pixels), kThreads>>>(u, p, r, c, beta, isotropic, g);
    FORGE_CUDA_CHECK_LAUNCH("prox_tv_dual_step");
}
template <typename T1>
void prox_tv_values(const forgeComplex<T1>* u, T1* out, bool isotropic, prox::TvGrid g) {
    if (g.n_pixels == 0) return;
    k_tv_values<T1><<<blocks_for(g.n_pixels), kThreads>>>(u, out, isotropic, g);
    FORGE_CUDA_CHECK_LAUNCH("prox_tv_values");
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
