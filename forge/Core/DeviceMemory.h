#pragma once
// Device memory without CUDA headers. On CUDA builds these are implemented in
// forge/CUDA/DeviceMemory.cu; on CPU builds every entry point except the queries throws
// forge::cuda_error("... built without CUDA ..."), so user code compiles identically either way.
#include <cstdint>
#include <utility>

#include "forge/Core/Config.h"

namespace forge {
namespace device {

bool built_with_cuda();
// True when a CUDA device can be used now (false on CPU builds and on machines without a GPU).
bool available();
// Human-readable name of the current device ("none" when unavailable).
const char* device_name();
// CUDA devices this process can use (0 on CPU builds and on machines without a GPU).
int device_count();
// The device current for the calling thread, and making one current. set_device throws
// forge::invalid_argument for a number outside [0, device_count()) and forge::cuda_error without a device.
int current_device();
void set_device(int device);

// Allocations throw forge::cuda_error naming the byte count (and the free/total memory) on failure.
// A request for 0 bytes returns nullptr but still needs a usable device, like any other: "on the GPU"
// then means the same thing for an empty vector as for a full one.
void* allocate(uword bytes);
void release(void* ptr) noexcept;

// Blocking copies of vector data; each one is counted in transfer_stats().
void copy_to_device(void* dst, const void* src, uword bytes);
void copy_to_host(void* dst, const void* src, uword bytes);
// Device-to-device copy (not a host transfer; not counted).
void copy_on_device(void* dst, const void* src, uword bytes);
// Waits for all work queued on the device by this process (returns at once when there is no device).
void synchronize();

// Host<->device copies of vector data made through copy_to_device/copy_to_host, since the last
// reset. Solvers on device-resident data must leave these unchanged inside their loops.
struct TransferStats {
    std::uint64_t host_to_device_count = 0;
    std::uint64_t host_to_device_bytes = 0;
    std::uint64_t device_to_host_count = 0;
    std::uint64_t device_to_host_bytes = 0;
};
TransferStats transfer_stats();
void reset_transfer_stats();

}  // namespace device

// Owning, move-only handle to a device allocation (RAII: freed in the destructor).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    // Throws forge::cuda_error without a usable device, even for 0 bytes (see device::allocate).
    explicit DeviceBuffer(uword bytes) : ptr_(device::allocate(bytes)), bytes_(bytes) {}
    ~DeviceBuffer() { device::release(ptr_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            device::release(ptr_);
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    void* get() const { return ptr_; }
    template <typename T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    uword bytes() const { return bytes_; }
    explicit operator bool() const { return ptr_ != nullptr; }
    void reset() { *this = DeviceBuffer(); }

private:
    void* ptr_ = nullptr;
    uword bytes_ = 0;
};

}  // namespace forge
