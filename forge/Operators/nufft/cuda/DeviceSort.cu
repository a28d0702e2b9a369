// CudaNufftPipeline::set_trajectory: the samples of a trajectory sorted into the gridding sectors on the device.
//
//   1. kernel_convert, one thread per sample: checks k (finite, within the band; a flag for the host), converts it to
//      the stencil start and offsets per axis (in double, as Gnufft's host plan does: the same stencils bit for bit),
//      counts the sectors its footprint touches (entryCount) and adds them to the per-sector counts (a shared-memory
//      histogram per block when the sectors fit, else global atomics), and keys it by its home sector (the lowest
//      sector it touches: the sector where it first appears in the lists, the order of the forward interpolation).
//   2. CUB exclusive sum of entryCount: each sample's first entry; the flag, the entry total and the sector counts
//      come back to the host in one copy (the only wait before the end), which cuts the lists into subproblems.
//   3. kernel_expand writes each sample's (sector, sample) entries; a stable CUB radix sort by sector makes the lists
//      (each keeps the trajectory order, as the host presort's counting sort does); kernel_gather copies every
//      entry's stencil next to it. A second radix sort by home sector gives the forward order.
// Nothing the transforms read is written before the check has passed, so a refused trajectory leaves the plan as it
// was. All scratch is plan memory that only grows.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <chrono>
#include <climits>
#include <vector>

#include "forge/Core/BandEdge.h"
#include "forge/Operators/nufft/cuda/PipelineImpl.cuh"

namespace forge {
namespace cuda {

using namespace nufft_detail;

namespace {
// Sectors a per-block shared-memory histogram covers (48 KiB of counters); more go straight to global atomics.
constexpr int kHistBins = 12288;

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The sectors of a stencil start on every axis (footprint_sectors); returns how many (sector, sample) entries.
struct Footprint {
    int s[3][kMaxW];
    int c[3];
    __device__ __forceinline__ int count() const { return c[0] * c[1] * c[2]; }
    __device__ __forceinline__ unsigned sector(const DevGeom& g, int a, int b, int cz) const {
        return unsigned(s[0][a] + g.nsec[0] * (s[1][b] + g.nsec[1] * s[2][cz]));
    }
};
__device__ __forceinline__ void footprint(const DevGeom& g, int4 f, Footprint& fp) {
    fp.c[0] = footprint_sectors(g, 0, f.x, fp.s[0]);
    fp.c[1] = footprint_sectors(g, 1, f.y, fp.s[1]);
    fp.c[2] = footprint_sectors(g, 2, f.z, fp.s[2]);
}

// Step 1 (grid-stride loop). stats: [0] = some sample refused, [1] = entries (step 2), [2 + s] = entries of sector s.
template <bool SharedHist>
__global__ void __launch_bounds__(kThreads)
    kernel_convert(const float* __restrict__ k, int n1, const DevGeom g, int4* __restrict__ sampFirst,
                   float4* __restrict__ sampOffset, long long* __restrict__ entryCount, unsigned* __restrict__ homeKey,
                   int* __restrict__ sampleIndex, unsigned long long* __restrict__ stats) {
    extern __shared__ unsigned hist[];
    const int nsec = g.nsec[0] * g.nsec[1] * g.nsec[2];
    if (SharedHist) {
        for (int i = threadIdx.x; i < nsec; i += blockDim.x) hist[i] = 0;
        __syncthreads();
    }
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n1; j += gridDim.x * blockDim.x) {
        int f[3] = {0, 0, 0};
        float y[3] = {0.f, 0.f, 0.f};
        bool ok = true;
        for (int d = 0; d < 3; ++d) {
            // Gnufft's band: [-N/2, N/2] on an axis longer than 1 (both edges are the same sample), else [-1/2, 1/2],
            // a rounding past an edge being the edge (forge/Core/BandEdge.h).
            const double v = double(k[size_t(d) * size_t(n1) + j]);
            if (!within_band(v, band_half_width((unsigned long long)g.N[d]))) {  // also NaN and infinities
                ok = false;
                continue;
            }
            if (g.N[d] == 1) continue;
            // Position in grid cells, wrapped into [0, G), and its stencil, exactly as Gnufft::sort_points computes
            // them (each step rounded as there: no fused multiply-add changes a result).
            const double G = double(g.G[d]);
            double u = __dmul_rn(v, G) / double(g.N[d]);
            if (u < 0) u = __dadd_rn(u, G);
            if (u >= G) u = 0;
            const double fd = ceil(__dsub_rn(u, double(g.W) / 2));
            const double t = __dsub_rn(__dmul_rn(2.0, __dsub_rn(u, fd)), double(g.W - 1));
            f[d] = int(fd);
            y[d] = float(t < 1.0 ? (t > -1.0 ? t : -1.0) : 1.0);
        }
        sampleIndex[j] = j;
        if (!ok) {
            atomicOr(stats, 1ull);
            entryCount[j] = 0;
            homeKey[j] = 0;
            sampFirst[j] = make_int4(0, 0, 0, 0);
            sampOffset[j] = make_float4(0.f, 0.f, 0.f, __int_as_float(j));
            continue;
        }
        const int4 f4 = make_int4(f[0], f[1], f[2], 0);
        Footprint fp;
        footprint(g, f4, fp);
        entryCount[j] = fp.count();
        int lowest[3];
        for (int d = 0; d < 3; ++d) {
            lowest[d] = fp.s[d][0];
            for (int q = 1; q < fp.c[d]; ++q) lowest[d] = min(lowest[d], fp.s[d][q]);
        }
        // The sector index grows with each axis's sector, so the lowest sector touched takes the lowest on each.
        homeKey[j] = unsigned(lowest[0] + g.nsec[0] * (lowest[1] + g.nsec[1] * lowest[2]));
        for (int c = 0; c < fp.c[2]; ++c)
            for (int b = 0; b < fp.c[1]; ++b)
                for (int a = 0; a < fp.c[0]; ++a) {
                    const unsigned s = fp.sector(g, a, b, c);
                    if (SharedHist) {
                        atomicAdd(&hist[s], 1u);
                    } else {
                        atomicAdd(&stats[2 + s], 1ull);
                    }
                }
        sampFirst[j] = f4;
        // The sample index rides in .w as int bits (the gridding kernel reads it there).
        sampOffset[j] = make_float4(y[0], y[1], y[2], __int_as_float(j));
    }
    if (SharedHist) {
        __syncthreads();
        for (int i = threadIdx.x; i < nsec; i += blockDim.x)
            if (hist[i]) atomicAdd(&stats[2 + i], (unsigned long long)hist[i]);
    }
}

// Step 3: sample j's entries at entryStart[j], keyed by sector.
__global__ void __launch_bounds__(kThreads)
    kernel_expand(const int4* __restrict__ sampFirst, const long long* __restrict__ entryStart, int n1, const DevGeom g,
                  unsigned* __restrict__ listKey, int* __restrict__ listSample) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n1) return;
    Footprint fp;
    footprint(g, sampFirst[j], fp);
    long long e = entryStart[j];
    for (int c = 0; c < fp.c[2]; ++c)
        for (int b = 0; b < fp.c[1]; ++b)
            for (int a = 0; a < fp.c[0]; ++a, ++e) {
                listKey[e] = fp.sector(g, a, b, c);
                listSample[e] = j;
            }
}

// Entry e gets the stencil of sample index[e].
__global__ void __launch_bounds__(kThreads)
    kernel_gather(const int* __restrict__ index, int n, const int4* __restrict__ sampFirst,
                  const float4* __restrict__ sampOffset, int4* __restrict__ outFirst, float4* __restrict__ outOffset) {
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    const int j = index[e];
    outFirst[e] = sampFirst[j];
    outOffset[e] = sampOffset[j];
}

unsigned blocks_for(long long n) { return unsigned((n + kThreads - 1) / kThreads); }
}  // namespace

bool CudaNufftPipeline::Impl::sort_on_device(uword n1u, const float* const k[3], bool onDevice) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t n = size_t(n1u);
    const int nk = int(n1u);  // check_sizes / set_trajectory bound n1 by kMaxIndex
    reserve_bytes(trajNext, 3 * n * sizeof(float));
    float* kd = trajNext.as<float>();
    for (int d = 0; d < 3; ++d) {
        FORGE_CUDA_CHECK(cudaMemcpyAsync(kd + d * n, k[d], n * sizeof(float),
                                         onDevice ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, stream));
    }
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    times.upload = since(t0);
    const auto t1 = std::chrono::steady_clock::now();

    // Step 1 and 2: check, convert, count; one copy back.
    reserve_bytes(sampFirst, n * sizeof(int4));
    reserve_bytes(sampOffset, n * sizeof(float4));
    reserve_bytes(entryCount, (n + 1) * sizeof(long long));
    reserve_bytes(entryStart, (n + 1) * sizeof(long long));
    reserve_bytes(homeKey, n * sizeof(unsigned));
    reserve_bytes(homeKeySorted, n * sizeof(unsigned));
    reserve_bytes(sampleIndex, n * sizeof(int));
    const size_t nstats = size_t(nsectors) + 2;
    reserve_bytes(stats, nstats * sizeof(unsigned long long));
    auto* st = stats.as<unsigned long long>();
    FORGE_CUDA_CHECK(cudaMemsetAsync(st, 0, nstats * sizeof(unsigned long long), stream));
    FORGE_CUDA_CHECK(cudaMemsetAsync(entryCount.as<long long>() + n, 0, sizeof(long long), stream));
    int sms = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const bool shared = nsectors <= kHistBins;
    // Few enough blocks that each flushes its histogram once for many samples.
    const unsigned convertBlocks = std::max(1u, std::min(blocks_for(nk), unsigned(4 * std::max(sms, 1))));
    if (shared) {
        kernel_convert<true><<<convertBlocks, kThreads, size_t(nsectors) * sizeof(unsigned), stream>>>(
            kd, nk, g, sampFirst.as<int4>(), sampOffset.as<float4>(), entryCount.as<long long>(),
            homeKey.as<unsigned>(), sampleIndex.as<int>(), st);
    } else {
        kernel_convert<false>
            <<<convertBlocks, kThreads, 0, stream>>>(kd, nk, g, sampFirst.as<int4>(), sampOffset.as<float4>(),
                                                     entryCount.as<long long>(), homeKey.as<unsigned>(),
                                                     sampleIndex.as<int>(), st);
    }
    FORGE_CUDA_CHECK_LAUNCH("kernel_convert");
    size_t scanBytes = 0;
    FORGE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, entryCount.as<long long>(),
                                                   entryStart.as<long long>(), (long long)nk + 1, stream));
    reserve_bytes(cubTemp, scanBytes);
    FORGE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cubTemp.get(), scanBytes, entryCount.as<long long>(),
                                                   entryStart.as<long long>(), (long long)nk + 1, stream));
    FORGE_CUDA_CHECK(
        cudaMemcpyAsync(st + 1, entryStart.as<long long>() + n, sizeof(long long), cudaMemcpyDeviceToDevice, stream));
    std::vector<long long> host(nstats);
    FORGE_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), st, nstats * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (host[0]) {
        times.sort = since(t1);
        return false;  // the plan is untouched: only scratch was written
    }
    const long long E = host[1];

    if (E > (long long)INT_MAX) {
        // More entries than CUB's int counts take (about 2.7e8 samples in 3D): the stencils go to the host presort,
        // whose lists are indexed in 64 bits.
        std::vector<int4> hf(n);
        std::vector<float4> ho(n);
        FORGE_CUDA_CHECK(cudaMemcpyAsync(hf.data(), sampFirst.get(), n * sizeof(int4), cudaMemcpyDeviceToHost, stream));
        FORGE_CUDA_CHECK(
            cudaMemcpyAsync(ho.data(), sampOffset.get(), n * sizeof(float4), cudaMemcpyDeviceToHost, stream));
        FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<int> f[3];
        std::vector<float> y[3];
        const int* fp[3];
        const float* yp[3];
        for (int d = 0; d < 3; ++d) {
            f[d].resize(n);
            y[d].resize(n);
            for (size_t j = 0; j < n; ++j) {
                f[d][j] = d == 0 ? hf[j].x : (d == 1 ? hf[j].y : hf[j].z);
                y[d][j] = d == 0 ? ho[j].x : (d == 1 ? ho[j].y : ho[j].z);
            }
            fp[d] = f[d].data();
            yp[d] = y[d].data();
        }
        sort_points(n1u, fp, yp);
        std::swap(traj, trajNext);
        hasTrajectory = true;
        times.sort = since(t1);
        return true;
    }

    // From here the trajectory is accepted: the plan's lists are rebuilt.
    n1 = nk;
    make_subproblems(std::vector<long long>(host.begin() + 2, host.end()));
    const int ne = int(E);
    const size_t ue = size_t(E);
    reserve_bytes(listKey, ue * sizeof(unsigned));
    reserve_bytes(listKeySorted, ue * sizeof(unsigned));
    reserve_bytes(listSample, ue * sizeof(int));
    reserve_bytes(listSampleSorted, ue * sizeof(int));
    reserve_bytes(secFirst, ue * sizeof(int4));
    reserve_bytes(secOffset, ue * sizeof(float4));
    reserve_bytes(order, n * sizeof(int));
    reserve_bytes(first, n * sizeof(int4));
    reserve_bytes(offset, n * sizeof(float4));
    int bits = 1;
    while (bits < 32 && (1ll << bits) < nsectors) ++bits;
    size_t listBytes = 0, homeBytes = 0;
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, listBytes, listKey.as<unsigned>(),
                                                     listKeySorted.as<unsigned>(), listSample.as<int>(),
                                                     listSampleSorted.as<int>(), ne, 0, bits, stream));
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, homeBytes, homeKey.as<unsigned>(),
                                                     homeKeySorted.as<unsigned>(), sampleIndex.as<int>(),
                                                     order.as<int>(), nk, 0, bits, stream));
    reserve_bytes(cubTemp, std::max(listBytes, homeBytes));

    kernel_expand<<<blocks_for(nk), kThreads, 0, stream>>>(sampFirst.as<int4>(), entryStart.as<long long>(), nk, g,
                                                           listKey.as<unsigned>(), listSample.as<int>());
    FORGE_CUDA_CHECK_LAUNCH("kernel_expand");
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cubTemp.get(), listBytes, listKey.as<unsigned>(),
                                                     listKeySorted.as<unsigned>(), listSample.as<int>(),
                                                     listSampleSorted.as<int>(), ne, 0, bits, stream));
    kernel_gather<<<blocks_for(ne), kThreads, 0, stream>>>(listSampleSorted.as<int>(), ne, sampFirst.as<int4>(),
                                                           sampOffset.as<float4>(), secFirst.as<int4>(),
                                                           secOffset.as<float4>());
    FORGE_CUDA_CHECK_LAUNCH("kernel_gather (sector lists)");
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cubTemp.get(), homeBytes, homeKey.as<unsigned>(),
                                                     homeKeySorted.as<unsigned>(), sampleIndex.as<int>(),
                                                     order.as<int>(), nk, 0, bits, stream));
    kernel_gather<<<blocks_for(nk), kThreads, 0, stream>>>(order.as<int>(), nk, sampFirst.as<int4>(),
                                                           sampOffset.as<float4>(), first.as<int4>(),
                                                           offset.as<float4>());
    FORGE_CUDA_CHECK_LAUNCH("kernel_gather (forward order)");
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::swap(traj, trajNext);
    hasTrajectory = true;
    times.sort = since(t1);
    return true;
}

}  // namespace cuda
}  // namespace forge
