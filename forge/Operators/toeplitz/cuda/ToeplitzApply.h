#pragma once
// The device apply of the Toeplitz normal operator (forge/Operators/toeplitz/ToeplitzNormal.h; DeviceApply.cpp runs
// it): three fused kernels and the cuFFT plans of the segment grids, declared without CUDA headers (implemented in
// ToeplitzApply.cu; this folder's NoCuda.cpp throws in CPU-only builds).
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
#include "forge/Core/DeviceMemory.h"
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

// The chunk of nv vectors of an image N on the padded grid P: a 2D grid (P[2] = 1 < P[1]) as N[0] x 1 x N[1], its
// rows taking the planes' part (cell x + Px y and pixel x + Nx y keep their indices).
inline ToeplitzChunk make_toeplitz_chunk(const uword* N, const uword* P, uword S, uword nv) {
    const bool flat = P[2] == 1 && P[1] > 1;
    return ToeplitzChunk{{N[0], flat ? 1 : N[1], flat ? N[1] : N[2]},
                         {P[0], flat ? 1 : P[1], flat ? P[1] : P[2]},
                         S,
                         nv};
}

// The cuFFT plans' geometry (ToeplitzFft; cuFFT's order, slowest axis first): the transform over the plane's axes
// longer than 1 among (y, x), on the N[2] G planes 'planeDist' apart; the transform along z (length Pz, when > 1),
// at stride G Px Py, on the G Px Py columns one entry apart.
struct ToeplitzFftGeometry {
    int planeRank = 0;
    long long planeN[2] = {1, 1}, planeDist = 0, planeBatch = 0;
    long long columnN = 1, columnStride = 0, columnBatch = 0;  // columnN = 1: no column transform
};
inline ToeplitzFftGeometry toeplitz_fft_geometry(const ToeplitzChunk& c) {
    ToeplitzFftGeometry f;
    const long long plane = (long long)c.plane(), G = (long long)c.grids();
    if (c.P[1] > 1) f.planeN[f.planeRank++] = (long long)c.P[1];
    if (c.P[0] > 1) f.planeN[f.planeRank++] = (long long)c.P[0];
    f.planeDist = plane;
    f.planeBatch = (long long)c.N[2] * G;
    f.columnN = (long long)c.P[2];
    f.columnStride = G * plane;
    f.columnBatch = G * plane;
    return f;
}

// What one thread of each kernel computes (ToeplitzApply.cu), for both compilers: the host emulation of the device
// apply in the tests runs the same code.
#ifdef __CUDACC__
#define FORGE_TOEPLITZ_UNROLL _Pragma("unroll")
#else
#define FORGE_TOEPLITZ_UNROLL
#endif

// Pad: cell i (< plane N[2]) of the planes z < Nz: for each vector v the image value x_v, times b_m for each segment
// m, or 0 outside the image, into the grids at 'grid'.
template <typename T1>
FORGE_HD void toeplitz_pad_at(const forgeComplex<T1>* x, const forgeComplex<T1>* phases, forgeComplex<T1>* grid,
                              const ToeplitzChunk& c, uword i) {
    const uword plane = c.plane();
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
        if (!phases) {  // S = 1, field-free
            o[0] = xv;
            continue;
        }
        for (uword m = 0; m < S; ++m) o[m * plane] = phases[m * n2 + pix] * xv;
    }
}

// Slot of the pair l <= m among the upper triangle of S x S, row by row.
FORGE_HD constexpr int toeplitz_pair_slot(int l, int m, int S) { return l * S - l * (l - 1) / 2 + (m - l); }

// Kernel product at cell k (< P) of the padded grid, S segments known at compile time: the cell's kernels of the
// pairs l <= m in registers (read once), then for each vector its S segment values in, the S products out, in
// place. A pair l < m adds K .* z_m to u_l and conj(K) .* z_l to u_m; a diagonal pair Re(K) .* z_l
// (ToeplitzKernels.h: mix_at's sums, in a fixed order).
template <typename T1, int S>
FORGE_HD void toeplitz_mix_registers_at(const forgeComplex<T1>* K, const ToeplitzPairTable& table,
                                        forgeComplex<T1>* grid, const ToeplitzChunk& c, uword k) {
    using C = forgeComplex<T1>;
    const uword P = c.plane() * c.P[2], plane = c.plane(), z = k / plane, xy = k - z * plane;
    C* base = grid + z * c.grids() * plane + xy;
    C q[S * (S + 1) / 2];
    FORGE_TOEPLITZ_UNROLL
    for (int l = 0; l < S; ++l) {
        FORGE_TOEPLITZ_UNROLL
        for (int m = l; m < S; ++m) {
            const int t = toeplitz_pair_slot(l, m, S), v = table.t[l * S + m];
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
        FORGE_TOEPLITZ_UNROLL
        for (int m = 0; m < S; ++m) {
            zm[m] = g[uword(m) * plane];
            u[m] = C(0, 0);
        }
        FORGE_TOEPLITZ_UNROLL
        for (int l = 0; l < S; ++l) {
            FORGE_TOEPLITZ_UNROLL
            for (int m = l; m < S; ++m) {
                const int t = toeplitz_pair_slot(l, m, S);
                if (l == m) {
                    u[l] += q[t].real() * zm[l];
                } else {
                    u[l] += q[t] * zm[m];
                    u[m] += conj(q[t]) * zm[l];
                }
            }
        }
        FORGE_TOEPLITZ_UNROLL
        for (int l = 0; l < S; ++l) g[uword(l) * plane] = u[l];
    }
}

// Kernel product at cell k for any S, out of place: u_l = sum_m table(l, m) terms as mix_at (the kernels read for
// each vector).
template <typename T1>
FORGE_HD void toeplitz_mix_any_at(const forgeComplex<T1>* K, const long long* table, const forgeComplex<T1>* in,
                                  forgeComplex<T1>* out, const ToeplitzChunk& c, uword k) {
    using C = forgeComplex<T1>;
    const uword P = c.plane() * c.P[2], plane = c.plane(), z = k / plane, xy = k - z * plane, S = c.S;
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

// Crop at image pixel pix (< n2): for each vector, sum_l conj(b_l) .* u_l, one write.
template <typename T1>
FORGE_HD void toeplitz_crop_at(const forgeComplex<T1>* grid, const forgeComplex<T1>* phases, forgeComplex<T1>* y,
                               const ToeplitzChunk& c, uword pix) {
    const uword n2 = c.N[0] * c.N[1] * c.N[2];
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
    DeviceBuffer work_;             // cuFFT's work area, shared by the two plans
};

}  // namespace cuda
}  // namespace forge
