// CPU build: unreachable through the public API (forgeCol never lives on the GPU); fails loudly if reached.
#include "forge/CUDA/ToeplitzKernels.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {

template <typename T1>
void toeplitz_mix(const forgeComplex<T1>*, const long long*, const forgeComplex<T1>*, forgeComplex<T1>*, uword,
                  uword, uword) {
    throw cuda_error("forge was built without CUDA: the Toeplitz kernel product on the GPU is unavailable");
}

template void toeplitz_mix<float>(const forgeComplex<float>*, const long long*, const forgeComplex<float>*,
                                  forgeComplex<float>*, uword, uword, uword);
template void toeplitz_mix<double>(const forgeComplex<double>*, const long long*, const forgeComplex<double>*,
                                   forgeComplex<double>*, uword, uword, uword);

template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, uword,
                          uword, uword) {
    throw cuda_error("forge was built without CUDA: the Toeplitz kernel expansion on the GPU is unavailable");
}

template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

}  // namespace cuda
}  // namespace forge
