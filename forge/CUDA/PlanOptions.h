#pragma once
// What the GPU plans (CudaDftPipeline, CudaNufftPipeline) share: the direction of a transform and the
// plan options. Declared without CUDA headers: CUstream_st is the type behind cudaStream_t.
#include "forge/Core/Config.h"

struct CUstream_st;

namespace forge {
// The exact DFT's batch kernel (forge/Operators/dft/DftOptions.h defines the enumerators; 0 is automatic).
enum class DftKernel;

namespace cuda {

enum class Direction {
    forward,  // image -> k-space samples, exp(-i phase)
    adjoint   // k-space samples -> image, exp(+i phase)
};

struct PlanOptions {
    // Stream every transform of the plan is queued on. Null: the plan creates and owns a blocking stream,
    // which is ordered with work on the legacy default stream (forgeCol arithmetic) without host
    // synchronisation. A stream given here stays the caller's: the plan never destroys it. CudaDftPipeline
    // orders a non-blocking one with the legacy stream at each call's start and end (events), so that the
    // device memory a call writes may be freed when it returns; ordering it against other streams is the
    // caller's business.
    CUstream_st* stream = nullptr;
    // CUDA device the plan's memory and work live on; -1: the device current when the plan is made.
    int device = -1;
    // Largest batch one execute call takes; 0: no limit. A plan that keeps per-vector workspace (the
    // NUFFT's oversampled grids) allocates it for max_batch vectors up front.
    uword max_batch = 0;
    // CudaDftPipeline only: the kernel for batches of 4 or more vectors (DftOptions::kernel). The default,
    // DftKernel::automatic, takes the fastest the device and the build have; one the device or the build
    // cannot run is refused when the plan is made. Other plans ignore it.
    DftKernel dft_kernel{};
};

// True when work on 'stream' is ordered with the legacy default stream, where forgeCol's arithmetic runs: the
// legacy stream itself (null) and streams made without cudaStreamNonBlocking. An operator given a stream
// (NufftOptions, ToeplitzOptions) requires it, so that its input is ready when its transforms start.
bool stream_is_blocking(CUstream_st* stream);

}  // namespace cuda
}  // namespace forge
