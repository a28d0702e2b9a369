#pragma once
// The CPU-only build's one wording of "no device". Every folder with .cu files has a NoCuda.cpp beside them,
// compiled instead of them without CUDA, whose stubs throw through these two functions so that all of them say
// the same thing. Defined in forge/CUDA/NoCuda.cpp (CPU-only builds only); private: detail/ is not installed.
#include <string>

namespace forge {
namespace cuda {

// Throws forge::cuda_error("<entry>: forge was built without CUDA (<hint>)"); entry names the entry point reached.
[[noreturn]] void throw_no_cuda(const std::string& entry,
                                const char* hint = "configure with -DFORGE_CUDA=ON to use the GPU");

// Throws forge::cuda_error("forge was built without CUDA: <feature>"), e.g. "device SENSE kernels are unavailable".
[[noreturn]] void throw_no_cuda_feature(const std::string& feature);

}  // namespace cuda
}  // namespace forge
