#pragma once
// The host apply of ToeplitzNormal (cpu/HostApply.cpp): its kernel layout (and the conversions from and to the
// standard layout, which the kernel build and the device apply use too), its aligned scratch and its line FFT plans.
// The operator's state that holds them is detail/ToeplitzState.h. Private to forge/Operators/toeplitz/.
#include <complex>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <new>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace toeplitz {

// The host apply's kernel layout: per slab x and row z of the padded grid, the rows of all pairs one after another
// (the kernel product reads one contiguous block per row), each as Py real parts then Py imaginary parts.
// to_host_layout: from the standard layout (pair p's cell x + Px (y + Py z) at p P + that, complex) to it;
// from_host_layout: back.
template <typename TS, typename T1>
void to_host_layout(const std::complex<TS>* standard, T1* host, uword npairs, const uword* P) {
    const uword Px = P[0], Py = P[1], Pz = P[2], cells = Px * Py * Pz;
#pragma omp parallel for if (npairs * cells >= (1 << 18))
    for (long long xi = 0; xi < static_cast<long long>(Px); ++xi) {
        const uword x = uword(xi);
        for (uword z = 0; z < Pz; ++z)
            for (uword p = 0; p < npairs; ++p) {
                T1* row = host + ((x * Pz + z) * npairs + p) * 2 * Py;
                const std::complex<TS>* q = standard + p * cells + x + Px * Py * z;
                for (uword y = 0; y < Py; ++y) {
                    row[y] = T1(q[Px * y].real());
                    row[Py + y] = T1(q[Px * y].imag());
                }
            }
    }
}
template <typename T1>
void from_host_layout(const T1* host, std::complex<T1>* standard, uword npairs, const uword* P) {
    const uword Px = P[0], Py = P[1], Pz = P[2], cells = Px * Py * Pz;
#pragma omp parallel for if (npairs * cells >= (1 << 18))
    for (long long pi = 0; pi < static_cast<long long>(npairs); ++pi) {
        const uword p = uword(pi);
        for (uword x = 0; x < Px; ++x)
            for (uword z = 0; z < Pz; ++z) {
                const T1* row = host + ((x * Pz + z) * npairs + p) * 2 * Py;
                std::complex<T1>* q = standard + p * cells + x + Px * Py * z;
                for (uword y = 0; y < Py; ++y) q[Px * y] = std::complex<T1>(row[y], row[Py + y]);
            }
    }
}

// Scratch of the host apply: 64-byte aligned (so every line the plans run on has the alignment they were planned on).
template <typename T1>
struct GridBuffer {
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<forgeComplex<T1>, Free> data;
    uword cells = 0;
    void reserve(uword n) {
        if (n <= cells) return;
        const std::size_t bytes = (n * sizeof(forgeComplex<T1>) + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, bytes);
        if (!p) throw std::bad_alloc();
        data.reset(static_cast<forgeComplex<T1>*>(p));
        cells = n;
    }
};

// A pitch of at least n cells whose bytes are an odd multiple of 64: rows (and slabs) start on cache lines, with
// the alignment every FFTW plan of the apply was made for, and strided passes over them (the z transforms, the
// transposes) do not fall into a few cache sets as with a power-of-two pitch (measured on the development machine:
// the 256-point columns of a 256 x 256 grid at pitch 256 took over 10x the time at pitch 264).
inline uword odd_pitch(uword n) {
    uword p = (n + 7) / 8 * 8;
    if ((p / 8) % 2 == 0) p += 8;
    return p;
}

// The host apply's layout and plans. After the transform along x (the first, on the rows of the image, y < Ny and
// z < Nz), the grids hold only those lines: a grid is Px slabs (one per x) of Nz rows of Ny cells. Then each slab
// is independent until the inverse along x: per x, the slabs of a vector's S segments are copied into a thread's
// buffer (S segments of Pz rows of Py cells, row pitch Ry, the cells beyond the image zero), transformed along y
// (the rows z < Nz) and z (every column), multiplied by the kernels, transformed back along z and y (the rows
// z < Nz) and their image part copied back: the whole padded slab stays in the thread's cache, and only half (2D)
// or a quarter (3D) of the padded grid passes through memory.
//   forward  per plane z < Nz of each grid: pad the image rows (b_m .* x) into the thread's work plane (Ny rows,
//            pitch Rx), transform along x, write to the slabs (transposed: y fastest);
//   slabs    per x, for every vector: the above;
//   backward per plane z < Nz of each grid: read the slabs into the work plane (transposed), transform along x,
//            write the image's Nx x Ny cells to the grid's image (n2 per grid);
//   sum      per image row of each vector: sum_l conj(b_l) .* image_l.
// Every FFT runs on contiguous rows, or on the columns of a buffer in cache (z), where FFTW_ESTIMATE plans come
// close to measured ones (FFTW_MEASURE: about 10% faster applies at 96 x 96 for 0.6 s of planning). In-place column
// transforms of the whole padded grid, the first version of this apply, took 1.5x-2x the time of contiguous rows
// with a transpose under FFTW_ESTIMATE.
template <typename T1>
struct HostApplyLayout {
    uword Nx, Ny, Nz, Px, Py, Pz, S;
    uword Rx;      // row pitch of a work plane
    uword Ry;      // row pitch of a slab in a thread's buffer
    uword seg;     // a segment's padded slab in a thread's buffer: Pz rows of pitch Ry
    uword slab;    // a slab in a grid: Nz rows of Ny cells
    uword cells;   // a grid: Px slabs
    uword thread;  // a thread's scratch: its work plane, its S padded slabs, its kernel product rows
    std::unique_ptr<FftLines<T1>> xF, xB, yF, yB, zF, zB;
    HostApplyLayout(const uword* N, const uword* P, uword segments, GridBuffer<T1>& buf)
        : Nx(N[0]), Ny(N[1]), Nz(N[2]), Px(P[0]), Py(P[1]), Pz(P[2]), S(segments), Rx(odd_pitch(P[0])),
          Ry(odd_pitch(P[1])), seg(odd_pitch(P[2] * Ry)), slab(odd_pitch(N[1] * N[2])), cells(P[0] * slab),
          thread(round8(N[1] * Rx) + S * seg + round8(2 * S * P[1])) {
        buf.reserve(thread);
        forgeComplex<T1>* d = buf.data.get();
        using L = std::initializer_list<typename FftLines<T1>::Loop>;
        xF = std::make_unique<FftLines<T1>>(Px, 1, L{{Ny, Rx}}, true, d);
        xB = std::make_unique<FftLines<T1>>(Px, 1, L{{Ny, Rx}}, false, d);
        yF = std::make_unique<FftLines<T1>>(Py, 1, L{{Nz, Ry}, {S, seg}}, true, d);
        yB = std::make_unique<FftLines<T1>>(Py, 1, L{{Nz, Ry}, {S, seg}}, false, d);
        zF = std::make_unique<FftLines<T1>>(Pz, Ry, L{{Py, 1}, {S, seg}}, true, d);
        zB = std::make_unique<FftLines<T1>>(Pz, Ry, L{{Py, 1}, {S, seg}}, false, d);
    }
    static uword round8(uword n) { return (n + 7) / 8 * 8; }
};

}  // namespace toeplitz
}  // namespace forge
