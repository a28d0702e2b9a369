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
CudaNufftPipeline::CudaNufftPipeline(const NufftGeometry&, const PlanOptions&) { no_cuda(); }
CudaNufftPipeline::~CudaNufftPipeline() = default;
void CudaNufftPipeline::set_points(uword, const float*, const float*, const float*) { no_cuda(); }
void CudaNufftPipeline::set_points(uword, const int* const[3], const float* const[3]) { no_cuda(); }
void CudaNufftPipeline::execute(Direction, const float*, float*, uword) const { no_cuda(); }
void CudaNufftPipeline::synchronize() const { no_cuda(); }
uword CudaNufftPipeline::n1() const { return 0; }
uword CudaNufftPipeline::pass_size(uword) const { return 0; }
CUstream_st* CudaNufftPipeline::stream() const { return nullptr; }
int CudaNufftPipeline::device() const { return -1; }
uword CudaNufftPipeline::max_batch() const { return 0; }
long long CudaNufftPipeline::num_sectors() const { return 0; }
long long CudaNufftPipeline::sector_entries() const { return 0; }
}  // namespace cuda
}  // namespace forge
