#pragma once
// Private to CudaNufftPipeline's .cu files: the plan's state (CudaNufftPipeline::Impl), the geometry the kernels take
// by value (DevGeom) and the kernel-weight helpers. CudaNufftPipeline.cu holds the transforms and the host presort,
// DeviceSort.cu the sort of k-space samples on the device.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "forge/CUDA/FftPlan.h"
#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"

namespace forge {
namespace cuda {
namespace nufft_detail {

constexpr int kMaxW = 16;
constexpr int kThreads = 256;
constexpr int kStride = NufftGeometry::kCoefStride;

struct DevGeom {
    int N[3], G[3], S[3], nsec[3];
    int taps[3];  // W on axes longer than 1, else 1
    int T[3];     // a sector's padded tile: S + W - 1 cells on axes longer than 1, else 1
    int W, degree;
    // Kernel polynomials by value: the kernels read them through the constant bank, uniformly per warp.
    float coef[(NufftGeometry::kMaxDegree + 1) * kStride];
};

__device__ __forceinline__ int wrapi(int g, int G) { return g < 0 ? g + G : (g >= G ? g - G : g); }

// The W tap weights of one axis at offset y, by Horner's rule (registers: W is a compile-time constant).
template <int W>
__device__ __forceinline__ void tap_weights(const DevGeom& g, float y, float* w) {
#pragma unroll
    for (int a = 0; a < W; ++a) w[a] = g.coef[g.degree * kStride + a];
    for (int k = g.degree - 1; k >= 0; --k) {
#pragma unroll
        for (int a = 0; a < W; ++a) w[a] = fmaf(w[a], y, g.coef[k * kStride + a]);
    }
}
template <int W>
__device__ __forceinline__ void axis_weights(const DevGeom& g, int d, float y, float* w) {
    if (g.taps[d] > 1) {
        tap_weights<W>(g, y, w);
    } else {
#pragma unroll
        for (int a = 0; a < W; ++a) w[a] = a == 0 ? 1.f : 0.f;
    }
}

// f mod G in [0, G) (a stencil may start W/2 cells before the grid, and a tiny grid is shorter than the stencil).
__host__ __device__ __forceinline__ int wrap_mod(int f, int G) {
    const int r = f % G;
    return r < 0 ? r + G : r;
}
// A sample's sector: the one that holds its stencil start (wrapped into the grid) on every axis. The host presort,
// the device sort and the gridding kernel agree on it; the padded tile of that sector holds the whole stencil.
__host__ __device__ __forceinline__ unsigned home_sector(const DevGeom& g, int4 f) {
    const int s[3] = {g.N[0] == 1 ? 0 : wrap_mod(f.x, g.G[0]) / g.S[0],
                      g.N[1] == 1 ? 0 : wrap_mod(f.y, g.G[1]) / g.S[1],
                      g.N[2] == 1 ? 0 : wrap_mod(f.z, g.G[2]) / g.S[2]};
    return unsigned(s[0] + g.nsec[0] * (s[1] + g.nsec[1] * s[2]));
}

// Copies n entries to the device into b, reallocating only when b is too small.
template <typename T>
void upload_into(DeviceBuffer& b, const T* h, size_t n) {
    if (b.bytes() < n * sizeof(T) || !b) b = DeviceBuffer(std::max<size_t>(n, 1) * sizeof(T));
    if (n) device::copy_to_device(b.get(), h, n * sizeof(T));
}
// Makes b hold at least 'bytes' (contents not kept when it grows): plan memory that only grows across set_points.
inline void reserve_bytes(DeviceBuffer& b, size_t bytes) {
    if (!b || b.bytes() < bytes) b = DeviceBuffer(std::max<size_t>(bytes, 1));
}

}  // namespace nufft_detail

struct CudaNufftPipeline::Impl {
    nufft_detail::DevGeom g{};
    int n1 = 0;
    long long nsectors = 0;
    size_t shmem = 0;    // one padded tile
    long long nsub = 0;  // subproblems (thread blocks of the gridding kernel)
    int sms = 1;         // the device's multiprocessors (subproblem sizes)
    // The samples in sector order (order: their indices; first, offset: their stencils), read by both directions;
    // the subproblems (sector, [begin, end) in that order).
    DeviceBuffer deapod[3], order, first, offset, subSector, subRange, grid;
    uword gridVectors = 0;                // oversampled grids the workspace holds
    std::unique_ptr<FftPlan<float>> fft;  // device-only: cuFFT on the plan's stream and device
    cudaStream_t stream = nullptr;
    bool ownsStream = false;
    int device = 0;
    uword maxBatch = 0;
    std::mutex mutex;  // execute and set_points share the workspace and the sector order

    // The trajectory as given to set_trajectory (kx | ky | kz, n1 floats each, cycles/FOV), kept for
    // copy_trajectory; a new one goes to trajNext and the two swap once it is accepted.
    DeviceBuffer traj, trajNext;
    bool hasTrajectory = false;
    // Scratch of the device sort, kept (grown only) across set_trajectory calls: see DeviceSort.cu.
    DeviceBuffer sampFirst, sampOffset, homeKey, homeKeySorted, sampleIndex, cubTemp, stats;
    SortTimes times{};

    long long grid_elems() const { return (long long)g.G[0] * g.G[1] * g.G[2]; }
    void sort_points(uword n1, const int* const first[3], const float* const offset[3]);
    // Subproblems from the sectors' sample counts (host), uploaded; sets nsub.
    void make_subproblems(const std::vector<long long>& sectorCount);
    // Validates, converts and sorts n1 samples in cycles/FOV on the device (DeviceSort.cu); false: some
    // component is not finite or outside the band, and the plan is as it was.
    bool sort_on_device(uword n1, const float* const k[3], bool onDevice);
    void reserve_grids(uword vectors);
};

}  // namespace cuda
}  // namespace forge
