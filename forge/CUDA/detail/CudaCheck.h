#pragma once
// Internal to forge's .cu files (detail/ is not installed: this header needs cuda_runtime.h): checked CUDA
// calls. Every runtime call goes through FORGE_CUDA_CHECK, and every kernel launch is followed by
// FORGE_CUDA_CHECK_LAUNCH, so a failure throws forge::cuda_error naming the call (or kernel), the error, file
// and line.
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
// The stream-ordered memory pool every device::allocate on 'device' draws from (DeviceBuffer, forgeCol), in
// order on the device's legacy default stream. Plans take their per-call scratch from the same pool, ordered on
// their own streams.
struct DevicePool {
    cudaMemPool_t pool = nullptr;
};
const DevicePool& device_pool(int device);
}  // namespace detail
}  // namespace device
}  // namespace forge

#define FORGE_CUDA_CHECK(call)                                                                                 \
    do {                                                                                                       \
        cudaError_t forge_err_ = (call);                                                                       \
        if (forge_err_ != cudaSuccess) ::forge::cuda::throw_cuda_error(forge_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define FORGE_CUDA_CHECK_LAUNCH(kernel_name)                                                           \
    do {                                                                                               \
        cudaError_t forge_err_ = cudaGetLastError();                                                   \
        if (forge_err_ != cudaSuccess)                                                                 \
            ::forge::cuda::throw_cuda_error(forge_err_, "launch of " kernel_name, __FILE__, __LINE__); \
    } while (0)

#include <string>

namespace forge {
namespace cuda {
// The device a plan lives on: options.device, or the current device for -1. Throws
// forge::invalid_argument naming options.device and the valid range otherwise.
inline int resolve_device(const char* where, int device) {
    int count = 0;
    FORGE_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device == -1) {
        int current = 0;
        FORGE_CUDA_CHECK(cudaGetDevice(&current));
        return current;
    }
    if (device < 0 || device >= count) {
        throw invalid_argument(std::string(where) + ": options.device = " + std::to_string(device) +
                               "; expected -1 (the current device) or a device number in [0, " + std::to_string(count) +
                               ")");
    }
    return device;
}

// Makes a plan's device current for the guard's lifetime and restores the caller's device after.
class DeviceGuard {
public:
    explicit DeviceGuard(int device) {
        FORGE_CUDA_CHECK(cudaGetDevice(&previous_));
        if (device != previous_) {
            FORGE_CUDA_CHECK(cudaSetDevice(device));
            switched_ = true;
        }
    }
    ~DeviceGuard() {
        if (switched_ && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = 0;
    bool switched_ = false;
};

// Orders a non-blocking stream with the legacy default stream both ways for the guard's lifetime: on entry the
// stream waits for the work queued on the legacy stream (where forgeCol data is made and device::allocate and
// release order DeviceBuffer blocks), on exit the legacy stream waits for the stream's work, so that a block it
// writes is not freed and handed out again under it. Nothing for the legacy stream and blocking streams, which
// CUDA orders with it already. The stream's device must be current.
class LegacyOrder {
public:
    explicit LegacyOrder(cudaStream_t stream) {
        if (!stream) return;
        unsigned flags = 0;
        FORGE_CUDA_CHECK(cudaStreamGetFlags(stream, &flags));
        if (!(flags & cudaStreamNonBlocking)) return;
        FORGE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
        const cudaError_t err = cudaEventRecord(event_, cudaStreamLegacy);
        const cudaError_t wait = err == cudaSuccess ? cudaStreamWaitEvent(stream, event_, 0) : err;
        if (wait != cudaSuccess) {
            cudaEventDestroy(event_);
            FORGE_CUDA_CHECK(wait);
        }
        stream_ = stream;
    }
    ~LegacyOrder() {
        if (!stream_) return;
        if (cudaEventRecord(event_, stream_) != cudaSuccess ||
            cudaStreamWaitEvent(cudaStreamLegacy, event_, 0) != cudaSuccess)
            cudaGetLastError();
        if (cudaEventDestroy(event_) != cudaSuccess) cudaGetLastError();
    }
    LegacyOrder(const LegacyOrder&) = delete;
    LegacyOrder& operator=(const LegacyOrder&) = delete;

private:
    cudaStream_t stream_ = nullptr;
    cudaEvent_t event_ = nullptr;
};
}  // namespace cuda
}  // namespace forge
