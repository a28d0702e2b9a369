// CPU build: unreachable through the public API (forgeCol never lives on the GPU); fails loudly if reached.
#include "forge/CUDA/SenseKernels.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() { throw cuda_error("forge was built without CUDA: device SENSE kernels are unavailable"); }
}  // namespace

template <typename T1>
void sense_expand(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword) {
    no_cuda();
}
template <typename T1>
void sense_combine(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, bool) {
    no_cuda();
}

template void sense_expand<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                  uword);
template void sense_expand<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                   uword, uword);
template void sense_combine<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                   uword, bool);
template void sense_combine<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                    uword, uword, bool);

}  // namespace cuda
}  // namespace forge
