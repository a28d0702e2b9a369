#include "forge/CUDA/CudaDftPipeline.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "forge/CUDA/CudaCheck.h"
#include "forge/Core/Validation.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kTile = 256;  // threads per block = inputs per shared-memory tile
constexpr float kTwoPiF = 6.28318530717958648f;

int round_up(int n, int m) { return (n + m - 1) / m * m; }

// x minus the nearest integer, for |x| < 2^22. Adding and subtracting 1.5 * 2^23 rounds on the full-rate
// FP32 pipe; rintf (FRND) would share the quarter-rate pipe with the sine and cosine.
__device__ __forceinline__ float minus_nearest_int(float x) {
    const float magic = 12582912.0f;
    return x - (__fsub_rn(__fadd_rn(x, magic), magic));
}

// sin(pi x) / (pi x) on |x| <= 1: minimax polynomial in x^2 (max error 6e-8; the forge CPU loops use the
// same coefficients). Five fused multiply-adds on the FP32 pipe, no special-function unit.
__device__ __forceinline__ float sinc_poly(float x) {
    const float u = x * x;
    float q = fmaf(-0.0019387168576940894f, u, 0.02570377103984356f);
    q = fmaf(q, u, -0.1905253827571869f);
    q = fmaf(q, u, 0.8116899132728577f);
    q = fmaf(q, u, -1.6449296474456787f);
    return fmaf(q, u, 0.9999999403953552f);
}

// sincPG at any x (|x| < 2^23): x = 2m + r with m the nearest integer to x / 2 and |r| <= 1, so
// sin(pi x) = sin(pi r) and sincPG(x) = sinc_poly(r) r / x. Returns sinc_poly(r), and r + eps, x + eps in
// num, den: where m = 0, r equals x exactly and the ratio is 1 (x = 0 included); elsewhere |x| >= 1 and eps
// changes it by at most 1e-12. eps^3 is still a normal float, so three axes share one division.
__device__ __forceinline__ float sinc_parts(float x, float& num, float& den) {
    constexpr float kEps = 1e-12f;
    const float magic = 12582912.0f;
    const float m = __fsub_rn(__fadd_rn(0.5f * x, magic), magic);
    const float r = fmaf(-2.0f, m, x);
    num = r + kEps;
    den = x + kEps;
    return sinc_poly(r);
}

// sincPG(x) sincPG(y) sincPG(z), sincPG(x) = sin(pi x)/(pi x) (1 at 0). All three within [-1, 1] (the usual
// case: k/N lies in [-1/2, 1/2] and G t is small) costs three polynomials; otherwise one division more.
__device__ __forceinline__ float sinc3(float x, float y, float z) {
    if (fabsf(x) <= 1.0f && fabsf(y) <= 1.0f && fabsf(z) <= 1.0f) return sinc_poly(x) * sinc_poly(y) * sinc_poly(z);
    float nx, ny, nz, dx, dy, dz;
    const float q = sinc_parts(x, nx, dx) * sinc_parts(y, ny, dy) * sinc_parts(z, nz, dz);
    return q * __fdividef(nx * ny * nz, dx * dy * dz);
}

// Sum over one split (a range of tiles) of the inner dimension, for NB vectors at once.
//   forward (kForward): outputs are samples, inputs pixels, phase sign -
//   adjoint:            outputs are pixels, inputs samples, phase sign +
// outGeom / inGeom: float4 (kx, ky, kz, t) for samples, (ix, iy, iz, fm_turns) for pixels.
// grads: float4 (Gx, Gy, Gz, 0) per pixel (only with kGrad).
// out: [split][b][nOut] partial sums when splits > 1, else the final [b][outStride] layout.
// Outputs per thread: batched kernels compute two outputs per thread so that every shared-memory load of
// a pixel (or sample) and its NB values serves two phase evaluations; a single vector keeps one.
template <int NB>
constexpr int outputs_per_thread() {
    return NB >= 2 ? 2 : 1;
}

template <int NB, bool kGrad, bool kForward>
__global__ void __launch_bounds__(kTile)
    dft_kernel(const float4* __restrict__ outGeom, const float4* __restrict__ inGeom, const float4* __restrict__ grads,
               int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* __restrict__ in, int inStride,
               float2* __restrict__ out, int outStride, float invNx, float invNy, float invNz) {
    constexpr int OPT = outputs_per_thread<NB>();
    __shared__ float4 sGeom[kTile];
    __shared__ float4 sGrad[kGrad ? kTile : 1];
    // Values interleaved per input ([m][b]) so a thread reads two vectors' values with one 16-byte load.
    __shared__ __align__(16) float2 sVal[kTile][NB];

    float4 me[OPT], myGrad[OPT];
    float ax[OPT], ay[OPT], az[OPT];
    int o[OPT];
#pragma unroll
    for (int r = 0; r < OPT; ++r) {
        o[r] = blockIdx.x * (kTile * OPT) + r * kTile + threadIdx.x;  // outGeom is padded: always readable
        me[r] = outGeom[o[r]];
        myGrad[r] = (kGrad && !kForward) ? grads[o[r]] : make_float4(0.f, 0.f, 0.f, 0.f);
        // Forward: the sample's own sinc offsets kx/numX etc.
        ax[r] = me[r].x * invNx;
        ay[r] = me[r].y * invNy;
        az[r] = me[r].z * invNz;
    }

    float accRe[OPT][NB], accIm[OPT][NB];
#pragma unroll
    for (int r = 0; r < OPT; ++r)
#pragma unroll
        for (int b = 0; b < NB; ++b) accRe[r][b] = accIm[r][b] = 0.f;

    const int tileBegin = blockIdx.y * tilesPerSplit;
    const int tileEnd = min(tileBegin + tilesPerSplit, nTiles);
    for (int tile = tileBegin; tile < tileEnd; ++tile) {
        const int i = tile * kTile + threadIdx.x;
        sGeom[threadIdx.x] = inGeom[i];
        if (kGrad && kForward) sGrad[threadIdx.x] = grads[i];
#pragma unroll
        for (int b = 0; b < NB; ++b)  // 64-bit offset: b * inStride passes 2^31 from 2^28 inputs on (once per tile)
            sVal[threadIdx.x][b] = i < nIn ? in[size_t(b) * inStride + i] : make_float2(0.f, 0.f);
        __syncthreads();

        // Partial sums per tile, added to the running totals after it: two-level summation.
        float pRe[OPT][NB], pIm[OPT][NB];
#pragma unroll
        for (int r = 0; r < OPT; ++r)
#pragma unroll
            for (int b = 0; b < NB; ++b) pRe[r][b] = pIm[r][b] = 0.f;
#pragma unroll 2
        for (int m = 0; m < kTile; ++m) {
            const float4 g = sGeom[m];
            float2 v[NB];
            if constexpr (NB >= 2) {
#pragma unroll
                for (int q = 0; q < NB / 2; ++q) {
                    const float4 w = reinterpret_cast<const float4*>(sVal[m])[q];
                    v[2 * q] = make_float2(w.x, w.y);
                    v[2 * q + 1] = make_float2(w.z, w.w);
                }
            } else {
                v[0] = sVal[m][0];
            }
#pragma unroll
            for (int r = 0; r < OPT; ++r) {
                float ph, t;
                if (kForward) {  // me = sample (kx, ky, kz, t), g = pixel (ix, iy, iz, fm)
                    t = me[r].w;
                    ph = fmaf(me[r].x, g.x, fmaf(me[r].y, g.y, fmaf(me[r].z, g.z, g.w * t)));
                } else {  // me = pixel, g = sample
                    t = g.w;
                    ph = fmaf(g.x, me[r].x, fmaf(g.y, me[r].y, fmaf(g.z, me[r].z, me[r].w * t)));
                }
                ph = minus_nearest_int(ph);
                float sn, cs;
                __sincosf(kTwoPiF * ph, &sn, &cs);
                if (kGrad) {
                    float bfac;
                    if (kForward) {
                        const float4 gr = sGrad[m];
                        bfac = sinc3(fmaf(gr.x, t, ax[r]), fmaf(gr.y, t, ay[r]), fmaf(gr.z, t, az[r]));
                    } else {
                        bfac = sinc3(fmaf(myGrad[r].x, t, g.x * invNx), fmaf(myGrad[r].y, t, g.y * invNy),
                                     fmaf(myGrad[r].z, t, g.z * invNz));
                    }
                    sn *= bfac;
                    cs *= bfac;
                }
                if (!kForward) sn = -sn;  // adjoint: exp(+i phase)
#pragma unroll
                for (int b = 0; b < NB; ++b) {
                    // (v.x + i v.y)(cs - i sn)
                    pRe[r][b] = fmaf(cs, v[b].x, fmaf(sn, v[b].y, pRe[r][b]));
                    pIm[r][b] = fmaf(cs, v[b].y, fmaf(-sn, v[b].x, pIm[r][b]));
                }
            }
        }
#pragma unroll
        for (int r = 0; r < OPT; ++r)
#pragma unroll
            for (int b = 0; b < NB; ++b) {
                accRe[r][b] += pRe[r][b];
                accIm[r][b] += pIm[r][b];
            }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < OPT; ++r) {
        if (o[r] >= nOut) continue;
        if (gridDim.y > 1) {
            float2* dst = out + size_t(blockIdx.y) * NB * nOut;
#pragma unroll
            for (int b = 0; b < NB; ++b) dst[size_t(b) * nOut + o[r]] = make_float2(accRe[r][b], accIm[r][b]);
        } else {
#pragma unroll
            for (int b = 0; b < NB; ++b) out[size_t(b) * outStride + o[r]] = make_float2(accRe[r][b], accIm[r][b]);
        }
    }
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

template <int NB>
void launch_dft(bool grad, bool forward, dim3 grid, cudaStream_t stream, const float4* outGeom, const float4* inGeom,
                const float4* grads, int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* in, int inStride,
                float2* out, int outStride, float ix, float iy, float iz) {
    if (grad) {
        if (forward) {
            dft_kernel<NB, true, true><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                   nTiles, in, inStride, out, outStride, ix, iy, iz);
        } else {
            dft_kernel<NB, true, false><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                    nTiles, in, inStride, out, outStride, ix, iy, iz);
        }
    } else {
        if (forward) {
            dft_kernel<NB, false, true><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                    nTiles, in, inStride, out, outStride, ix, iy, iz);
        } else {
            dft_kernel<NB, false, false><<<grid, kTile, 0, stream>>>(outGeom, inGeom, grads, nOut, nIn, tilesPerSplit,
                                                                     nTiles, in, inStride, out, outStride, ix, iy, iz);
        }
    }
    FORGE_CUDA_CHECK_LAUNCH("forge::cuda::dft_kernel");
}

void require_pointer(const void* p, const char* name) {
    if (!p) throw invalid_argument(std::string("CudaDftPipeline: ") + name + " is a null pointer");
}

}  // namespace

CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options) : maxBatch_(options.max_batch) {
    const char* where = "CudaDftPipeline";
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
        const uword numX = geom.numX, numY = geom.numY, numZ = geom.numZ;
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
    if (!device::available()) throw cuda_error("CudaDftPipeline: no CUDA device is available");
    device_ = resolve_device(where, options.device);
    DeviceGuard guard(device_);
    FORGE_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device_));

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

uword CudaDftPipeline::numSamples() const {
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
    const int numSamples = int(points.n1_);
    const int nOut = forward ? numSamples : numPixels_;
    const int nIn = forward ? numPixels_ : numSamples;
    const float4* outGeom = forward ? points.samples_.as<float4>() : pixels_.as<float4>();
    const float4* inGeom = forward ? pixels_.as<float4>() : points.samples_.as<float4>();
    const float4* grads = hasGradients_ ? gradients_.as<float4>() : nullptr;
    const float2* in = reinterpret_cast<const float2*>(d_in);
    float2* out = reinterpret_cast<float2*>(d_out);
    cudaStream_t stream = stream_;

    const float invNx = 1.0f / numX_, invNy = 1.0f / numY_, invNz = 1.0f / numZ_;
    const int nTiles = round_up(nIn, kTile) / kTile;
    // The batch is walked in 64 bits (its total length may pass 2^31); each launch takes at most 8 vectors.
    for (uword b0 = 0; b0 < nbatch;) {
        const uword left = nbatch - b0;
        const int nb = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        const int opt = nb >= 2 ? outputs_per_thread<2>() : outputs_per_thread<1>();
        // Split the inner sum when the outputs alone would leave the GPU idle: aim for ~16 blocks of
        // 256 threads per multiprocessor, each split keeping at least 4 tiles of work.
        const int outBlocks = round_up(nOut, kTile * opt) / (kTile * opt);
        int splits = std::max(1, (16 * multiprocessors_ + outBlocks - 1) / outBlocks);
        splits = std::min(splits, std::max(1, nTiles / 4));
        const int tilesPerSplit = (nTiles + splits - 1) / splits;
        splits = (nTiles + tilesPerSplit - 1) / tilesPerSplit;

        const float2* inB = in + size_t(b0) * nIn;
        float2* outB = out + size_t(b0) * nOut;
        float2* partial = nullptr;
        if (splits > 1) {
            // Stream-ordered allocation from the device's pool: no synchronisation, reused across calls.
            FORGE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&partial),
                                             size_t(splits) * nb * nOut * sizeof(float2), stream));
        }
        float2* dst = splits > 1 ? partial : outB;
        const dim3 grid(outBlocks, splits);
        auto go = [&](auto nbConst) {
            launch_dft<decltype(nbConst)::value>(hasGradients_, forward, grid, stream, outGeom, inGeom, grads, nOut,
                                                 nIn, tilesPerSplit, nTiles, inB, nIn, dst, nOut, invNx, invNy, invNz);
        };
        switch (nb) {
            case 8: go(std::integral_constant<int, 8>{}); break;
            case 4: go(std::integral_constant<int, 4>{}); break;
            case 2: go(std::integral_constant<int, 2>{}); break;
            default: go(std::integral_constant<int, 1>{}); break;
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

void CudaDftPipeline::synchronize() const { FORGE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace cuda
}  // namespace forge
