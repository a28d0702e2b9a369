// The Toeplitz normal operator's device apply: the fused pad, kernel product and crop, and the segment grids' cuFFT
// plans (layout and stages: ToeplitzApply.h). Every kernel is memory bound; each thread owns one cell (or pixel)
// and loops over the chunk's vectors, so what all vectors share (kernels, phases) is read once per thread.
#include <cuda_runtime.h>
#include <cufft.h>

#include <sstream>
#include <type_traits>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

void check_cufft(cufftResult r, const char* what) {
    if (r != CUFFT_SUCCESS) {
        std::ostringstream m;
        m << "ToeplitzNormal: " << what << " failed with cufftResult " << int(r);
        throw cuda_error(m.str());
    }
}

unsigned blocks_for(uword n) { return unsigned((n + kThreads - 1) / kThreads); }

// One thread per cell (x, y, z < Nz) of the padded plane: for each vector v the image value x_v, times b_m for each
// segment m, or 0 outside the image.
template <typename T1>
__global__ void k_pad(const forgeComplex<T1>* __restrict__ x, const forgeComplex<T1>* __restrict__ phases,
                      forgeComplex<T1>* __restrict__ grid, ToeplitzChunk c) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    const uword plane = c.plane();
    if (i >= plane * c.N[2]) return;
    const uword z = i / plane, xy = i - z * plane, yy = xy / c.P[0], xx = xy - yy * c.P[0];
    const uword G = c.grids(), S = c.S, n2 = c.N[0] * c.N[1] * c.N[2];
    forgeComplex<T1>* out = grid + z * G * plane + xy;  // grid g at + g plane
    if (xx >= c.N[0] || yy >= c.N[1]) {
        for (uword g = 0; g < G; ++g) out[g * plane] = forgeComplex<T1>(0, 0);
        return;
    }
    const uword pix = xx + c.N[0] * (yy + c.N[1] * z);
    for (uword v = 0; v < c.nv; ++v) {
        const forgeComplex<T1> xv = x[v * n2 + pix];
        forgeComplex<T1>* o = out + v * S * plane;
        if (!phases) {
            o[0] = xv;
            continue;
        }
        for (uword m = 0; m < S; ++m) o[m * plane] = phases[m * n2 + pix] * xv;
    }
}

// Slot of the pair l <= m among the upper triangle of S x S, row by row.
__host__ __device__ constexpr int pair_slot(int l, int m, int S) { return l * S - l * (l - 1) / 2 + (m - l); }

// One thread per cell k of the padded grid: the cell's kernels of the pairs l <= m in registers (read once), then for
// each vector its S segment values in, the S products out, in place. A pair l < m adds K .* z_m to u_l and
// conj(K) .* z_l to u_m; a diagonal pair Re(K) .* z_l (ToeplitzKernels.h: mix_at's sums, in a fixed order).
template <typename T1, int S>
__global__ void __launch_bounds__(kThreads)
    k_mix_registers(const forgeComplex<T1>* __restrict__ K, ToeplitzPairTable table, forgeComplex<T1>* grid,
                    ToeplitzChunk c) {
    using C = forgeComplex<T1>;
    const uword P = c.plane() * c.P[2];
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= P) return;
    const uword plane = c.plane(), z = k / plane, xy = k - z * plane;
    C* base = grid + z * c.grids() * plane + xy;
    C q[S * (S + 1) / 2];
#pragma unroll
    for (int l = 0; l < S; ++l) {
#pragma unroll
        for (int m = l; m < S; ++m) {
            const int t = pair_slot(l, m, S), v = table.t[l * S + m];
            if (v == 0) {
                q[t] = C(0, 0);
            } else {
                const C kv = K[uword(v > 0 ? v - 1 : -v - 1) * P + k];
                q[t] = v > 0 ? kv : conj(kv);
            }
        }
    }
    for (uword vec = 0; vec < c.nv; ++vec) {
        C* g = base + vec * uword(S) * plane;
        C zm[S], u[S];
#pragma unroll
        for (int m = 0; m < S; ++m) {
            zm[m] = g[uword(m) * plane];
            u[m] = C(0, 0);
        }
#pragma unroll
        for (int l = 0; l < S; ++l) {
#pragma unroll
            for (int m = l; m < S; ++m) {
                const int t = pair_slot(l, m, S);
                if (l == m) {
                    u[l] += q[t].real() * zm[l];
                } else {
                    u[l] += q[t] * zm[m];
                    u[m] += conj(q[t]) * zm[l];
                }
            }
        }
#pragma unroll
        for (int l = 0; l < S; ++l) g[uword(l) * plane] = u[l];
    }
}

// Any S: one thread per cell, out of place, u_l = sum_m table(l, m) terms as mix_at (the kernels re-read for each
// vector, mostly from cache).
template <typename T1>
__global__ void k_mix_any(const forgeComplex<T1>* __restrict__ K, const long long* __restrict__ table,
                          const forgeComplex<T1>* __restrict__ in, forgeComplex<T1>* __restrict__ out,
                          ToeplitzChunk c) {
    using C = forgeComplex<T1>;
    const uword P = c.plane() * c.P[2];
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= P) return;
    const uword plane = c.plane(), z = k / plane, xy = k - z * plane, S = c.S;
    const uword offset = z * c.grids() * plane + xy;
    for (uword vec = 0; vec < c.nv; ++vec) {
        const C* zg = in + offset + vec * S * plane;
        C* ug = out + offset + vec * S * plane;
        for (uword l = 0; l < S; ++l) {
            C acc(0, 0);
            for (uword m = 0; m < S; ++m) {
                const long long v = table[l * S + m];
                if (v == 0) continue;
                const C q = K[uword(v > 0 ? v - 1 : -v - 1) * P + k], zv = zg[m * plane];
                if (l == m) {
                    acc += q.real() * zv;
                } else {
                    acc += (v > 0 ? q : conj(q)) * zv;
                }
            }
            ug[l * plane] = acc;
        }
    }
}

// One thread per image pixel: for each vector, sum_l conj(b_l) .* u_l in a register, one write.
template <typename T1>
__global__ void k_crop(const forgeComplex<T1>* __restrict__ grid, const forgeComplex<T1>* __restrict__ phases,
                       forgeComplex<T1>* __restrict__ y, ToeplitzChunk c) {
    const uword n2 = c.N[0] * c.N[1] * c.N[2];
    const uword pix = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (pix >= n2) return;
    const uword xx = pix % c.N[0], r = pix / c.N[0], yy = r % c.N[1], z = r / c.N[1];
    const uword plane = c.plane(), S = c.S;
    const forgeComplex<T1>* u = grid + z * c.grids() * plane + yy * c.P[0] + xx;
    for (uword v = 0; v < c.nv; ++v) {
        const forgeComplex<T1>* uv = u + v * S * plane;
        if (!phases) {
            y[v * n2 + pix] = uv[0];
            continue;
        }
        forgeComplex<T1> acc(0, 0);
        for (uword l = 0; l < S; ++l) acc += conj(phases[l * n2 + pix]) * uv[l * plane];
        y[v * n2 + pix] = acc;
    }
}

template <typename T1>
__global__ void k_zero(forgeComplex<T1>* p, uword n) {
    for (uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uword(gridDim.x) * blockDim.x)
        p[i] = forgeComplex<T1>(0, 0);
}

template <typename T1>
void exec(int handle, forgeComplex<T1>* in, forgeComplex<T1>* out, bool forward) {
    const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    if constexpr (std::is_same<T1, float>::value) {
        check_cufft(cufftExecC2C(cufftHandle(handle), reinterpret_cast<cufftComplex*>(in),
                                 reinterpret_cast<cufftComplex*>(out), dir),
                    "cufftExecC2C");
    } else {
        check_cufft(cufftExecZ2Z(cufftHandle(handle), reinterpret_cast<cufftDoubleComplex*>(in),
                                 reinterpret_cast<cufftDoubleComplex*>(out), dir),
                    "cufftExecZ2Z");
    }
}

// A plan-many of 'rank' axes n (slowest first) at element stride 'stride', 'dist' between transforms.
template <typename T1>
int make_plan(int rank, long long* n, long long stride, long long dist, long long batch, CUstream_st* stream) {
    cufftHandle h;
    check_cufft(cufftCreate(&h), "cufftCreate");
    size_t work = 0;
    const cufftType type = std::is_same<T1, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    // Embeds equal to n: the strides and distances apply (null embeds would ignore them).
    const cufftResult r = cufftMakePlanMany64(h, rank, n, n, stride, dist, n, stride, dist, type, batch, &work);
    if (r != CUFFT_SUCCESS) {
        cufftDestroy(h);
        check_cufft(r, "cufftMakePlanMany64 (segment grids)");
    }
    const cufftResult s = cufftSetStream(h, cudaStream_t(stream));
    if (s != CUFFT_SUCCESS) {
        cufftDestroy(h);
        check_cufft(s, "cufftSetStream");
    }
    return int(h);
}

}  // namespace

template <typename T1>
void toeplitz_pad_segments(const forgeComplex<T1>* x, const forgeComplex<T1>* phases, forgeComplex<T1>* grid,
                           const ToeplitzChunk& c, CUstream_st* stream) {
    const uword n = c.plane() * c.N[2];
    if (n == 0 || c.nv == 0) return;
    k_pad<T1><<<blocks_for(n), kThreads, 0, cudaStream_t(stream)>>>(x, phases, grid, c);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_pad_segments");
}

template <typename T1, int S>
void launch_mix(const forgeComplex<T1>* K, const ToeplitzPairTable& table, forgeComplex<T1>* grid,
                const ToeplitzChunk& c, CUstream_st* stream) {
    const uword P = c.plane() * c.P[2];
    k_mix_registers<T1, S><<<blocks_for(P), kThreads, 0, cudaStream_t(stream)>>>(K, table, grid, c);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_mix_segments");
}

template <typename T1>
void toeplitz_mix_segments(const forgeComplex<T1>* K, const ToeplitzPairTable& table, forgeComplex<T1>* grid,
                           const ToeplitzChunk& c, CUstream_st* stream) {
    if (c.nv == 0) return;
    switch (c.S) {
        case 1: return launch_mix<T1, 1>(K, table, grid, c, stream);
        case 2: return launch_mix<T1, 2>(K, table, grid, c, stream);
        case 3: return launch_mix<T1, 3>(K, table, grid, c, stream);
        case 4: return launch_mix<T1, 4>(K, table, grid, c, stream);
        case 5: return launch_mix<T1, 5>(K, table, grid, c, stream);
        case 6: return launch_mix<T1, 6>(K, table, grid, c, stream);
        case 7: return launch_mix<T1, 7>(K, table, grid, c, stream);
        case 8: return launch_mix<T1, 8>(K, table, grid, c, stream);
        default: {
            std::ostringstream m;
            m << "ToeplitzNormal: the register kernel product takes at most " << kToeplitzRegisterSegments
              << " segments, got " << c.S;
            throw invalid_argument(m.str());
        }
    }
}

template <typename T1>
void toeplitz_mix_segments_any(const forgeComplex<T1>* K, const long long* table, const forgeComplex<T1>* in,
                               forgeComplex<T1>* out, const ToeplitzChunk& c, CUstream_st* stream) {
    const uword P = c.plane() * c.P[2];
    if (P == 0 || c.nv == 0) return;
    k_mix_any<T1><<<blocks_for(P), kThreads, 0, cudaStream_t(stream)>>>(K, table, in, out, c);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_mix_segments_any");
}

template <typename T1>
void toeplitz_crop_segments(const forgeComplex<T1>* grid, const forgeComplex<T1>* phases, forgeComplex<T1>* y,
                            const ToeplitzChunk& c, CUstream_st* stream) {
    const uword n2 = c.N[0] * c.N[1] * c.N[2];
    if (n2 == 0 || c.nv == 0) return;
    k_crop<T1><<<blocks_for(n2), kThreads, 0, cudaStream_t(stream)>>>(grid, phases, y, c);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_crop_segments");
}

template <typename T1>
void toeplitz_zero(forgeComplex<T1>* p, uword count, CUstream_st* stream) {
    if (count == 0) return;
    const uword b = blocks_for(count);
    k_zero<T1><<<unsigned(b < 65535 * 16 ? b : 65535 * 16), kThreads, 0, cudaStream_t(stream)>>>(p, count);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_zero");
}

template <typename T1>
ToeplitzFft<T1>::ToeplitzFft(const ToeplitzChunk& c, CUstream_st* stream) {
    const long long Px = (long long)c.P[0], Py = (long long)c.P[1], Pz = (long long)c.P[2];
    const long long plane = Px * Py, G = (long long)c.grids();
    long long n[2];
    int rank = 0;
    if (Py > 1) n[rank++] = Py;
    if (Px > 1) n[rank++] = Px;
    if (rank > 0) plane_ = make_plan<T1>(rank, n, 1, plane, (long long)c.N[2] * G, stream);
    if (Pz > 1) {
        long long nz[1] = {Pz};
        try {
            column_ = make_plan<T1>(1, nz, G * plane, 1, G * plane, stream);
        } catch (...) {
            if (plane_ >= 0) cufftDestroy(cufftHandle(plane_));
            throw;
        }
    }
}

template <typename T1>
ToeplitzFft<T1>::~ToeplitzFft() {
    if (plane_ >= 0) cufftDestroy(cufftHandle(plane_));
    if (column_ >= 0) cufftDestroy(cufftHandle(column_));
}

template <typename T1>
void ToeplitzFft<T1>::forward(forgeComplex<T1>* a, forgeComplex<T1>* b) const {
    if (column_ < 0) {  // no column axis: everything in b
        if (plane_ >= 0) exec<T1>(plane_, b, b, true);
        return;
    }
    if (plane_ >= 0) exec<T1>(plane_, a, a, true);
    exec<T1>(column_, a, b, true);
}

template <typename T1>
void ToeplitzFft<T1>::backward(forgeComplex<T1>* b) const {
    if (column_ >= 0) exec<T1>(column_, b, b, false);
    if (plane_ >= 0) exec<T1>(plane_, b, b, false);
}

#define FORGE_TOEPLITZ_APPLY_INSTANTIATE(T1)                                                                        \
    template void toeplitz_pad_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,    \
                                            const ToeplitzChunk&, CUstream_st*);                                    \
    template void toeplitz_mix_segments<T1>(const forgeComplex<T1>*, const ToeplitzPairTable&, forgeComplex<T1>*,   \
                                            const ToeplitzChunk&, CUstream_st*);                                    \
    template void toeplitz_mix_segments_any<T1>(const forgeComplex<T1>*, const long long*, const forgeComplex<T1>*, \
                                                forgeComplex<T1>*, const ToeplitzChunk&, CUstream_st*);             \
    template void toeplitz_crop_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,   \
                                             const ToeplitzChunk&, CUstream_st*);                                   \
    template void toeplitz_zero<T1>(forgeComplex<T1>*, uword, CUstream_st*);                                        \
    template class ToeplitzFft<T1>;
FORGE_TOEPLITZ_APPLY_INSTANTIATE(float)
FORGE_TOEPLITZ_APPLY_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge
