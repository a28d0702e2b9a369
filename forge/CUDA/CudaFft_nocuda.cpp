// CPU build of forge/CUDA/CudaFft.h: there is no device; constructing a plan says so clearly.
#include "forge/CUDA/CudaFft.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw cuda_error("CudaFftPlan: forge was built without CUDA (configure with -DFORGE_CUDA=ON to use cuFFT)");
}
}  // namespace
template <typename T1>
CudaFftPlan<T1>::CudaFftPlan(int, int, int, CUstream_st*) : Nx_(0), Ny_(0), Nz_(0) {
    no_cuda();
}
template <typename T1>
CudaFftPlan<T1>::~CudaFftPlan() = default;
template <typename T1>
void CudaFftPlan<T1>::exec(T1*, bool, uword) const {
    no_cuda();
}
template <typename T1>
void CudaFftPlan<T1>::centred(const T1*, T1*, bool, uword) const {
    no_cuda();
}
template <typename T1>
uword CudaFftPlan<T1>::max_pass() const {
    no_cuda();
}
template <typename T1>
int CudaFftPlan<T1>::handle_for(int) const {
    no_cuda();
}
template class CudaFftPlan<float>;
template class CudaFftPlan<double>;
}  // namespace cuda
}  // namespace forge
