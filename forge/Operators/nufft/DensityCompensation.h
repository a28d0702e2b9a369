#pragma once
// Density compensation weights by Pipe's iterative method (Pipe & Menon, MRM 1999):
//   W <- W / (C W),   C W = sum_j W_j c(k - k_j), c = K * K for a Kaiser-Bessel kernel K (6 cells,
//   beta = 16) gridded on G's oversampled grid and on that grid shifted by half a cell (Zwart et al.,
//   MRM 2012): a convolution to ~3e-7, so the weights converge sample by sample (docs/nufft.md).
//   2D and 3D; ~20 iterations suffice.
// Normalisation: the weights are returned so that G^H diag(W) G ~= I for a fully sampled field of view
// (W_j ~= 1 / (rho(k_j) * n2), rho = samples per (cycle/FOV)^d, n2 = pixels). A density-compensated
// gridding reconstruction is then simply  x = G / (W % y).
#include <armadillo>

#include "forge/Operators/nufft/Gnufft.h"

namespace forge {

// Weights for the trajectory of G (n1 entries, real, positive).
template <typename T1>
arma::Col<T1> density_compensation(const Gnufft<T1>& G, uword iterations = 20);

// Same, building the Gnufft (default accuracy) from the trajectory: k in cycles/FOV in [-N/2, N/2].
template <typename T1>
arma::Col<T1> density_compensation(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx,
                                   const arma::Col<T1>& ky, const arma::Col<T1>& kz, uword iterations = 20);

template <typename T1>
FORGE_DEPRECATED("density_compensation()")
arma::Col<T1> calc3DDensityCompensation(const Gnufft<T1>& G, uword iterations = 20) {
    return density_compensation(G, iterations);
}
template <typename T1>
FORGE_DEPRECATED("density_compensation()")
arma::Col<T1> calc3DDensityCompensation(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx,
                                        const arma::Col<T1>& ky, const arma::Col<T1>& kz, uword iterations = 20) {
    return density_compensation(n1, Nx, Ny, Nz, kx, ky, kz, iterations);
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::density_compensation;
using forge::calc3DDensityCompensation;
#endif
