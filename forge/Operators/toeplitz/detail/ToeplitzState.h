#pragma once
// ToeplitzNormal's private state, which its sources share (ToeplitzNormal.cpp: the grid and constructors;
// KernelBuild.cpp; KernelSources.cpp; the host apply, cpu/HostApply.cpp; DeviceApply.cpp): the operator's name in
// messages, the pair count, the device scope and the device apply's FFT options, chunk size and scratch, and the
// operator's cache of kernels and plans (which owns the host apply's plans and scratch, cpu/HostApply.h). Private
// to forge/Operators/toeplitz/.
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/cpu/HostApply.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"

namespace forge {
namespace toeplitz {

constexpr const char* kName = "ToeplitzNormal";

inline uword pair_count(uword L) { return (L + 1) * (L + 2) / 2; }

inline std::string gib(double bytes) {
    std::ostringstream m;
    m.precision(3);
    m << bytes / double(uword(1) << 30) << " GiB";
    return m.str();
}

// Makes 'device' current for the scope (the caller's restored after); -1: leaves the current device.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        if (device < 0) return;
        const int current = device::current_device();
        if (current == device) return;
        device::set_device(device);
        previous_ = current;
    }
    ~DeviceScope() {
        if (previous_ < 0) return;
        try {
            device::set_device(previous_);
        } catch (...) {  // nothing may leave a destructor; the device stays switched
        }
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int previous_ = -1;
};

// The device apply's FFT plan: cuFFT only (the host apply has its line plans), on the operator's stream and device.
inline FftPlanOptions device_fft_options(CUstream_st* stream, int device) {
    FftPlanOptions o;
    o.stream = stream;
    o.device = device;
    o.host = false;
    return o;
}

// The most bytes of segment grids a device apply puts in one buffer (one chunk of vectors; DeviceApply.cpp):
// 2 GiB, or what a test set (process-wide, to run a batch in several chunks on small grids).
double device_chunk_bytes();
void set_device_chunk_bytes(double bytes);

// A device apply's scratch (DeviceApply.cpp), kept between applies: the two segment-grid buffers of a chunk
// (cuda/ToeplitzApply.h has their layout) and the cuFFT plans of each chunk size met so far. 'a' is zero from
// entry aZeroFrom on (the planes z >= Nz of every chunk must be: the z transforms read them).
template <typename T1>
struct DeviceWorkspace {
    DeviceBuffer a, b;
    uword capacity = 0;  // entries of a and of b
    uword aZeroFrom = 0;
    std::map<uword, std::unique_ptr<cuda::ToeplitzFft<T1>>> plans;  // by vectors per chunk
};

}  // namespace toeplitz

// The kernels where they were built, their copy on the other side once needed, and the GPU's FFT plan; for host
// applies their plans and a pool of scratch buffers (an apply takes one, or makes one when all are in use, and
// gives it back); for device applies the segment phases on the GPU, the pair table of the register kernel product
// and a pool of device workspaces (taken and given back the same way). Copies of the operator share it; the mutex
// guards the lazily made members and the pools.
template <typename T1>
struct ToeplitzNormal<T1>::Cache {
    std::mutex mutex;
    ForgeVec host;       // npairs x P on the host in the host apply's layout (empty until built or copied)
    ForgeVec device;     // npairs x P on the GPU (empty until built or uploaded)
    DeviceBuffer table;  // table_ on the GPU
    std::unique_ptr<FftPlan<T1>> fft;  // the GPU kernel build's (KernelBuild.cpp): cuFFT of the padded grid
    std::unique_ptr<toeplitz::HostApplyLayout<T1>> hostLayout;
    std::vector<std::unique_ptr<toeplitz::GridBuffer<T1>>> pool;
    ForgeVec devicePhases;                 // b_l on the GPU, S x n2, when the operator's device is not the current one
    const Elem* phasesOnDevice = nullptr;  // b_l on the GPU (null when field-free)
    cuda::ToeplitzPairTable registerTable{};  // the table as int, when registerMix
    bool registerMix = false;              // S <= kToeplitzRegisterSegments and table(m, l) = -table(l, m)
    std::vector<std::unique_ptr<toeplitz::DeviceWorkspace<T1>>> devicePool;
    bool deviceReady = false;
};

}  // namespace forge
