// CPU build: CudaDftPipeline cannot exist without CUDA. Constructing one throws forge::cuda_error;
// the other members are unreachable but defined so that code written against the header links.
#include "forge/CUDA/CudaDftPipeline.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw cuda_error("CudaDftPipeline: forge was built without CUDA (configure with -DFORGE_CUDA=ON to use the GPU)");
}
}  // namespace

CudaDftPipeline::CudaDftPipeline(const float*, const float*, const float*, const float*, const float*, const float*,
                                 const float*, const float*, uword, uword) {
    no_cuda();
}
CudaDftPipeline::CudaDftPipeline(const float*, const float*, const float*, const float*, const float*, const float*,
                                 const float*, const float*, const float*, const float*, const float*, uword, uword,
                                 uword, uword, uword) {
    no_cuda();
}
CudaDftPipeline::~CudaDftPipeline() = default;
void CudaDftPipeline::forward_device(const float*, float*) { no_cuda(); }
void CudaDftPipeline::adjoint_device(const float*, float*) { no_cuda(); }
void CudaDftPipeline::forward_device_batch(const float*, float*, uword) { no_cuda(); }
void CudaDftPipeline::adjoint_device_batch(const float*, float*, uword) { no_cuda(); }
void CudaDftPipeline::forward(const float*, float*) { no_cuda(); }
void CudaDftPipeline::adjoint(const float*, float*) { no_cuda(); }
void CudaDftPipeline::synchronize() const { no_cuda(); }

}  // namespace cuda
}  // namespace forge
