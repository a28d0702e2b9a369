// CPU build of forge/Core/DeviceMemory.h: no device exists; every request for one says so clearly.
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"

namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda(const char* what) {
    throw cuda_error(std::string(what) + ": forge was built without CUDA (configure with -DFORGE_CUDA=ON "
                                         "on a machine with nvcc to use the GPU)");
}
}  // namespace

bool built_with_cuda() { return false; }
bool available() { return false; }
const char* device_name() { return "none"; }
int device_count() { return 0; }
int current_device() { no_cuda("current device"); }
void set_device(int) { no_cuda("set device"); }
void* allocate(uword) { no_cuda("device allocation"); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, uword) { no_cuda("copy to device"); }
void copy_to_host(void*, const void*, uword) { no_cuda("copy to host"); }
void copy_on_device(void*, const void*, uword) { no_cuda("device copy"); }
void synchronize() {}
TransferStats transfer_stats() { return {}; }
void reset_transfer_stats() {}

}  // namespace device
}  // namespace forge
