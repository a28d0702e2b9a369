// The CPU-only build's stand-in for this folder's .cu files (GridSelectKernels, SenseKernels): compiled instead of
// them without CUDA, so that the operators calling them link. They are reached only with device-resident data,
// which cannot exist here; each throws forge::cuda_error if it ever is.
#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Operators/cuda/GridSelectKernels.h"
#include "forge/Operators/cuda/SenseKernels.h"

// ---------------------------------------------------------------- GridSelectKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_GridSelectKernels() {
    throw_no_cuda_feature("the device grid kernels (GfftSampled, ToeplitzNormal) are unavailable");
}
}  // namespace

template <typename T1>
void box_pad(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void box_crop(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void gather(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void scatter_sorted(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, forgeComplex<T1>*,
                    uword, uword) {
    no_cuda_GridSelectKernels();
}

#define FORGE_GRID_SELECT_INSTANTIATE(T1)                                                                             \
    template void box_pad<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);   \
    template void box_crop<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);  \
    template void gather<T1>(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword);          \
    template void scatter_sorted<T1>(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, \
                                     forgeComplex<T1>*, uword, uword);
FORGE_GRID_SELECT_INSTANTIATE(float)
FORGE_GRID_SELECT_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- SenseKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_SenseKernels() { throw_no_cuda_feature("device SENSE kernels are unavailable"); }
}  // namespace

template <typename T1>
void sense_expand(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword) {
    no_cuda_SenseKernels();
}
template <typename T1>
void sense_combine(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, bool) {
    no_cuda_SenseKernels();
}

template void sense_expand<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                  uword);
template void sense_expand<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                   uword, uword);
template void sense_combine<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                   uword, bool);
template void sense_combine<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                    uword, uword, bool);

template <typename T1>
void segment_phases(const T1*, uword, const double*, uword, forgeComplex<T1>*) {
    no_cuda_SenseKernels();
}
template void segment_phases<float>(const float*, uword, const double*, uword, forgeComplex<float>*);
template void segment_phases<double>(const double*, uword, const double*, uword, forgeComplex<double>*);

}  // namespace cuda
}  // namespace forge
