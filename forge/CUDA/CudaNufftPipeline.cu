// CudaNufftPipeline: GPU Kaiser-Bessel NUFFT for Gnufft<float> (see CudaNufftPipeline.h).
//
// Gridding follows the sector-based, output-driven scheme of Gregerson: the oversampled grid is
// split into sectors (32x32 in 2D, 16x16x16 in 3D); on the host, once, each sample is listed in every
// sector its kernel footprint touches. One thread block per sector accumulates its samples into a
// shared-memory tile (shared-memory atomics only) and writes the finished tile to global memory; every grid
// cell belongs to exactly one sector, so the grid needs no clearing and no global atomics at all.
// A batch runs with the vector in blockIdx.y: every kernel offsets its input and output by that vector.
#include "forge/CUDA/CudaNufftPipeline.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <sstream>
#include <vector>

#include "forge/CUDA/CudaCheck.h"
#include "forge/CUDA/CudaFft.h"
#include "forge/Core/DeviceMemory.h"

namespace forge {
namespace cuda {

namespace {
constexpr int kMaxW = 16;
constexpr int kThreads = 256;

struct DevGeom {
    int N[3], G[3], S[3], nsec[3];
    int W;
    float half;  // W / 2
    const float* lut;
    float lutScale, lutMax;
};

__device__ __forceinline__ int wrapi(int g, int G) { return g < 0 ? g + G : (g >= G ? g - G : g); }

__device__ __forceinline__ float kb(const DevGeom& g, float dist) {
    float x = fminf(fabsf(dist) * g.lutScale, g.lutMax);
    int i = int(x);
    float f = x - float(i);
    float a = __ldg(g.lut + i), b = __ldg(g.lut + i + 1);
    return a + f * (b - a);
}

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
__global__ void kernel_pad(const float2* __restrict__ img, float2* __restrict__ grid, DevGeom g,
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
__global__ void kernel_crop(const float2* __restrict__ grid, float2* __restrict__ img, DevGeom g,
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

// Forward step 3: one thread per sample (in sector order), gathering its W^d neighbourhood.
__global__ void kernel_interp(const float2* __restrict__ grid, float2* __restrict__ out, DevGeom g,
                              const int* __restrict__ order, const float* __restrict__ ux, const float* __restrict__ uy,
                              const float* __restrict__ uz, int n1) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n1) return;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    out += blockIdx.y * (long long)n1;
    int j = order[e];
    const float u[3] = {ux[j], uy[j], uz[j]};
    int taps[3], first[3];
    for (int d = 0; d < 3; ++d) {
        taps[d] = g.N[d] > 1 ? g.W : 1;
        first[d] = g.N[d] > 1 ? int(ceilf(u[d] - g.half)) : 0;
    }
    float wx[kMaxW];
    int ix[kMaxW];
    for (int t = 0; t < taps[0]; ++t) {
        wx[t] = g.N[0] > 1 ? kb(g, u[0] - float(first[0] + t)) : 1.f;
        ix[t] = wrapi(first[0] + t, g.G[0]);
    }
    float re = 0.f, im = 0.f;
    for (int c = 0; c < taps[2]; ++c) {
        float wz = g.N[2] > 1 ? kb(g, u[2] - float(first[2] + c)) : 1.f;
        long long oz = (long long)wrapi(first[2] + c, g.G[2]) * g.G[1];
        for (int b = 0; b < taps[1]; ++b) {
            float wzy = wz * (g.N[1] > 1 ? kb(g, u[1] - float(first[1] + b)) : 1.f);
            const float2* row = grid + (oz + wrapi(first[1] + b, g.G[1])) * g.G[0];
            float rr = 0.f, ri = 0.f;
            for (int a = 0; a < taps[0]; ++a) {
                float2 v = __ldg(row + ix[a]);
                rr += wx[a] * v.x;
                ri += wx[a] * v.y;
            }
            re += wzy * rr;
            im += wzy * ri;
        }
    }
    out[j] = make_float2(re, im);
}

// Adjoint step 1: one block per sector; shared-memory tile; every cell of the sector written once.
__global__ void kernel_grid_sectors(const float2* __restrict__ in, float2* __restrict__ grid, DevGeom g,
                                    const long long* __restrict__ secStart, const int* __restrict__ secIdx,
                                    const float4* __restrict__ secU, int n1) {
    extern __shared__ float2 tile[];
    const int sec = blockIdx.x;
    in += blockIdx.y * (long long)n1;
    grid += blockIdx.y * ((long long)g.G[0] * g.G[1] * g.G[2]);
    const int sx = sec % g.nsec[0], sy = (sec / g.nsec[0]) % g.nsec[1], sz = sec / (g.nsec[0] * g.nsec[1]);
    const int o[3] = {sx * g.S[0], sy * g.S[1], sz * g.S[2]};
    const int sz3[3] = {min(g.S[0], g.G[0] - o[0]), min(g.S[1], g.G[1] - o[1]), min(g.S[2], g.G[2] - o[2])};
    const int ncell = sz3[0] * sz3[1] * sz3[2];
    for (int c = threadIdx.x; c < ncell; c += blockDim.x) tile[c] = make_float2(0.f, 0.f);
    __syncthreads();

    // Sector list offsets in 64 bits (the (sector, sample) entries pass 2^31 near 2.7e8 samples in 3D); within
    // a sector 32 bits suffice, as a sample is listed at most once per sector and n1 fits an int.
    const long long beg = secStart[sec];
    const int count = int(secStart[sec + 1] - beg);
    const float4* __restrict__ su = secU + beg;
    const int* __restrict__ si = secIdx + beg;
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
        const float4 p = su[e];
        const float2 v = in[si[e]];
        const float u[3] = {p.x, p.y, p.z};
        int first[3], taps[3];
        for (int d = 0; d < 3; ++d) {
            taps[d] = g.N[d] > 1 ? g.W : 1;
            first[d] = g.N[d] > 1 ? int(ceilf(u[d] - g.half)) : 0;
        }
        for (int c = 0; c < taps[2]; ++c) {
            const int lz = wrapi(first[2] + c, g.G[2]) - o[2];
            if (lz < 0 || lz >= sz3[2]) continue;
            const float wz = g.N[2] > 1 ? kb(g, u[2] - float(first[2] + c)) : 1.f;
            for (int b = 0; b < taps[1]; ++b) {
                const int ly = wrapi(first[1] + b, g.G[1]) - o[1];
                if (ly < 0 || ly >= sz3[1]) continue;
                const float wzy = wz * (g.N[1] > 1 ? kb(g, u[1] - float(first[1] + b)) : 1.f);
                float2* row = tile + (lz * sz3[1] + ly) * sz3[0];
                for (int a = 0; a < taps[0]; ++a) {
                    const int lx = wrapi(first[0] + a, g.G[0]) - o[0];
                    if (lx < 0 || lx >= sz3[0]) continue;
                    const float w = wzy * (g.N[0] > 1 ? kb(g, u[0] - float(first[0] + a)) : 1.f);
                    atomicAdd(&row[lx].x, w * v.x);  // shared-memory atomics only
                    atomicAdd(&row[lx].y, w * v.y);
                }
            }
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < ncell; c += blockDim.x) {
        const int lx = c % sz3[0], ly = (c / sz3[0]) % sz3[1], lz = c / (sz3[0] * sz3[1]);
        grid[(o[0] + lx) + (long long)g.G[0] * ((o[1] + ly) + (long long)g.G[1] * (o[2] + lz))] = tile[c];
    }
}

// Copies n entries to the device into b, reallocating only when b is too small.
template <typename T>
void upload_into(DeviceBuffer& b, const T* h, size_t n) {
    if (b.bytes() < n * sizeof(T) || !b) b = DeviceBuffer(std::max<size_t>(n, 1) * sizeof(T));
    if (n) device::copy_to_device(b.get(), h, n * sizeof(T));
}
}  // namespace

struct CudaNufftPipeline::Impl {
    DevGeom g{};
    int n1 = 0;
    long long nsectors = 0, entries = 0;
    size_t shmem = 0;
    DeviceBuffer u[3], deapod[3], lut, order, secStart, secIdx, secU, grid;
    uword gridVectors = 0;  // oversampled grids the workspace holds
    std::unique_ptr<CudaFftPlan<float>> fft;
    cudaStream_t stream = nullptr;
    bool ownsStream = false;
    int device = 0;
    uword maxBatch = 0;
    std::mutex mutex;  // execute and set_points share the workspace and the sector lists

    long long grid_elems() const { return (long long)g.G[0] * g.G[1] * g.G[2]; }
    void sort_points(uword n1, const float* ux, const float* uy, const float* uz);
    void reserve_grids(uword vectors);
};

// Host presort: list every sample in each sector its footprint touches (counting sort, two passes), and
// upload the lists, the sample order of the forward interpolation and the positions.
void CudaNufftPipeline::Impl::sort_points(uword n1u, const float* ux, const float* uy, const float* uz) {
    n1 = int(n1u);
    const float* pos[3] = {ux, uy, uz};
    auto sectors_along = [&](int d, float u, int* out) {
        if (g.N[d] == 1) {
            out[0] = 0;
            return 1;
        }
        const int first = int(std::ceil(u - g.half));
        int cnt = 0;
        for (int t = 0; t < g.W; ++t) {
            int gi = first + t;
            gi = gi < 0 ? gi + g.G[d] : (gi >= g.G[d] ? gi - g.G[d] : gi);
            const int s = gi / g.S[d];
            bool seen = false;
            for (int q = 0; q < cnt; ++q) seen |= out[q] == s;
            if (!seen) out[cnt++] = s;
        }
        return cnt;
    };
    std::vector<long long> start(nsectors + 1, 0);
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<long long> fill;
        std::vector<int> idx;
        std::vector<float4> pu;
        if (pass == 1) {
            for (long long s = 0; s < nsectors; ++s) start[s + 1] += start[s];
            entries = start[nsectors];
            fill.assign(start.begin(), start.end() - 1);
            idx.resize(entries);
            pu.resize(entries);
        }
        for (int j = 0; j < n1; ++j) {
            int sx[kMaxW], sy[kMaxW], sz[kMaxW];
            const float px = pos[0][j], py = pos[1][j], pz = pos[2][j];
            const int cx = sectors_along(0, px, sx), cy = sectors_along(1, py, sy), cz = sectors_along(2, pz, sz);
            for (int c = 0; c < cz; ++c)
                for (int b = 0; b < cy; ++b)
                    for (int a = 0; a < cx; ++a) {
                        const long long s = sx[a] + (long long)g.nsec[0] * (sy[b] + (long long)g.nsec[1] * sz[c]);
                        if (pass == 0) {
                            start[s + 1]++;
                        } else {
                            const long long e = fill[s]++;
                            idx[e] = j;
                            pu[e] = make_float4(px, py, pz, 0.f);
                        }
                    }
        }
        if (pass == 1) {
            // Sample order for the forward interpolation: the order of first appearance in the sector lists.
            std::vector<int> ord;
            ord.reserve(n1);
            std::vector<char> seen(n1, 0);
            for (int j : idx)
                if (!seen[j]) {
                    seen[j] = 1;
                    ord.push_back(j);
                }
            upload_into(secIdx, idx.data(), idx.size());
            upload_into(secU, pu.data(), pu.size());
            upload_into(order, ord.data(), ord.size());
        }
    }
    upload_into(secStart, start.data(), start.size());
    for (int d = 0; d < 3; ++d) upload_into(u[d], pos[d], size_t(n1));
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
    g.W = int(geom.W);
    g.half = float(geom.W) / 2.f;
    for (int d = 0; d < 3; ++d) {
        g.N[d] = int(geom.N[d]);
        g.G[d] = int(geom.G[d]);
        g.S[d] = int(sector_size(geom, d));
        g.nsec[d] = (g.G[d] + g.S[d] - 1) / g.S[d];
    }
    I.nsectors = (long long)g.nsec[0] * g.nsec[1] * g.nsec[2];
    I.shmem = size_t(g.S[0]) * g.S[1] * g.S[2] * sizeof(float2);
    if (options.stream) {
        I.stream = options.stream;
    } else {
        FORGE_CUDA_CHECK(cudaStreamCreate(&I.stream));  // blocking stream: ordered with the legacy default stream
        I.ownsStream = true;
    }
    I.sort_points(geom.n1, geom.u[0], geom.u[1], geom.u[2]);
    for (int d = 0; d < 3; ++d) upload_into(I.deapod[d], geom.deapod[d], geom.N[d]);
    upload_into(I.lut, geom.lut, geom.lutSize);
    g.lut = I.lut.as<float>();
    g.lutScale = geom.lutScale;
    g.lutMax = float(geom.lutSize - 2);
    I.reserve_grids(I.maxBatch ? std::min<uword>(I.maxBatch, 65535) : 1);
    I.fft.reset(new CudaFftPlan<float>(g.G[0], g.G[1], g.G[2], I.stream));
    if (I.shmem > 48 * 1024) {
        FORGE_CUDA_CHECK(
            cudaFuncSetAttribute(kernel_grid_sectors, cudaFuncAttributeMaxDynamicSharedMemorySize, int(I.shmem)));
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
    std::lock_guard<std::mutex> lock(I.mutex);
    DeviceGuard guard(I.device);
    // Transforms already queued read the sector lists that are about to be overwritten.
    FORGE_CUDA_CHECK(cudaStreamSynchronize(I.stream));
    I.sort_points(n1, ux, uy, uz);
}

uword CudaNufftPipeline::n1() const { return uword(impl_->n1); }
CUstream_st* CudaNufftPipeline::stream() const { return impl_->stream; }
int CudaNufftPipeline::device() const { return impl_->device; }
uword CudaNufftPipeline::max_batch() const { return impl_->maxBatch; }
long long CudaNufftPipeline::num_sectors() const { return impl_->nsectors; }
long long CudaNufftPipeline::sector_entries() const { return impl_->entries; }

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
    for (uword b0 = 0; b0 < batch; b0 += pass) {
        const unsigned nb = unsigned(std::min(pass, batch - b0));
        if (forward) {
            const float2* img = reinterpret_cast<const float2*>(d_in) + b0 * n2;
            float2* kdata = reinterpret_cast<float2*>(d_out) + b0 * n1;
            FORGE_CUDA_CHECK(cudaMemsetAsync(grid, 0, size_t(nb) * size_t(gridN) * sizeof(float2), st));
            kernel_pad<<<dim3(unsigned((n2 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                img, grid, g, I.deapod[0].as<float>(), I.deapod[1].as<float>(), I.deapod[2].as<float>());
            FORGE_CUDA_CHECK_LAUNCH("kernel_pad");
            I.fft->exec(reinterpret_cast<float*>(grid), true, nb);
            kernel_interp<<<dim3(unsigned((n1 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                grid, kdata, g, I.order.as<int>(), I.u[0].as<float>(), I.u[1].as<float>(), I.u[2].as<float>(), I.n1);
            FORGE_CUDA_CHECK_LAUNCH("kernel_interp");
        } else {
            const float2* kdata = reinterpret_cast<const float2*>(d_in) + b0 * n1;
            float2* img = reinterpret_cast<float2*>(d_out) + b0 * n2;
            kernel_grid_sectors<<<dim3(unsigned(I.nsectors), nb), kThreads, I.shmem, st>>>(kdata, grid, g,
                                                                                           I.secStart.as<long long>(),
                                                                                           I.secIdx.as<int>(),
                                                                                           I.secU.as<float4>(), I.n1);
            FORGE_CUDA_CHECK_LAUNCH("kernel_grid_sectors");
            I.fft->exec(reinterpret_cast<float*>(grid), false, nb);
            kernel_crop<<<dim3(unsigned((n2 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                grid, img, g, I.deapod[0].as<float>(), I.deapod[1].as<float>(), I.deapod[2].as<float>());
            FORGE_CUDA_CHECK_LAUNCH("kernel_crop");
        }
    }
}

}  // namespace cuda
}  // namespace forge
