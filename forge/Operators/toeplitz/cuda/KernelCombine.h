#pragma once
// The Toeplitz kernel build's last step on the GPU (forge/Operators/toeplitz/KernelBuild.cpp): the pair kernels as
// combinations of the basis kernels' FFTs, in one launch rather than one axpby per (pair, basis kernel):
//
//   K[p P + c] = s(c) sum_{r < nb} C[p nb + r] B[r P + c],   p < npairs, c < P = Px Py Pz
//
// s(c) = 1, or with 'alternate' (-1)^(x + y + z) for the cell c = x + Px (y + Py z). The latter undoes a shift
// by N along every axis of 2N cells: basis kernels computed in centred order (offset m at cell m + N, as a
// NUFFT's image) have FFTs that differ from those of the circular order (offset m at cell m mod 2N) by exactly
// this sign. Axes of one cell contribute x = 0. Each thread keeps up to kCombineChunk pairs' sums in registers
// while it reads each basis value once; the sums run over r in a fixed order (deterministic).
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace cuda {

constexpr uword kCombineChunk = 16;

// Device pointers: basis (nb x P), coef (npairs x nb, row p contiguous), out (npairs x P). Queued on the legacy
// default stream.
template <typename T1>
void toeplitz_combine_kernels(const forgeComplex<T1>* basis, const forgeComplex<T1>* coef, forgeComplex<T1>* out,
                              uword P, uword nb, uword npairs, uword Px, uword Py, bool alternate);

}  // namespace cuda
}  // namespace forge
