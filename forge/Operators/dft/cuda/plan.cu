#include "forge/Operators/dft/CudaDftPipeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/dft/DftOptions.h"
#include "forge/Operators/dft/cuda/kernels.cuh"

namespace forge {
namespace cuda {
namespace {

using namespace dft;

int round_up(int n, int m) { return (n + m - 1) / m * m; }

// Reports what the code that runs on this device was built for: built[0] the architecture (__CUDA_ARCH__:
// 800 for sm_80 code, and for compute_80 PTX that the driver compiled for a later GPU), built[1] whether it
// has sm_90a's features (wgmma). The binary's image for the device, not the device, decides which kernels exist.
__global__ void build_probe_kernel(int* built) {
#if defined(__CUDA_ARCH__)
    built[0] = __CUDA_ARCH__;
#endif
#if defined(FORGE_WGMMA)
    built[1] = 1;
#else
    built[1] = 0;
#endif
}

// Adds the splits' partial sums in a fixed order: out[b][o] = sum_s partial[s][b][o].
__global__ void sum_splits_kernel(const float2* __restrict__ partial, int splits, int nb, int nOut,
                                  float2* __restrict__ out, int outStride) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (o >= nOut) return;
    float re = 0.f, im = 0.f;
    for (int s = 0; s < splits; ++s) {
        const float2 v = partial[(size_t(s) * nb + b) * nOut + o];
        re += v.x;
        im += v.y;
    }
    out[size_t(b) * outStride + o] = make_float2(re, im);
}

// For the wgmma or mma.sync kernel with nt n-tiles (4 vectors each), else for the FP32 kernel.
LaunchShape launch_shape(bool wgmma, bool tensor, int nt) {
    if (wgmma) return wgmma_launch_shape(nt);
    if (tensor) return mma_launch_shape(nt);
    return fp32_launch_shape();
}

// Vectors per launch: batches of 4 or more go to the tensor cores (32, 16, 8 or 4 at a time; at 4
// vectors they already beat the FP32 kernel: 4.8e12 against 4.0e12 vector-pairs/s), the last 1-3 and all
// GdftR2 batches (its sinc factor is not shared by the tensor-core path) to dft_kernel.
int vectors_per_launch(uword left, bool tensorCores) {
    if (tensorCores && left >= 4) return left >= 32 ? 32 : left >= 16 ? 16 : left >= 8 ? 8 : 4;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

// What the code this device runs was built for (build_probe_kernel): asked once per device, which then
// gets the wgmma kernels' shared-memory limits when it has them. The device must be current.
struct BuiltCode {
    int arch = 0;        // __CUDA_ARCH__ of the image that runs
    bool wgmma = false;  // sm_90a code
};
BuiltCode built_code(int device) {
    static std::mutex m;
    static std::map<int, BuiltCode> known;
    std::lock_guard<std::mutex> lock(m);
    if (auto it = known.find(device); it != known.end()) return it->second;
    DeviceBuffer flag(2 * sizeof(int));
    build_probe_kernel<<<1, 1>>>(flag.as<int>());
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::build_probe_kernel");
    int built[2] = {0, 0};
    FORGE_CUDA_CHECK(cudaMemcpy(built, flag.get(), sizeof(built), cudaMemcpyDeviceToHost));
    const BuiltCode code{built[0], built[1] == 1};
    if (code.wgmma) allow_wgmma_shared_memory();
    return known[device] = code;
}

const char* batch_kernel_name(CudaDftPipeline::BatchKernel k) {
    using K = CudaDftPipeline::BatchKernel;
    return k == K::wgmma ? "wgmma" : k == K::mma ? "mma.sync" : "fp32";
}

// The fastest batch kernel the device and the build have, or the one options.dft_kernel names.
CudaDftPipeline::BatchKernel choose_batch_kernel(int device, int major, int minor, DftKernel want) {
    using K = CudaDftPipeline::BatchKernel;
    // mma.sync needs sm_80 code (compute_75 PTX on an 8.x GPU has none: dft_mma_kernel traps there).
    const BuiltCode code = built_code(device);
    const K best = major == 9 && minor == 0 && code.wgmma ? K::wgmma
                   : major >= 8 && code.arch >= 800       ? K::mma
                                                          : K::fp32;
    if (want == DftKernel::automatic) return best;
    const K k = want == DftKernel::wgmma ? K::wgmma : want == DftKernel::mma_sync ? K::mma : K::fp32;
    if (int(k) > int(best)) {  // the enumerators are in order of speed
        throw invalid_argument(std::string("CudaDftPipeline: options.dft_kernel (DftOptions::kernel) = DftKernel::") +
                               dft_kernel_name(want) + " does not run on device " + std::to_string(device) +
                               " (compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                               ") with this build; the fastest here is " + batch_kernel_name(best) +
                               " (DftKernel::automatic takes it)");
    }
    return k;
}

void require_pointer(const void* p, const char* name) {
    if (!p) throw invalid_argument(std::string("CudaDftPipeline: ") + name + " is a null pointer");
}

}  // namespace

CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options) : maxBatch_(options.max_batch) {
    const char* where = "CudaDftPipeline";
    check_kernel("CudaDftPipeline: options.dft_kernel", options.dft_kernel);
    check_sizes(where, geom.n1, geom.n2);
    if (geom.n2 < 1) throw invalid_argument("CudaDftPipeline: geometry.n2 (pixels) must be at least 1, got 0");
    for (auto [p, name] : {std::pair{geom.ix, "geometry.ix"},
                           {geom.iy, "geometry.iy"},
                           {geom.iz, "geometry.iz"},
                           {geom.fm_turns, "geometry.fm_turns"}}) {
        require_pointer(p, name);
    }
    const int gradientMaps = (geom.Gx != nullptr) + (geom.Gy != nullptr) + (geom.Gz != nullptr);
    if (gradientMaps != 0 && gradientMaps != 3) {
        throw invalid_argument("CudaDftPipeline: geometry.Gx, Gy, Gz: give all three gradient maps or none");
    }
    hasGradients_ = gradientMaps == 3;
    if (hasGradients_) {
        const uword numX = geom.nx, numY = geom.ny, numZ = geom.nz;
        const uword grid = numX < 1 || numY < 1 || numZ < 1
                               ? 0
                               : checked_product(where, {{"numX", numX}, {"numY", numY}, {"numZ", numZ}});
        if (grid == 0 || (geom.partial_grid ? grid < geom.n2 : grid != geom.n2)) {
            std::ostringstream m;
            m << "CudaDftPipeline: grid " << numX << " x " << numY << " x " << numZ << " does not hold n2 = " << geom.n2
              << " pixels";
            throw invalid_argument(m.str());
        }
        if (std::max({numX, numY, numZ}) > kMaxLength)
            throw invalid_argument("CudaDftPipeline: grid axis longer than CudaDftPipeline::kMaxLength");
        numX_ = int(numX);
        numY_ = int(numY);
        numZ_ = int(numZ);
    }
    numPixels_ = int(geom.n2);
    // Pixels 2k and 2k + 1, and pixels 16j + g and 16j + g + 8 (g < 8), on the same grid row (same y and z):
    // the coil-batch kernels then step the phase along x (PhaseSteps). Both hold for forge's grids with an
    // even, respectively a multiple-of-16, row length.
    pixelPairsOnRows_ = pixelRowsEightApart_ = true;
    for (uword k = 0; k + 1 < geom.n2; k += 2)
        if (geom.iy[k] != geom.iy[k + 1] || geom.iz[k] != geom.iz[k + 1]) {
            pixelPairsOnRows_ = false;
            break;
        }
    for (uword k = 0; k + 8 < geom.n2; k = k % 16 == 7 ? k + 9 : k + 1)
        if (geom.iy[k] != geom.iy[k + 8] || geom.iz[k] != geom.iz[k + 8]) {
            pixelRowsEightApart_ = false;
            break;
        }
    if (!device::available()) throw cuda_error("CudaDftPipeline: no CUDA device is available");
    device_ = resolve_device(where, options.device);
    DeviceGuard guard(device_);
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device_));
    int major = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    int minor = 0;
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_));
    batchKernel_ = choose_batch_kernel(device_, major, minor, options.dft_kernel);

    // Padded to whole pairs of tiles: batched kernels read two tiles of outputs per block.
    const int pp = round_up(numPixels_, 2 * kTile);
    std::vector<float> p(4 * size_t(pp), 0.f);
    for (size_t k = 0; k < size_t(numPixels_); ++k) {  // size_t: 4 * k passes 2^31 from 2^29 pixels on
        p[4 * k] = geom.ix[k];
        p[4 * k + 1] = geom.iy[k];
        p[4 * k + 2] = geom.iz[k];
        p[4 * k + 3] = geom.fm_turns[k];
    }
    pixels_ = DeviceBuffer(p.size() * sizeof(float));
    device::copy_to_device(pixels_.get(), p.data(), p.size() * sizeof(float));
    if (pixelPairsOnRows_ && batchKernel_ == BatchKernel::wgmma) {
        // The wgmma kernels' forward inputs: odd pixels as their steps from the even one before (x, field map).
        for (size_t k = 1; k < size_t(pp); k += 2) {
            p[4 * k] -= p[4 * (k - 1)];
            p[4 * k + 3] -= p[4 * (k - 1) + 3];
        }
        pixelSteps_ = DeviceBuffer(p.size() * sizeof(float));
        device::copy_to_device(pixelSteps_.get(), p.data(), p.size() * sizeof(float));
    }
    if (hasGradients_) {
        std::vector<float> g(4 * size_t(pp), 0.f);
        for (size_t k = 0; k < size_t(numPixels_); ++k) {
            g[4 * k] = geom.Gx[k];
            g[4 * k + 1] = geom.Gy[k];
            g[4 * k + 2] = geom.Gz[k];
        }
        gradients_ = DeviceBuffer(g.size() * sizeof(float));
        device::copy_to_device(gradients_.get(), g.data(), g.size() * sizeof(float));
    }
    current_ = std::make_shared<DftPoints>();
    upload_into(*current_, geom.kx, geom.ky, geom.kz, geom.t, geom.n1);
    pointUploads_ = 1;
    if (options.stream) {
        stream_ = options.stream;
    } else {
        cudaStream_t st = nullptr;
        FORGE_CUDA_CHECK(cudaStreamCreate(&st));  // blocking stream: ordered with the legacy default stream
        stream_ = st;
        ownsStream_ = true;
    }
}

CudaDftPipeline::~CudaDftPipeline() {
    if (stream_) {
        // Finish queued work before the buffers it reads are freed; nothing can be thrown from here.
        if (cudaStreamSynchronize(stream_) != cudaSuccess) cudaGetLastError();
        if (ownsStream_ && cudaStreamDestroy(stream_) != cudaSuccess) cudaGetLastError();
    }
}

void CudaDftPipeline::upload_into(DftPoints& pts, const float* kx, const float* ky, const float* kz, const float* t,
                                  uword n1) const {
    check_sizes("CudaDftPipeline::set_points", n1, uword(numPixels_));
    if (n1 < 1) throw invalid_argument("CudaDftPipeline::set_points: n1 (samples) must be at least 1, got 0");
    for (auto [p, name] : {std::pair{kx, "kx"}, {ky, "ky"}, {kz, "kz"}, {t, "t"}}) require_pointer(p, name);
    const size_t ps = size_t(round_up(int(n1), 2 * kTile));
    std::vector<float> s(4 * ps, 0.f);
    for (size_t j = 0; j < size_t(n1); ++j) {  // size_t: 4 * j passes 2^31 from 2^29 samples on
        s[4 * j] = kx[j];
        s[4 * j + 1] = ky[j];
        s[4 * j + 2] = kz[j];
        s[4 * j + 3] = t[j];
    }
    DeviceGuard guard(device_);
    if (pts.capacity_ < ps) {
        pts.samples_ = DeviceBuffer(s.size() * sizeof(float));
        pts.capacity_ = ps;
    }
    device::copy_to_device(pts.samples_.get(), s.data(), s.size() * sizeof(float));
    pts.n1_ = n1;
    pts.device_ = device_;
}

void CudaDftPipeline::set_points(const float* kx, const float* ky, const float* kz, const float* t, uword n1) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uword padded = uword(round_up(int(std::min<uword>(n1, kMaxLength)), 2 * kTile));
    if (current_ && current_.use_count() == 1 && current_->capacity_ >= padded) {
        // Reuse the allocation; the transforms already queued on the stream read it, so let them finish.
        synchronize();
        upload_into(*current_, kx, ky, kz, t, n1);
    } else {
        auto fresh = std::make_shared<DftPoints>();
        upload_into(*fresh, kx, ky, kz, t, n1);
        current_ = std::move(fresh);
    }
    ++pointUploads_;
}

std::shared_ptr<const DftPoints> CudaDftPipeline::upload_points(const float* kx, const float* ky, const float* kz,
                                                                const float* t, uword n1) const {
    auto fresh = std::make_shared<DftPoints>();
    upload_into(*fresh, kx, ky, kz, t, n1);
    std::lock_guard<std::mutex> lock(mutex_);
    ++pointUploads_;
    return fresh;
}

void CudaDftPipeline::set_points(std::shared_ptr<const DftPoints> points) {
    if (!points) throw invalid_argument("CudaDftPipeline::set_points: points is a null pointer");
    if (points->device_ != device_) {
        throw invalid_argument("CudaDftPipeline::set_points: points live on device " + std::to_string(points->device_) +
                               ", the plan on device " + std::to_string(device_));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::const_pointer_cast<DftPoints>(std::move(points));
}

std::shared_ptr<const DftPoints> CudaDftPipeline::points() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
}

uword CudaDftPipeline::num_samples() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_->n1_;
}

uword CudaDftPipeline::point_uploads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pointUploads_;
}

void CudaDftPipeline::run(const DftPoints& points, const float* d_in, float* d_out, uword nbatch, bool forward) const {
    require_pointer(d_in, "d_in");
    require_pointer(d_out, "d_out");
    if (nbatch < 1) throw invalid_argument("CudaDftPipeline::execute: batch must be at least 1, got 0");
    if (maxBatch_ && nbatch > maxBatch_) {
        throw invalid_argument("CudaDftPipeline::execute: batch = " + std::to_string(nbatch) +
                               " exceeds the plan's options.max_batch = " + std::to_string(maxBatch_));
    }
    if (points.device_ != device_ || !points.samples_) {
        throw invalid_argument("CudaDftPipeline::execute: the points were not made on this plan's device");
    }
    DeviceGuard guard(device_);
    const LegacyOrder ordered(stream_);  // a caller's non-blocking stream: its output blocks stay safe to free
    const int numSamples = int(points.n1_);
    const int nOut = forward ? numSamples : numPixels_;
    const int nIn = forward ? numPixels_ : numSamples;
    const float4* outGeom = forward ? points.samples_.as<float4>() : pixels_.as<float4>();
    const float4* inGeom = forward ? pixels_.as<float4>() : points.samples_.as<float4>();
    const float4* grads = hasGradients_ ? gradients_.as<float4>() : nullptr;
    // Pixels along grid rows: the wgmma kernels step the phase across them (PhaseSteps), forward from the
    // pixel steps.
    const PhaseSteps steps =
        forward ? (pixelSteps_ ? kPhaseInputs : kPhaseFull) : (pixelRowsEightApart_ ? kPhaseRowsBy8 : kPhaseFull);
    const float4* wgmmaInGeom = steps == kPhaseInputs ? pixelSteps_.as<float4>() : inGeom;
    // Per-call scratch: stream-ordered allocations from forge's pool of the device (reused across calls).
    const cudaMemPool_t scratchPool = device::detail::device_pool(device_).pool;
    const float2* in = reinterpret_cast<const float2*>(d_in);
    float2* out = reinterpret_cast<float2*>(d_out);
    cudaStream_t stream = stream_;

    const float invNx = 1.0f / numX_, invNy = 1.0f / numY_, invNz = 1.0f / numZ_;
    // The batch is walked in 64 bits (its total length may pass 2^31); each launch takes at most 32 vectors.
    for (uword b0 = 0; b0 < nbatch;) {
        const bool tensor = batchKernel_ != BatchKernel::fp32 && !hasGradients_ && nbatch - b0 >= 4;
        const int nb = vectors_per_launch(nbatch - b0, tensor);
        const int nt = (nb + 3) / 4;  // n-tiles: 4 vectors, 8 real columns each
        // wgmma reads the vectors from a prepared image (8 bytes per input and column); without the memory
        // for it the batch goes to the mma.sync kernel, which needs none.
        uint4* image = nullptr;
        bool wgmma = tensor && batchKernel_ == BatchKernel::wgmma;
        if (wgmma) {
            const size_t bytes = size_t(round_up(nIn, 128)) * 8 * (8 * nt);
            if (cudaMallocFromPoolAsync(reinterpret_cast<void**>(&image), bytes, scratchPool, stream) != cudaSuccess) {
                cudaGetLastError();
                image = nullptr;
                wgmma = false;
            }
        }
        // Split the inner sum when the outputs alone would leave the GPU idle: aim for ~16 blocks of
        // 256 threads (or as many warps) per multiprocessor, each split keeping at least 4 tiles of work.
        const auto [rowsPerBlock, threads, tileLen] = launch_shape(wgmma, tensor, nt);
        const int nTiles = round_up(nIn, tileLen) / tileLen;
        const int outBlocks = round_up(nOut, rowsPerBlock) / rowsPerBlock;
        const int blocksWanted = 16 * multiprocessors_ * (kTile / threads);
        int splits = std::max(1, (blocksWanted + outBlocks - 1) / outBlocks);
        splits = std::min(splits, std::max(1, nTiles / 4));
        const int tilesPerSplit = (nTiles + splits - 1) / splits;
        splits = (nTiles + tilesPerSplit - 1) / tilesPerSplit;

        const float2* inB = in + size_t(b0) * nIn;
        float2* outB = out + size_t(b0) * nOut;
        float2* partial = nullptr;
        if (splits > 1) {
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&partial),
                                                     size_t(splits) * nb * nOut * sizeof(float2), scratchPool, stream));
        }
        float2* dst = splits > 1 ? partial : outB;
        if (tensor) {
            unsigned* maxBits = nullptr;
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&maxBits), nb * sizeof(unsigned),
                                                     scratchPool, stream));
            FORGE_CUDA_CHECK(cudaMemsetAsync(maxBits, 0, nb * sizeof(unsigned), stream));
            launch_max_abs(inB, nIn, nb, maxBits, stream);
            if (wgmma) {
                launch_wgmma(nt, forward, steps, outBlocks, splits, stream, outGeom, wgmmaInGeom, nOut, nIn,
                             tilesPerSplit, nTiles, inB, nb, maxBits, image, dst);
            } else {
                launch_mma(nt, forward, outBlocks, splits, stream, outGeom, inGeom, nOut, nIn, tilesPerSplit, nTiles,
                           inB, nb, maxBits, dst);
            }
            if (image) FORGE_CUDA_CHECK(cudaFreeAsync(image, stream));
            FORGE_CUDA_CHECK(cudaFreeAsync(maxBits, stream));
        } else {
            launch_fp32(nb, hasGradients_, forward, dim3(outBlocks, splits), stream, outGeom, inGeom, grads, nOut, nIn,
                        tilesPerSplit, nTiles, inB, nIn, dst, nOut, invNx, invNy, invNz);
        }
        if (splits > 1) {
            const dim3 rgrid((nOut + 255) / 256, nb);
            sum_splits_kernel<<<rgrid, 256, 0, stream>>>(partial, splits, nb, nOut, outB, nOut);
            FORGE_CUDA_CHECK_LAUNCH("forge::cuda::sum_splits_kernel");
            FORGE_CUDA_CHECK(cudaFreeAsync(partial, stream));
        }
        b0 += nb;
    }
}

void CudaDftPipeline::execute(Direction direction, const float* d_in, float* d_out, uword batch) {
    const std::shared_ptr<const DftPoints> p = points();  // held for the call: a concurrent set_points may rebind
    run(*p, d_in, d_out, batch, direction == Direction::forward);
}

void CudaDftPipeline::execute(const DftPoints& points, Direction direction, const float* d_in, float* d_out,
                              uword batch) const {
    run(points, d_in, d_out, batch, direction == Direction::forward);
}

void CudaDftPipeline::execute_host(Direction direction, const float* h_in, float* h_out, uword batch) {
    require_pointer(h_in, "h_in");
    require_pointer(h_out, "h_out");
    if (batch < 1) throw invalid_argument("CudaDftPipeline::execute_host: batch must be at least 1, got 0");
    const std::shared_ptr<const DftPoints> p = points();
    const bool forward = direction == Direction::forward;
    const uword nIn = forward ? uword(numPixels_) : p->n1_, nOut = forward ? p->n1_ : uword(numPixels_);
    DeviceGuard guard(device_);
    const uword inLen = checked_product("CudaDftPipeline::execute_host", {{"input length", nIn}, {"batch", batch}},
                                        uword(-1) / (2 * sizeof(float)));
    const uword outLen = checked_product("CudaDftPipeline::execute_host", {{"output length", nOut}, {"batch", batch}},
                                         uword(-1) / (2 * sizeof(float)));
    DeviceBuffer din(inLen * 2 * sizeof(float)), dout(outLen * 2 * sizeof(float));
    device::copy_to_device(din.get(), h_in, din.bytes());
    run(*p, din.as<float>(), dout.as<float>(), batch, forward);
    synchronize();
    device::copy_to_host(h_out, dout.get(), dout.bytes());
}

const char* CudaDftPipeline::batch_kernel() const { return batch_kernel_name(batchKernel_); }

void CudaDftPipeline::synchronize() const { FORGE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace cuda
}  // namespace forge
