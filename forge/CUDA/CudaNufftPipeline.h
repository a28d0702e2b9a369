#pragma once
// CudaNufftPipeline: the GPU half of Gnufft<float> (declared without CUDA headers).
//
// Forward  (image -> samples): deapodize + zero-pad (one kernel), cuFFT on the oversampled grid,
//          Kaiser-Bessel interpolation (one thread per sample, samples in sector order for locality).
// Adjoint  (samples -> image): sector-based, output-driven gridding (seed 001): the oversampled grid is
//          cut into sectors; each thread block owns one sector, accumulates in shared memory every sample
//          whose kernel footprint touches the sector (the sample lists are presorted on the host, once,
//          with a sample listed in every sector it touches), then writes its sector to global memory
//          exactly once. No atomics on global memory anywhere; only shared-memory atomics in the hot loop.
//          Then inverse cuFFT, crop + deapodize (one kernel).
// The trajectory (in grid units), the sector lists, the kernel table and the deapodization factors
// live on the device for the pipeline's lifetime. Data are interleaved complex float device arrays.
#include <memory>

#include "forge/Core/Config.h"

namespace forge {
namespace cuda {

struct NufftGeometry {
    int N[3];               // image size per axis (1 for unused axes)
    int G[3];               // oversampled grid size per axis (1 for unused axes)
    int W;                  // kernel width in grid cells
    int n1;                 // number of samples
    const float* u[3];      // host: sample positions in grid units, wrapped into [0, G)
    const float* deapod[3]; // host: per-axis deapodization multipliers 1/D, N[d] entries each
    const float* lut;       // host: kernel table, kernel(|t|) = lut[i] + frac * (lut[i+1]-lut[i]), i = |t| * lutScale
    int lutSize;
    float lutScale;
};

class CudaNufftPipeline {
public:
    explicit CudaNufftPipeline(const NufftGeometry& geom);
    ~CudaNufftPipeline();
    CudaNufftPipeline(const CudaNufftPipeline&) = delete;
    CudaNufftPipeline& operator=(const CudaNufftPipeline&) = delete;

    void forward_device(const float* d_image, float* d_kdata) const;
    void adjoint_device(const float* d_kdata, float* d_image) const;

    // Sorting statistics: number of sectors and of (sector, sample) entries (>= n1; the ratio is the
    // duplication caused by footprints that straddle sector borders).
    long long num_sectors() const;
    long long sector_entries() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cuda
}  // namespace forge
