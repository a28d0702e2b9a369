#pragma once
// DftOptions: how a Gdft or GdftR2 runs on the GPU (the CPU path has no choices). Default-constructed options
// are the defaults: the plan's own stream, the current device, the fastest batch kernel the device has.
#include <vector>

#include "forge/Core/Config.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

// The GPU kernel for batches of 4 or more vectors (coils, segments): Hopper wgmma, Ampere-and-later mma.sync, or
// the FP32 tiles every device has. 'automatic' takes the fastest the device and the build have; naming one the
// device cannot run is refused when the plan is made.
enum class DftKernel { automatic, wgmma, mma_sync, fp32 };

struct DftOptions {
    // Stream the operator's device work is queued on; null: the plan creates and owns one. A stream given here
    // stays the caller's (never destroyed by forge).
    CUstream_st* stream = nullptr;
    // CUDA devices: empty, the device current when the operator is made; one or more, the samples are split over
    // them and every device computes its part (float operators only; see docs/gpu.md).
    std::vector<int> devices;
    DftKernel kernel = DftKernel::automatic;
};

}  // namespace forge
