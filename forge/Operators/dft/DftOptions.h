#pragma once
// DftOptions: how a Gdft or GdftR2 runs on the GPU (the CPU path has no choices). Default-constructed options
// are the defaults: the plan's own stream, the current device, the fastest batch kernel the device has.
//
//   DftOptions o;
//   o.kernel = DftKernel::mma_sync;            // compare against the default (wgmma on an H100)
//   Gdft<float> G(k, pixels, o);
//   Gdft<float> M(k, pixels, {nullptr, {0, 1}});   // one transform over two GPUs
//
// The options are checked when the operator is made: forge::invalid_argument names the option that is wrong
// (a kernel the device cannot run, a negative device number, devices on a double operator, a stream together
// with devices); forge::cuda_error says there is no GPU for the devices asked for.
#include <vector>

#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/Config.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

// The GPU kernel for batches of 4 or more vectors (coils, segments): Hopper wgmma, Ampere-and-later mma.sync, or
// the FP32 tiles every device has. 'automatic' takes the fastest the device and the build have; naming one the
// device cannot run is refused when the plan is made. (GdftR2 batches always run on the FP32 tiles: the tensor-core
// kernels have no sinc factor.)
enum class DftKernel { automatic, wgmma, mma_sync, fp32 };
static_assert(DftKernel{} == DftKernel::automatic, "PlanOptions::dft_kernel defaults to DftKernel{}");

// "automatic", "wgmma", "mma_sync" or "fp32"; nullptr for a value outside the enumeration.
inline const char* dft_kernel_name(DftKernel k) {
    switch (k) {
        case DftKernel::automatic: return "automatic";
        case DftKernel::wgmma: return "wgmma";
        case DftKernel::mma_sync: return "mma_sync";
        case DftKernel::fp32: return "fp32";
    }
    return nullptr;
}

struct DftOptions {
    // Stream the operator's device work is queued on; null: the plan creates and owns one (a blocking stream,
    // ordered with the legacy default stream). A stream given here stays the caller's (never destroyed by
    // forge): work queued on it before a transform runs first. A non-blocking one is ordered with the legacy
    // stream at each transform's start and end (events), as CUDA orders a blocking one.
    CUstream_st* stream = nullptr;
    // CUDA devices: empty, the device current when the operator is made; one or more, each transform is split
    // over them in equal parts (forward by samples, adjoint by pixels) and the result gathered on the input's
    // device (float operators only; docs/gpu.md). An entry may repeat: {0, 0} is two parts on one GPU.
    std::vector<int> devices;
    DftKernel kernel = DftKernel::automatic;
};

}  // namespace forge
