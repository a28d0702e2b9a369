// CUDA implementation of forge/Core/DeviceMemory.h.
#include <atomic>
#include <mutex>
#include <sstream>
#include <string>

#include "forge/CUDA/CudaCheck.h"
#include "forge/Core/DeviceMemory.h"

namespace forge {
namespace cuda {
void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
    std::ostringstream m;
    m << "CUDA error: " << call << " failed with " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err)
      << ") at " << file << ":" << line;
    throw cuda_error(m.str());
}
}  // namespace cuda

namespace device {
namespace {
std::atomic<std::uint64_t> g_h2d_count{0}, g_h2d_bytes{0}, g_d2h_count{0}, g_d2h_bytes{0};

struct DeviceInfo {
    bool present = false;
    std::string name = "none";
};
const DeviceInfo& info() {
    static const DeviceInfo inf = [] {
        DeviceInfo d;
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
            cudaGetLastError();  // clear the non-sticky error so later calls start clean
            return d;
        }
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
            cudaGetLastError();
            return d;
        }
        d.present = true;
        d.name = prop.name;
        return d;
    }();
    return inf;
}

std::string gib(std::uint64_t bytes) {
    std::ostringstream s;
    s.precision(3);
    s << double(bytes) / double(1ull << 30) << " GiB";
    return s.str();
}
}  // namespace

namespace detail {
void record_transfer(bool to_device, uword bytes) {
    if (to_device) {
        ++g_h2d_count;
        g_h2d_bytes += bytes;
    } else {
        ++g_d2h_count;
        g_d2h_bytes += bytes;
    }
}
}  // namespace detail

bool built_with_cuda() { return true; }
bool available() { return info().present; }
const char* device_name() { return info().name.c_str(); }

int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

int current_device() {
    if (!available()) throw cuda_error("current device: no CUDA device is available");
    int d = 0;
    FORGE_CUDA_CHECK(cudaGetDevice(&d));
    return d;
}

void set_device(int device) {
    if (!available()) throw cuda_error("set device " + std::to_string(device) + ": no CUDA device is available");
    const int count = device_count();
    if (device < 0 || device >= count)
        throw invalid_argument("set device: device " + std::to_string(device) + " does not exist; expected [0, " +
                               std::to_string(count) + ")");
    FORGE_CUDA_CHECK(cudaSetDevice(device));
}

void* allocate(uword bytes) {
    if (!available()) {
        throw cuda_error("device allocation of " + std::to_string(bytes) + " bytes: no CUDA device is available");
    }
    if (bytes == 0) return nullptr;
    size_t free_b = 0, total_b = 0;
    FORGE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > total_b) {
        throw cuda_error("device allocation of " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                         ") is larger than the GPU's total memory (" + gib(total_b) + " on " + device_name() + ")");
    }
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        cudaGetLastError();
        throw cuda_error("device allocation of " + std::to_string(bytes) + " bytes (" + gib(bytes) + ") failed: " +
                         cudaGetErrorString(err) + " (" + gib(free_b) + " free of " + gib(total_b) + ")");
    }
    return p;
}

void release(void* ptr) noexcept {
    // Errors here (e.g. during process teardown) cannot be reported from a destructor; ignore them.
    if (ptr && cudaFree(ptr) != cudaSuccess) cudaGetLastError();
}

void copy_to_device(void* dst, const void* src, uword bytes) {
    FORGE_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    detail::record_transfer(true, bytes);
}
void copy_to_host(void* dst, const void* src, uword bytes) {
    FORGE_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    detail::record_transfer(false, bytes);
}
void copy_on_device(void* dst, const void* src, uword bytes) {
    if (bytes) FORGE_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
}
void synchronize() {
    if (available()) FORGE_CUDA_CHECK(cudaDeviceSynchronize());  // without a device nothing can be queued
}

TransferStats transfer_stats() {
    return {g_h2d_count.load(), g_h2d_bytes.load(), g_d2h_count.load(), g_d2h_bytes.load()};
}
void reset_transfer_stats() {
    g_h2d_count = 0;
    g_h2d_bytes = 0;
    g_d2h_count = 0;
    g_d2h_bytes = 0;
}

}  // namespace device
}  // namespace forge
