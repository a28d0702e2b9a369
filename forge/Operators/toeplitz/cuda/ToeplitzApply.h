#pragma once
// The device apply of the Toeplitz normal operator (forge/Operators/toeplitz/ToeplitzNormal.h; DeviceApply.cpp runs
// it): three fused kernels and the cuFFT plans of the segment grids, declared without CUDA headers (implemented in
// ToeplitzApply.cu; NoCuda.cpp throws in CPU-only builds).
//
// Layout of a chunk of nv vectors with S segments each, G = nv S grids of Px x Py x Pz cells: plane-major,
//   grid g (= v S + m), cell (x, y, z)  at  (z G + g) Px Py + y Px + x,
// so the planes z < Nz of all grids (the only ones the image reaches) are one contiguous block: the transforms over
// (x, y) run as one plan-many over Nz G planes, and the transform along z as one plan-many over the G Px Py
// columns (stride G Px Py). The kernels keep their standard layout (cell x + Px (y + Py z)).
//   pad    a[planes z < Nz] = b_m .* x_v inside the image, 0 elsewhere in the plane (one read of x per vector)
//   fft    forward over (x, y) of the planes z < Nz of a (in place), then along z from a to b: the planes
//          z >= Nz of a are zero and stay so (only the chunk's own first Nz G planes are ever written there)
//   mix    u_l = sum_m K(l, m) .* z_m in place in b, each kernel value read once per chunk for all its vectors
//   ifft   backward along z in b (in place), then over (x, y) of b's planes z < Nz only
//   crop   y_v = sum_l conj(b_l) .* u_l inside the image (one write per vector)
// A 2D grid comes as Nx x 1 x Ny (DeviceApply.cpp): its rows y < Ny are the "planes" z < Nz above, so x is
// transformed on the image's rows only and y is the column axis. Without a column axis (Pz = 1: a 1D grid) the pad
// writes b whole and the transforms run in place there; a then only takes the general mix's output.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {
namespace cuda {

// The segment grids of one chunk: image N, padded grid P (each P[d] = 2 N[d] or 1), S segments, nv vectors.
struct ToeplitzChunk {
    uword N[3], P[3], S, nv;
    FORGE_HD uword plane() const { return P[0] * P[1]; }
    FORGE_HD uword grids() const { return nv * S; }
    FORGE_HD uword cells() const { return plane() * P[2] * grids(); }        // entries of a (or b)
    FORGE_HD uword image_cells() const { return plane() * N[2] * grids(); }  // entries of the planes z < Nz
};

// The largest S for which the mix keeps a cell's kernels and segments in registers; above it a slower kernel
// runs (out of place, reading the kernels once per vector).
constexpr uword kToeplitzRegisterSegments = 8;

// The kernel-pair table (ToeplitzKernels.h: S x S, 0 none, p + 1 kernel p, -(p + 1) its conjugate) for the
// register mix: entries as int, for S <= kToeplitzRegisterSegments; table(m, l) = -table(l, m) off the diagonal.
struct ToeplitzPairTable {
    int t[kToeplitzRegisterSegments * kToeplitzRegisterSegments];
};

// a (planes z < Nz) or, in 2D, b = the padded segment images of x (nv vectors of n2 pixels back to back); phases
// b_l (S x n2; null when S = 1 and there is no field map).
template <typename T1>
void toeplitz_pad_segments(const forgeComplex<T1>* x, const forgeComplex<T1>* phases, forgeComplex<T1>* grid,
                           const ToeplitzChunk& c, CUstream_st* stream);

// In place in grid: u_l = sum_m K(l, m) .* z_m at every cell of every vector, S <= kToeplitzRegisterSegments.
template <typename T1>
void toeplitz_mix_segments(const forgeComplex<T1>* K, const ToeplitzPairTable& table, forgeComplex<T1>* grid,
                           const ToeplitzChunk& c, CUstream_st* stream);
// The same for any S, out of place (in -> out; table: the device copy of the long long table).
template <typename T1>
void toeplitz_mix_segments_any(const forgeComplex<T1>* K, const long long* table, const forgeComplex<T1>* in,
                               forgeComplex<T1>* out, const ToeplitzChunk& c, CUstream_st* stream);

// y (nv vectors of n2) = sum_l conj(b_l) .* the image part of the grids of each vector (phases null: S = 1).
template <typename T1>
void toeplitz_crop_segments(const forgeComplex<T1>* grid, const forgeComplex<T1>* phases, forgeComplex<T1>* y,
                            const ToeplitzChunk& c, CUstream_st* stream);

// Zeroes count entries at p (stream-ordered).
template <typename T1>
void toeplitz_zero(forgeComplex<T1>* p, uword count, CUstream_st* stream);

// cuFFT plans of one chunk size: (x, y) over the Nz G planes, z over the G Px Py columns; made on 'stream' for the
// current device. Unnormalised (forward exponent -1, backward +1), as the kernels expect.
template <typename T1>
class ToeplitzFft {
public:
    ToeplitzFft(const ToeplitzChunk& c, CUstream_st* stream);
    ~ToeplitzFft();
    ToeplitzFft(const ToeplitzFft&) = delete;
    ToeplitzFft& operator=(const ToeplitzFft&) = delete;
    // With a column axis: (x, y) in place in a, then z from a to b. Without: (x, y) in place in b (a unused).
    void forward(forgeComplex<T1>* a, forgeComplex<T1>* b) const;
    // z in place in b (with a column axis), then (x, y) of b's planes z < Nz.
    void backward(forgeComplex<T1>* b) const;

private:
    int plane_ = -1, column_ = -1;  // cufftHandle, -1: no transform along those axes (length 1)
};

}  // namespace cuda
}  // namespace forge
