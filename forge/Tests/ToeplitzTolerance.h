#pragma once
// The relative error allowed for a ToeplitzNormal from rounding alone, shared by the host and GPU tests.
#include <cmath>
#include <limits>

#include <armadillo>

#include "forge/Operators/toeplitz/ToeplitzNormal.h"

namespace forge_test {

// Relative error allowed between two evaluations in T of a Toeplitz normal (GPU and host builds, cuFFT and FFTW), or
// one against a float64 reference (the exact G^H W G, the segmented normal), from rounding in T (eps its epsilon): each
// kernel entry is a sum of n1 sample terms (the adjoint DFT of the build), whose rounding grows like eps sqrt(n1) for
// random signs; each apply adds the forward and inverse FFTs of the padded grid, about eps log2(cells) each; a
// field-corrected apply sums (L+1)(L+2)/2 pair products, whose independent errors add in quadrature. Two
// independent roundings compared add a factor sqrt 2, and the spread over random cases another 2 to 3: a factor 4
// overall. For a 48 x 40 float case with L = 4 (n1 = 2120, 96 x 80 padded cells, 15 pairs) this is 1.3e-4; the host
// cases of ToeplitzTests measured at most 7e-6 over 30 draws. NUFFT-built kernels add their requested error (1e-6 in
// float): pass it as 'kernel'.
template <typename T>
double toeplitz_tolerance(const forge::ToeplitzNormal<T>& N, arma::uword n1, double kernel = 0) {
    const double eps = std::numeric_limits<T>::epsilon();
    const double cells = double(N.padded_size(0)) * double(N.padded_size(1)) * double(N.padded_size(2));
    const double pairs = double(N.segments() + 1) * double(N.segments() + 2) / 2;
    return 4 * eps * (std::sqrt(double(n1)) + 2 * std::log2(cells)) * std::sqrt(pairs) + kernel;
}

}  // namespace forge_test
