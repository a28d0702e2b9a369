#pragma once
// CPU inner loops of the exact DFT (internal to forge; not installed API).
//
// The loops live in forge/Operators/dft/cpu/DftCpuKernelsIsa.cpp, compiled once per instruction set
// (SSE2, AVX2+FMA, AVX-512, and -march=native in native builds); the first call picks the best one the CPU
// runs (forge::cpu_kernel_isa() names it). This header holds only plain structs and declarations, so that
// the translation units built for different instruction sets share no inline code the linker could mix.
//
// Both directions are one sum  out_a = sum_b in_b exp(sigma i 2 pi phase_ab) [* B_ab]  over "inner" points
// b for each "outer" point a, with phase_ab = ox_a ix_b + oy_a iy_b + oz_a iz_b + ow_a iw_b in turns:
//   forward: outer = samples (kx, ky, kz, t), inner = pixels (x, y, z, field_map / 2 pi), sigma = -1
//   adjoint: outer = pixels, inner = samples, sigma = +1.

namespace forge {
namespace dftcpu {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Geometry in structure-of-arrays form with the field map pre-divided by 2 pi (turns per second).
template <typename T>
struct DftGeometryView {
    const T *kx, *ky, *kz, *t;        // n1
    const T *ix, *iy, *iz, *fmTurns;  // n2
    const T *gx, *gy, *gz;            // n2, null without gradients
    T invNx, invNy, invNz;
    long long n1, n2;
};

// Inner arrays are padded with zeros to a multiple of kInnerPad entries (zero input: no contribution).
constexpr long long kInnerPad = 64;

// One call of a kernel: nb vectors (1, 2, 4 or 8) through one direction.
//   phase_ab = ox[a] ix[b] + oy[a] iy[b] + oz[a] iz[b] + ow[a] iw[b]                   (turns)
//   B_ab (grad only) = prod over axes sincPG(arg), sincPG(x) = sin(pi x) / (pi x):
//     forward: arg = oa[axis][a] + ow[a] * ig[axis][b]     (k/N + t G)
//     adjoint: arg = ia[axis][b] + og[axis][a] * iw[b]     (k/N + G t)
template <typename T>
struct DftKernelArgs {
    const T *ox, *oy, *oz, *ow;  // n_out
    const T *ix, *iy, *iz, *iw;  // n_in (padded)
    const T* og[3];              // adjoint: G per axis (n_out)
    const T* oa[3];              // forward: k/N per axis (n_out)
    const T* ig[3];              // forward: G per axis (n_in, padded)
    const T* ia[3];              // adjoint: k/N per axis (n_in, padded)
    const T *in_re, *in_im;      // vector v at offset v * n_in (padded with zeros)
    T* out;                      // interleaved complex; vector v at out + 2 v n_out
    long long n_in, n_out;       // n_in a multiple of kInnerPad
    int nb;                      // 1, 2, 4 or 8
    bool forward, grad;
};

using DftKernelF = void (*)(const DftKernelArgs<float>&);
using DftKernelD = void (*)(const DftKernelArgs<double>&);

// The kernels of the instruction set in use (chosen at first use; forge::set_cpu_kernel_isa changes it).
DftKernelF kernel_float();
DftKernelD kernel_double();

}  // namespace dftcpu
}  // namespace forge
