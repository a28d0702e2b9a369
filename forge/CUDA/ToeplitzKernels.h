#pragma once
// The kernel product of the Toeplitz normal operator (forge/Operators/ToeplitzNormal.h) on its padded grid of
// P cells, for S segments: u_l = sum_m K(l, m) .* z_m. Only the pairs l <= m whose kernel is not identically
// zero are stored, as a list (pairs[2p] = l, pairs[2p+1] = m); K(m, l) = conj(K(l, m)) elementwise, and a
// diagonal kernel K(l, l) enters by its real part (the Fourier transform of a Hermitian convolution), so the
// operator is Hermitian to rounding. mix_at is the one expression the host loop and the CUDA kernel use.
// toeplitz_expand_axis builds the kernels of a trajectory that is Cartesian along one axis from its slabs.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace toeplitz {

// u[l*P + k] for l < S, from z[m*P + k] and the npairs stored kernels K[p*P + k], at one cell k.
template <typename T1>
FORGE_HD void mix_at(const forgeComplex<T1>* K, const uword* pairs, uword npairs, const forgeComplex<T1>* z,
                     forgeComplex<T1>* u, uword P, uword S, uword k) {
    for (uword l = 0; l < S; ++l) u[l * P + k] = forgeComplex<T1>(0, 0);
    for (uword p = 0; p < npairs; ++p) {
        const uword l = pairs[2 * p], m = pairs[2 * p + 1];
        const forgeComplex<T1> q = K[p * P + k];
        if (l == m) {
            u[l * P + k] += q.real() * z[l * P + k];
        } else {
            u[l * P + k] += q * z[m * P + k];
            u[m * P + k] += conj(q) * z[l * P + k];
        }
    }
}

}  // namespace toeplitz

namespace cuda {
// mix_at over every cell of nbatch vectors (z and u: nbatch x S x P), on device pointers (pairs included).
template <typename T1>
void toeplitz_mix(const forgeComplex<T1>* K, const uword* pairs, uword npairs, const forgeComplex<T1>* z,
                  forgeComplex<T1>* u, uword P, uword S, uword nbatch);

// Expansion of kernels along a Cartesian axis of Pa cells, for nb basis kernels on a grid of lo x Pa x hi cells
// (lo: the cells of the faster axes, hi: of the slower ones): out[i + lo (d + Pa h) + lo Pa hi r] =
// sum_g E[d + Pa g] Q[i + lo h + lo hi (r + nb g)], i.e. each of the G groups' slab kernels Q_g times its
// phase E(d, g) along the axis. Device pointers.
template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>* Q, const forgeComplex<T1>* E, forgeComplex<T1>* out, uword lo,
                          uword Pa, uword hi, uword G, uword nb);
}  // namespace cuda
}  // namespace forge
