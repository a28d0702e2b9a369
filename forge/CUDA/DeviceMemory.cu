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
// again.
// DeviceBuffer's blocks are allocated and freed in stream order on the device's legacy default stream, where
// forgeCol arithmetic runs: every action there waits for the work queued before on the blocking streams (the
// plans' own streams, callers' streams made by cudaStreamCreate), and their later work waits for it. A block is
// therefore ready for all of them when allocate() returns, and is reused only after the work queued before its
// release, with no wait on the host (one cudaDeviceSynchronize per release cost a PCG iteration most of its
// time at 128x128). Work on a non-blocking stream is ordered after the legacy stream by whoever queues it
// (CudaMultiDft with events); operators refuse such streams where they read forgeCol data.
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
        d.pool = pool;
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
    const cudaMemPool_t pool = detail::device_pool(device).pool;
    void* p = nullptr;
    cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, pool, cudaStreamLegacy);
    if (err == cudaErrorMemoryAllocation) {
        // Blocks freed behind queued work, and the free blocks the pool keeps, may be what is missing: wait for
        // the work, hand every free block back and try once more.
        cudaGetLastError();
        if (cudaDeviceSynchronize() == cudaSuccess && cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
            err = cudaMallocFromPoolAsync(&p, bytes, pool, cudaStreamLegacy);
    }
    if (err == cudaSuccess) return p;
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
    // In stream order on the legacy default stream (see device_pool): after the work queued so far there and on
    // the blocking streams, with no wait on the host.
    if (cudaFreeAsync(ptr, cudaStreamLegacy) != cudaSuccess) cudaGetLastError();
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
