// CudaNufftPipeline: GPU Kaiser-Bessel NUFFT for Gnufft<float> (see CudaNufftPipeline.h).
//
// Gridding uses padded tiles (cufinufft's subproblem method): the oversampled grid is split into sectors (32x32 in 2D,
// 16x16x16 in 3D); each sample belongs to the sector that holds its stencil start, and the samples are sorted by
// sector once per trajectory (DeviceSort.cu from k, sort_points from stencils). One thread block per subproblem (a
// sector's samples, or a run of a crowded sector's) accumulates them in a shared-memory tile that reaches W - 1 cells
// past the sector's far edges (shared-memory atomics only, no bounds checks: every tap lands in the tile) and adds the
// tile onto the cleared grid with global atomics. The kernel weights are polynomials in the sample's offset,
// evaluated once per axis and sample (Horner); widths 2..8 are compiled each. The forward interpolation reads the same
// order, one thread per sample. A batch runs with the vector in blockIdx.y: every kernel offsets its input and output
// by that vector.
#include "forge/Operators/nufft/CudaNufftPipeline.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/nufft/cuda/PipelineImpl.cuh"

namespace forge {
namespace cuda {

using namespace nufft_detail;

namespace {
// Image pixel i's position on the oversampled grid (centred, wrapped) and its deapodization factor.
__device__ __forceinline__ long long image_to_grid(long long i, const DevGeom& g, const float* __restrict__ dx,
                                                   const float* __restrict__ dy, const float* __restrict__ dz,
                                                   float& d) {
    int x = int(i % g.N[0]);
    long long r = i / g.N[0];
    int y = int(r % g.N[1]), z = int(r / g.N[1]);
    int gx = wrapi(x - g.N[0] / 2, g.G[0]), gy = wrapi(y - g.N[1] / 2, g.G[1]), gz = wrapi(z - g.N[2] / 2, g.G[2]);
    d = dx[x] * dy[y] * dz[z];
    return gx + (long long)g.G[0] * (gy + (long long)g.G[1] * gz);
}

// Forward step 1: grid = 0 outside the image; image pixels (deapodized) at their wrapped grid positions.
__global__ void kernel_pad(const float2* __restrict__ img, float2* __restrict__ grid, const DevGeom g,
                           const float* __restrict__ dx, const float* __restrict__ dy, const float* __restrict__ dz) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long n2 = (long long)g.N[0] * g.N[1] * g.N[2];
    if (i >= n2) return;
    img += blockIdx.y * n2;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    float d;
    const long long gi = image_to_grid(i, g, dx, dy, dz, d);
    float2 v = img[i];
    grid[gi] = make_float2(v.x * d, v.y * d);
}

// Adjoint last step: crop the grid and deapodize.
__global__ void kernel_crop(const float2* __restrict__ grid, float2* __restrict__ img, const DevGeom g,
                            const float* __restrict__ dx, const float* __restrict__ dy, const float* __restrict__ dz) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long n2 = (long long)g.N[0] * g.N[1] * g.N[2];
    if (i >= n2) return;
    img += blockIdx.y * n2;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    float d;
    const long long gi = image_to_grid(i, g, dx, dy, dz, d);
    float2 v = grid[gi];
    img[i] = make_float2(v.x * d, v.y * d);
}

// Forward step 3: one thread per sample (in sector order), gathering its W^d neighbourhood. first/offset
// are in that order (x, y, z, -); order maps it to the output index.
template <int W>
__global__ void __launch_bounds__(kThreads)
    kernel_interp(const float2* __restrict__ grid, float2* __restrict__ out, const DevGeom g,
                  const int* __restrict__ order, const int4* __restrict__ first, const float4* __restrict__ offset,
                  int n1) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n1) return;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    out += blockIdx.y * (long long)n1;
    const int4 f = first[e];
    const float4 y = offset[e];
    float wx[W], wy[W], wz[W];
    axis_weights<W>(g, 0, y.x, wx);
    axis_weights<W>(g, 1, y.y, wy);
    axis_weights<W>(g, 2, y.z, wz);
    int ix[W];
#pragma unroll
    for (int a = 0; a < W; ++a) ix[a] = wrapi(f.x + a, g.G[0]);
    float re = 0.f, im = 0.f;
    constexpr int kUnrollZ = W <= 8 ? W : 1;  // the 16-tap instance: unrolled in y and x only (compile time)
#pragma unroll kUnrollZ
    for (int c = 0; c < W; ++c) {
        if (c >= g.taps[2]) break;
        const long long oz = (long long)wrapi(f.z + c, g.G[2]) * g.G[1];
#pragma unroll
        for (int b = 0; b < W; ++b) {
            if (b >= g.taps[1]) break;
            const float2* row = grid + (oz + wrapi(f.y + b, g.G[1])) * g.G[0];
            float rr = 0.f, ri = 0.f;
#pragma unroll
            for (int a = 0; a < W; ++a) {
                if (a >= g.taps[0]) break;
                const float2 v = __ldg(row + ix[a]);
                rr = fmaf(wx[a], v.x, rr);
                ri = fmaf(wx[a], v.y, ri);
            }
            const float wzy = wz[c] * wy[b];
            re = fmaf(wzy, rr, re);
            im = fmaf(wzy, ri, im);
        }
    }
    out[order[e]] = make_float2(re, im);
}

__device__ __forceinline__ int gcd_int(int a, int b) {
    while (b) {
        const int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// Adds v onto a grid cell in global memory (one vector atomic where the hardware has it).
__device__ __forceinline__ void atomic_add_cell(float2* cell, float2 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(cell, v);
#else
    atomicAdd(&cell->x, v.x);
    atomicAdd(&cell->y, v.y);
#endif
}

// Adjoint step 1: one block per subproblem, a run [begin, end) of one sector's samples in sector order (see
// make_subproblems: a sector with few samples is one subproblem; a crowded one, e.g. the centre of a spiral, is split
// so that its work spreads over several SMs). The block accumulates into a shared-memory tile of T[0] x T[1] x T[2]
// cells whose corner is the sector's: a sample's stencil starts inside the sector, so its W^d taps land in the tile
// without a bounds check, and all threads of a warp run the same taps. The tile then goes onto the (cleared) grid by
// global atomic adds, wrapped at the grid's edges; the hot loop has shared-memory atomics only.
template <int W>
__global__ void __launch_bounds__(kThreads)
    kernel_spread_tiles(const float2* __restrict__ in, float2* __restrict__ grid, const DevGeom g,
                        const int* __restrict__ subSector, const int2* __restrict__ subRange,
                        const int* __restrict__ order, const int4* __restrict__ first,
                        const float4* __restrict__ offset, int n1) {
    extern __shared__ float2 tile[];
    const int sec = subSector[blockIdx.x];
    in += blockIdx.y * (long long)n1;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    const int o[3] = {(sec % g.nsec[0]) * g.S[0], ((sec / g.nsec[0]) % g.nsec[1]) * g.S[1],
                      (sec / (g.nsec[0] * g.nsec[1])) * g.S[2]};
    const int tx = g.T[0], ty = g.T[1];
    const int ncell = tx * ty * g.T[2];
    for (int c = threadIdx.x; c < ncell; c += blockDim.x) tile[c] = make_float2(0.f, 0.f);
    __syncthreads();

    const int2 range = subRange[blockIdx.x];
    const int count = range.y - range.x;
    // The sector keeps its samples in trajectory order, so neighbouring entries of a spiral or radial line fall on
    // the same tile cells and a warp's shared-memory atomics on them would serialise. Threads therefore take entries
    // about count/32 apart: k -> k * stride mod count, with stride coprime to count, visits every entry once.
    int stride = 1;
    if (count > 64) {
        stride = (count / 32) | 1;
        while (gcd_int(stride, count) != 1) stride += 2;
    }
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        const int e = range.x + int((long long)k * stride % count);
        const int4 f = first[e];
        const float4 y = offset[e];
        const float2 v = in[order[e]];
        float wx[W], wy[W], wz[W];
        axis_weights<W>(g, 0, y.x, wx);
        axis_weights<W>(g, 1, y.y, wy);
        axis_weights<W>(g, 2, y.z, wz);
        // The stencil's corner in the tile (0 on an axis of length 1, whose start and sector origin are 0).
        const int lx = wrap_mod(f.x, g.G[0]) - o[0], ly = wrap_mod(f.y, g.G[1]) - o[1],
                  lz = wrap_mod(f.z, g.G[2]) - o[2];
        float2* corner = tile + (lz * ty + ly) * tx + lx;
        constexpr int kUnrollZ = W <= 8 ? W : 1;
#pragma unroll kUnrollZ
        for (int c = 0; c < W; ++c) {
            if (c >= g.taps[2]) break;
#pragma unroll
            for (int b = 0; b < W; ++b) {
                if (b >= g.taps[1]) break;
                const float wzy = wz[c] * wy[b], vr = wzy * v.x, vi = wzy * v.y;
                float2* row = corner + (c * ty + b) * tx;
#pragma unroll
                for (int a = 0; a < W; ++a) {
                    if (a >= g.taps[0]) break;
                    atomicAdd(&row[a].x, vr * wx[a]);  // shared-memory atomics only
                    atomicAdd(&row[a].y, vi * wx[a]);
                }
            }
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < ncell; c += blockDim.x) {
        const float2 v = tile[c];
        if (v.x == 0.f && v.y == 0.f) continue;
        const int lx = c % tx, ly = (c / tx) % ty, lz = c / (tx * ty);
        const int gx = (o[0] + lx) % g.G[0], gy = (o[1] + ly) % g.G[1], gz = (o[2] + lz) % g.G[2];
        atomic_add_cell(grid + gx + (long long)g.G[0] * (gy + (long long)g.G[1] * gz), v);
    }
}

}  // namespace

// Host presort of stencils: the samples sorted by sector (a counting sort, stable), uploaded with their stencils.
void CudaNufftPipeline::Impl::sort_points(uword n1u, const int* const fst[3], const float* const off[3]) {
    n1 = int(n1u);
    auto start_of = [&](int d, int j) { return g.N[d] == 1 ? 0 : fst[d][j]; };
    auto offset_of = [&](int d, int j) { return g.N[d] == 1 ? 0.f : off[d][j]; };
    std::vector<unsigned> home(n1);
    std::vector<long long> count(nsectors, 0);
    for (int j = 0; j < n1; ++j) {
        home[j] = home_sector(g, make_int4(start_of(0, j), start_of(1, j), start_of(2, j), 0));
        count[home[j]]++;
    }
    std::vector<long long> fill(nsectors, 0);
    for (long long s = 1; s < nsectors; ++s) fill[s] = fill[s - 1] + count[s - 1];
    std::vector<int> ord(n1);
    for (int j = 0; j < n1; ++j) ord[fill[home[j]]++] = j;
    std::vector<int4> sf(n1);
    std::vector<float4> so(n1);
    for (int e = 0; e < n1; ++e) {
        const int j = ord[e];
        sf[e] = make_int4(start_of(0, j), start_of(1, j), start_of(2, j), 0);
        so[e] = make_float4(offset_of(0, j), offset_of(1, j), offset_of(2, j), 0.f);
    }
    upload_into(order, ord.data(), ord.size());
    upload_into(first, sf.data(), sf.size());
    upload_into(offset, so.data(), so.size());
    make_subproblems(count);
}

void CudaNufftPipeline::Impl::make_subproblems(const std::vector<long long>& count) {
    // Subproblems: each sector's samples cut into runs of at most 'chunk', chunk = n1 / (8 blocks per SM) within
    // [256, 1024] samples (one to four per thread): enough blocks to balance a spiral's crowded centre over the SMs,
    // few enough that each tile's clearing and write-back stay small beside its samples' taps.
    const long long perBlocks = (n1 + 8ll * sms - 1) / (8ll * sms);
    const long long chunk = std::min<long long>(1024, std::max<long long>(256, perBlocks));
    std::vector<int> info;
    std::vector<int2> range;
    long long b = 0;
    for (long long sct = 0; sct < nsectors; ++sct) {
        const long long e = b + count[sct];
        for (long long q = b; q < e; q += chunk) {
            info.push_back(int(sct));
            range.push_back(make_int2(int(q), int(std::min(e, q + chunk))));
        }
        b = e;
    }
    nsub = (long long)info.size();
    if (nsub > (long long)kMaxIndex) {
        throw invalid_argument("CudaNufftPipeline: " + std::to_string(nsub) +
                               " gridding subproblems exceed CudaNufftPipeline::kMaxIndex (one thread block each)");
    }
    upload_into(subSector, info.data(), info.size());
    upload_into(subRange, range.data(), range.size());
}

// Kernels compiled per width: a table indexed by W.
using InterpKernel = void (*)(const float2*, float2*, const DevGeom, const int*, const int4*, const float4*, int);
using GridKernel = void (*)(const float2*, float2*, const DevGeom, const int*, const int2*, const int*, const int4*,
                            const float4*, int);
// Widths 2..8 (float's useful range) are compiled each; wider kernels share the W = 16 instance, whose
// loops stop at the plan's width (DevGeom::taps) and whose Horner rows past it hold zeros.
constexpr int kMaxFixedW = 8;
template <int W = 2>
void kernels_for(int width, InterpKernel& ik, GridKernel& gk) {
    if constexpr (W <= kMaxFixedW) {
        if (width == W) {
            ik = &kernel_interp<W>;
            gk = &kernel_spread_tiles<W>;
        } else {
            kernels_for<W + 1>(width, ik, gk);
        }
    } else {
        ik = &kernel_interp<kMaxW>;
        gk = &kernel_spread_tiles<kMaxW>;
    }
}

// Grid workspace for 'vectors' oversampled grids (work queued on the stream may still use the old one).
void CudaNufftPipeline::Impl::reserve_grids(uword vectors) {
    if (gridVectors >= vectors) return;
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    grid = DeviceBuffer(size_t(vectors) * size_t(grid_elems()) * sizeof(float2));
    gridVectors = vectors;
}

CudaNufftPipeline::CudaNufftPipeline(const NufftGeometry& geom, const PlanOptions& options) : impl_(new Impl) {
    check_sizes("CudaNufftPipeline", geom);
    if (geom.W > kMaxW) throw invalid_argument("CudaNufftPipeline: kernel width above 16");
    if (geom.n1 < 1) throw invalid_argument("CudaNufftPipeline: geometry.n1 (samples) must be at least 1, got 0");
    // From here every size fits the int fields of DevGeom (check_sizes; N <= G).
    Impl& I = *impl_;
    DevGeom& g = I.g;
    I.device = resolve_device("CudaNufftPipeline", options.device);
    I.maxBatch = options.max_batch;
    DeviceGuard guard(I.device);
    if (!geom.coef || geom.degree < 0 || geom.degree > NufftGeometry::kMaxDegree)
        throw invalid_argument("CudaNufftPipeline: geometry.coef must hold kernel polynomials of degree 0.." +
                               std::to_string(NufftGeometry::kMaxDegree));
    if (geom.W < 2) throw invalid_argument("CudaNufftPipeline: kernel width below 2");
    g.W = int(geom.W);
    g.degree = geom.degree;
    for (int k = 0; k <= geom.degree; ++k)
        for (int a = 0; a < kStride; ++a) g.coef[k * kStride + a] = geom.coef[k * kStride + a];
    // Sectors whose padded tiles fit this device's shared memory per block (smaller ones on a GPU that has less).
    int optin = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, I.device));
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&I.sms, cudaDevAttrMultiProcessorCount, I.device));
    I.sms = std::max(I.sms, 1);
    const uword tileBudget = std::min<uword>(kMaxTileBytes, uword(std::max(optin, 0)));
    check_sizes("CudaNufftPipeline", geom, tileBudget);
    for (int d = 0; d < 3; ++d) {
        g.taps[d] = geom.N[d] > 1 ? g.W : 1;
        g.N[d] = int(geom.N[d]);
        g.G[d] = int(geom.G[d]);
        g.S[d] = int(sector_size(geom, d, tileBudget));
        g.nsec[d] = (g.G[d] + g.S[d] - 1) / g.S[d];
        g.T[d] = geom.N[d] > 1 ? g.S[d] + g.W - 1 : 1;
    }
    I.nsectors = (long long)g.nsec[0] * g.nsec[1] * g.nsec[2];
    I.shmem = size_t(g.T[0]) * g.T[1] * g.T[2] * sizeof(float2);
    if (I.shmem > size_t(std::max(optin, 0))) {
        throw invalid_argument("CudaNufftPipeline: the gridding tile of a " + std::to_string(g.W) +
                               "-tap kernel needs " + std::to_string(I.shmem) +
                               " bytes of shared memory per block; device " + std::to_string(I.device) + " offers " +
                               std::to_string(optin));
    }
    if (options.stream) {
        I.stream = options.stream;
    } else {
        FORGE_CUDA_CHECK(cudaStreamCreate(&I.stream));  // blocking stream: ordered with the legacy default stream
        I.ownsStream = true;
    }
    if (geom.k[0]) {
        if (!geom.k[1] || !geom.k[2]) throw invalid_argument("CudaNufftPipeline: geometry.k needs all three axes");
        if (!I.sort_on_device(geom.n1, geom.k, geom.k_on_device)) {
            throw invalid_argument("CudaNufftPipeline: geometry.k holds a sample that is not finite or lies outside "
                                   "[-N/2, N/2] cycles/FOV ([-1/2, 1/2] on an axis of length 1)");
        }
    } else {
        I.sort_points(geom.n1, geom.first, geom.offset);
    }
    for (int d = 0; d < 3; ++d) upload_into(I.deapod[d], geom.deapod[d], geom.N[d]);
    I.reserve_grids(I.maxBatch ? std::min<uword>(I.maxBatch, 65535) : 1);
    FftPlanOptions fftOptions;
    fftOptions.stream = I.stream;
    fftOptions.device = I.device;
    fftOptions.host = false;
    I.fft.reset(new FftPlan<float>(uword(g.G[0]), uword(g.G[1]), uword(g.G[2]), fftOptions));
    I.fft->prepare_device();  // a size cuFFT refuses fails here
    InterpKernel ik = nullptr;
    GridKernel gk = nullptr;
    kernels_for(g.W, ik, gk);
    if (I.shmem > 48 * 1024) {
        // The limit belongs to the kernel (per device), which every plan of this width shares: it is set to the budget
        // that every tile fits in, so that a plan with a smaller tile made later never lowers it under this one's.
        const size_t limit = std::max<size_t>(I.shmem, size_t(tileBudget));
        FORGE_CUDA_CHECK(cudaFuncSetAttribute(gk, cudaFuncAttributeMaxDynamicSharedMemorySize, int(limit)));
    }
}

CudaNufftPipeline::~CudaNufftPipeline() {
    Impl& I = *impl_;
    if (I.stream) {
        // Finish queued work before the buffers it reads are freed; nothing can be thrown from here.
        if (cudaStreamSynchronize(I.stream) != cudaSuccess) cudaGetLastError();
        I.fft.reset();
        if (I.ownsStream && cudaStreamDestroy(I.stream) != cudaSuccess) cudaGetLastError();
    }
}

void CudaNufftPipeline::set_points(uword n1, const float* ux, const float* uy, const float* uz) {
    Impl& I = *impl_;
    checked_product("CudaNufftPipeline::set_points", {{"n1 (k-space samples)", n1}}, kMaxIndex,
                    "CudaNufftPipeline::kMaxIndex: the GPU kernels index it with 32-bit ints");
    if (n1 < 1) throw invalid_argument("CudaNufftPipeline::set_points: n1 (samples) must be at least 1, got 0");
    if (!ux || !uy || !uz) throw invalid_argument("CudaNufftPipeline::set_points: ux, uy, uz must not be null");
    // Stencil starts and offsets from the positions (as Gnufft makes them, there from double positions).
    const float* u[3] = {ux, uy, uz};
    std::vector<int> f[3];
    std::vector<float> y[3];
    const int* fp[3];
    const float* yp[3];
    for (int d = 0; d < 3; ++d) {
        f[d].assign(n1, 0);
        y[d].assign(n1, 0.f);
        if (I.g.N[d] > 1) {
            const double W = I.g.W;
            for (uword j = 0; j < n1; ++j) {
                const double uj = u[d][j], fj = std::ceil(uj - W / 2);
                f[d][j] = int(fj);
                y[d][j] = float(std::min(1.0, std::max(-1.0, 2 * (uj - fj) - (W - 1))));
            }
        }
        fp[d] = f[d].data();
        yp[d] = y[d].data();
    }
    set_points(n1, fp, yp);
}

void CudaNufftPipeline::set_points(uword n1, const int* const first[3], const float* const offset[3]) {
    Impl& I = *impl_;
    checked_product("CudaNufftPipeline::set_points", {{"n1 (k-space samples)", n1}}, kMaxIndex,
                    "CudaNufftPipeline::kMaxIndex: the GPU kernels index it with 32-bit ints");
    if (n1 < 1) throw invalid_argument("CudaNufftPipeline::set_points: n1 (samples) must be at least 1, got 0");
    for (int d = 0; d < 3; ++d)
        if (I.g.N[d] > 1 && (!first[d] || !offset[d]))
            throw invalid_argument("CudaNufftPipeline::set_points: first and offset must not be null");
    std::lock_guard<std::mutex> lock(I.mutex);
    DeviceGuard guard(I.device);
    // Transforms already queued read the sector order that is about to be overwritten.
    FORGE_CUDA_CHECK(cudaStreamSynchronize(I.stream));
    I.sort_points(n1, first, offset);
    I.hasTrajectory = false;
}

bool CudaNufftPipeline::set_trajectory(uword n1, const float* const k[3], bool on_device) {
    Impl& I = *impl_;
    const char* where = "CudaNufftPipeline::set_trajectory";
    checked_product(where, {{"n1 (k-space samples)", n1}}, kMaxIndex,
                    "CudaNufftPipeline::kMaxIndex: the GPU kernels index it with 32-bit ints");
    if (n1 < 1) throw invalid_argument(std::string(where) + ": n1 (samples) must be at least 1, got 0");
    if (!k || !k[0] || !k[1] || !k[2]) throw invalid_argument(std::string(where) + ": kx, ky, kz must not be null");
    std::lock_guard<std::mutex> lock(I.mutex);
    DeviceGuard guard(I.device);
    // Transforms already queued read the sector order that is about to be overwritten.
    FORGE_CUDA_CHECK(cudaStreamSynchronize(I.stream));
    return I.sort_on_device(n1, k, on_device);
}

bool CudaNufftPipeline::has_trajectory() const { return impl_->hasTrajectory; }

void CudaNufftPipeline::copy_trajectory(float* const k[3]) const {
    Impl& I = *impl_;
    if (!I.hasTrajectory) {
        throw invalid_argument("CudaNufftPipeline::copy_trajectory: the plan's points were given as stencils, "
                               "not as k (set_trajectory)");
    }
    std::lock_guard<std::mutex> lock(I.mutex);
    DeviceGuard guard(I.device);
    const size_t n = size_t(I.n1);
    for (int d = 0; d < 3; ++d) {
        FORGE_CUDA_CHECK(cudaMemcpyAsync(k[d], I.traj.as<float>() + d * n, n * sizeof(float), cudaMemcpyDeviceToHost,
                                         I.stream));
    }
    FORGE_CUDA_CHECK(cudaStreamSynchronize(I.stream));
}

CudaNufftPipeline::SortTimes CudaNufftPipeline::sort_times() const { return impl_->times; }

uword CudaNufftPipeline::n1() const { return uword(impl_->n1); }
CUstream_st* CudaNufftPipeline::stream() const { return impl_->stream; }
int CudaNufftPipeline::device() const { return impl_->device; }
uword CudaNufftPipeline::max_batch() const { return impl_->maxBatch; }
long long CudaNufftPipeline::num_sectors() const { return impl_->nsectors; }
long long CudaNufftPipeline::sector_entries() const { return impl_->n1; }
long long CudaNufftPipeline::num_subproblems() const { return impl_->nsub; }

uword CudaNufftPipeline::pass_size(uword batch) const {
    const Impl& I = *impl_;
    uword pass = I.maxBatch ? I.maxBatch : kDefaultPass;
    if (!I.maxBatch) {  // the default pass keeps the grid workspace near 1 GiB (at least one grid)
        const uword perGrid = uword(I.grid_elems()) * sizeof(float2);
        pass = std::min<uword>(pass, std::max<uword>(1, (uword(1) << 30) / perGrid));
    }
    return std::max<uword>(1, std::min<uword>({pass, batch, 65535}));  // the vector is blockIdx.y
}

void CudaNufftPipeline::synchronize() const { FORGE_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

void CudaNufftPipeline::execute(Direction direction, const float* d_in, float* d_out, uword batch) const {
    Impl& I = *impl_;
    if (!d_in || !d_out) throw invalid_argument("CudaNufftPipeline::execute: d_in and d_out must not be null");
    if (batch < 1) throw invalid_argument("CudaNufftPipeline::execute: batch must be at least 1, got 0");
    if (I.maxBatch && batch > I.maxBatch) {
        throw invalid_argument("CudaNufftPipeline::execute: batch = " + std::to_string(batch) +
                               " exceeds the plan's options.max_batch = " + std::to_string(I.maxBatch));
    }
    std::lock_guard<std::mutex> lock(I.mutex);
    DeviceGuard guard(I.device);
    const DevGeom& g = I.g;
    const uword pass = pass_size(batch);
    I.reserve_grids(pass);
    float2* grid = I.grid.as<float2>();
    const long long gridN = I.grid_elems();
    const long long n2 = (long long)g.N[0] * g.N[1] * g.N[2];
    const long long n1 = I.n1;
    const cudaStream_t st = I.stream;
    const bool forward = direction == Direction::forward;
    InterpKernel ik = nullptr;
    GridKernel gk = nullptr;
    kernels_for(g.W, ik, gk);
    for (uword b0 = 0; b0 < batch; b0 += pass) {
        const unsigned nb = unsigned(std::min(pass, batch - b0));
        if (forward) {
            const float2* img = reinterpret_cast<const float2*>(d_in) + b0 * n2;
            float2* kdata = reinterpret_cast<float2*>(d_out) + b0 * n1;
            FORGE_CUDA_CHECK(cudaMemsetAsync(grid, 0, size_t(nb) * size_t(gridN) * sizeof(float2), st));
            kernel_pad<<<dim3(unsigned((n2 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                img, grid, g, I.deapod[0].as<float>(), I.deapod[1].as<float>(), I.deapod[2].as<float>());
            FORGE_CUDA_CHECK_LAUNCH("kernel_pad");
            I.fft->execute(FftMemory::device, reinterpret_cast<forgeComplex<float>*>(grid), true, nb);
            ik<<<dim3(unsigned((n1 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(grid, kdata, g,
                                                                                        I.order.as<int>(),
                                                                                        I.first.as<int4>(),
                                                                                        I.offset.as<float4>(), I.n1);
            FORGE_CUDA_CHECK_LAUNCH("kernel_interp");
        } else {
            const float2* kdata = reinterpret_cast<const float2*>(d_in) + b0 * n1;
            float2* img = reinterpret_cast<float2*>(d_out) + b0 * n2;
            FORGE_CUDA_CHECK(cudaMemsetAsync(grid, 0, size_t(nb) * size_t(gridN) * sizeof(float2), st));
            // n1 >= 1 (every plan's check), so there is at least one subproblem.
            gk<<<dim3(unsigned(I.nsub), nb), kThreads, I.shmem, st>>>(kdata, grid, g, I.subSector.as<int>(),
                                                                      I.subRange.as<int2>(), I.order.as<int>(),
                                                                      I.first.as<int4>(), I.offset.as<float4>(), I.n1);
            FORGE_CUDA_CHECK_LAUNCH("kernel_spread_tiles");
            I.fft->execute(FftMemory::device, reinterpret_cast<forgeComplex<float>*>(grid), false, nb);
            kernel_crop<<<dim3(unsigned((n2 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                grid, img, g, I.deapod[0].as<float>(), I.deapod[1].as<float>(), I.deapod[2].as<float>());
            FORGE_CUDA_CHECK_LAUNCH("kernel_crop");
        }
    }
}

}  // namespace cuda
}  // namespace forge
