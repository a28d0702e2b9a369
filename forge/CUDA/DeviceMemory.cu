// CUDA implementation of forge/Core/DeviceMemory.h.
#include <atomic>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "forge/CUDA/detail/CudaCheck.h"
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
// One pool per device, made on first use and kept for the life of the process (the driver reclaims it at
// exit). Blocks freed go back to the pool instead of the driver: cudaMalloc and cudaFree map and unmap pages
// on every call, which for the 8 MB result of an 8-coil Gdft transform (64x64x16 pixels, 131072 samples)
// cost 3% of the call on an H100. The pool keeps up to kPoolKeepBytes of free blocks across
// synchronisations and returns the rest; an allocation that fails first returns every free block and tries
// again. The allocations and frees of DeviceBuffer are ordered on a stream of their own that holds nothing
// else.
constexpr std::uint64_t kPoolKeepBytes = std::uint64_t(1) << 30;

const DevicePool& device_pool(int device) {
    static std::mutex m;
    static std::vector<DevicePool> pools;  // never destroyed
    std::lock_guard<std::mutex> lock(m);
    if (pools.empty()) pools.resize(size_t(device_count()));
    DevicePool& d = pools.at(size_t(device));
    if (!d.pool) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cudaMemPool_t pool = nullptr;
        FORGE_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
        std::uint64_t keep = kPoolKeepBytes;
        FORGE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        int current = 0;
        FORGE_CUDA_CHECK(cudaGetDevice(&current));
        if (current != device) FORGE_CUDA_CHECK(cudaSetDevice(device));
        cudaStream_t stream = nullptr;
        const cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        if (current != device && cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
        FORGE_CUDA_CHECK(err);
        d.pool = pool;
        d.stream = stream;
    }
    return d;
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
    int device = 0;
    FORGE_CUDA_CHECK(cudaGetDevice(&device));
    const detail::DevicePool& pool = detail::device_pool(device);
    void* p = nullptr;
    cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, pool.pool, pool.stream);
    if (err == cudaErrorMemoryAllocation) {
        // The free blocks the pool keeps may be what is missing: hand them back and try once more.
        cudaGetLastError();
        if (cudaMemPoolTrimTo(pool.pool, 0) == cudaSuccess)
            err = cudaMallocFromPoolAsync(&p, bytes, pool.pool, pool.stream);
    }
    if (err == cudaSuccess) {
        // Like cudaMalloc's, the block is ready for any stream on return (the allocation stream holds nothing
        // else).
        err = cudaStreamSynchronize(pool.stream);
        if (err == cudaSuccess) return p;
        if (cudaFreeAsync(p, pool.stream) != cudaSuccess) cudaGetLastError();
    }
    cudaGetLastError();
    // The memory figures only explain a failure (cudaMemGetInfo is a driver round trip).
    size_t free_b = 0, total_b = 0;
    FORGE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > total_b) {
        throw cuda_error("device allocation of " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                         ") is larger than the GPU's total memory (" + gib(total_b) + " on " + device_name() + ")");
    }
    throw cuda_error("device allocation of " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                     ") failed: " + cudaGetErrorString(err) + " (" + gib(free_b) + " free of " + gib(total_b) + ")");
}

void release(void* ptr) noexcept {
    // Errors here (e.g. during process teardown) cannot be reported from a destructor; ignore them.
    if (!ptr) return;
    cudaPointerAttributes a{};
    int current = 0;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess || cudaGetDevice(&current) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    const bool other = a.device != current;
    if (other && cudaSetDevice(a.device) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    // As cudaFree does, wait for the block's device first: no kernel or copy queued on any stream may still
    // use the block when the pool hands it out again. (The pool exists: it made the block.)
    cudaStream_t stream = nullptr;
    try {
        stream = detail::device_pool(a.device).stream;
    } catch (...) {}
    if (!stream || cudaDeviceSynchronize() != cudaSuccess || cudaFreeAsync(ptr, stream) != cudaSuccess)
        cudaGetLastError();
    if (other && cudaSetDevice(current) != cudaSuccess) cudaGetLastError();
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
