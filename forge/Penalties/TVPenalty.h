#pragma once
// TVPenalty<T1>: smooth total variation (Charbonnier) penalty
//   R(x) = beta * sum_a sum_i delta^2 (sqrt(1 + (|d_a(x)(i)|/delta)^2) - 1)
// over first differences along each axis of length > 1 of an Nx x Ny x Nz image (x fastest; Nz = 1 -> 2D).
// For |d| >> delta each difference costs ~ beta*delta*|d| (TV); for |d| << delta ~ beta*|d|^2/2.
//   TVPenalty<float> R(A.domain_shape(), 0.01f, 0.05f);  // the image grid of an operator's domain
//   TVPenalty<float> R(Nx, Ny, 1, 0.01f, 0.05f);         // the same grid, positional
// gradient(x) = beta C^H diag(w) C x with w = 1/sqrt(1 + |Cx|^2/delta^2); denom(d, x) = beta sum w |C d|^2,
// the curvature of the Huber majorizer at x (>= the true curvature, so PCG steps never overshoot).
#include "forge/Penalties/FiniteDifferencePenalty.h"

namespace forge {

template <typename T1>
class TVPenalty : public FiniteDifferencePenalty<T1> {
public:
    // Throws forge::invalid_argument for a zero dimension, a negative / non-finite beta or delta <= 0.
    TVPenalty(const ImageGrid& grid, T1 beta, T1 delta);
    TVPenalty(uword Nx, uword Ny, uword Nz, T1 beta, T1 delta);
};

extern template class TVPenalty<float>;
extern template class TVPenalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::TVPenalty;
#endif
