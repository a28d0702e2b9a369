// CUDA kernels of SENSE / pcSENSE: coil expansion (S_c .* x for all coils in one launch) and the
// conjugate-map coil combination (one thread per pixel, coils summed in a register; no atomics).
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/cuda/SenseKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

template <typename T1>
__global__ void k_expand(const forgeComplex<T1>* __restrict__ x, const forgeComplex<T1>* __restrict__ maps,
                         forgeComplex<T1>* __restrict__ out, uword n2, uword total) {
    uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < total) out[i] = maps[i] * x[i % n2];
}

template <typename T1>
__global__ void k_combine(const forgeComplex<T1>* __restrict__ imgs, const forgeComplex<T1>* __restrict__ maps,
                          forgeComplex<T1>* __restrict__ out, uword n2, uword nc, bool accumulate) {
    uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n2) return;
    forgeComplex<T1> s = accumulate ? out[k] : forgeComplex<T1>(0, 0);
    for (uword c = 0; c < nc; ++c) s += conj(maps[c * n2 + k]) * imgs[c * n2 + k];
    out[k] = s;
}

template <typename T1>
__global__ void k_segment_phases(const T1* __restrict__ fm, uword n2, const double* __restrict__ tau, uword S,
                                 forgeComplex<T1>* __restrict__ out) {
    const uword total = n2 * S;
    for (uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += uword(gridDim.x) * blockDim.x) {
        double s, c;
        sincos(-double(fm[i % n2]) * tau[i / n2], &s, &c);
        out[i] = forgeComplex<T1>(T1(c), T1(s));
    }
}

}  // namespace

template <typename T1>
void segment_phases(const T1* fm, uword n2, const double* tau, uword S, forgeComplex<T1>* out) {
    const uword total = n2 * S;
    if (total == 0) return;
    const uword blocks = (total + kThreads - 1) / kThreads;
    k_segment_phases<T1><<<unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16), kThreads>>>(fm, n2, tau, S, out);
    FORGE_CUDA_CHECK_LAUNCH("segment_phases");
}

template <typename T1>
void sense_expand(const forgeComplex<T1>* x, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2, uword nc) {
    const uword total = n2 * nc;
    if (total == 0) return;
    k_expand<T1><<<unsigned((total + kThreads - 1) / kThreads), kThreads>>>(x, maps, out, n2, total);
    FORGE_CUDA_CHECK_LAUNCH("sense_expand");
}

template <typename T1>
void sense_combine(const forgeComplex<T1>* imgs, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2,
                   uword nc, bool accumulate) {
    if (n2 == 0) return;
    k_combine<T1><<<unsigned((n2 + kThreads - 1) / kThreads), kThreads>>>(imgs, maps, out, n2, nc, accumulate);
    FORGE_CUDA_CHECK_LAUNCH("sense_combine");
}

template void sense_expand<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                  uword);
template void sense_expand<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                   uword, uword);
template void sense_combine<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                   uword, bool);
template void sense_combine<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                    uword, uword, bool);

template void segment_phases<float>(const float*, uword, const double*, uword, forgeComplex<float>*);
template void segment_phases<double>(const double*, uword, const double*, uword, forgeComplex<double>*);

}  // namespace cuda
}  // namespace forge
