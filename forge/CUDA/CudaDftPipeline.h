#pragma once
// CudaDftPipeline: the GPU plan of the exact field-corrected DFT (seed spec 000).
//
// Plan once: the constructor uploads the trajectory (kx, ky, kz, t), the image coordinates (ix, iy, iz),
// the field map FM (rad/s) and, for GdftR2, the gradient maps Gx, Gy, Gz (cycles/s per voxel) and grid
// size. Execute many: forward/adjoint on device pointers (interleaved complex [re0, im0, re1, im1, ...],
// the layout of forgeComplex<float>), with a batch dimension that evaluates each sample-pixel phase
// once for all vectors of the batch (SENSE coils).
//
// Kernels are thread-per-output. Inputs of the inner sum are staged through shared memory in tiles; the
// phase is kept in turns, reduced to [-1/2, 1/2] with rint and evaluated with the hardware sine/cosine
// (__sincosf); when there are too few outputs to fill the GPU the inner sum is split across blocks and
// the partial sums added in a fixed order (deterministic; also more accurate than one long float sum).
//
// Work runs on the pipeline's own stream, a blocking stream, so it is ordered with work that forge
// queues on the legacy default stream (forgeCol arithmetic) without host synchronisation. The *_device
// calls return once the work is queued; the host wrappers forward/adjoint return with the result copied.
// The header includes no CUDA header: CUstream_st is the type behind cudaStream_t.
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Validation.h"

struct CUstream_st;

namespace forge {
namespace cuda {

class CudaDftPipeline {
public:
    // The kernels index samples and pixels with 32-bit ints, over arrays padded to whole pairs of 256-thread
    // tiles: numSamples and numPixels may not exceed 2^31 - 512. (The batch has no such limit.)
    static constexpr uword kMaxLength = 2147483136;
    // Throws forge::invalid_argument naming the size and the limit when the kernels cannot index it.
    static void check_sizes(const char* where, uword numSamples, uword numPixels) {
        const char* why = "CudaDftPipeline::kMaxLength: the GPU kernels index samples and pixels with 32-bit ints";
        checked_product(where, {{"n1 (k-space samples)", numSamples}}, kMaxLength, why);
        checked_product(where, {{"n2 (pixels)", numPixels}}, kMaxLength, why);
    }

    // Gdft: no gradient factor. Arrays of length numSamples: kx, ky, kz, t; of length numPixels: ix, iy, iz, FM.
    CudaDftPipeline(const float* kx, const float* ky, const float* kz, const float* ix, const float* iy,
                    const float* iz, const float* FM, const float* t, uword numSamples, uword numPixels);
    // GdftR2: with gradient maps Gx, Gy, Gz (numPixels each) and the grid numX x numY x numZ = numPixels.
    CudaDftPipeline(const float* kx, const float* ky, const float* kz, const float* ix, const float* iy,
                    const float* iz, const float* FM, const float* t, const float* Gx, const float* Gy,
                    const float* Gz, uword numSamples, uword numPixels, uword numX, uword numY, uword numZ);
    ~CudaDftPipeline();
    CudaDftPipeline(const CudaDftPipeline&) = delete;
    CudaDftPipeline& operator=(const CudaDftPipeline&) = delete;

    // Device-pointer API (interleaved complex). image: numPixels complex, kdata: numSamples complex.
    void forward_device(const float* d_image, float* d_kdata);
    void adjoint_device(const float* d_kdata, float* d_image);
    // nbatch vectors back to back: images numPixels x nbatch, kdata numSamples x nbatch.
    void forward_device_batch(const float* d_images, float* d_kdata, uword nbatch);
    void adjoint_device_batch(const float* d_kdata, float* d_images, uword nbatch);

    // Host-pointer wrappers: upload, run, download, synchronise.
    void forward(const float* h_image, float* h_kdata);
    void adjoint(const float* h_kdata, float* h_image);

    // Waits until all work queued on this pipeline's stream has finished.
    void synchronize() const;

    int numSamples() const { return numSamples_; }
    int numPixels() const { return numPixels_; }
    bool hasGradients() const { return hasGradients_; }

private:
    void upload(const float* kx, const float* ky, const float* kz, const float* ix, const float* iy, const float* iz,
                const float* FM, const float* t, const float* Gx, const float* Gy, const float* Gz);
    void run(const float* d_in, float* d_out, uword nbatch, bool forward);

    int numSamples_ = 0, numPixels_ = 0;
    int numX_ = 1, numY_ = 1, numZ_ = 1;
    bool hasGradients_ = false;
    int multiprocessors_ = 1;
    DeviceBuffer samples_;    // float4 (kx, ky, kz, t) per sample, zero-padded to whole tiles
    DeviceBuffer pixels_;     // float4 (ix, iy, iz, FM / 2 pi) per pixel, zero-padded to whole tiles
    DeviceBuffer gradients_;  // float4 (Gx, Gy, Gz, 0) per pixel (GdftR2 only)
    CUstream_st* stream_ = nullptr;
};

}  // namespace cuda
}  // namespace forge
