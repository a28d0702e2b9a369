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

// One thread per padded cell of the planes z < Nz (pad), per cell (kernel products), per pixel (crop): the
// per-thread work is in ToeplitzApply.h.
template <typename T1>
__global__ void k_pad(const forgeComplex<T1>* __restrict__ x, const forgeComplex<T1>* __restrict__ phases,
                      forgeComplex<T1>* __restrict__ grid, ToeplitzChunk c) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < c.plane() * c.N[2]) toeplitz_pad_at<T1>(x, phases, grid, c, i);
}

template <typename T1, int S>
__global__ void __launch_bounds__(kThreads)
    k_mix_registers(const forgeComplex<T1>* __restrict__ K, ToeplitzPairTable table, forgeComplex<T1>* grid,
                    ToeplitzChunk c) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < c.plane() * c.P[2]) toeplitz_mix_registers_at<T1, S>(K, table, grid, c, k);
}

template <typename T1>
__global__ void k_mix_any(const forgeComplex<T1>* __restrict__ K, const long long* __restrict__ table,
                          const forgeComplex<T1>* __restrict__ in, forgeComplex<T1>* __restrict__ out,
                          ToeplitzChunk c) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < c.plane() * c.P[2]) toeplitz_mix_any_at<T1>(K, table, in, out, c, k);
}

template <typename T1>
__global__ void k_crop(const forgeComplex<T1>* __restrict__ grid, const forgeComplex<T1>* __restrict__ phases,
                       forgeComplex<T1>* __restrict__ y, ToeplitzChunk c) {
    const uword pix = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (pix < c.N[0] * c.N[1] * c.N[2]) toeplitz_crop_at<T1>(grid, phases, y, c, pix);
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

// A plan-many of 'rank' axes n (slowest first) at element stride 'stride', 'dist' between transforms, without a
// work area of its own (its size in *work: the caller gives one).
template <typename T1>
int make_plan(int rank, long long* n, long long stride, long long dist, long long batch, CUstream_st* stream,
              size_t* work) {
    cufftHandle h;
    check_cufft(cufftCreate(&h), "cufftCreate");
    const cufftType type = std::is_same<T1, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    cufftResult r = cufftSetAutoAllocation(h, 0);
    // Embeds equal to n: the strides and distances apply (null embeds would ignore them).
    if (r == CUFFT_SUCCESS) r = cufftMakePlanMany64(h, rank, n, n, stride, dist, n, stride, dist, type, batch, work);
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
    ToeplitzFftGeometry f = toeplitz_fft_geometry(c);
    size_t planeWork = 0, columnWork = 0;
    try {
        if (f.planeRank > 0)
            plane_ = make_plan<T1>(f.planeRank, f.planeN, 1, f.planeDist, f.planeBatch, stream, &planeWork);
        if (f.columnN > 1)
            column_ = make_plan<T1>(1, &f.columnN, f.columnStride, 1, f.columnBatch, stream, &columnWork);
        // One work area for both plans: they run one after the other on one stream.
        const size_t bytes = planeWork > columnWork ? planeWork : columnWork;
        if (bytes > 0) {
            work_ = DeviceBuffer(bytes);
            if (plane_ >= 0) check_cufft(cufftSetWorkArea(cufftHandle(plane_), work_.get()), "cufftSetWorkArea");
            if (column_ >= 0) check_cufft(cufftSetWorkArea(cufftHandle(column_), work_.get()), "cufftSetWorkArea");
        }
    } catch (...) {
        if (plane_ >= 0) cufftDestroy(cufftHandle(plane_));
        if (column_ >= 0) cufftDestroy(cufftHandle(column_));
        throw;
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
