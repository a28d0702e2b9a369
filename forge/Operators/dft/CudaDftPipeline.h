#pragma once
// CudaDftPipeline: the GPU plan of the exact field-corrected DFT (DftOperator.h has the formula).
//
// A plan in cufinufft's shape: make it from a geometry (the pixel side and a first sample set) and
// options (stream, device, max_batch), then execute many times; set_points loads another sample set
// and reuses the plan's allocation when it fits.
//
//   cuda::DftGeometry g;                 // host arrays: ix, iy, iz, fm_turns (n2); kx, ky, kz, t (n1)
//   g.ix = ...; g.n1 = n1; g.n2 = n2;
//   cuda::CudaDftPipeline plan(g);       // options: own blocking stream, current device, any batch
//   plan.execute(cuda::Direction::forward, d_images, d_kdata, ncoils);
//   plan.set_points(kx2, ky2, kz2, t2, n1b);   // another trajectory, same pixels
//
// Several sample sets can live on the device at once: upload_points() makes a DftPoints (device-resident,
// immutable), and execute(points, ...) or set_points(points) use it with no host-to-device transfer.
// pcSENSE's shots share one plan this way: the pixel geometry is uploaded once, each shot's samples once.
//
// Data are device pointers to interleaved complex float ([re0, im0, re1, im1, ...], the layout of
// forgeComplex<float>), batch vectors back to back: images n2 x batch, k-space n1 x batch. Each
// sample-pixel phase is evaluated once for up to 32 vectors of the batch (SENSE coils).
//
// One to three vectors: two outputs per thread, inputs of the inner sum staged through shared memory in
// tiles, the phase in radians into the hardware sine/cosine (__sincosf). Four or more vectors of a Gdft
// (compute capability 8 and later): the sum over inputs is a matrix product, phase factors (generated in
// registers) times the vectors, on the tensor cores with FP16 operands split in two parts each, which
// keeps float32 accuracy (cuda/mma.cu explains): with Hopper's asynchronous warpgroup MMA (wgmma)
// on compute capability 9.0 when the library was built for sm_90a, with mma.sync otherwise;
// batch_kernel() says which, and PlanOptions::dft_kernel picks a slower one. When there are too few outputs
// to fill the GPU the inner sum is split across blocks and the partial sums added in a fixed order
// (deterministic; also more accurate than one long float sum).
//
// Kernels: cuda/fp32.cu (1-3 vectors, GdftR2), cuda/mma.cu (mma.sync), cuda/wgmma.cu (wgmma); the plan and
// its launches: cuda/plan.cu.
//
// execute returns once the work is queued on the plan's stream (PlanOptions.h); execute_host uploads,
// runs, synchronises and downloads. The header includes no CUDA header.
#include <memory>
#include <mutex>
#include <string>

#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/DeprecatedFields.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/dft/DftOptions.h"

namespace forge {
namespace cuda {

// Host arrays describing one DFT: the pixel side (n2 entries each) and the sample side (n1 entries each).
struct DftGeometryFields {
    // Pixel side: positions in FOV units and the field map in turns per second, i.e. field_map [rad/s] / (2 pi),
    // converted by the caller (the plan uses it as given).
    const float* ix = nullptr;
    const float* iy = nullptr;
    const float* iz = nullptr;
    const float* fm_turns = nullptr;
    // Optional gradient maps (cycles/s per voxel) for the sinc factor of GdftR2, on a nx x ny x nz
    // grid of n2 pixels. All three null: no gradient factor.
    const float* Gx = nullptr;
    const float* Gy = nullptr;
    const float* Gz = nullptr;
    uword nx = 1, ny = 1, nz = 1;
    // The pixel side is a contiguous part of the nx x ny x nz grid (a plan of a multi-GPU transform,
    // CudaMultiDft.h): the grid may then hold more than n2 pixels.
    bool partial_grid = false;
    // Sample side: k in cycles/FOV, t in seconds.
    const float* kx = nullptr;
    const float* ky = nullptr;
    const float* kz = nullptr;
    const float* t = nullptr;
    uword n1 = 0;  // samples
    uword n2 = 0;  // pixels
};
// DftGeometry's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct DftGeometry : DftGeometryFields {
    FORGE_FIELD_ALIAS(numX, nx)
    FORGE_FIELD_ALIAS(numY, ny)
    FORGE_FIELD_ALIAS(numZ, nz)
    FORGE_FIELD_ALIAS_COPIES(DftGeometry, DftGeometryFields)
};
FORGE_FIELD_ALIASES_END

// A sample set resident on a plan's device: float4 (kx, ky, kz, t) per sample, zero-padded to whole pairs
// of tiles. Made by CudaDftPipeline::upload_points (or set_points); immutable once made.
class DftPoints {
public:
    uword n1() const { return n1_; }
    uword capacity() const { return capacity_; }  // samples the allocation holds (padded)

private:
    friend class CudaDftPipeline;
    DeviceBuffer samples_;
    uword n1_ = 0, capacity_ = 0;
    int device_ = 0;
};

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

    // Throws forge::invalid_argument unless kernel is one of DftKernel's enumerators; 'what' names the option.
    static void check_kernel(const char* what, DftKernel kernel) {
        if (!dft_kernel_name(kernel)) {
            throw invalid_argument(std::string(what) + " = DftKernel(" + std::to_string(int(kernel)) +
                                   "): not a DftKernel (automatic, wgmma, mma_sync or fp32)");
        }
    }

    // Uploads the pixel side and the sample set of geom (host arrays, read during the call only).
    explicit CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options = PlanOptions());
    ~CudaDftPipeline();
    CudaDftPipeline(const CudaDftPipeline&) = delete;
    CudaDftPipeline& operator=(const CudaDftPipeline&) = delete;

    // Loads a new sample set (host arrays of n1 entries) as the plan's current points. The current
    // allocation is overwritten when it holds n1 samples and no DftPoints handle shares it; otherwise a new
    // one is made.
    void set_points(const float* kx, const float* ky, const float* kz, const float* t, uword n1);
    // Makes a device-resident sample set without touching the current points.
    std::shared_ptr<const DftPoints> upload_points(const float* kx, const float* ky, const float* kz, const float* t,
                                                   uword n1) const;
    // Binds a device-resident sample set as the current points: no transfer.
    void set_points(std::shared_ptr<const DftPoints> points);
    // The current points (shared: a later set_points with host arrays then allocates anew).
    std::shared_ptr<const DftPoints> points() const;

    // Transforms batch vectors (device pointers, see above) with the current points or with the given ones.
    // forward: in = images (n2 x batch), out = k-space (n1 x batch); adjoint the other way round.
    void execute(Direction direction, const float* d_in, float* d_out, uword batch = 1);
    void execute(const DftPoints& points, Direction direction, const float* d_in, float* d_out, uword batch = 1) const;
    // Host-pointer convenience: uploads, executes, synchronises and downloads.
    void execute_host(Direction direction, const float* h_in, float* h_out, uword batch = 1);

    // Waits until all work queued on this plan's stream has finished.
    void synchronize() const;

    uword num_samples() const;  // of the current points
    uword num_pixels() const { return uword(numPixels_); }
    bool has_gradients() const { return hasGradients_; }
    FORGE_DEPRECATED("num_samples()") uword numSamples() const { return num_samples(); }
    FORGE_DEPRECATED("num_pixels()") uword numPixels() const { return num_pixels(); }
    FORGE_DEPRECATED("has_gradients()") bool hasGradients() const { return has_gradients(); }
    CUstream_st* stream() const { return stream_; }
    int device() const { return device_; }
    uword max_batch() const { return maxBatch_; }
    // The kernel that transforms batches of 4 or more Gdft vectors: "wgmma" (compute capability 9.0 and
    // sm_90a code in the build), "mma.sync" (compute capability 8 and later) or "fp32" (the kernel of
    // 1-3 vectors). PlanOptions::dft_kernel asks for a slower one (for comparisons); asking for one the
    // device or build lacks throws forge::invalid_argument when the plan is made.
    const char* batch_kernel() const;
    enum class BatchKernel { fp32, mma, wgmma };  // in order of speed
    // Sample sets uploaded from the host so far (by the constructor, set_points and upload_points) and
    // pixel-geometry uploads (one, by the constructor): lets callers check that they share a plan.
    uword point_uploads() const;
    uword pixel_uploads() const { return 1; }

private:
    void upload_into(DftPoints& p, const float* kx, const float* ky, const float* kz, const float* t, uword n1) const;
    void run(const DftPoints& points, const float* d_in, float* d_out, uword nbatch, bool forward) const;

    int numPixels_ = 0;
    int numX_ = 1, numY_ = 1, numZ_ = 1;
    bool hasGradients_ = false;
    // Pixels 2k, 2k + 1 share y and z; pixels 16j + g, 16j + g + 8 (g < 8) share y and z (see PhaseSteps).
    bool pixelPairsOnRows_ = false, pixelRowsEightApart_ = false;
    int multiprocessors_ = 1;
    BatchKernel batchKernel_ = BatchKernel::fp32;  // for batches of 4 or more Gdft vectors
    int device_ = 0;
    uword maxBatch_ = 0;
    DeviceBuffer pixels_;     // float4 (ix, iy, iz, fm_turns) per pixel, zero-padded to whole tiles
    DeviceBuffer gradients_;  // float4 (Gx, Gy, Gz, 0) per pixel (with gradient maps only)
    // pixels_ with each odd pixel as its step from the even one before in x and the field map: the wgmma
    // kernels' forward inputs when pixelPairsOnRows_ (empty otherwise)
    DeviceBuffer pixelSteps_;
    std::shared_ptr<DftPoints> current_;
    CUstream_st* stream_ = nullptr;
    bool ownsStream_ = false;
    mutable std::mutex mutex_;  // guards current_ and the upload counter
    mutable uword pointUploads_ = 0;
};

}  // namespace cuda
}  // namespace forge
