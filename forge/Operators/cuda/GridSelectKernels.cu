// CUDA kernels of GfftSampled: box zero-pad / crop, gather of selected grid points, and the sorted
// scatter-add of its adjoint (one thread per distinct grid point, its samples summed in a fixed order:
// no atomics, so results are deterministic).
#include <cuda_runtime.h>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Operators/cuda/GridSelectKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uword n) { return unsigned((n + kThreads - 1) / kThreads); }

template <typename T1>
__global__ void k_box_pad(const forgeComplex<T1>* __restrict__ image, forgeComplex<T1>* __restrict__ grid,
                          BoxGeometry g, uword total) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const uword M = g.Mx * g.My * g.Mz, b = i / M, r = i % M;
    const uword gx = r % g.Mx, gy = (r / g.Mx) % g.My, gz = r / (g.Mx * g.My);
    forgeComplex<T1> v(0, 0);
    if (gx >= g.ox && gx < g.ox + g.Nx && gy >= g.oy && gy < g.oy + g.Ny && gz >= g.oz && gz < g.oz + g.Nz)
        v = image[b * g.Nx * g.Ny * g.Nz + (gx - g.ox) + g.Nx * ((gy - g.oy) + g.Ny * (gz - g.oz))];
    grid[i] = v;
}

template <typename T1>
__global__ void k_box_crop(const forgeComplex<T1>* __restrict__ grid, forgeComplex<T1>* __restrict__ image,
                           BoxGeometry g, uword total) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const uword N = g.Nx * g.Ny * g.Nz, b = i / N, r = i % N;
    const uword x = r % g.Nx, y = (r / g.Nx) % g.Ny, z = r / (g.Nx * g.Ny);
    image[i] = grid[b * g.Mx * g.My * g.Mz + (x + g.ox) + g.Mx * ((y + g.oy) + g.My * (z + g.oz))];
}

template <typename T1>
__global__ void k_gather(const forgeComplex<T1>* __restrict__ in, uword nIn, const uword* __restrict__ idx,
                         forgeComplex<T1>* __restrict__ out, uword nOut, uword total) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const uword b = i / nOut, j = i % nOut;
    out[i] = in[b * nIn + idx[j]];
}

template <typename T1>
__global__ void k_scatter_sorted(const forgeComplex<T1>* __restrict__ in, uword nIn, const uword* __restrict__ dest,
                                 const uword* __restrict__ start, const uword* __restrict__ src,
                                 forgeComplex<T1>* __restrict__ out, uword nOut, uword nu, uword total) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const uword b = i / nu, u = i % nu;
    forgeComplex<T1> s(0, 0);
    for (uword p = start[u]; p < start[u + 1]; ++p) s += in[b * nIn + src[p]];
    out[b * nOut + dest[u]] = s;
}

}  // namespace

template <typename T1>
void box_pad(const forgeComplex<T1>* image, forgeComplex<T1>* grid, const BoxGeometry& g, uword nbatch,
             CUstream_st* stream) {
    const uword total = g.Mx * g.My * g.Mz * nbatch;
    if (total == 0) return;
    k_box_pad<T1><<<blocks_for(total), kThreads, 0, cudaStream_t(stream)>>>(image, grid, g, total);
    FORGE_CUDA_CHECK_LAUNCH("box_pad");
}

template <typename T1>
void box_crop(const forgeComplex<T1>* grid, forgeComplex<T1>* image, const BoxGeometry& g, uword nbatch,
              CUstream_st* stream) {
    const uword total = g.Nx * g.Ny * g.Nz * nbatch;
    if (total == 0) return;
    k_box_crop<T1><<<blocks_for(total), kThreads, 0, cudaStream_t(stream)>>>(grid, image, g, total);
    FORGE_CUDA_CHECK_LAUNCH("box_crop");
}

template <typename T1>
void gather(const forgeComplex<T1>* in, uword nIn, const uword* idx, forgeComplex<T1>* out, uword nOut, uword nbatch) {
    const uword total = nOut * nbatch;
    if (total == 0) return;
    k_gather<T1><<<blocks_for(total), kThreads>>>(in, nIn, idx, out, nOut, total);
    FORGE_CUDA_CHECK_LAUNCH("gather");
}

template <typename T1>
void scatter_sorted(const forgeComplex<T1>* in, uword nIn, const uword* dest, const uword* start, const uword* src,
                    uword nu, forgeComplex<T1>* out, uword nOut, uword nbatch) {
    if (nOut * nbatch == 0) return;
    FORGE_CUDA_CHECK(cudaMemset(out, 0, nOut * nbatch * sizeof(forgeComplex<T1>)));
    const uword total = nu * nbatch;
    if (total == 0) return;
    k_scatter_sorted<T1><<<blocks_for(total), kThreads>>>(in, nIn, dest, start, src, out, nOut, nu, total);
    FORGE_CUDA_CHECK_LAUNCH("scatter_sorted");
}

#define FORGE_GRID_SELECT_INSTANTIATE(T1)                                                                             \
    template void box_pad<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);   \
    template void box_crop<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);  \
    template void gather<T1>(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword);          \
    template void scatter_sorted<T1>(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, \
                                     forgeComplex<T1>*, uword, uword);
FORGE_GRID_SELECT_INSTANTIATE(float)
FORGE_GRID_SELECT_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge
