// The CPU-only build's stand-in for forge/CUDA's .cu files (device memory, element-wise operations, cuFFT plans),
// and the one definition of the "built without CUDA" error that every subject's NoCuda.cpp throws.
//
// A build without CUDA compiles the same operator sources as a CUDA build (no #ifdef in them); they reach the
// device only after device::available(), which is false here, or through a device-resident vector, which
// cannot exist here (forgeCol::put_on_gpu throws first). The stubs exist so that those sources link; each
// subject's device entry points have theirs beside its .cu files (its cuda/ folder's NoCuda.cpp), so this
// plumbing knows no subject.
#include <string>

#include "forge/CUDA/PlanOptions.h"
#include "forge/CUDA/detail/CudaFft.h"
#include "forge/CUDA/detail/DeviceOpsInstantiations.h"
#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"

// ---------------------------------------------------------------- the shared error
namespace forge {
namespace cuda {
void throw_no_cuda(const std::string& entry, const char* hint) {
    throw cuda_error(entry + ": forge was built without CUDA (" + hint + ")");
}
void throw_no_cuda_feature(const std::string& feature) { throw cuda_error("forge was built without CUDA: " + feature); }
}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- CudaFft
// FftPlan (FftPlan.cpp, compiled in both builds) makes a CudaFftPlan only for device data.
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_CudaFft() { throw_no_cuda("CudaFftPlan", "configure with -DFORGE_CUDA=ON to use cuFFT"); }
}  // namespace
template <typename T1>
CudaFftPlan<T1>::CudaFftPlan(int, int, int, CUstream_st*, int) : Nx_(0), Ny_(0), Nz_(0) {
    no_cuda_CudaFft();
}
template <typename T1>
CudaFftPlan<T1>::~CudaFftPlan() = default;
template <typename T1>
void CudaFftPlan<T1>::exec(T1*, bool, uword) const {
    no_cuda_CudaFft();
}
template <typename T1>
void CudaFftPlan<T1>::centred(const T1*, T1*, bool, uword) const {
    no_cuda_CudaFft();
}
template <typename T1>
uword CudaFftPlan<T1>::max_pass() const {
    no_cuda_CudaFft();
}
template <typename T1>
int CudaFftPlan<T1>::handle_for(int) const {
    no_cuda_CudaFft();
}
template class CudaFftPlan<float>;
template class CudaFftPlan<double>;
bool stream_is_blocking(CUstream_st* stream) {
    if (!stream) return true;
    no_cuda_CudaFft();
}
}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- DeviceMemory
namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda_DeviceMemory(const char* what) {
    cuda::throw_no_cuda(what, "configure with -DFORGE_CUDA=ON on a machine with nvcc to use the GPU");
}
}  // namespace

bool built_with_cuda() { return false; }
bool available() { return false; }
const char* device_name() { return "none"; }
int device_count() { return 0; }
int current_device() { no_cuda_DeviceMemory("current device"); }
void set_device(int) { no_cuda_DeviceMemory("set device"); }
void* allocate(uword) { no_cuda_DeviceMemory("device allocation"); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, uword) { no_cuda_DeviceMemory("copy to device"); }
void copy_to_host(void*, const void*, uword) { no_cuda_DeviceMemory("copy to host"); }
void copy_on_device(void*, const void*, uword) { no_cuda_DeviceMemory("device copy"); }
void synchronize() {}
TransferStats transfer_stats() { return {}; }
void reset_transfer_stats() {}

}  // namespace device
}  // namespace forge

// ---------------------------------------------------------------- DeviceOps
namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda_DeviceOps() { cuda::throw_no_cuda_feature("device arithmetic is unavailable"); }
}  // namespace

template <typename TO, typename TA, typename TB>
void binary(BinOp, const TA*, const TB*, TO*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void binary_scalar(BinOp, const T*, T, T*, uword, bool) {
    no_cuda_DeviceOps();
}
template <typename T>
void fill(T*, T, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void axpby(T, const T*, T, T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void conj(const T*, T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void real_part(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void imag_part(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void abs(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
T dot(const T*, const T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
std::pair<double, double> re_dot2(const T*, const T*, const T*, const T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
real_t<T> norm2_squared(const T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
T sum(const T*, uword) {
    no_cuda_DeviceOps();
}

FORGE_DEVICE_OPS_INSTANTIATE_ALL

}  // namespace device
}  // namespace forge
