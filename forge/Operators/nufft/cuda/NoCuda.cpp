// The CPU-only build's stand-in for this folder's .cu files (CudaNufftPipeline): compiled instead of them without
// CUDA, so that Gnufft links. Gnufft makes a pipeline only after device::available(), which is false here;
// constructing one throws forge::cuda_error, so no accessor is reached.
#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_CudaNufftPipeline() { throw_no_cuda("CudaNufftPipeline", "configure with -DFORGE_CUDA=ON"); }
}  // namespace
struct CudaNufftPipeline::Impl {};
CudaNufftPipeline::CudaNufftPipeline(const NufftGeometry&, const PlanOptions&) { no_cuda_CudaNufftPipeline(); }
CudaNufftPipeline::~CudaNufftPipeline() = default;
void CudaNufftPipeline::set_points(uword, const float*, const float*, const float*) { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::set_points(uword, const int* const[3], const float* const[3]) { no_cuda_CudaNufftPipeline(); }
bool CudaNufftPipeline::set_trajectory(uword, const float* const[3], bool) { no_cuda_CudaNufftPipeline(); }
bool CudaNufftPipeline::has_trajectory() const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::copy_trajectory(float* const[3]) const { no_cuda_CudaNufftPipeline(); }
CudaNufftPipeline::SortTimes CudaNufftPipeline::sort_times() const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::execute(Direction, const float*, float*, uword) const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::synchronize() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::n1() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::pass_size(uword) const { no_cuda_CudaNufftPipeline(); }
CUstream_st* CudaNufftPipeline::stream() const { no_cuda_CudaNufftPipeline(); }
int CudaNufftPipeline::device() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::max_batch() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::num_sectors() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::sector_entries() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::num_subproblems() const { no_cuda_CudaNufftPipeline(); }
}  // namespace cuda
}  // namespace forge
