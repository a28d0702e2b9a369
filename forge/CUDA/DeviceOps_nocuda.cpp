// CPU build: forgeCol never lives on the GPU (putOnGPU throws first), so these are unreachable
// through the public API; they exist so that code compiled against the same headers links.
#include "forge/CUDA/DeviceOpsInstantiations.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda() { throw cuda_error("forge was built without CUDA: device arithmetic is unavailable"); }
}  // namespace

template <typename TO, typename TA, typename TB>
void binary(BinOp, const TA*, const TB*, TO*, uword) {
    no_cuda();
}
template <typename T>
void binary_scalar(BinOp, const T*, T, T*, uword, bool) {
    no_cuda();
}
template <typename T>
void fill(T*, T, uword) {
    no_cuda();
}
template <typename T>
void axpby(T, const T*, T, T*, uword) {
    no_cuda();
}
template <typename T>
void conj(const T*, T*, uword) {
    no_cuda();
}
template <typename T>
void real_part(const T*, real_t<T>*, uword) {
    no_cuda();
}
template <typename T>
void imag_part(const T*, real_t<T>*, uword) {
    no_cuda();
}
template <typename T>
void abs(const T*, real_t<T>*, uword) {
    no_cuda();
}
template <typename T>
T dot(const T*, const T*, uword) {
    no_cuda();
}
template <typename T>
real_t<T> norm2_squared(const T*, uword) {
    no_cuda();
}
template <typename T>
T sum(const T*, uword) {
    no_cuda();
}

FORGE_DEVICE_OPS_INSTANTIATE_ALL

}  // namespace device
}  // namespace forge
