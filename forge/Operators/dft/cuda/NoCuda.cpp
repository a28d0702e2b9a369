// The CPU-only build's stand-in for this folder's .cu files (CudaDftPipeline, CudaMultiDft): compiled instead of
// them without CUDA, so that the exact DFT's operators link. Gdft and GdftR2 make a plan only after
// device::available(), which is false here; constructing one checks its arguments as with CUDA, then throws
// forge::cuda_error, and any other entry point fails loudly if it is ever reached.
#include <string>
#include <vector>

#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/cuda/CudaMultiDft.h"

namespace forge {
namespace cuda {
namespace {
// 'what' names the entry point.
[[noreturn]] void no_cuda_dft(const char* what) { throw_no_cuda(what); }
}  // namespace

// ---------------------------------------------------------------- CudaDftPipeline
CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options) {
    check_kernel("CudaDftPipeline: options.dft_kernel", options.dft_kernel);
    check_sizes("CudaDftPipeline", geom.n1, geom.n2);
    no_cuda_dft("CudaDftPipeline");
}
CudaDftPipeline::~CudaDftPipeline() = default;
void CudaDftPipeline::set_points(const float*, const float*, const float*, const float*, uword) {
    no_cuda_dft("CudaDftPipeline::set_points");
}
std::shared_ptr<const DftPoints> CudaDftPipeline::upload_points(const float*, const float*, const float*, const float*,
                                                                uword) const {
    no_cuda_dft("CudaDftPipeline::upload_points");
}
void CudaDftPipeline::set_points(std::shared_ptr<const DftPoints>) { no_cuda_dft("CudaDftPipeline::set_points"); }
std::shared_ptr<const DftPoints> CudaDftPipeline::points() const { no_cuda_dft("CudaDftPipeline::points"); }
void CudaDftPipeline::execute(Direction, const float*, float*, uword) { no_cuda_dft("CudaDftPipeline::execute"); }
void CudaDftPipeline::execute(const DftPoints&, Direction, const float*, float*, uword) const {
    no_cuda_dft("CudaDftPipeline::execute");
}
void CudaDftPipeline::execute_host(Direction, const float*, float*, uword) {
    no_cuda_dft("CudaDftPipeline::execute_host");
}
void CudaDftPipeline::synchronize() const { no_cuda_dft("CudaDftPipeline::synchronize"); }
uword CudaDftPipeline::num_samples() const { no_cuda_dft("CudaDftPipeline::num_samples"); }
uword CudaDftPipeline::point_uploads() const { no_cuda_dft("CudaDftPipeline::point_uploads"); }
const char* CudaDftPipeline::batch_kernel() const { no_cuda_dft("CudaDftPipeline::batch_kernel"); }

// ---------------------------------------------------------------- CudaMultiDft
struct CudaMultiDft::Part {};
struct CudaMultiDft::Home {};

// The list's own checks first (as with CUDA), then "built without CUDA".
void CudaMultiDft::check_devices(const char* where, const std::vector<int>& devices) {
    if (devices.empty())
        throw invalid_argument(std::string(where) + ": the device list is empty; give one or more device numbers");
    no_cuda_dft(where);
}
CudaMultiDft::CudaMultiDft(const DftGeometry&, const std::vector<int>& devices, DftKernel kernel) {
    check_devices("CudaMultiDft", devices);
    CudaDftPipeline::check_kernel("CudaMultiDft: kernel", kernel);
}
CudaMultiDft::~CudaMultiDft() = default;
CudaMultiDft::Home& CudaMultiDft::home(int) const { no_cuda_dft("CudaMultiDft"); }
void CudaMultiDft::execute(Direction, const float*, float*, uword) const { no_cuda_dft("CudaMultiDft::execute"); }
void CudaMultiDft::synchronize() const { no_cuda_dft("CudaMultiDft::synchronize"); }

}  // namespace cuda
}  // namespace forge
