#include "forge/Recon/CoilPreprocessing.h"

#include <complex>
#include <string>

#include "forge/Core/Exceptions.h"

namespace forge {
namespace recon {

arma::cx_mat noise_covariance(const arma::cx_fmat& noise) {
    if (noise.n_rows < 2 || noise.n_cols == 0)
        throw invalid_argument("noise_covariance: noise has " + std::to_string(noise.n_rows) + " samples x " +
                               std::to_string(noise.n_cols) + " coils (expected at least 2 samples and 1 coil)");
    arma::cx_mat N = arma::conv_to<arma::cx_mat>::from(noise);
    N.each_row() -= arma::mean(N, 0);
    // Psi(a, b) = E[n_a conj(n_b)]: rows of N are samples
    return (N.st() * arma::conj(N)) / double(N.n_rows - 1);
}

arma::cx_mat whitening_matrix(const arma::cx_mat& covariance) {
    const arma::uword nc = covariance.n_rows;
    if (nc == 0 || covariance.n_cols != nc)
        throw invalid_argument("whitening_matrix: covariance is " + std::to_string(covariance.n_rows) + "x" +
                               std::to_string(covariance.n_cols) + " (expected a square coils x coils matrix)");
    const double scale = arma::abs(covariance).max();
    if (!(scale > 0) || arma::abs(covariance - covariance.t()).max() > 1e-6 * scale)
        throw invalid_argument("whitening_matrix: covariance is not Hermitian with a non-zero diagonal");
    arma::cx_mat L;
    if (!arma::chol(L, covariance, "lower"))
        throw invalid_argument("whitening_matrix: covariance is not positive definite (a coil without noise, or "
                               "two coils carrying the same signal)");
    return arma::inv(arma::trimatl(L));
}

namespace {
// The compression matrix from the Gram matrix Y^H Y (nc x nc) of the stacked data Y (samples x coils).
arma::cx_mat compression_from_gram(const arma::cx_mat& gram, std::size_t nv, double* energy) {
    const std::size_t nc = gram.n_rows;
    if (nv == 0 || nv > nc)
        throw invalid_argument("coil_compression_matrix: nv is " + std::to_string(nv) +
                               " (expected 1 to nc = " + std::to_string(nc) + ")");
    arma::vec s;
    arma::cx_mat U, V;
    // SVD of the Gram matrix (Hermitian, positive semi-definite): V holds the data's right singular vectors
    // and s their squared singular values, largest first.
    if (!arma::svd(U, s, V, gram))
        throw invalid_argument("coil_compression_matrix: the SVD of the coil data failed (non-finite data?)");
    if (energy) {
        const double total = arma::accu(s);
        *energy = total > 0 ? arma::accu(s.head(nv)) / total : 1.0;
    }
    return V.cols(0, nv - 1).st();  // rows of Y are y^T = u^T Sigma V^H, so V_nv^T y = Sigma_nv u
}

arma::cx_mat gram_of(const arma::cx_fmat& samplesByCoils) {
    const arma::cx_mat Yd = arma::conv_to<arma::cx_mat>::from(samplesByCoils);
    return Yd.t() * Yd;
}
}  // namespace

arma::cx_mat coil_compression_matrix(const ReconProblem& P, std::size_t nv, double* energy) {
    if (nv == 0 || nv > P.nc)
        throw invalid_argument("coil_compression_matrix: nv is " + std::to_string(nv) +
                               " (expected 1 to nc = " + std::to_string(P.nc) + ")");
    arma::cx_mat gram(P.nc, P.nc, arma::fill::zeros);
    for (const auto& fr : P.frames) {
        const std::size_t n1 = fr.kx.n_elem;
        gram += gram_of(arma::cx_fmat(const_cast<std::complex<float>*>(fr.y.memptr()), n1, P.nc, false, true));
    }
    return compression_from_gram(gram, nv, energy);
}

arma::cx_mat coil_compression_matrix(const arma::cx_fmat& samplesByCoils, std::size_t nv, double* energy) {
    if (samplesByCoils.n_rows == 0 || samplesByCoils.n_cols == 0)
        throw invalid_argument("coil_compression_matrix: the data are " + std::to_string(samplesByCoils.n_rows) +
                               " samples x " + std::to_string(samplesByCoils.n_cols) +
                               " coils (expected at least one of each)");
    return compression_from_gram(gram_of(samplesByCoils), nv, energy);
}

void apply_coil_transform(ReconProblem& P, const arma::cx_mat& A) {
    if (A.n_cols != P.nc || A.n_rows == 0)
        throw invalid_argument("apply_coil_transform: A is " + std::to_string(A.n_rows) + "x" +
                               std::to_string(A.n_cols) + " (expected nc' x nc with nc = " + std::to_string(P.nc) +
                               ")");
    const arma::cx_fmat At = arma::conv_to<arma::cx_fmat>::from(A.st());
    const std::size_t ncOut = A.n_rows;
    for (auto& fr : P.frames) {
        const std::size_t n1 = fr.kx.n_elem;
        const arma::cx_fmat Y(fr.y.memptr(), n1, P.nc, false, true);
        arma::cx_fmat Z = Y * At;  // samples x nc'
        fr.y = arma::vectorise(Z);
    }
    for (auto& m : P.smaps) {
        const arma::cx_fmat S(m.memptr(), P.n2(), P.nc, false, true);
        arma::cx_fmat Z = S * At;
        m = arma::vectorise(Z);
    }
    P.nc = ncOut;
}

arma::cx_fmat apply_coil_transform(const arma::cx_fmat& samplesByCoils, const arma::cx_mat& A) {
    if (A.n_cols != samplesByCoils.n_cols)
        throw invalid_argument("apply_coil_transform: A has " + std::to_string(A.n_cols) + " columns but the samples " +
                               std::to_string(samplesByCoils.n_cols) + " coils");
    return samplesByCoils * arma::conv_to<arma::cx_fmat>::from(A.st());
}

}  // namespace recon
}  // namespace forge
