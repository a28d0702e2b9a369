#pragma once
// Device kernels of GfftSampled (declarations free of CUDA headers): zero-pad an image into the centre of
// a larger grid and crop it back, keep selected grid points, and add samples back onto their grid points.
// Implemented in forge/Operators/cuda/GridSelectKernels.cu; on CPU builds NoCuda.cpp throws forge::cuda_error.
// Also ToeplitzNormal's pad and crop of its 2x grid. nbatch vectors are stored back to back. Queued on 'stream'
// (null: the legacy default stream); no atomics (deterministic).
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {
namespace cuda {

// An Nx x Ny x Nz image inside an Mx x My x Mz grid at offset (ox, oy, oz), both x fastest.
struct BoxGeometry {
    uword Nx, Ny, Nz, Mx, My, Mz, ox, oy, oz;
};

// grid = image inside the box, 0 elsewhere
template <typename T1>
void box_pad(const forgeComplex<T1>* image, forgeComplex<T1>* grid, const BoxGeometry& g, uword nbatch,
             CUstream_st* stream = nullptr);
// image = grid inside the box
template <typename T1>
void box_crop(const forgeComplex<T1>* grid, forgeComplex<T1>* image, const BoxGeometry& g, uword nbatch,
              CUstream_st* stream = nullptr);
// out[b*nOut + i] = in[b*nIn + idx[i]]
template <typename T1>
void gather(const forgeComplex<T1>* in, uword nIn, const uword* idx, forgeComplex<T1>* out, uword nOut, uword nbatch);
// out[b*nOut + dest[u]] = sum over p in [start[u], start[u+1]) of in[b*nIn + src[p]] (summed in that
// order), for the nu distinct destinations; every other entry of out is set to 0.
template <typename T1>
void scatter_sorted(const forgeComplex<T1>* in, uword nIn, const uword* dest, const uword* start, const uword* src,
                    uword nu, forgeComplex<T1>* out, uword nOut, uword nbatch);

}  // namespace cuda
}  // namespace forge
