// CPU build: unreachable through the public API (forgeCol never lives on the GPU); fails loudly if reached.
#include "forge/CUDA/GridSelectKernels.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw cuda_error("forge was built without CUDA: device GfftSampled kernels are unavailable");
}
}  // namespace

template <typename T1>
void box_pad(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword) {
    no_cuda();
}
template <typename T1>
void box_crop(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword) {
    no_cuda();
}
template <typename T1>
void gather(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword) {
    no_cuda();
}
template <typename T1>
void scatter_sorted(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, forgeComplex<T1>*,
                    uword, uword) {
    no_cuda();
}

#define FORGE_GRID_SELECT_INSTANTIATE(T1)                                                                             \
    template void box_pad<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword);                 \
    template void box_crop<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword);                \
    template void gather<T1>(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword);          \
    template void scatter_sorted<T1>(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, \
                                     forgeComplex<T1>*, uword, uword);
FORGE_GRID_SELECT_INSTANTIATE(float)
FORGE_GRID_SELECT_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge
