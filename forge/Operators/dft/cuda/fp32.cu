// The exact DFT's FP32 kernel: each sample-pixel phase evaluated once for 1-8 vectors, two outputs per
// thread, the inputs staged through shared memory in tiles (GdftR2's sinc factor included). Every batch of
// GdftR2, batches of 1-3 Gdft vectors and every batch on devices without tensor-core code run here.
#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/dft/cuda/kernels.cuh"

namespace forge {
namespace cuda {
namespace dft {
namespace {

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
// Two outputs per thread: every shared-memory load of an input (its geometry and NB values) serves two
// phase evaluations, and the loop overhead is shared. Single vector: 13.3 instructions per pair (19 with one
// output per thread and the phase reduced in turns; docs/benchmarks.md has the history).
constexpr int kOutputsPerThread = 2;

template <int NB, bool kGrad, bool kForward>
__global__ void __launch_bounds__(kTile)
    dft_kernel(const float4* __restrict__ outGeom, const float4* __restrict__ inGeom, const float4* __restrict__ grads,
               int nOut, int nIn, int tilesPerSplit, int nTiles, const float2* __restrict__ in, int inStride,
               float2* __restrict__ out, int outStride, float invNx, float invNy, float invNz) {
    constexpr int OPT = kOutputsPerThread;
    __shared__ float4 sGeom[kTile];
    __shared__ float4 sGrad[kGrad ? kTile : 1];
    // Values interleaved per input ([m][b]) so a thread reads two vectors' values with one 16-byte load.
    __shared__ __align__(16) float2 sVal[kTile][NB];

    float4 me[OPT], myGrad[OPT];
    float ax[OPT], ay[OPT], az[OPT], myT[OPT];
    int o[OPT];
#pragma unroll
    for (int r = 0; r < OPT; ++r) {
        o[r] = blockIdx.x * (kTile * OPT) + r * kTile + threadIdx.x;  // outGeom is padded: always readable
        me[r] = outGeom[o[r]];
        myGrad[r] = (kGrad && !kForward) ? grads[o[r]] : make_float4(0.f, 0.f, 0.f, 0.f);
        // Forward: the sample's own sinc offsets kx/numX etc. and its time, before the 2 pi scaling.
        ax[r] = me[r].x * invNx;
        ay[r] = me[r].y * invNy;
        az[r] = me[r].z * invNz;
        myT[r] = me[r].w;
        me[r] = make_float4(kTwoPiUp * me[r].x, kTwoPiUp * me[r].y, kTwoPiUp * me[r].z, kTwoPiUp * me[r].w);
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
                // Phase in radians: me is 2 pi (kx, ky, kz, t) of a sample (forward) or 2 pi (ix, iy, iz, fm) of
                // a pixel (adjoint), g the other side.
                const float t = kForward ? myT[r] : g.w;
                const float ph = phase_of(me[r], g);
                float sn, cs;
                __sincosf(ph, &sn, &cs);
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

}  // namespace

LaunchShape fp32_launch_shape() { return {kTile * kOutputsPerThread, kTile, kTile}; }

void launch_fp32(int nb, bool grad, bool forward, dim3 grid, cudaStream_t stream, const float4* outGeom,
                 const float4* inGeom, const float4* grads, int nOut, int nIn, int tilesPerSplit, int nTiles,
                 const float2* in, int inStride, float2* out, int outStride, float invNx, float invNy, float invNz) {
    auto go = [&](auto nbConst) {
        launch_dft<decltype(nbConst)::value>(grad, forward, grid, stream, outGeom, inGeom, grads, nOut, nIn,
                                             tilesPerSplit, nTiles, in, inStride, out, outStride, invNx, invNy, invNz);
    };
    switch (nb) {
        case 8: go(std::integral_constant<int, 8>{}); break;
        case 4: go(std::integral_constant<int, 4>{}); break;
        case 2: go(std::integral_constant<int, 2>{}); break;
        default: go(std::integral_constant<int, 1>{}); break;
    }
}

}  // namespace dft
}  // namespace cuda
}  // namespace forge
