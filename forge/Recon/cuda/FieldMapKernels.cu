// CUDA kernels of the penalized field-map estimate (FieldMapEstimation.h, docs/map-estimation.md): the echo
// pairs' weights and phase differences, the start (window-summed phase difference) and the separable
// quadratic surrogate step, in double as on the host, one thread per pixel.
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <utility>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Recon/cuda/MapKernels.h"

namespace forge {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kPi = 3.14159265358979323846;

unsigned blocks_for(uword n) { return unsigned((n + kThreads - 1) / kThreads); }

__global__ void k_weights(const forgeComplex<float>* __restrict__ echoes, const EchoPair* __restrict__ pairs,
                          uword npairs, double* __restrict__ a, double* __restrict__ phi, double* __restrict__ curvSum,
                          uword n2) {
    const uword j = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n2) return;
    double s = 0;
    for (uword p = 0; p < npairs; ++p) {
        const forgeComplex<float> ym = echoes[uword(pairs[p].m) * n2 + j], yn = echoes[uword(pairs[p].n) * n2 + j];
        const double mr = ym.re, mi = ym.im, nr = yn.re, ni = yn.im;
        const double ap = hypot(mr, mi) * hypot(nr, ni);
        a[p * n2 + j] = ap;
        phi[p * n2 + j] = atan2(mi * nr - mr * ni, mr * nr + mi * ni);  // angle(y_m conj(y_n))
        s += ap * pairs[p].dt * pairs[p].dt;
    }
    curvSum[j] = s;
}

__global__ void k_divide(double* __restrict__ a, double s, uword n) {
    const uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) a[i] /= s;
}

__global__ void k_phase_product(const forgeComplex<float>* __restrict__ echoes, forgeComplex<double>* __restrict__ z,
                                uword n2) {
    const uword j = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n2) return;
    const forgeComplex<float> y0 = echoes[j], y1 = echoes[n2 + j];
    const double ar = y0.re, ai = y0.im, br = y1.re, bi = y1.im;
    z[j] = forgeComplex<double>(ar * br + ai * bi, ai * br - ar * bi);
}

// One pixel per thread: out = the window sum along one axis of in (axis_window_sum, as the host sums it).
__global__ void k_window_axis_double(const forgeComplex<double>* __restrict__ in,
                                     forgeComplex<double>* __restrict__ out, uword n2, uword n, uword stride,
                                     uword half) {
    const uword j = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n2) return;
    const uword i = (j / stride) % n;
    double v[2];
    axis_window_sum(reinterpret_cast<const double*>(in + (j - i * stride)), n, stride, i, half, v);
    out[j] = forgeComplex<double>(v[0], v[1]);
}

__global__ void k_start(const forgeComplex<double>* __restrict__ z, double* __restrict__ w, uword n2, double dt) {
    const uword j = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j < n2) w[j] = atan2(z[j].im, z[j].re) / dt;
}

__device__ inline double wrap(double s) { return s - 2 * kPi * floor((s + kPi) / (2 * kPi)); }

__global__ void k_sqs(const double* __restrict__ a, const double* __restrict__ phi, const EchoPair* __restrict__ pairs,
                      uword npairs, const double* __restrict__ w, double* __restrict__ next, uword Nx, uword Ny,
                      uword Nz, double beta) {
    const uword n2 = Nx * Ny * Nz;
    const uword j = uword(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= n2) return;
    const double wj = w[j];
    double grad = 0, curv = 0;
    for (uword p = 0; p < npairs; ++p) {
        const double dt = pairs[p].dt, ap = a[p * n2 + j], s = wrap(phi[p * n2 + j] - wj * dt);
        double sn, cs;
        sincos(s, &sn, &cs);
        grad -= ap * dt * sn;
        curv += ap * dt * dt * (fabs(s) < 1e-8 ? 1.0 : sn / s);
    }
    const uword N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    double rg = 0, pc = 0;
    for (int d = 0; d < 3; ++d) {
        const uword i = (j / stride[d]) % N[d];
        if (i > 0) {
            rg += wj - w[j - stride[d]];
            pc += 2;
        }
        if (i + 1 < N[d]) {
            rg += wj - w[j + stride[d]];
            pc += 2;
        }
    }
    grad += beta * rg;
    curv += beta * pc;
    next[j] = curv > 0 ? wj - grad / curv : wj;
}

struct MaxOp {
    __device__ double operator()(double x, double y) const { return x > y ? x : y; }
};

}  // namespace

void field_map_weights(const forgeComplex<float>* echoes, const EchoPair* pairs, uword npairs, double* a, double* phi,
                       double* curvSum, uword n2) {
    if (n2 == 0) return;
    k_weights<<<blocks_for(n2), kThreads>>>(echoes, pairs, npairs, a, phi, curvSum, n2);
    FORGE_CUDA_CHECK_LAUNCH("k_weights");
}

double device_max(const double* v, uword n) {
    if (n == 0) return 0;
    DeviceBuffer out(sizeof(double));
    std::size_t bytes = 0;
    FORGE_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, v, out.as<double>(), n, MaxOp(), -1.0e308));
    DeviceBuffer temp(bytes > 0 ? bytes : 1);
    FORGE_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.get(), bytes, v, out.as<double>(), n, MaxOp(), -1.0e308));
    double m = 0;
    FORGE_CUDA_CHECK(cudaMemcpy(&m, out.get(), sizeof(double), cudaMemcpyDeviceToHost));
    return m;
}

void divide(double* a, double s, uword n) {
    if (n == 0) return;
    k_divide<<<blocks_for(n), kThreads>>>(a, s, n);
    FORGE_CUDA_CHECK_LAUNCH("k_divide");
}

void field_map_start(const forgeComplex<float>* echoes, double* w, forgeComplex<double>* scratch, MapGrid grid,
                     uword half, double dt) {
    const uword n2 = grid.n2();
    if (n2 == 0) return;
    forgeComplex<double>*src = scratch, *dst = scratch + n2;
    k_phase_product<<<blocks_for(n2), kThreads>>>(echoes, src, n2);
    FORGE_CUDA_CHECK_LAUNCH("k_phase_product");
    const uword N[3] = {grid.Nx, grid.Ny, grid.Nz}, stride[3] = {1, grid.Nx, grid.Nx * grid.Ny};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 1 || half == 0) continue;
        k_window_axis_double<<<blocks_for(n2), kThreads>>>(src, dst, n2, N[d], stride[d], half);
        FORGE_CUDA_CHECK_LAUNCH("k_window_axis_double");
        std::swap(src, dst);
    }
    k_start<<<blocks_for(n2), kThreads>>>(src, w, n2, dt);
    FORGE_CUDA_CHECK_LAUNCH("k_start");
}

void field_map_sqs_step(const double* a, const double* phi, const EchoPair* pairs, uword npairs, const double* w,
                        double* next, MapGrid grid, double beta) {
    const uword n2 = grid.n2();
    if (n2 == 0) return;
    k_sqs<<<blocks_for(n2), kThreads>>>(a, phi, pairs, npairs, w, next, grid.Nx, grid.Ny, grid.Nz, beta);
    FORGE_CUDA_CHECK_LAUNCH("k_sqs");
}

}  // namespace cuda
}  // namespace forge
