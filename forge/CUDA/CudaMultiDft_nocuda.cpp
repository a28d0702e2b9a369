// CPU build: CudaMultiDft cannot exist without CUDA. Constructing one throws forge::cuda_error; the other
// members are unreachable but defined so that code written against the header links.
#include "forge/CUDA/CudaMultiDft.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda(const char* where) {
    throw cuda_error(std::string(where) +
                     ": forge was built without CUDA (configure with -DFORGE_CUDA=ON to use the GPU)");
}
}  // namespace

struct CudaMultiDft::Part {};
struct CudaMultiDft::Home {};

void CudaMultiDft::check_devices(const char* where, const std::vector<int>& devices) {
    if (devices.empty())
        throw invalid_argument(std::string(where) + ": the device list is empty; give one or more device numbers");
    no_cuda(where);
}
CudaMultiDft::CudaMultiDft(const DftGeometry&, const std::vector<int>& devices) {
    check_devices("CudaMultiDft", devices);
}
CudaMultiDft::~CudaMultiDft() = default;
CudaMultiDft::Home& CudaMultiDft::home(int) const { no_cuda("CudaMultiDft"); }
void CudaMultiDft::execute(Direction, const float*, float*, uword) const { no_cuda("CudaMultiDft::execute"); }
void CudaMultiDft::synchronize() const { no_cuda("CudaMultiDft::synchronize"); }

}  // namespace cuda
}  // namespace forge
