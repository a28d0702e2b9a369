#pragma once
// QuadPenalty<T1>: quadratic (Tikhonov) roughness penalty R(x) = beta/2 ||C x||^2, C the first
// differences along each axis of length > 1 of an Nx x Ny x Nz image (x fastest; Nz = 1 -> 2D).
//   QuadPenalty<float> R(A.domain_shape(), 0.01f);     // the image grid of an operator's domain
//   QuadPenalty<float> R(forge::ImageGrid{Nx, Ny}, 0.01f);
//   QuadPenalty<float> R(Nx, Ny, 1, 0.01f);            // the same, positional
// gradient(x) = beta C^H C x, denom(d, x) = beta ||C d||^2 (exact).
#include "forge/Penalties/FiniteDifferencePenalty.h"

namespace forge {

template <typename T1>
class QuadPenalty : public FiniteDifferencePenalty<T1> {
public:
    // Throws forge::invalid_argument for a zero dimension or a negative / non-finite beta.
    QuadPenalty(const ImageGrid& grid, T1 beta);
    QuadPenalty(uword Nx, uword Ny, uword Nz, T1 beta);
};

extern template class QuadPenalty<float>;
extern template class QuadPenalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::QuadPenalty;
#endif
