// ToeplitzNormal's host apply: pruned FFTs of the padded grid on the OpenMP threads, the slabs transformed,
// multiplied by the kernels and transformed back in a thread's cache (the layout: cpu/HostApply.h), with a pool of
// scratch buffers kept between applies.
#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/cpu/HostApply.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"

namespace forge {

using toeplitz::to_host_layout;

template <typename T1>
const typename ToeplitzNormal<T1>::ForgeVec& ToeplitzNormal<T1>::host_kernels() const {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->host.n_elem == 0) {  // built on the GPU: a copy in the host apply's layout
        ForgeVec h = cache_->device;
        h.get_from_gpu();
        ForgeVec k(h.n_elem);
        to_host_layout(reinterpret_cast<const std::complex<T1>*>(h.memptr()), reinterpret_cast<T1*>(k.memptr()),
                       npairs_, P_);
        cache_->host = std::move(k);
    }
    if (!cache_->hostLayout) {  // planned on a first grid buffer, which then goes to the pool
        auto buf = std::make_unique<toeplitz::GridBuffer<T1>>();
        cache_->hostLayout = std::make_unique<toeplitz::HostApplyLayout<T1>>(N_, P_, S_, *buf);
        cache_->pool.push_back(std::move(buf));
    }
    return cache_->host;
}

template <typename T1>
void ToeplitzNormal<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
    const ForgeVec& K = host_kernels();
    const toeplitz::HostApplyLayout<T1>& f = *cache_->hostLayout;
    const uword n2 = this->domain_size();
    // Vectors in chunks whose grids and images stay near 256 MiB (at least one vector).
    const uword perVector = S_ * (f.cells + toeplitz::HostApplyLayout<T1>::round8(n2)) * sizeof(Elem);
    const uword chunk = std::max<uword>(1, (uword(256) << 20) / perVector), nv = std::min(chunk, nbatch);
    int threads = 1;
#ifdef _OPENMP
    // Threads when the apply takes about a millisecond or more on one (about 10 ns per padded cell and segment):
    // below that the fork and the barriers between the stages cost more than they save, and on a loaded machine
    // a waiting thread spins away the time of the ones at work (Parallel.h).
    if (!omp_in_parallel() && nv * S_ * P_total_ >= (uword(1) << 17)) threads = omp_get_max_threads();
#endif
    // A buffer from the pool (concurrent applies each get their own), returned when done.
    std::unique_ptr<toeplitz::GridBuffer<T1>> buf;
    {
        std::lock_guard<std::mutex> lock(cache_->mutex);
        if (!cache_->pool.empty()) {
            buf = std::move(cache_->pool.back());
            cache_->pool.pop_back();
        }
    }
    if (!buf) buf = std::make_unique<toeplitz::GridBuffer<T1>>();
    struct GiveBack {
        Cache& cache;
        std::unique_ptr<toeplitz::GridBuffer<T1>>& buf;
        ~GiveBack() {
            std::lock_guard<std::mutex> lock(cache.mutex);
            cache.pool.push_back(std::move(buf));
        }
    } giveBack{*cache_, buf};
    buf->reserve(uword(threads) * f.thread + nv * S_ * (f.cells + toeplitz::HostApplyLayout<T1>::round8(n2)));
    for (uword v0 = 0; v0 < nbatch; v0 += chunk)
        apply_host_chunk(K.memptr(), in + v0 * n2, out + v0 * n2, std::min(chunk, nbatch - v0), buf->data.get(),
                         threads);
}

// One chunk of nv vectors. 'scratch': the threads' scratch, then nv x S grids, then their images (HostApplyLayout has the
// layout). Every stage is an OpenMP loop over independent items (a grid's plane, a slab of all vectors, an image
// row), each computed the same way whatever thread takes it: the result depends neither on the thread count nor
// on other applies running at the same time.
template <typename T1>
void ToeplitzNormal<T1>::apply_host_chunk(const Elem* K, const Elem* in, Elem* out, uword nv, Elem* scratch,
                                          int threads) const {
    const toeplitz::HostApplyLayout<T1>& f = *cache_->hostLayout;
    const uword n2 = this->domain_size(), S = S_, ng = nv * S;
    const uword Nx = f.Nx, Ny = f.Ny, Nz = f.Nz, Px = f.Px, Py = f.Py, Pz = f.Pz, Rx = f.Rx, Ry = f.Ry;
    const uword imageCells = toeplitz::HostApplyLayout<T1>::round8(n2), kernelSlab = 2 * Pz * Py * npairs_;  // reals of a slab
    Elem* const grids = scratch + uword(threads) * f.thread;
    Elem* const images = grids + ng * f.cells;
    const Elem* b = phases_ ? phases_->weights().memptr() : nullptr;  // S x n2
    const T1* Kr = reinterpret_cast<const T1*>(K);
    const auto* pr = pairs_.data();
    const uword npairs = npairs_;
    const auto ll = [](uword n) { return static_cast<long long>(n); };
    constexpr uword kBlock = 16;  // transposes in blocks of 16 x 16 cells, which stay in L1

#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#ifdef _OPENMP
        Elem* const W = scratch + uword(omp_get_thread_num()) * f.thread;  // work plane: Ny rows of pitch Rx
#else
        Elem* const W = scratch;
#endif
        Elem* const B = W + toeplitz::HostApplyLayout<T1>::round8(Ny * Rx);  // padded slabs: S segments of Pz rows of pitch Ry
        T1* const mix = reinterpret_cast<T1*>(B + S * f.seg);  // kernel product: S rows of Py, real then imaginary

        // Forward along x, plane by plane, into the slabs.
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < ll(ng * Nz); ++i) {
            const uword g = uword(i) / Nz, z = uword(i) % Nz, v = g / S, m = g % S;
            const Elem* x = in + v * n2 + z * Nx * Ny;
            const Elem* bm = b ? b + m * n2 + z * Nx * Ny : nullptr;
            for (uword y = 0; y < Ny; ++y) {
                Elem* row = W + y * Rx;
                const Elem* xr = x + y * Nx;
                if (bm) {
                    const Elem* br = bm + y * Nx;
                    for (uword c = 0; c < Nx; ++c) row[c] = br[c] * xr[c];
                } else {
                    std::memcpy(static_cast<void*>(row), xr, Nx * sizeof(Elem));
                }
                std::memset(static_cast<void*>(row + Nx), 0, (Px - Nx) * sizeof(Elem));
            }
            f.xF->run(W);
            Elem* G = grids + g * f.cells + z * Ny;  // row z of slab x at x * f.slab
            for (uword x0 = 0; x0 < Px; x0 += kBlock)
                for (uword y0 = 0; y0 < Ny; y0 += kBlock) {
                    const uword x1 = std::min(Px, x0 + kBlock), y1 = std::min(Ny, y0 + kBlock);
                    for (uword c = x0; c < x1; ++c)
                        for (uword y = y0; y < y1; ++y) G[c * f.slab + y] = W[y * Rx + c];
                }
        }

        // The slabs: y and z, the kernel product, z and y back.
#pragma omp for schedule(dynamic, 1)
        for (long long xi = 0; xi < ll(Px); ++xi) {
            const uword x = uword(xi);
            const T1* Kx = Kr + x * kernelSlab;  // row z of pair p at + 2 Py (z npairs + p)
            for (uword v = 0; v < nv; ++v) {
                for (uword m = 0; m < S; ++m) {
                    Elem* Bm = B + m * f.seg;
                    const Elem* G = grids + (v * S + m) * f.cells + x * f.slab;
                    for (uword z = 0; z < Nz; ++z) {
                        std::memcpy(static_cast<void*>(Bm + z * Ry), G + z * Ny, Ny * sizeof(Elem));
                        std::memset(static_cast<void*>(Bm + z * Ry + Ny), 0, (Py - Ny) * sizeof(Elem));
                    }
                    for (uword z = Nz; z < Pz; ++z) std::memset(static_cast<void*>(Bm + z * Ry), 0, Py * sizeof(Elem));
                }
                f.yF->run(B);  // all S segments in one call
                f.zF->run(B);
                // u_l = sum_m K(l, m) .* z_m, row by row, on real and imaginary parts apart (the kernels' host
                // layout): a pair l < m adds K .* z_m to u_l and conj(K) .* z_l to u_m, a diagonal pair
                // Re(K) .* z_l (the table of mix_at, ToeplitzKernels.h).
                for (uword z = 0; z < Pz; ++z) {
                    const T1* Kz = Kx + 2 * z * npairs * Py;
                    if (S == 1) {
                        T1* u = reinterpret_cast<T1*>(B + z * Ry);
                        for (uword c = 0; c < Py; ++c) {
                            u[2 * c] *= Kz[c];
                            u[2 * c + 1] *= Kz[c];
                        }
                        continue;
                    }
                    T1* const zt = mix;               // z_m: S rows of Py real parts then Py imaginary parts
                    T1* const at = mix + 2 * S * Py;  // u_l, the same
                    for (uword m = 0; m < S; ++m) {
                        const T1* zm = reinterpret_cast<const T1*>(B + m * f.seg + z * Ry);
                        T1* zr = zt + 2 * m * Py;
                        T1* zi = zr + Py;
                        for (uword c = 0; c < Py; ++c) {
                            zr[c] = zm[2 * c];
                            zi[c] = zm[2 * c + 1];
                        }
                    }
                    std::fill(at, at + 2 * S * Py, T1(0));
                    for (uword p = 0; p < npairs; ++p) {
                        const uword l = pr[2 * p], m = pr[2 * p + 1];
                        const T1* __restrict qr = Kz + 2 * p * Py;
                        const T1* __restrict qi = qr + Py;
                        const T1* __restrict zrl = zt + 2 * l * Py;
                        const T1* __restrict zil = zrl + Py;
                        T1* __restrict arl = at + 2 * l * Py;
                        T1* __restrict ail = arl + Py;
                        if (l == m) {
#pragma omp simd
                            for (uword c = 0; c < Py; ++c) {
                                arl[c] += qr[c] * zrl[c];
                                ail[c] += qr[c] * zil[c];
                            }
                            continue;
                        }
                        const T1* __restrict zrm = zt + 2 * m * Py;
                        const T1* __restrict zim = zrm + Py;
                        T1* __restrict arm = at + 2 * m * Py;
                        T1* __restrict aim = arm + Py;
#pragma omp simd
                        for (uword c = 0; c < Py; ++c) {
                            arl[c] += qr[c] * zrm[c] - qi[c] * zim[c];
                            ail[c] += qr[c] * zim[c] + qi[c] * zrm[c];
                            arm[c] += qr[c] * zrl[c] + qi[c] * zil[c];
                            aim[c] += qr[c] * zil[c] - qi[c] * zrl[c];
                        }
                    }
                    for (uword l = 0; l < S; ++l) {
                        T1* ul = reinterpret_cast<T1*>(B + l * f.seg + z * Ry);
                        const T1* ar = at + 2 * l * Py;
                        const T1* ai = ar + Py;
                        for (uword c = 0; c < Py; ++c) {
                            ul[2 * c] = ar[c];
                            ul[2 * c + 1] = ai[c];
                        }
                    }
                }
                f.zB->run(B);
                f.yB->run(B);
                for (uword l = 0; l < S; ++l) {
                    const Elem* Bl = B + l * f.seg;
                    Elem* G = grids + (v * S + l) * f.cells + x * f.slab;
                    for (uword z = 0; z < Nz; ++z)
                        std::memcpy(static_cast<void*>(G + z * Ny), Bl + z * Ry, Ny * sizeof(Elem));
                }
            }
        }

        // Backward along x, plane by plane, into the images.
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < ll(ng * Nz); ++i) {
            const uword g = uword(i) / Nz, z = uword(i) % Nz;
            const Elem* G = grids + g * f.cells + z * Ny;
            for (uword y0 = 0; y0 < Ny; y0 += kBlock)
                for (uword x0 = 0; x0 < Px; x0 += kBlock) {
                    const uword x1 = std::min(Px, x0 + kBlock), y1 = std::min(Ny, y0 + kBlock);
                    for (uword y = y0; y < y1; ++y)
                        for (uword c = x0; c < x1; ++c) W[y * Rx + c] = G[c * f.slab + y];
                }
            f.xB->run(W);
            Elem* img = images + g * imageCells + z * Nx * Ny;
            for (uword y = 0; y < Ny; ++y) std::memcpy(static_cast<void*>(img + y * Nx), W + y * Rx, Nx * sizeof(Elem));
        }

        // The segments summed, weighted by conj(b_l): one image row per item.
#pragma omp for schedule(dynamic, 16)
        for (long long i = 0; i < ll(nv * Nz * Ny); ++i) {
            const uword v = uword(i) / (Nz * Ny), pix = (uword(i) % (Nz * Ny)) * Nx;
            Elem* yr = out + v * n2 + pix;
            const Elem* u = images + v * S * imageCells + pix;
            if (!b) {
                std::memcpy(static_cast<void*>(yr), u, Nx * sizeof(Elem));
                continue;
            }
            for (uword c = 0; c < Nx; ++c) yr[c] = conj(b[pix + c]) * u[c];
            for (uword l = 1; l < S; ++l) {
                const Elem* ul = u + l * imageCells;
                const Elem* bl = b + l * n2 + pix;
                for (uword c = 0; c < Nx; ++c) yr[c] += conj(bl[c]) * ul[c];
            }
        }
    }
}

#define FORGE_TOEPLITZ_HOST_INSTANTIATE(T1)                                                                         \
    template const ToeplitzNormal<T1>::ForgeVec& ToeplitzNormal<T1>::host_kernels() const;                         \
    template void ToeplitzNormal<T1>::apply_host(const forgeComplex<T1>*, forgeComplex<T1>*, uword, bool) const;   \
    template void ToeplitzNormal<T1>::apply_host_chunk(const Elem*, const Elem*, Elem*, uword, Elem*, int) const;
FORGE_TOEPLITZ_HOST_INSTANTIATE(float)
FORGE_TOEPLITZ_HOST_INSTANTIATE(double)

}  // namespace forge
