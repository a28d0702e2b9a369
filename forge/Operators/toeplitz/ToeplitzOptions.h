#pragma once
// ToeplitzOptions: how a ToeplitzNormal builds its kernels and where its device applies run. Default-constructed
// options are the defaults: kernels on the GPU when one can build them, a Cartesian axis grouped when it pays, no
// progress reports, the legacy default stream and the current device.
//
//   ToeplitzOptions o;
//   o.build = KernelBuild::Host;            // e.g. to compare CPU and GPU
//   o.progress = [](uword done, uword total, double s) { ... };
//   ToeplitzNormal<float> N(grid, k, W, o);
#include <functional>

#include "forge/Core/Config.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

// Where the kernels are computed.
enum class KernelBuild {
    Auto,  // on the GPU when T1 = float, CUDA is built in and a device is present; else on the host
    Host   // always on the host, e.g. to compare CPU and GPU
};

// Whether the kernel build may exploit an axis along which the trajectory is Cartesian.
enum class AxisGrouping {
    Auto,  // when the samples take few distinct values along an axis (see ToeplitzNormal.h, the cost paragraph)
    Off    // always the full DFT on the padded grid, e.g. to compare
};

// Kernel build progress: done of total steps, seconds since the build started (see ToeplitzNormal.h).
using ToeplitzBuildProgress = std::function<void(uword done, uword total, double seconds)>;

struct ToeplitzOptions {
    KernelBuild build = KernelBuild::Auto;
    AxisGrouping grouping = AxisGrouping::Auto;
    ToeplitzBuildProgress progress = nullptr;
    // Stream the device apply (its FFTs and kernels) is queued on; null: the legacy default stream. A given
    // stream stays the caller's and must be ordered with the legacy default stream, where forgeCol's arithmetic
    // and the field map's segment phases run (made without cudaStreamNonBlocking; the constructor checks).
    CUstream_st* stream = nullptr;
    // CUDA device of the GPU kernel build and of device applies (made current for them, the caller's restored
    // after); -1: whichever device is current. Ignored without a device (the operator then runs on the host).
    int device = -1;
};

}  // namespace forge
