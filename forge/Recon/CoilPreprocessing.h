#pragma once
// Coil preprocessing before a reconstruction: noise pre-whitening from noise-only acquisitions and coil
// compression to fewer virtual coils (as BART's `cc`, SVD variant). Both are a fixed nc' x nc matrix A
// applied to every sample's coil vector (y' = A y) and, where a problem already has them, to the coil
// maps (S' = A S): y = S x + n becomes A y = (A S) x + A n, the same image.
//
//   noise covariance      Psi = N^H N / (samples - 1)       N: samples x coils, each coil's mean removed
//   whitening             Psi = L L^H (Cholesky), W = L^{-1}:  W Psi W^H = I
//   compression           Y (samples x coils, every frame stacked) = U Sigma V^H, A = (first nv columns of V)^T:
//                         y' = A y holds Sigma u, the virtual coils carrying the most energy first
#include <cstddef>
#include <vector>

#include <armadillo>

#include "forge/Recon/ReconProblem.h"

namespace forge {
namespace recon {

// Covariance (coils x coils) of noise samples (samples x coils, complex), each coil's mean removed.
// Throws forge::invalid_argument when 'noise' has fewer than 2 samples or no coil.
arma::cx_mat noise_covariance(const arma::cx_fmat& noise);

// W = L^{-1} for covariance = L L^H (lower Cholesky factor): W covariance W^H = I. Throws
// forge::invalid_argument when 'covariance' is not square, not Hermitian, or not positive definite.
arma::cx_mat whitening_matrix(const arma::cx_mat& covariance);

// nv x nc compression matrix from the problem's data (every frame's samples stacked, coils as columns):
// the transpose of the first nv right singular vectors. 'energy' (optional) receives the
// fraction of the data's energy the nv virtual coils keep. Throws forge::invalid_argument when nv is 0 or
// above P.nc.
arma::cx_mat coil_compression_matrix(const ReconProblem& P, std::size_t nv, double* energy = nullptr);
// The same from one block of data, samples x coils (e.g. a calibration scan or one frame).
arma::cx_mat coil_compression_matrix(const arma::cx_fmat& samplesByCoils, std::size_t nv, double* energy = nullptr);

// Applies A (nc' x P.nc) to every frame's data and to the coil maps, if any; P.nc becomes nc'.
// Throws forge::invalid_argument when A does not have P.nc columns.
void apply_coil_transform(ReconProblem& P, const arma::cx_mat& A);

// Same for a block of samples x coils (noise, a single acquisition): returns noise * A^T.
arma::cx_fmat apply_coil_transform(const arma::cx_fmat& samplesByCoils, const arma::cx_mat& A);

}  // namespace recon
}  // namespace forge
