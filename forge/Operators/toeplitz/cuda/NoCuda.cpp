// The CPU-only build's stand-in for this folder's .cu files (ToeplitzKernels, ToeplitzApply, KernelCombine):
// compiled instead of them without CUDA, so that the Toeplitz normal operator links. Its device paths are reached
// only with device-resident data, which cannot exist here; each throws forge::cuda_error if it ever is.
#include <string>

#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Operators/toeplitz/cuda/KernelCombine.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_ToeplitzKernels(const char* what) {
    throw_no_cuda_feature(std::string("the Toeplitz ") + what + " on the GPU is unavailable");
}
}  // namespace

template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, uword,
                          uword, uword) {
    no_cuda_ToeplitzKernels("kernel expansion");
}

template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

template <typename T1>
void toeplitz_gather_rows(const forgeComplex<T1>*, uword, const unsigned*, const T1*, uword, uword, uword,
                          forgeComplex<T1>*) {
    no_cuda_ToeplitzKernels("pair-data gather");
}

template void toeplitz_gather_rows<float>(const forgeComplex<float>*, uword, const unsigned*, const float*, uword,
                                          uword, uword, forgeComplex<float>*);
template void toeplitz_gather_rows<double>(const forgeComplex<double>*, uword, const unsigned*, const double*, uword,
                                           uword, uword, forgeComplex<double>*);

// ToeplitzApply.h: the device apply's fused kernels and segment-grid plans.
template <typename T1>
void toeplitz_pad_segments(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, const ToeplitzChunk&,
                           CUstream_st*) {
    no_cuda_ToeplitzKernels("segment padding");
}
template <typename T1>
void toeplitz_mix_segments(const forgeComplex<T1>*, const ToeplitzPairTable&, forgeComplex<T1>*, const ToeplitzChunk&,
                           CUstream_st*) {
    no_cuda_ToeplitzKernels("kernel product");
}
template <typename T1>
void toeplitz_mix_segments_any(const forgeComplex<T1>*, const long long*, const forgeComplex<T1>*, forgeComplex<T1>*,
                               const ToeplitzChunk&, CUstream_st*) {
    no_cuda_ToeplitzKernels("kernel product");
}
template <typename T1>
void toeplitz_crop_segments(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, const ToeplitzChunk&,
                            CUstream_st*) {
    no_cuda_ToeplitzKernels("segment crop");
}
template <typename T1>
void toeplitz_zero(forgeComplex<T1>*, uword, CUstream_st*) {
    no_cuda_ToeplitzKernels("scratch zeroing");
}
template <typename T1>
ToeplitzFft<T1>::ToeplitzFft(const ToeplitzChunk&, CUstream_st*) {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}
template <typename T1>
ToeplitzFft<T1>::~ToeplitzFft() = default;
template <typename T1>
void ToeplitzFft<T1>::forward(forgeComplex<T1>*, forgeComplex<T1>*) const {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}
template <typename T1>
void ToeplitzFft<T1>::backward(forgeComplex<T1>*) const {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}

#define FORGE_NO_CUDA_TOEPLITZ_APPLY(T1)                                                                            \
    template void toeplitz_pad_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,    \
                                            const ToeplitzChunk&, CUstream_st*);                                    \
    template void toeplitz_mix_segments<T1>(const forgeComplex<T1>*, const ToeplitzPairTable&, forgeComplex<T1>*,   \
                                            const ToeplitzChunk&, CUstream_st*);                                    \
    template void toeplitz_mix_segments_any<T1>(const forgeComplex<T1>*, const long long*, const forgeComplex<T1>*, \
                                                forgeComplex<T1>*, const ToeplitzChunk&, CUstream_st*);             \
    template void toeplitz_crop_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,   \
                                             const ToeplitzChunk&, CUstream_st*);                                   \
    template void toeplitz_zero<T1>(forgeComplex<T1>*, uword, CUstream_st*);                                        \
    template class ToeplitzFft<T1>;
FORGE_NO_CUDA_TOEPLITZ_APPLY(float)
FORGE_NO_CUDA_TOEPLITZ_APPLY(double)
#undef FORGE_NO_CUDA_TOEPLITZ_APPLY
template <typename T1>
void toeplitz_combine_kernels(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, uword,
                              uword, uword, bool) {
    no_cuda_ToeplitzKernels("kernel combination");
}
template void toeplitz_combine_kernels<float>(const forgeComplex<float>*, const forgeComplex<float>*,
                                              forgeComplex<float>*, uword, uword, uword, uword, uword, bool);
template void toeplitz_combine_kernels<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                               forgeComplex<double>*, uword, uword, uword, uword, uword, bool);

}  // namespace cuda
}  // namespace forge
