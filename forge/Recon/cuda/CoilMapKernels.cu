// CUDA kernels of coil-map estimation (CoilMaps.h, docs/map-estimation.md): the per-pixel coil covariance by
// separable window sums, the mask's amplitude, the covariance total behind the reference direction, and the
// per-pixel leading eigenvector in double.
//
// Eigenvector: the covariance R (nc x nc, Hermitian, positive semi-definite) divided by its trace is squared
// and renormalised (M <- M^2 / tr(M^2)) until tr(M^2) > 1 - 1e-12 (M rank one to double precision: the second
// eigenvalue below 5e-13 of the first), once more, and a column of M is the leading eigenvector. The k-th
// square is R^(2^k): for eigenvalue ratio r it needs about log2(37 / -ln r) squarings (r = 0.99: 12). Rounding
// moves the vector by about 1e-16 / (relative gap), as LAPACK's does, far below float's rounding. One pixel per
// group of nc^2 threads (thread (i, j) owns entry (i, j)), both matrices in shared memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Recon/cuda/MapKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxSquarings = 40;

struct cd {
    double re, im;
};
__device__ inline cd cd_mul(cd a, cd b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
__device__ inline cd cd_conj(cd a) { return {a.re, -a.im}; }

unsigned blocks_for(uword n) { return unsigned((n + kThreads - 1) / kThreads); }

// Pair p's coils (i <= j), in the host's order: (0,0), (0,1), ..., (0,nc-1), (1,1), ...
__device__ inline void pair_coils(uword p, uword nc, uword& i, uword& j) {
    i = 0;
    while (p >= nc - i) {
        p -= nc - i;
        ++i;
    }
    j = i + p;
}
__device__ inline uword pair_index(uword i, uword j, uword nc) { return i * nc - i * (i - 1) / 2 + (j - i); }

__global__ void k_covariance_columns(const forgeComplex<float>* __restrict__ X, forgeComplex<float>* __restrict__ cols,
                                     uword n2, uword nc, uword total) {
    const uword idx = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const uword col = idx / n2, k = idx - col * n2;
    if (col < nc) {
        cols[idx] = X[idx];
        return;
    }
    uword i, j;
    pair_coils(col - nc, nc, i, j);
    const forgeComplex<float> a = X[i * n2 + k], b = X[j * n2 + k];
    // x_i conj(x_j), rounded as the host's std::complex<float> product (no fused multiply-add)
    cols[idx] = forgeComplex<float>(__fadd_rn(__fmul_rn(a.re, b.re), __fmul_rn(a.im, b.im)),
                                    __fsub_rn(__fmul_rn(a.im, b.re), __fmul_rn(a.re, b.im)));
}

// One line of one column per thread: out = sum over the window along 'axis' of in, the running sum in double.
__global__ void k_window_axis(const forgeComplex<float>* __restrict__ in, forgeComplex<float>* __restrict__ out,
                              uword n2, uword ncols, uword n, uword stride, uword half) {
    const uword lines = n2 / n;
    const uword idx = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= lines * ncols) return;
    const uword col = idx / lines, L = idx - col * lines;
    const uword a = L % stride, b = L / stride;
    const forgeComplex<float>* src = in + col * n2 + a + b * stride * n;
    forgeComplex<float>* dst = out + col * n2 + a + b * stride * n;
    double sr = 0, si = 0;
    const uword first = half < n - 1 ? half : n - 1;
    for (uword t = 0; t <= first; ++t) {
        sr += double(src[t * stride].re);
        si += double(src[t * stride].im);
    }
    for (uword i = 0; i < n; ++i) {
        dst[i * stride] = forgeComplex<float>(float(sr), float(si));
        if (i + 1 + half < n) {
            sr += double(src[(i + 1 + half) * stride].re);
            si += double(src[(i + 1 + half) * stride].im);
        }
        if (i >= half) {
            sr -= double(src[(i - half) * stride].re);
            si -= double(src[(i - half) * stride].im);
        }
    }
}

__global__ void k_amplitude(const forgeComplex<float>* __restrict__ cols, double* __restrict__ amp, uword n2,
                            uword nc) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n2) return;
    double e = 0;
    for (uword c = 0; c < nc; ++c) e += double(cols[(nc + pair_index(c, c, nc)) * n2 + k].re);
    amp[k] = sqrt(e > 0 ? e : 0.0);
}

// One block per pair: fixed per-thread partial sums, then a fixed tree.
__global__ void k_total(const forgeComplex<float>* __restrict__ cols, const unsigned char* __restrict__ mask,
                        forgeComplex<double>* __restrict__ total, uword n2, uword nc) {
    __shared__ double sr[kThreads], si[kThreads];
    const uword p = blockIdx.x;
    const forgeComplex<float>* r = cols + (nc + p) * n2;
    double ar = 0, ai = 0;
    for (uword k = threadIdx.x; k < n2; k += blockDim.x)
        if (mask[k]) {
            ar += double(r[k].re);
            ai += double(r[k].im);
        }
    sr[threadIdx.x] = ar;
    si[threadIdx.x] = ai;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (int(threadIdx.x) < s) {
            sr[threadIdx.x] += sr[threadIdx.x + s];
            si[threadIdx.x] += si[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) total[p] = forgeComplex<double>(sr[0], si[0]);
}

// nc^2 threads per pixel, 'perBlock' pixels per block; up to 1024 threads (32 coils), so at most 64 registers.
__global__ void __launch_bounds__(1024)
    k_eigenvectors(const forgeComplex<float>* __restrict__ cols, const unsigned char* __restrict__ mask,
                   const forgeComplex<double>* __restrict__ u0, forgeComplex<float>* __restrict__ maps,
                   unsigned char* __restrict__ flags, uword n2, int nc, int perBlock) {
    extern __shared__ double shm[];
    const int group = nc * nc;
    const int g = int(threadIdx.x) / group, t = int(threadIdx.x) - g * group;
    const uword k = uword(blockIdx.x) * uword(perBlock) + uword(g);
    const bool inBlock = g < perBlock;
    const bool active = inBlock && k < n2 && mask[k];
    cd* A = reinterpret_cast<cd*>(shm) + size_t(g) * 2 * group;
    cd* B = A + group;
    const int i = t / nc, j = t - (t / nc) * nc;
    if (inBlock && k < n2 && !mask[k] && t < nc) maps[uword(t) * n2 + k] = forgeComplex<float>(0, 0);
    if (inBlock && k < n2 && t == 0) flags[k] = 0;
    // R(i, j) from the pair columns (upper triangle stored), Hermitian, the diagonal real
    if (active) {
        const uword lo = i <= j ? uword(i) : uword(j), hi = i <= j ? uword(j) : uword(i);
        const forgeComplex<float> v = cols[(uword(nc) + pair_index(lo, hi, uword(nc))) * n2 + k];
        cd e = {double(v.re), double(v.im)};
        if (i > j) e = cd_conj(e);
        if (i == j) e.im = 0;
        A[t] = e;
    }
    __syncthreads();
    bool done = !active, converged = false, failed = false;
    if (active) {
        double tr = 0;
        for (int l = 0; l < nc; ++l) tr += A[l * nc + l].re;
        failed = !(tr > 0) || !isfinite(tr);
        done = failed;
        B[t] = failed ? cd{0, 0} : cd{A[t].re / tr, A[t].im / tr};
    }
    __syncthreads();
    if (active && !failed) A[t] = B[t];
    __syncthreads();
    for (int s = 0; s < kMaxSquarings; ++s) {
        if (!done) {
            cd acc = {0, 0};
            for (int l = 0; l < nc; ++l) {
                const cd p = cd_mul(A[i * nc + l], A[l * nc + j]);
                acc.re += p.re;
                acc.im += p.im;
            }
            B[t] = acc;
        }
        __syncthreads();
        if (!done) {
            double t2 = 0;
            for (int l = 0; l < nc; ++l) t2 += B[l * nc + l].re;
            A[t] = cd{B[t].re / t2, B[t].im / t2};
            if (converged) done = true;
            converged = t2 > 1 - 1e-12;
        }
        if (!__syncthreads_or(!done)) break;
    }
    if (active && !done) failed = true;
    if (active && t == 0) flags[k] = failed ? 1 : 0;
    // a pixel handed back to the host: zeros until the host's map replaces them (no uninitialised values downloaded)
    if (active && failed && t < nc) maps[uword(t) * n2 + k] = forgeComplex<float>(0, 0);
    if (!active || failed || t != 0) return;
    // column jstar (the largest diagonal entry) of M ~ v v^H: v conj(v_jstar), normalised
    int jstar = 0;
    for (int l = 1; l < nc; ++l)
        if (A[l * nc + l].re > A[jstar * nc + jstar].re) jstar = l;
    double nrm = 0;
    for (int c = 0; c < nc; ++c) {
        const cd e = A[c * nc + jstar];
        nrm += e.re * e.re + e.im * e.im;
    }
    nrm = sqrt(nrm);
    for (int c = 0; c < nc; ++c) B[c] = cd{A[c * nc + jstar].re / nrm, A[c * nc + jstar].im / nrm};
    // phase: v^H (window sum of x) real and positive; where it vanishes, u0^H v real and positive
    cd z = {0, 0};
    double vn = 0;
    for (int c = 0; c < nc; ++c) {
        const forgeComplex<float> x = cols[uword(c) * n2 + k];
        const cd p = cd_mul(cd_conj(B[c]), cd{double(x.re), double(x.im)});
        z.re += p.re;
        z.im += p.im;
        vn += double(hypotf(x.re, x.im));
    }
    const double zn = hypot(z.re, z.im);
    cd f = {1, 0};
    if (zn > 1e-6 * vn && zn > 0) {
        f = cd{z.re / zn, z.im / zn};
    } else {
        cd r = {0, 0};
        for (int c = 0; c < nc; ++c) {
            const cd p = cd_mul(cd_conj(cd{u0[c].re, u0[c].im}), B[c]);
            r.re += p.re;
            r.im += p.im;
        }
        const double rn = hypot(r.re, r.im);
        if (rn > 0) f = cd{r.re / rn, -r.im / rn};
    }
    for (int c = 0; c < nc; ++c) {
        const cd v = cd_mul(B[c], f);
        maps[uword(c) * n2 + k] = forgeComplex<float>(float(v.re), float(v.im));
    }
}

__global__ void k_interpolated_inside(const double* __restrict__ amp, MapGrid M, double level,
                                      unsigned char* __restrict__ inside, MapGrid N) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= N.n2()) return;
    const uword x = k % N.Nx, y = (k / N.Nx) % N.Ny, z = k / (N.Nx * N.Ny);
    inside[k] = interpolated_amplitude(amp, pixel_corners(M, N, x, y, z)) > level ? 1 : 0;
}

__global__ void k_energy(const forgeComplex<float>* __restrict__ X, double* __restrict__ energy, uword n2, uword nc) {
    const uword k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n2) return;
    double e = 0;
    for (uword c = 0; c < nc; ++c) {
        const forgeComplex<float> v = X[c * n2 + k];
        e += double(v.re) * v.re + double(v.im) * v.im;
    }
    energy[k] = e;
}

__global__ void k_interpolate_maps(const forgeComplex<float>* __restrict__ mapsM, MapGrid M,
                                  const unsigned char* __restrict__ mask, forgeComplex<float>* __restrict__ maps,
                                  MapGrid N, uword nc) {
    const uword n2 = N.n2(), k = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n2) return;
    const uword x = k % N.Nx, y = (k / N.Nx) % N.Ny, z = k / (N.Nx * N.Ny);
    interpolate_pixel_maps(mapsM, M.n2(), nc, pixel_corners(M, N, x, y, z), mask[k] != 0, maps, n2, k);
}

}  // namespace

void coil_covariance(const forgeComplex<float>* X, forgeComplex<float>* cols, forgeComplex<float>* scratch,
                     MapGrid grid, uword nc, uword half) {
    const uword n2 = grid.n2(), ncols = nc + nc * (nc + 1) / 2, total = n2 * ncols;
    if (total == 0) return;
    k_covariance_columns<<<blocks_for(total), kThreads>>>(X, cols, n2, nc, total);
    FORGE_CUDA_CHECK_LAUNCH("k_covariance_columns");
    const uword N[3] = {grid.Nx, grid.Ny, grid.Nz}, stride[3] = {1, grid.Nx, grid.Nx * grid.Ny};
    forgeComplex<float>*src = cols, *dst = scratch;
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 1 || half == 0) continue;
        const uword work = (n2 / N[d]) * ncols;
        k_window_axis<<<blocks_for(work), kThreads>>>(src, dst, n2, ncols, N[d], stride[d], half);
        FORGE_CUDA_CHECK_LAUNCH("k_window_axis");
        std::swap(src, dst);
    }
    if (src != cols) {
        FORGE_CUDA_CHECK(cudaMemcpyAsync(cols, src, total * sizeof(forgeComplex<float>), cudaMemcpyDeviceToDevice, 0));
    }
}

void coil_window_amplitude(const forgeComplex<float>* cols, double* amp, MapGrid grid, uword nc) {
    const uword n2 = grid.n2();
    if (n2 == 0) return;
    k_amplitude<<<blocks_for(n2), kThreads>>>(cols, amp, n2, nc);
    FORGE_CUDA_CHECK_LAUNCH("k_amplitude");
}

void coil_covariance_total(const forgeComplex<float>* cols, const unsigned char* mask, forgeComplex<double>* total,
                           MapGrid grid, uword nc) {
    const uword npairs = nc * (nc + 1) / 2;
    if (npairs == 0) return;
    k_total<<<unsigned(npairs), kThreads>>>(cols, mask, total, grid.n2(), nc);
    FORGE_CUDA_CHECK_LAUNCH("k_total");
}

void coil_leading_eigenvectors(const forgeComplex<float>* cols, const unsigned char* mask,
                               const forgeComplex<double>* u0, forgeComplex<float>* maps, unsigned char* flags,
                               MapGrid grid, uword nc) {
    const uword n2 = grid.n2();
    if (n2 == 0 || nc == 0) return;
    if (nc > kMaxDeviceCoils)
        throw invalid_argument("coil_leading_eigenvectors: nc is " + std::to_string(nc) + " (expected at most " +
                               std::to_string(kMaxDeviceCoils) + ")");
    const int group = int(nc * nc), perBlock = std::max(1, kThreads / group), threads = group * perBlock;
    const size_t shmem = size_t(perBlock) * 2 * size_t(group) * 2 * sizeof(double);
    const unsigned blocks = unsigned((n2 + uword(perBlock) - 1) / uword(perBlock));
    if (shmem > 48 * 1024)
        FORGE_CUDA_CHECK(cudaFuncSetAttribute(k_eigenvectors, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
    k_eigenvectors<<<blocks, threads, shmem>>>(cols, mask, u0, maps, flags, n2, int(nc), perBlock);
    FORGE_CUDA_CHECK_LAUNCH("k_eigenvectors");
}

void coil_interpolated_inside(const double* amp, MapGrid M, double level, unsigned char* inside, MapGrid N) {
    if (N.n2() == 0) return;
    k_interpolated_inside<<<blocks_for(N.n2()), kThreads>>>(amp, M, level, inside, N);
    FORGE_CUDA_CHECK_LAUNCH("k_interpolated_inside");
}

void coil_energy(const forgeComplex<float>* X, double* energy, MapGrid grid, uword nc) {
    if (grid.n2() == 0) return;
    k_energy<<<blocks_for(grid.n2()), kThreads>>>(X, energy, grid.n2(), nc);
    FORGE_CUDA_CHECK_LAUNCH("k_energy");
}

void coil_interpolate_maps(const forgeComplex<float>* mapsM, MapGrid M, const unsigned char* mask,
                           forgeComplex<float>* maps, MapGrid N, uword nc) {
    if (N.n2() == 0) return;
    k_interpolate_maps<<<blocks_for(N.n2()), kThreads>>>(mapsM, M, mask, maps, N, nc);
    FORGE_CUDA_CHECK_LAUNCH("k_interpolate_maps");
}

}  // namespace cuda
}  // namespace forge
