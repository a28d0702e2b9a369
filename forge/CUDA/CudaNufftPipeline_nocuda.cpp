// CPU build of forge/CUDA/CudaNufftPipeline.h: there is no device; constructing a pipeline says so.
#include "forge/CUDA/CudaNufftPipeline.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw cuda_error("CudaNufftPipeline: forge was built without CUDA (configure with -DFORGE_CUDA=ON)");
}
}  // namespace
struct CudaNufftPipeline::Impl {};
CudaNufftPipeline::CudaNufftPipeline(const NufftGeometry&) { no_cuda(); }
CudaNufftPipeline::~CudaNufftPipeline() = default;
void CudaNufftPipeline::forward_device(const float*, float*) const { no_cuda(); }
void CudaNufftPipeline::adjoint_device(const float*, float*) const { no_cuda(); }
long long CudaNufftPipeline::num_sectors() const { return 0; }
long long CudaNufftPipeline::sector_entries() const { return 0; }
}  // namespace cuda
}  // namespace forge
