#pragma once
// Internal to forge's .cu files: checked CUDA calls. Every runtime call goes through FORGE_CUDA_CHECK,
// and every kernel launch is followed by FORGE_CUDA_CHECK_LAUNCH, so a failure throws forge::cuda_error
// naming the call (or kernel), the error, file and line.
#include <cuda_runtime.h>

#include "forge/Core/Config.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
}  // namespace cuda
namespace device {
namespace detail {
// Adds one host<->device copy of vector data to the counters behind device::transfer_stats().
void record_transfer(bool to_device, uword bytes);
}  // namespace detail
}  // namespace device
}  // namespace forge

#define FORGE_CUDA_CHECK(call)                                                   \
    do {                                                                         \
        cudaError_t forge_err_ = (call);                                         \
        if (forge_err_ != cudaSuccess)                                           \
            ::forge::cuda::throw_cuda_error(forge_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define FORGE_CUDA_CHECK_LAUNCH(kernel_name)                                            \
    do {                                                                                \
        cudaError_t forge_err_ = cudaGetLastError();                                    \
        if (forge_err_ != cudaSuccess)                                                  \
            ::forge::cuda::throw_cuda_error(forge_err_, "launch of " kernel_name, __FILE__, __LINE__); \
    } while (0)
