// CUDA kernels of the Toeplitz kernel build: the kernels' expansion along a Cartesian axis, and the gather of
// the compressed pair data's rows into the NUFFT's input columns.
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// The expansion is a product (slab cells x G) (G x Pa) per basis kernel. A block takes kCells slab cells of one
// basis kernel and kOffsets offsets d along the axis: the cells' Q for a chunk of kGroups groups and the chunk's
// phases sit in shared memory, each of the block's threads sums kOffsets / kRows offsets of one cell (the block
// reads Q once per offset pass, not once per output as one thread per output did). Sums in a fixed order.
constexpr int kCells = 64, kRows = 4, kPerThread = 16, kOffsets = kRows * kPerThread;

template <typename T1>
__global__ void k_expand_axis(const forgeComplex<T1>* __restrict__ Q, const forgeComplex<T1>* __restrict__ E,
                              forgeComplex<T1>* __restrict__ out, uword lo, uword Pa, uword hi, uword G, uword nb) {
    constexpr int kGroups = sizeof(T1) == 4 ? 32 : 16;  // shared memory within 48 KB in double too
    __shared__ T1 qs[kGroups][kCells][2];
    __shared__ T1 es[kGroups][kOffsets][2];
    const uword M = lo * hi, P = M * Pa, r = blockIdx.y, c0 = uword(blockIdx.x) * kCells;
    const int ci = int(threadIdx.x) % kCells, row = int(threadIdx.x) / kCells;
    const uword c = c0 + uword(ci), i = c % lo, h = c / lo;
    for (uword d0 = 0; d0 < Pa; d0 += kOffsets) {
        T1 accR[kPerThread], accI[kPerThread];
        for (int k = 0; k < kPerThread; ++k) accR[k] = accI[k] = T1(0);
        for (uword g0 = 0; g0 < G; g0 += kGroups) {
            __syncthreads();
            for (int e = int(threadIdx.x); e < kGroups * kCells; e += int(blockDim.x)) {
                const int gg = e / kCells, cc = e % kCells;
                const uword g = g0 + uword(gg), cell = c0 + uword(cc);
                const forgeComplex<T1> v = g < G && cell < M ? Q[cell + M * r + M * nb * g] : forgeComplex<T1>(0, 0);
                qs[gg][cc][0] = v.real();
                qs[gg][cc][1] = v.imag();
            }
            for (int e = int(threadIdx.x); e < kGroups * kOffsets; e += int(blockDim.x)) {
                const int gg = e / kOffsets, dd = e % kOffsets;
                const uword g = g0 + uword(gg), d = d0 + uword(dd);
                const forgeComplex<T1> v = g < G && d < Pa ? E[d + Pa * g] : forgeComplex<T1>(0, 0);
                es[gg][dd][0] = v.real();
                es[gg][dd][1] = v.imag();
            }
            __syncthreads();
            for (int gg = 0; gg < kGroups; ++gg) {
                const T1 qr = qs[gg][ci][0], qi = qs[gg][ci][1];
#pragma unroll
                for (int k = 0; k < kPerThread; ++k) {
                    const T1 er = es[gg][row + kRows * k][0], ei = es[gg][row + kRows * k][1];
                    accR[k] += er * qr - ei * qi;
                    accI[k] += er * qi + ei * qr;
                }
            }
        }
        if (c < M)
            for (int k = 0; k < kPerThread; ++k) {
                const uword d = d0 + uword(row + kRows * k);
                if (d < Pa) out[i + lo * (d + Pa * h) + P * r] = forgeComplex<T1>(accR[k], accI[k]);
            }
    }
}

template <typename T1>
__global__ void k_gather_rows(const forgeComplex<T1>* __restrict__ rows, uword T, const unsigned* __restrict__ row,
                              const T1* __restrict__ scale, uword n, uword ng, uword nb,
                              forgeComplex<T1>* __restrict__ out) {
    const uword total = n * ng * nb;
    for (uword o = uword(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += uword(gridDim.x) * blockDim.x) {
        const uword i = o % n, col = o / n, r = col % nb, g = col / nb, s = g * n + i;
        const forgeComplex<T1> v = rows[row[s] + T * r];
        out[o] = forgeComplex<T1>(scale[s] * v.real(), scale[s] * v.imag());
    }
}

}  // namespace

template <typename T1>
void toeplitz_gather_rows(const forgeComplex<T1>* rows, uword T, const unsigned* row, const T1* scale, uword n,
                          uword ng, uword nb, forgeComplex<T1>* out) {
    const uword total = n * ng * nb;
    if (total == 0) return;
    const uword blocks = (total + kThreads - 1) / kThreads;
    k_gather_rows<T1>
        <<<unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16), kThreads>>>(rows, T, row, scale, n, ng, nb, out);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_gather_rows");
}

template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>* Q, const forgeComplex<T1>* E, forgeComplex<T1>* out, uword lo,
                          uword Pa, uword hi, uword G, uword nb) {
    const uword M = lo * hi;
    if (M * Pa * nb == 0) return;
    if (nb > 65535) throw invalid_argument("toeplitz_expand_axis: more than 65535 basis kernels");
    const dim3 grid(unsigned((M + kCells - 1) / kCells), unsigned(nb));
    k_expand_axis<T1><<<grid, kCells * kRows>>>(Q, E, out, lo, Pa, hi, G, nb);
    FORGE_CUDA_CHECK_LAUNCH("toeplitz_expand_axis");
}

template void toeplitz_gather_rows<float>(const forgeComplex<float>*, uword, const unsigned*, const float*, uword,
                                          uword, uword, forgeComplex<float>*);
template void toeplitz_gather_rows<double>(const forgeComplex<double>*, uword, const unsigned*, const double*, uword,
                                           uword, uword, forgeComplex<double>*);
template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

}  // namespace cuda
}  // namespace forge
