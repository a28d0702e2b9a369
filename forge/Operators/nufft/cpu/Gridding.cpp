// Gnufft's host transforms: Kaiser-Bessel spreading (gridding) and interpolation on the oversampled grid, the
// loops compiled per kernel width for 2D and 3D images; the deapodized zero-pad and crop around the FFT; the batch.
// The plan they read (positions sorted into slabs, stencils, kernel polynomials, FFT plans) is made in Gnufft.cpp.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "forge/Core/Parallel.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/nufft/cpu/HostPlan.h"

namespace forge {

namespace {
constexpr int kTaps = 16;  // Gnufft<T1>::kMaxTaps: stride of the coefficient table

inline long long wrap(long long g, long long G) { return g < 0 ? g + G : (g >= G ? g - G : g); }

// What the gridding loops read: the samples' stencils in slab order, the kernel polynomials.
template <typename T>
struct Stencils {
    int W, degree;
    const T* coef;
    long long G[3];
    int taps[3];  // W on axes longer than 1, else 1
    const nufft_detail::SampleStencil<T>* st;  // per sample in slab order: its index, stencil starts and offsets
};

// W kernel weights of one axis by Horner's rule (the compiler vectorises over the taps).
template <typename T, int W>
inline void horner(const T* coef, int degree, T y, T* w) {
    for (int a = 0; a < W; ++a) w[a] = coef[degree * kTaps + a];
    for (int k = degree - 1; k >= 0; --k)
        for (int a = 0; a < W; ++a) w[a] = w[a] * y + coef[k * kTaps + a];
}
template <typename T>
inline void horner_rt(const T* coef, int degree, int W, T y, T* w) {
    for (int a = 0; a < W; ++a) w[a] = coef[degree * kTaps + a];
    for (int k = degree - 1; k >= 0; --k)
        for (int a = 0; a < W; ++a) w[a] = w[a] * y + coef[k * kTaps + a];
}

// Kernel weights of entry idx along each axis and its y and z row offsets on the (complex) grid, in cells.
template <typename T, int W, int DIM>
inline void fixed_stencil(const Stencils<T>& s, uword idx, T (&wx)[W], T (&wy)[W], T (&wz)[W], long long (&oy)[W],
                          long long (&oz)[DIM == 3 ? W : 1]) {
    const long long Gx = s.G[0], Gy = s.G[1], Gz = s.G[2];
    horner<T, W>(s.coef, s.degree, s.st[idx].offset[0], wx);
    horner<T, W>(s.coef, s.degree, s.st[idx].offset[1], wy);
    if (DIM == 3) horner<T, W>(s.coef, s.degree, s.st[idx].offset[2], wz);
    const long long fy = s.st[idx].first[1];
    for (int q = 0; q < W; ++q) oy[q] = wrap(fy + q, Gy) * Gx;
    if (DIM == 3) {
        const long long fz = s.st[idx].first[2];
        for (int c = 0; c < W; ++c) oz[c] = wrap(fz + c, Gz) * Gx * Gy;
    } else {
        oz[0] = 0;
    }
}

// Gridding (spread) of samples [b, e) of the slab order, W known at compile time, DIM = 2 (x, y) or 3 (x, y, z).
// The x taps of a stencil are contiguous on the grid unless they wrap: then one FMA per float of 2W.
constexpr uword kGatherBlock = 256;  // samples gathered (or scattered) at once, for memory-level parallelism

template <typename T, int W, int DIM>
void spread_fixed(const Stencils<T>& s, const std::complex<T>* in, T* grid, uword b, uword e) {
    const long long Gx = s.G[0];
    constexpr int NZ = DIM == 3 ? W : 1;
    std::complex<T> vals[kGatherBlock];
    for (uword idx = b; idx < e; ++idx) {
        // The data of the next block of samples (random addresses for scattered trajectories) are loaded in
        // one tight loop, so the loads overlap instead of stalling the gridding one at a time.
        if ((idx - b) % kGatherBlock == 0) {
            const uword n = std::min(kGatherBlock, e - idx);
            for (uword q = 0; q < n; ++q) vals[q] = in[s.st[idx + q].j];
        }
        const std::complex<T> val = vals[(idx - b) % kGatherBlock];
        T wx[W], wy[W], wz[W];
        long long oy[W], oz[NZ];
        fixed_stencil<T, W, DIM>(s, idx, wx, wy, wz, oy, oz);
        const T vr = val.real(), vi = val.imag();
        T kv[2 * W];
        for (int a = 0; a < W; ++a) {
            kv[2 * a] = wx[a] * vr;
            kv[2 * a + 1] = wx[a] * vi;
        }
        const long long fx = s.st[idx].first[0];
        if (fx >= 0 && fx + W <= Gx) {
            for (int c = 0; c < NZ; ++c)
                for (int q = 0; q < W; ++q) {
                    const T wzy = DIM == 3 ? wz[c] * wy[q] : wy[q];
                    T* row = grid + 2 * (oz[c] + oy[q] + fx);
#pragma omp simd
                    for (int i = 0; i < 2 * W; ++i) row[i] += wzy * kv[i];
                }
        } else {
            long long ox[W];
            for (int a = 0; a < W; ++a) ox[a] = 2 * wrap(fx + a, Gx);
            for (int c = 0; c < NZ; ++c)
                for (int q = 0; q < W; ++q) {
                    const T wzy = DIM == 3 ? wz[c] * wy[q] : wy[q];
                    T* row = grid + 2 * (oz[c] + oy[q]);
                    for (int a = 0; a < W; ++a) {
                        row[ox[a]] += wzy * kv[2 * a];
                        row[ox[a] + 1] += wzy * kv[2 * a + 1];
                    }
                }
        }
    }
}

// Interpolation of samples [b, e): the W^(DIM-1) rows of 2W floats are summed with their y/z weights
// into one row, which is then weighted by the x taps.
template <typename T, int W, int DIM>
void interp_fixed(const Stencils<T>& s, const T* grid, std::complex<T>* out, uword b, uword e) {
    const long long Gx = s.G[0];
    constexpr int NZ = DIM == 3 ? W : 1;
    std::complex<T> vals[kGatherBlock];
    for (uword idx = b; idx < e; ++idx) {
        if ((idx - b) % kGatherBlock == 0 && idx > b) {  // scatter the finished block in one tight loop
            for (uword q = 0; q < kGatherBlock; ++q) out[s.st[idx - kGatherBlock + q].j] = vals[q];
        }
        T wx[W], wy[W], wz[W];
        long long oy[W], oz[NZ];
        fixed_stencil<T, W, DIM>(s, idx, wx, wy, wz, oy, oz);
        const long long fx = s.st[idx].first[0];
        T acc[2 * W];
        for (int i = 0; i < 2 * W; ++i) acc[i] = 0;
        if (fx >= 0 && fx + W <= Gx) {
            for (int c = 0; c < NZ; ++c)
                for (int q = 0; q < W; ++q) {
                    const T wzy = DIM == 3 ? wz[c] * wy[q] : wy[q];
                    const T* row = grid + 2 * (oz[c] + oy[q] + fx);
#pragma omp simd
                    for (int i = 0; i < 2 * W; ++i) acc[i] += wzy * row[i];
                }
        } else {
            long long ox[W];
            for (int a = 0; a < W; ++a) ox[a] = 2 * wrap(fx + a, Gx);
            for (int c = 0; c < NZ; ++c)
                for (int q = 0; q < W; ++q) {
                    const T wzy = DIM == 3 ? wz[c] * wy[q] : wy[q];
                    const T* row = grid + 2 * (oz[c] + oy[q]);
                    for (int a = 0; a < W; ++a) {
                        acc[2 * a] += wzy * row[ox[a]];
                        acc[2 * a + 1] += wzy * row[ox[a] + 1];
                    }
                }
        }
        T re = 0, im = 0;
        for (int a = 0; a < W; ++a) {
            re += wx[a] * acc[2 * a];
            im += wx[a] * acc[2 * a + 1];
        }
        vals[(idx - b) % kGatherBlock] = std::complex<T>(re, im);
    }
    if (e > b) {
        const uword done = ((e - b - 1) / kGatherBlock) * kGatherBlock;  // start of the last block
        for (uword q = 0; b + done + q < e; ++q) out[s.st[b + done + q].j] = vals[q];
    }
}

// Any axis pattern (axes of length 1 anywhere), W at run time.
// The weights w[d] and interleaved-grid offsets o[d] of entry idx along each axis (one tap along an axis of length 1).
template <typename T>
void generic_stencil(const Stencils<T>& s, uword idx, T (&w)[3][kTaps], long long (&o)[3][kTaps]) {
    const long long Gd[3] = {(long long)s.G[0], (long long)s.G[1], (long long)s.G[2]};
    const long long stride[3] = {2, 2 * Gd[0], 2 * Gd[0] * Gd[1]};
    for (int d = 0; d < 3; ++d) {
        if (s.taps[d] == 1) {
            w[d][0] = 1;
            o[d][0] = 0;
            continue;
        }
        horner_rt(s.coef, s.degree, s.W, s.st[idx].offset[d], w[d]);
        for (int a = 0; a < s.taps[d]; ++a) o[d][a] = wrap(s.st[idx].first[d] + a, Gd[d]) * stride[d];
    }
}

template <typename T>
void spread_generic(const Stencils<T>& s, const std::complex<T>* in, T* grid, uword b, uword e) {
    for (uword idx = b; idx < e; ++idx) {
        const uword j = s.st[idx].j;
        T w[3][kTaps];
        long long o[3][kTaps];
        generic_stencil(s, idx, w, o);
        const T vr = in[j].real(), vi = in[j].imag();
        for (int c = 0; c < s.taps[2]; ++c)
            for (int q = 0; q < s.taps[1]; ++q) {
                const T wzy = w[2][c] * w[1][q];
                T* row = grid + o[2][c] + o[1][q];
                for (int a = 0; a < s.taps[0]; ++a) {
                    row[o[0][a]] += wzy * w[0][a] * vr;
                    row[o[0][a] + 1] += wzy * w[0][a] * vi;
                }
            }
    }
}
template <typename T>
void interp_generic(const Stencils<T>& s, const T* grid, std::complex<T>* out, uword b, uword e) {
    for (uword idx = b; idx < e; ++idx) {
        T w[3][kTaps];
        long long o[3][kTaps];
        generic_stencil(s, idx, w, o);
        T re = 0, im = 0;
        for (int c = 0; c < s.taps[2]; ++c)
            for (int q = 0; q < s.taps[1]; ++q) {
                const T wzy = w[2][c] * w[1][q];
                const T* row = grid + o[2][c] + o[1][q];
                T rr = 0, ri = 0;
                for (int a = 0; a < s.taps[0]; ++a) {
                    rr += w[0][a] * row[o[0][a]];
                    ri += w[0][a] * row[o[0][a] + 1];
                }
                re += wzy * rr;
                im += wzy * ri;
            }
        out[s.st[idx].j] = std::complex<T>(re, im);
    }
}

template <typename T>
using SpreadFn = void (*)(const Stencils<T>&, const std::complex<T>*, T*, uword, uword);
template <typename T>
using InterpFn = void (*)(const Stencils<T>&, const T*, std::complex<T>*, uword, uword);

template <typename T, int DIM, int W = 2>
void pick(int width, SpreadFn<T>& sp, InterpFn<T>& ip) {
    if constexpr (W <= kTaps) {
        if (width == W) {
            sp = &spread_fixed<T, W, DIM>;
            ip = &interp_fixed<T, W, DIM>;
        } else {
            pick<T, DIM, W + 1>(width, sp, ip);
        }
    }
}

// The loops for this geometry: compiled per width for x-y and x-y-z images, else the general ones.
template <typename T>
void gridding_loops(const Stencils<T>& s, SpreadFn<T>& sp, InterpFn<T>& ip) {
    sp = &spread_generic<T>;
    ip = &interp_generic<T>;
    if (s.taps[0] > 1 && s.taps[1] > 1) {
        if (s.taps[2] > 1)
            pick<T, 3>(s.W, sp, ip);
        else
            pick<T, 2>(s.W, sp, ip);
    }
}

// Clears a grid in parallel (the pages are first touched by the threads that grid them).
template <typename T>
void zero_grid(std::complex<T>* g, uword n) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (long long i = 0; i < (long long)n; ++i) g[i] = std::complex<T>(0);
}
// An uninitialised grid workspace (std::vector would clear it on one thread first).
template <typename T>
struct GridBuffer {
    explicit GridBuffer(uword n) : raw(new T[2 * n]) {}
    std::complex<T>* data() { return reinterpret_cast<std::complex<T>*>(raw.get()); }
    std::unique_ptr<T[]> raw;
};

template <typename T1>
Stencils<T1> stencils(int W, int degree, const std::vector<T1>& coef, const uword* N, const uword* G,
                      const nufft_detail::SampleStencil<T1>* st) {
    Stencils<T1> s{};
    s.W = W;
    s.degree = degree;
    s.coef = coef.data();
    s.st = st;
    for (int d = 0; d < 3; ++d) {
        s.G[d] = (long long)G[d];
        s.taps[d] = N[d] > 1 ? W : 1;
    }
    return s;
}
}  // namespace

template <typename T1>
void Gnufft<T1>::interpolate(const std::complex<T1>* grid, std::complex<T1>* samples) const {
    const Points& P = host_points();
    const Stencils<T1> s = stencils(int(W_), degree_, coef_, N_, G_, P.stencil.data());
    SpreadFn<T1> sp;
    InterpFn<T1> ip;
    gridding_loops(s, sp, ip);
    const T1* g = reinterpret_cast<const T1*>(grid);
    constexpr uword chunk = 1024;
    const long long nchunk = (long long)((n1_ + chunk - 1) / chunk);
#pragma omp parallel for schedule(dynamic, 4)
    for (long long c = 0; c < nchunk; ++c) {
        const uword b = uword(c) * chunk;
        ip(s, g, samples, b, std::min(n1_, b + chunk));
    }
}

template <typename T1>
void Gnufft<T1>::spread(const std::complex<T1>* samples, std::complex<T1>* grid) const {
    const Points& P = host_points();
    const Stencils<T1> s = stencils(int(W_), degree_, coef_, N_, G_, P.stencil.data());
    SpreadFn<T1> sp;
    InterpFn<T1> ip;
    gridding_loops(s, sp, ip);
    zero_grid(grid, grid_elems());
    T1* g = reinterpret_cast<T1*>(grid);
    const std::vector<uword>& slabStart = P.slabStart;
    const long long nslab = (long long)slabStart.size() - 1;
    if (nslab < 2) {
        sp(s, samples, g, 0, n1_);
        return;
    }
    // Slabs are >= W cells thick, so slabs of the same parity never touch the same grid cell.
    for (long long colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(dynamic, 1)
        for (long long q = colour; q < nslab; q += 2) sp(s, samples, g, slabStart[q], slabStart[q + 1]);
    }
}

template <typename T1>
void Gnufft<T1>::forward_host(const std::complex<T1>* image, std::complex<T1>* kdata) const {
    const uword Gx = G_[0], Gy = G_[1];
    GridBuffer<T1> grid(grid_elems());
    zero_grid(grid.data(), grid_elems());
    constexpr std::size_t elemBytes = sizeof(std::complex<T1>);
#pragma omp parallel for collapse(2) if (detail::parallel_elementwise(n2_, 2 * elemBytes))
    for (long long z = 0; z < (long long)N_[2]; ++z)
        for (long long y = 0; y < (long long)N_[1]; ++y) {
            const long long gz = wrap(z - (long long)(N_[2] / 2), (long long)G_[2]);
            const long long gy = wrap(y - (long long)(N_[1] / 2), (long long)G_[1]);
            const T1 dzy = deapod_[2][z] * deapod_[1][y];
            const std::complex<T1>* in = image + N_[0] * (y + N_[1] * z);
            std::complex<T1>* out = grid.data() + Gx * (gy + Gy * gz);
            for (long long x = 0; x < (long long)N_[0]; ++x) {
                const long long gx = wrap(x - (long long)(N_[0] / 2), (long long)Gx);
                out[gx] = in[x] * (dzy * deapod_[0][x]);
            }
        }
    host_fft().execute(FftMemory::host, reinterpret_cast<forgeComplex<T1>*>(grid.data()), true);
    interpolate(grid.data(), kdata);
}

template <typename T1>
void Gnufft<T1>::adjoint_host(const std::complex<T1>* kdata, std::complex<T1>* image) const {
    const uword Gx = G_[0], Gy = G_[1];
    GridBuffer<T1> grid(grid_elems());
    spread(kdata, grid.data());
    host_fft().execute(FftMemory::host, reinterpret_cast<forgeComplex<T1>*>(grid.data()), false);
    constexpr std::size_t elemBytes = sizeof(std::complex<T1>);
#pragma omp parallel for collapse(2) if (detail::parallel_elementwise(n2_, 2 * elemBytes))
    for (long long z = 0; z < (long long)N_[2]; ++z)
        for (long long y = 0; y < (long long)N_[1]; ++y) {
            const long long gz = wrap(z - (long long)(N_[2] / 2), (long long)G_[2]);
            const long long gy = wrap(y - (long long)(N_[1] / 2), (long long)G_[1]);
            const T1 dzy = deapod_[2][z] * deapod_[1][y];
            const std::complex<T1>* in = grid.data() + Gx * (gy + Gy * gz);
            std::complex<T1>* out = image + N_[0] * (y + N_[1] * z);
            for (long long x = 0; x < (long long)N_[0]; ++x) {
                const long long gx = wrap(x - (long long)(N_[0] / 2), (long long)Gx);
                out[x] = in[gx] * (dzy * deapod_[0][x]);
            }
        }
}

template <typename T1>
void Gnufft<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    const uword nin = forward ? n2_ : n1_, nout = forward ? n1_ : n2_;
    const auto* pin = reinterpret_cast<const std::complex<T1>*>(in);
    auto* pout = reinterpret_cast<std::complex<T1>*>(out);
    detail::for_each_in_batch(nbatch, [&](std::size_t b) {
        if (forward) {
            forward_host(pin + b * nin, pout + b * nout);
        } else {
            adjoint_host(pin + b * nin, pout + b * nout);
        }
    });
}

#define FORGE_GNUFFT_HOST_INSTANTIATE(T1)                                                                        \
    template void Gnufft<T1>::interpolate(const std::complex<T1>*, std::complex<T1>*) const;                     \
    template void Gnufft<T1>::spread(const std::complex<T1>*, std::complex<T1>*) const;                          \
    template void Gnufft<T1>::forward_host(const std::complex<T1>*, std::complex<T1>*) const;                    \
    template void Gnufft<T1>::adjoint_host(const std::complex<T1>*, std::complex<T1>*) const;                    \
    template void Gnufft<T1>::apply_host(const forgeComplex<T1>*, forgeComplex<T1>*, uword, bool) const;
FORGE_GNUFFT_HOST_INSTANTIATE(float)
FORGE_GNUFFT_HOST_INSTANTIATE(double)

}  // namespace forge
