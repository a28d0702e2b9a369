// CudaNufftPipeline: GPU Kaiser-Bessel NUFFT for Gnufft<float> (see CudaNufftPipeline.h).
//
// Gridding follows the sector-based, output-driven scheme of Gregerson: the oversampled grid is
// split into sectors (32x32 in 2D, 16x16x16 in 3D); on the host, once, each sample is listed in every
// sector its kernel footprint touches. One thread block per subproblem (a sector's list, or a run of a
// crowded one) accumulates its samples into a shared-memory tile (shared-memory atomics only) and writes the
// finished tile to global memory once: whole sectors by plain stores (every grid cell belongs to exactly one
// sector), split sectors by atomic adds onto a grid cleared first. The kernel weights are polynomials in
// the sample's offset, evaluated once per axis and entry (Horner); widths 2..8 are compiled each.
// A batch runs with the vector in blockIdx.y: every kernel offsets its input and output by that vector.
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

// Adjoint step 1: one block per subproblem, a run of entries of one sector's list (see sort_points; a sector with few
// entries is one subproblem; a crowded one, e.g. the centre of a spiral, is split so that its work spreads over several
// SMs). The block accumulates in a shared-memory tile, then writes the tile once: a plain store when it is its sector's
// only subproblem, else atomic adds onto the (cleared) grid, so global atomics occur only in that final write of split
// sectors, never in the hot loop. Each entry carries its sample's stencil start (secFirst) and offsets with the sample
// index in .w (secOffset).
template <int W>
__global__ void __launch_bounds__(kThreads)
    kernel_grid_sectors(const float2* __restrict__ in, float2* __restrict__ grid, const DevGeom g,
                        const int2* __restrict__ subSector, const longlong2* __restrict__ subRange,
                        const int4* __restrict__ secFirst, const float4* __restrict__ secOffset, int n1) {
    extern __shared__ float2 tile[];
    const int2 info = subSector[blockIdx.x];  // (sector, split)
    const int sec = info.x;
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
    const longlong2 range = subRange[blockIdx.x];
    const long long beg = range.x;
    const int count = int(range.y - beg);
    const int4* __restrict__ sf = secFirst + beg;
    const float4* __restrict__ so = secOffset + beg;
    // A list keeps its samples in trajectory order, so neighbouring entries of a spiral or radial line fall on
    // the same tile cells and a warp's shared-memory atomics on them would serialise. Threads therefore take
    // entries about count/32 apart: k -> k * stride mod count, with stride coprime to count, visits every entry
    // once. (Reads of sf and so stay whole 32-byte sectors per entry.)
    int stride = 1;
    if (count > 64) {
        stride = (count / 32) | 1;
        while (gcd_int(stride, count) != 1) stride += 2;
    }
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        const int e = int((long long)k * stride % count);
        const int4 f = sf[e];
        const float4 y = so[e];
        const float2 v = in[__float_as_int(y.w)];
        float wx[W], wy[W], wz[W];
        axis_weights<W>(g, 0, y.x, wx);
        axis_weights<W>(g, 1, y.y, wy);
        axis_weights<W>(g, 2, y.z, wz);
        int lx[W];
#pragma unroll
        for (int a = 0; a < W; ++a) {
            lx[a] = wrapi(f.x + a, g.G[0]) - o[0];
            if (a >= g.taps[0] || lx[a] < 0 || lx[a] >= sz3[0]) lx[a] = -1;  // not in this sector
        }
        constexpr int kUnrollZ = W <= 8 ? W : 1;
#pragma unroll kUnrollZ
        for (int c = 0; c < W; ++c) {
            if (c >= g.taps[2]) break;
            const int lz = wrapi(f.z + c, g.G[2]) - o[2];
            if (lz < 0 || lz >= sz3[2]) continue;
#pragma unroll
            for (int b = 0; b < W; ++b) {
                if (b >= g.taps[1]) break;
                const int ly = wrapi(f.y + b, g.G[1]) - o[1];
                if (ly < 0 || ly >= sz3[1]) continue;
                const float wzy = wz[c] * wy[b], vr = wzy * v.x, vi = wzy * v.y;
                float2* row = tile + (lz * sz3[1] + ly) * sz3[0];
#pragma unroll
                for (int a = 0; a < W; ++a) {
                    if (lx[a] < 0) continue;
                    atomicAdd(&row[lx[a]].x, vr * wx[a]);  // shared-memory atomics only
                    atomicAdd(&row[lx[a]].y, vi * wx[a]);
                }
            }
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < ncell; c += blockDim.x) {
        const int lx = c % sz3[0], ly = (c / sz3[0]) % sz3[1], lz = c / (sz3[0] * sz3[1]);
        float2* cell = grid + (o[0] + lx) + (long long)g.G[0] * ((o[1] + ly) + (long long)g.G[1] * (o[2] + lz));
        const float2 v = tile[c];
        if (!info.y) {
            *cell = v;
        } else if (v.x != 0.f || v.y != 0.f) {
            atomicAdd(&cell->x, v.x);
            atomicAdd(&cell->y, v.y);
        }
    }
}

}  // namespace

// Host presort: list every sample in each sector its footprint touches (counting sort, two passes), and
// upload the lists (with each entry's stencil start and offsets), the sample order of the forward
// interpolation and the starts and offsets in that order.
void CudaNufftPipeline::Impl::sort_points(uword n1u, const int* const fst[3], const float* const off[3]) {
    n1 = int(n1u);
    auto start_of = [&](int d, int j) { return g.N[d] == 1 ? 0 : fst[d][j]; };
    auto offset_of = [&](int d, int j) { return g.N[d] == 1 ? 0.f : off[d][j]; };
    std::vector<long long> start(nsectors + 1, 0);
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<long long> fill;
        std::vector<int4> ef;
        std::vector<float4> eo;
        if (pass == 1) {
            for (long long s = 0; s < nsectors; ++s) start[s + 1] += start[s];
            entries = start[nsectors];
            fill.assign(start.begin(), start.end() - 1);
            ef.resize(entries);
            eo.resize(entries);
        }
        for (int j = 0; j < n1; ++j) {
            int sx[kMaxW], sy[kMaxW], sz[kMaxW];
            const int4 f = make_int4(start_of(0, j), start_of(1, j), start_of(2, j), 0);
            const int cx = footprint_sectors(g, 0, f.x, sx), cy = footprint_sectors(g, 1, f.y, sy),
                      cz = footprint_sectors(g, 2, f.z, sz);
            for (int c = 0; c < cz; ++c)
                for (int b = 0; b < cy; ++b)
                    for (int a = 0; a < cx; ++a) {
                        const long long s = sx[a] + (long long)g.nsec[0] * (sy[b] + (long long)g.nsec[1] * sz[c]);
                        if (pass == 0) {
                            start[s + 1]++;
                        } else {
                            const long long e = fill[s]++;
                            ef[e] = f;
                            int jbits = j;
                            float jf;
                            std::memcpy(&jf, &jbits, sizeof jf);  // the sample index rides in .w as int bits
                            eo[e] = make_float4(offset_of(0, j), offset_of(1, j), offset_of(2, j), jf);
                        }
                    }
        }
        if (pass == 1) {
            // Sample order for the forward interpolation: the order of first appearance in the sector lists.
            std::vector<int> ord;
            ord.reserve(n1);
            std::vector<char> seen(n1, 0);
            for (const float4& p : eo) {
                int j;
                std::memcpy(&j, &p.w, sizeof j);
                if (!seen[j]) {
                    seen[j] = 1;
                    ord.push_back(j);
                }
            }
            std::vector<int4> sf(n1);
            std::vector<float4> so(n1);
            for (int e = 0; e < n1; ++e) {
                const int j = ord[e];
                sf[e] = make_int4(start_of(0, j), start_of(1, j), start_of(2, j), 0);
                so[e] = make_float4(offset_of(0, j), offset_of(1, j), offset_of(2, j), 0.f);
            }
            upload_into(secFirst, ef.data(), ef.size());
            upload_into(secOffset, eo.data(), eo.size());
            upload_into(order, ord.data(), ord.size());
            upload_into(first, sf.data(), sf.size());
            upload_into(offset, so.data(), so.size());
        }
    }
    std::vector<long long> count(nsectors);
    for (long long sct = 0; sct < nsectors; ++sct) count[sct] = start[sct + 1] - start[sct];
    make_subproblems(count);
}

void CudaNufftPipeline::Impl::make_subproblems(const std::vector<long long>& count) {
    std::vector<long long> start(nsectors + 1, 0);
    for (long long sct = 0; sct < nsectors; ++sct) start[sct + 1] = start[sct] + count[sct];
    entries = start[nsectors];
    // Subproblems: each sector's list cut into runs of at most 'chunk' entries, chunk = max(1024, twice the
    // mean entries per sector), so that evenly loaded sectors stay whole and crowded ones are shared out.
    const long long chunk =
        std::max<long long>(1024, 2 * ((entries + nsectors - 1) / std::max<long long>(nsectors, 1)));
    std::vector<int2> info;
    std::vector<longlong2> range;
    split = false;
    for (long long sct = 0; sct < nsectors; ++sct) {
        const long long b = start[sct], e = start[sct + 1];
        const long long parts = std::max<long long>(1, (e - b + chunk - 1) / chunk);
        split |= parts > 1;
        for (long long q = 0; q < parts; ++q) {
            info.push_back(make_int2(int(sct), parts > 1 ? 1 : 0));
            range.push_back(make_longlong2(b + q * chunk, std::min(e, b + (q + 1) * chunk)));
        }
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
using GridKernel = void (*)(const float2*, float2*, const DevGeom, const int2*, const longlong2*, const int4*,
                            const float4*, int);
// Widths 2..8 (float's useful range) are compiled each; wider kernels share the W = 16 instance, whose
// loops stop at the plan's width (DevGeom::taps) and whose Horner rows past it hold zeros.
constexpr int kMaxFixedW = 8;
template <int W = 2>
void kernels_for(int width, InterpKernel& ik, GridKernel& gk) {
    if constexpr (W <= kMaxFixedW) {
        if (width == W) {
            ik = &kernel_interp<W>;
            gk = &kernel_grid_sectors<W>;
        } else {
            kernels_for<W + 1>(width, ik, gk);
        }
    } else {
        ik = &kernel_interp<kMaxW>;
        gk = &kernel_grid_sectors<kMaxW>;
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
    for (int d = 0; d < 3; ++d) {
        g.taps[d] = geom.N[d] > 1 ? g.W : 1;
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
        FORGE_CUDA_CHECK(cudaFuncSetAttribute(gk, cudaFuncAttributeMaxDynamicSharedMemorySize, int(I.shmem)));
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
    // Transforms already queued read the sector lists that are about to be overwritten.
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
    // Transforms already queued read the sector lists that are about to be overwritten.
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
long long CudaNufftPipeline::sector_entries() const { return impl_->entries; }
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
            if (I.split) FORGE_CUDA_CHECK(cudaMemsetAsync(grid, 0, size_t(nb) * size_t(gridN) * sizeof(float2), st));
            gk<<<dim3(unsigned(I.nsub), nb), kThreads, I.shmem, st>>>(kdata, grid, g, I.subSector.as<int2>(),
                                                                      I.subRange.as<longlong2>(), I.secFirst.as<int4>(),
                                                                      I.secOffset.as<float4>(), I.n1);
            FORGE_CUDA_CHECK_LAUNCH("kernel_grid_sectors");
            I.fft->execute(FftMemory::device, reinterpret_cast<forgeComplex<float>*>(grid), false, nb);
            kernel_crop<<<dim3(unsigned((n2 + kThreads - 1) / kThreads), nb), kThreads, 0, st>>>(
                grid, img, g, I.deapod[0].as<float>(), I.deapod[1].as<float>(), I.deapod[2].as<float>());
            FORGE_CUDA_CHECK_LAUNCH("kernel_crop");
        }
    }
}

}  // namespace cuda
}  // namespace forge
