#pragma once
// ToeplitzOptions: how a ToeplitzNormal builds its kernels and where its device applies run. Default-constructed
// options are the defaults: kernels on the GPU when one can build them, by the exact DFT or by a NUFFT (whichever
// the cost rule of ToeplitzNormal.h picks), a Cartesian axis grouped when it pays, no progress reports, the legacy
// default stream and the current device.
//
//   ToeplitzOptions o;
//   o.build = KernelBuild::Host;            // e.g. to compare CPU and GPU
//   o.source = KernelSource::Exact;         // kernels by the exact DFT whatever their cost
//   o.progress = [](uword done, uword total, double s) { ... };
//   ToeplitzNormal<float> N(grid, k, W, o);
#include <functional>

#include "forge/Core/Config.h"
#include "forge/Core/Device.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

// Whether the kernel build may exploit an axis along which the trajectory is Cartesian.
enum class AxisGrouping {
    Auto,  // when the samples take few distinct values along an axis (see ToeplitzNormal.h, the cost paragraph)
    Off    // always the full DFT on the padded grid, e.g. to compare
};

// How the basis kernels q(d) = sum_j w_j exp(+i 2 pi k_j . d) on the padded grid's offsets are computed.
enum class KernelSource {
    Auto,   // by estimated cost and precision (ToeplitzNormal.h, "Kernel sources"); kernel_source() says which
    Exact,  // adjoint DFTs (Gdft): exact to rounding
    Nufft   // one type-1 NUFFT (Gnufft's adjoint on the padded grid) per basis kernel: relative error about 1e-6 in
            // float, 1e-9 in double; needs at least two axes longer than 1
};

// A band of field-map values [-half_width, half_width] (rad/s) about a map's centre, for which ToeplitzNormal builds
// kernels that serve every field map of at most that range (ToeplitzNormal.h, "field-map band").
struct FieldBand {
    double half_width = 0;
};

// Kernel build progress: done of total steps, seconds since the build started (see ToeplitzNormal.h).
using ToeplitzBuildProgress = std::function<void(uword done, uword total, double seconds)>;

struct ToeplitzOptions {
    // Where the kernels are computed: Auto on the GPU when T1 = float, CUDA is built in and a device is present,
    // else on the host; Host; GPU (float only; forge::cuda_error without a usable device).
    Device build = Device::Auto;
    AxisGrouping grouping = AxisGrouping::Auto;  // exact DFTs or NUFFTs by slabs across a Cartesian axis
    ToeplitzBuildProgress progress = nullptr;
    // Stream the device apply (its FFTs and kernels) is queued on; null: the legacy default stream. A given
    // stream stays the caller's and must be ordered with the legacy default stream, where forgeCol's arithmetic
    // and the field map's segment phases run (made without cudaStreamNonBlocking; the constructor checks).
    CUstream_st* stream = nullptr;
    // CUDA device of the GPU kernel build and of device applies (made current for them, the caller's restored
    // after); -1: whichever device is current. Ignored without a device (the operator then runs on the host).
    int device = -1;
    // How the kernels are computed (last, so aggregate initialisers of the members above keep their meaning).
    KernelSource source = KernelSource::Auto;
};

}  // namespace forge
