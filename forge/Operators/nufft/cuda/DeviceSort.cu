// CudaNufftPipeline::set_trajectory: the samples of a trajectory sorted into the gridding sectors on the device.
//
//   1. kernel_convert, one thread per sample: checks k (finite, within the band; a flag for the host), converts it to
//      the stencil start and offsets per axis (in double, as Gnufft's host plan does: the same stencils bit for bit),
//      keys it by its sector (the one holding its stencil start, home_sector) and counts the sectors' samples (a
//      shared-memory histogram per block when the sectors fit, else global atomics).
//   2. The flag and the sector counts come back to the host in one copy (the only wait before the end), which cuts
//      the sectors into subproblems.
//   3. A stable CUB radix sort of the sample indices by sector (each sector keeps the trajectory order, as the host
//      presort's counting sort does) and kernel_gather of the stencils in that order: what both directions read.
// Nothing the transforms read is written before the check has passed, so a refused trajectory leaves the plan as it
// was. All scratch is plan memory that only grows.
#include <cub/device/device_radix_sort.cuh>

#include <chrono>
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

// Step 1 (grid-stride loop). stats: [0] = some sample refused, [1 + s] = samples of sector s.
template <bool SharedHist>
__global__ void __launch_bounds__(kThreads)
    kernel_convert(const float* __restrict__ k, int n1, const DevGeom g, int4* __restrict__ sampFirst,
                   float4* __restrict__ sampOffset, unsigned* __restrict__ homeKey, int* __restrict__ sampleIndex,
                   unsigned long long* __restrict__ stats) {
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
            homeKey[j] = 0;
            sampFirst[j] = make_int4(0, 0, 0, 0);
            sampOffset[j] = make_float4(0.f, 0.f, 0.f, 0.f);
            continue;
        }
        const int4 f4 = make_int4(f[0], f[1], f[2], 0);
        const unsigned s = home_sector(g, f4);
        homeKey[j] = s;
        if (SharedHist) {
            atomicAdd(&hist[s], 1u);
        } else {
            atomicAdd(&stats[1 + s], 1ull);
        }
        sampFirst[j] = f4;
        sampOffset[j] = make_float4(y[0], y[1], y[2], 0.f);
    }
    if (SharedHist) {
        __syncthreads();
        for (int i = threadIdx.x; i < nsec; i += blockDim.x)
            if (hist[i]) atomicAdd(&stats[1 + i], (unsigned long long)hist[i]);
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
    reserve_bytes(homeKey, n * sizeof(unsigned));
    reserve_bytes(homeKeySorted, n * sizeof(unsigned));
    reserve_bytes(sampleIndex, n * sizeof(int));
    const size_t nstats = size_t(nsectors) + 1;
    reserve_bytes(stats, nstats * sizeof(unsigned long long));
    auto* st = stats.as<unsigned long long>();
    FORGE_CUDA_CHECK(cudaMemsetAsync(st, 0, nstats * sizeof(unsigned long long), stream));
    const bool shared = nsectors <= kHistBins;
    // Few enough blocks that each flushes its histogram once for many samples.
    const unsigned convertBlocks = std::max(1u, std::min(blocks_for(nk), unsigned(4 * sms)));
    if (shared) {
        kernel_convert<true>
            <<<convertBlocks, kThreads, size_t(nsectors) * sizeof(unsigned), stream>>>(kd, nk, g, sampFirst.as<int4>(),
                                                                                       sampOffset.as<float4>(),
                                                                                       homeKey.as<unsigned>(),
                                                                                       sampleIndex.as<int>(), st);
    } else {
        kernel_convert<false><<<convertBlocks, kThreads, 0, stream>>>(kd, nk, g, sampFirst.as<int4>(),
                                                                      sampOffset.as<float4>(), homeKey.as<unsigned>(),
                                                                      sampleIndex.as<int>(), st);
    }
    FORGE_CUDA_CHECK_LAUNCH("kernel_convert");
    std::vector<long long> host(nstats);
    FORGE_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), st, nstats * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (host[0]) {
        times.sort = since(t1);
        return false;  // the plan is untouched: only scratch was written
    }

    // From here the trajectory is accepted: the plan's order is rebuilt.
    n1 = nk;
    make_subproblems(std::vector<long long>(host.begin() + 1, host.end()));
    reserve_bytes(order, n * sizeof(int));
    reserve_bytes(first, n * sizeof(int4));
    reserve_bytes(offset, n * sizeof(float4));
    int bits = 1;
    while (bits < 32 && (1ll << bits) < nsectors) ++bits;
    size_t sortBytes = 0;
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, homeKey.as<unsigned>(),
                                                     homeKeySorted.as<unsigned>(), sampleIndex.as<int>(),
                                                     order.as<int>(), nk, 0, bits, stream));
    reserve_bytes(cubTemp, sortBytes);
    FORGE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cubTemp.get(), sortBytes, homeKey.as<unsigned>(),
                                                     homeKeySorted.as<unsigned>(), sampleIndex.as<int>(),
                                                     order.as<int>(), nk, 0, bits, stream));
    kernel_gather<<<blocks_for(nk), kThreads, 0, stream>>>(order.as<int>(), nk, sampFirst.as<int4>(),
                                                           sampOffset.as<float4>(), first.as<int4>(),
                                                           offset.as<float4>());
    FORGE_CUDA_CHECK_LAUNCH("kernel_gather (sector order)");
    FORGE_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::swap(traj, trajNext);
    hasTrajectory = true;
    times.sort = since(t1);
    return true;
}

}  // namespace cuda
}  // namespace forge
