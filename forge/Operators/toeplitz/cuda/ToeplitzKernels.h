#pragma once
// The kernel product of the Toeplitz normal operator (forge/Operators/toeplitz/ToeplitzNormal.h) on its padded grid of
// P cells, for S segments: u_l = sum_m K(l, m) .* z_m. Only the pairs l <= m whose kernel is not identically
// zero are stored; table (S x S, row l) names the kernel of (l, m): 0 none, p + 1 the stored kernel p, -(p + 1)
// its conjugate (K(m, l) = conj(K(l, m)) elementwise). A diagonal kernel K(l, l) enters by its real part (the
// Fourier transform of a Hermitian convolution), so the operator is Hermitian to rounding. Each u_l is summed in
// a register and written once. mix_at is the sum the device apply's kernel product follows (ToeplitzApply.h); the host apply (ToeplitzNormal.cpp) sums
// the same terms row by row on real and imaginary parts apart.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {
namespace toeplitz {

// u[l*P + k] for l < S, from z[m*P + k] and the stored kernels K[p*P + k], at one cell k.
template <typename T1>
FORGE_HD void mix_at(const forgeComplex<T1>* K, const long long* table, const forgeComplex<T1>* z,
                     forgeComplex<T1>* u, uword P, uword S, uword k) {
    for (uword l = 0; l < S; ++l) {
        forgeComplex<T1> acc(0, 0);
        for (uword m = 0; m < S; ++m) {
            const long long v = table[l * S + m];
            if (v == 0) continue;
            const forgeComplex<T1> q = K[uword(v > 0 ? v - 1 : -v - 1) * P + k], zm = z[m * P + k];
            if (l == m) {
                acc += q.real() * zm;
            } else {
                acc += (v > 0 ? q : conj(q)) * zm;
            }
        }
        u[l * P + k] = acc;
    }
}

}  // namespace toeplitz

namespace cuda {
// Expansion of kernels along a Cartesian axis of Pa cells, for nb basis kernels on a grid of lo x Pa x hi cells
// (lo: the cells of the faster axes, hi: of the slower ones): out[i + lo (d + Pa h) + lo Pa hi r] =
// sum_g E[d + Pa g] Q[i + lo h + lo hi (r + nb g)], i.e. each of the G groups' slab kernels Q_g times its
// phase E(d, g) along the axis. Device pointers.
template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>* Q, const forgeComplex<T1>* E, forgeComplex<T1>* out, uword lo,
                          uword Pa, uword hi, uword G, uword nb);

// Columns of a matrix from its distinct rows (the compressed pair data): out[(g nb + r) n + i] =
// scale[g n + i] rows[row[g n + i] + T r] for g < ng blocks of n samples and r < nb columns of 'rows' (T x nb).
// Device pointers.
template <typename T1>
void toeplitz_gather_rows(const forgeComplex<T1>* rows, uword T, const unsigned* row, const T1* scale, uword n,
                          uword ng, uword nb, forgeComplex<T1>* out);
}  // namespace cuda
}  // namespace forge
