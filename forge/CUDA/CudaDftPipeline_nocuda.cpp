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

CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions&) {
    check_sizes("CudaDftPipeline", geom.n1, geom.n2);
    no_cuda();
}
CudaDftPipeline::~CudaDftPipeline() = default;
void CudaDftPipeline::set_points(const float*, const float*, const float*, const float*, uword) { no_cuda(); }
std::shared_ptr<const DftPoints> CudaDftPipeline::upload_points(const float*, const float*, const float*, const float*,
                                                                uword) const {
    no_cuda();
}
void CudaDftPipeline::set_points(std::shared_ptr<const DftPoints>) { no_cuda(); }
std::shared_ptr<const DftPoints> CudaDftPipeline::points() const { no_cuda(); }
void CudaDftPipeline::execute(Direction, const float*, float*, uword) { no_cuda(); }
void CudaDftPipeline::execute(const DftPoints&, Direction, const float*, float*, uword) const { no_cuda(); }
void CudaDftPipeline::execute_host(Direction, const float*, float*, uword) { no_cuda(); }
void CudaDftPipeline::synchronize() const { no_cuda(); }
uword CudaDftPipeline::numSamples() const { no_cuda(); }
uword CudaDftPipeline::point_uploads() const { no_cuda(); }
const char* CudaDftPipeline::batch_kernel() const { no_cuda(); }

}  // namespace cuda
}  // namespace forge
