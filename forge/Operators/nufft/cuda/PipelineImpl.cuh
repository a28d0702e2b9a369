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

// The sectors along axis d that a stencil starting at cell f touches (wrapped), each once, in the order of the
// taps; returns their count. The host presort and the device sort list a sample in the same sectors.
__host__ __device__ __forceinline__ int footprint_sectors(const DevGeom& g, int d, int f, int* out) {
    if (g.N[d] == 1) {
        out[0] = 0;
        return 1;
    }
    int cnt = 0;
    for (int t = 0; t < g.W; ++t) {
        int gi = f + t;
        gi = gi < 0 ? gi + g.G[d] : (gi >= g.G[d] ? gi - g.G[d] : gi);
        const int s = gi / g.S[d];
        bool seen = false;
        for (int q = 0; q < cnt; ++q) seen |= out[q] == s;
        if (!seen) out[cnt++] = s;
    }
    return cnt;
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
    long long nsectors = 0, entries = 0;
    size_t shmem = 0;
    long long nsub = 0;  // subproblems (thread blocks of the gridding kernel)
    bool split = false;  // some sector is split over several subproblems: the grid is cleared first
    DeviceBuffer deapod[3], order, first, offset, subSector, subRange, secFirst, secOffset, grid;
    uword gridVectors = 0;                // oversampled grids the workspace holds
    std::unique_ptr<FftPlan<float>> fft;  // device-only: cuFFT on the plan's stream and device
    cudaStream_t stream = nullptr;
    bool ownsStream = false;
    int device = 0;
    uword maxBatch = 0;
    std::mutex mutex;  // execute and set_points share the workspace and the sector lists

    // The trajectory as given to set_trajectory (kx | ky | kz, n1 floats each, cycles/FOV), kept for
    // copy_trajectory; a new one goes to trajNext and the two swap once it is accepted.
    DeviceBuffer traj, trajNext;
    bool hasTrajectory = false;
    // Scratch of the device sort, kept (grown only) across set_trajectory calls: see DeviceSort.cu.
    DeviceBuffer sampFirst, sampOffset, entryCount, entryStart, homeKey, homeKeySorted, sampleIndex, listKey,
        listKeySorted, listSample, listSampleSorted, cubTemp, stats;
    SortTimes times{};

    long long grid_elems() const { return (long long)g.G[0] * g.G[1] * g.G[2]; }
    void sort_points(uword n1, const int* const first[3], const float* const offset[3]);
    // Sector lists and subproblems from the sectors' entry counts (host), uploaded; sets entries, nsub, split.
    void make_subproblems(const std::vector<long long>& sectorCount);
    // Validates, converts and sorts n1 samples in cycles/FOV on the device (DeviceSort.cu); false: some
    // component is not finite or outside the band, and the plan is as it was.
    bool sort_on_device(uword n1, const float* const k[3], bool onDevice);
    void reserve_grids(uword vectors);
};

}  // namespace cuda
}  // namespace forge
