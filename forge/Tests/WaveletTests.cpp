// OrthoWavelet: the filters' defining identities (orthonormality, vanishing moments), the transform against dense
// float64 references (a hand-written one-level Haar, a brute-force periodic filter bank), perfect reconstruction,
// orthogonality and adjoint = inverse in float and double on 1D, 2D and 3D grids, and the errors for odd sizes.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Penalties/Wavelet.h"

using namespace forge_test;
using forge::ImageGrid;
using forge::WaveletFamily;

namespace {
template <typename T>
using CVec = forgeCol<forgeComplex<T>>;

const WaveletFamily kFamilies[] = {WaveletFamily::Haar, WaveletFamily::Db2, WaveletFamily::Db4};

// The dense matrix of the forward transform (columns: transforms of the unit vectors), in double.
template <typename T>
arma::cx_mat dense_forward(const forge::OrthoWavelet<T>& psi) {
    const arma::uword n = psi.grid().n_pixels();
    arma::cx_mat M(n, n);
    for (arma::uword j = 0; j < n; ++j) {
        arma::Col<std::complex<T>> e(n, arma::fill::zeros);
        e(j) = 1;
        M.col(j) = arma::conv_to<arma::cx_vec>::from(psi.forward(CVec<T>(e)).to_arma());
    }
    return M;
}
}  // namespace

TEST_CASE("Wavelet scaling filters are orthonormal with the expected vanishing moments", "[wavelet][penalty]") {
    for (WaveletFamily f : kFamilies) {
        const std::vector<double>& h = forge::wavelet_scaling_filter(f);
        const int L = int(h.size());
        INFO(forge::wavelet_family_name(f));
        double s = 0;
        for (double v : h) s += v;
        CHECK(std::abs(s - std::sqrt(2.0)) < 1e-14);
        for (int m = 0; 2 * m < L; ++m) {  // sum_k h[k] h[k + 2m] = delta_m
            double c = 0;
            for (int k = 0; k + 2 * m < L; ++k) c += h[k] * h[k + 2 * m];
            CHECK(std::abs(c - (m == 0 ? 1.0 : 0.0)) < 1e-14);
        }
        for (int p = 0; p < L / 2; ++p) {  // the high-pass filter annihilates polynomials of degree < L/2
            double mom = 0;
            for (int k = 0; k < L; ++k) mom += ((k % 2) ? -1.0 : 1.0) * std::pow(double(k), p) * h[L - 1 - k];
            CHECK(std::abs(mom) < 1e-12 * std::pow(double(L), p));
        }
    }
}

TEST_CASE("One level of the 1D Haar transform is (x0 + x1, x0 - x1) / sqrt(2)", "[wavelet][penalty]") {
    FORGE_INFO_SEED();
    const arma::uword n = 16;
    forge::OrthoWavelet<double> psi(ImageGrid(n), WaveletFamily::Haar, 1);
    const arma::cx_vec x = complex_normal<double>(n);
    const arma::cx_vec c = psi.forward(CVec<double>(x)).to_arma();
    arma::cx_vec ref(n);
    for (arma::uword k = 0; k < n / 2; ++k) {
        ref(k) = (x(2 * k) + x(2 * k + 1)) / std::sqrt(2.0);
        ref(n / 2 + k) = (x(2 * k) - x(2 * k + 1)) / std::sqrt(2.0);
    }
    CHECK(rel_error(c, ref) < 1e-15);
}

TEST_CASE("Two levels of the 2D db2 transform match a brute-force periodic filter bank", "[wavelet][penalty]") {
    FORGE_INFO_SEED();
    const arma::uword nx = 16, ny = 8;
    forge::OrthoWavelet<double> psi(ImageGrid(nx, ny), WaveletFamily::Db2, 2);
    const std::vector<double>& h = forge::wavelet_scaling_filter(WaveletFamily::Db2);
    const int L = int(h.size());
    // One level along one axis of the box [0, mx) x [0, my), written as a direct periodic convolution.
    auto level = [&](arma::cx_mat& A, arma::uword mx, arma::uword my, bool along_x) {
        const arma::cx_mat B = A;
        const arma::uword m = along_x ? mx : my, other = along_x ? my : mx;
        for (arma::uword o = 0; o < other; ++o)
            for (arma::uword k = 0; k < m / 2; ++k) {
                std::complex<double> a = 0, d = 0;
                for (int t = 0; t < L; ++t) {
                    const arma::uword j = (2 * k + arma::uword(t)) % m;
                    const std::complex<double> v = along_x ? B(j, o) : B(o, j);
                    a += h[t] * v;
                    d += ((t % 2) ? -1.0 : 1.0) * h[L - 1 - t] * v;
                }
                (along_x ? A(k, o) : A(o, k)) = a;
                (along_x ? A(m / 2 + k, o) : A(o, m / 2 + k)) = d;
            }
    };
    const arma::cx_vec x = complex_normal<double>(nx * ny);
    arma::cx_mat A = arma::reshape(x, nx, ny);  // A(x, y): x fastest, as forge's layout
    level(A, nx, ny, true);
    level(A, nx, ny, false);
    level(A, nx / 2, ny / 2, true);
    level(A, nx / 2, ny / 2, false);
    const arma::cx_vec c = psi.forward(CVec<double>(x)).to_arma();
    CHECK(rel_error(c, arma::cx_vec(arma::vectorise(A))) < 1e-14);
}

TEMPLATE_TEST_CASE("OrthoWavelet is orthogonal and its inverse is its adjoint (1D, 2D, 3D)", "[wavelet][penalty]",
                   float, double) {
    FORGE_INFO_SEED();
    const double tol = std::is_same<TestType, float>::value ? 2e-6 : 1e-13;
    const ImageGrid grids[] = {ImageGrid(64), ImageGrid(32, 16), ImageGrid(16, 8, 8), ImageGrid(8, 1, 16)};
    for (WaveletFamily f : kFamilies)
        for (const ImageGrid& g : grids) {
            INFO(forge::wavelet_family_name(f) << " on " << g.nx << "x" << g.ny << "x" << g.nz);
            forge::OrthoWavelet<TestType> psi(g, f);
            CHECK(psi.levels() >= 1);
            const arma::uword n = g.n_pixels();
            const arma::Col<std::complex<TestType>> x = complex_normal<TestType>(n), c = complex_normal<TestType>(n);
            const CVec<TestType> fx(x), fc(c);
            const arma::Col<std::complex<TestType>> wx = psi.forward(fx).to_arma();
            CHECK(rel_error(psi.inverse(psi.forward(fx)).to_arma(), x) < tol);  // perfect reconstruction
            CHECK(rel_error(psi.forward(psi.inverse(fc)).to_arma(), c) < tol);
            CHECK(std::abs(arma::norm(wx) / arma::norm(x) - 1) < tol);  // ||Psi x|| = ||x||
            const std::complex<double> lhs =
                arma::cdot(arma::conv_to<arma::cx_vec>::from(c), arma::conv_to<arma::cx_vec>::from(wx));
            const std::complex<double> rhs = arma::cdot(arma::conv_to<arma::cx_vec>::from(psi.inverse(fc).to_arma()),
                                                        arma::conv_to<arma::cx_vec>::from(x));
            CHECK(std::abs(lhs - rhs) <
                  tol * 10 * std::sqrt(double(n)) * std::sqrt(double(n)));  // <c, Psi x> = <Psi^H c, x>
        }
}

TEST_CASE("OrthoWavelet's dense matrix is unitary on a small 3D grid", "[wavelet][penalty]") {
    for (WaveletFamily f : kFamilies) {
        forge::OrthoWavelet<double> psi(ImageGrid(8, 4, 4), f, 1);
        const arma::cx_mat M = dense_forward(psi);
        const arma::cx_mat I = arma::eye<arma::cx_mat>(M.n_cols, M.n_cols);
        CHECK(arma::norm(M.t() * M - I, "fro") < 1e-12);
        CHECK(arma::norm(M * M.t() - I, "fro") < 1e-12);
    }
}

TEST_CASE("OrthoWavelet refuses odd axes and levels that do not divide the grid", "[wavelet][penalty]") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(forge::OrthoWavelet<float>(ImageGrid(255, 256)), Contains("nx = 255 is odd"));
    CHECK_THROWS_WITH(forge::OrthoWavelet<float>(ImageGrid(64, 48), WaveletFamily::Db4, 5), Contains("ny = 48 is not"));
    CHECK_THROWS_AS(forge::OrthoWavelet<float>(ImageGrid(1, 1, 1)), forge::invalid_argument);
    CHECK_THROWS_AS(forge::wavelet_family_from_name("sym8"), forge::invalid_argument);
    CHECK(forge::OrthoWavelet<float>(ImageGrid(256, 256), WaveletFamily::Db4).levels() == 5);
    CHECK(forge::OrthoWavelet<float>(ImageGrid(6, 6), WaveletFamily::Db4).levels() == 1);
    forge::OrthoWavelet<float> psi(ImageGrid(16, 16));
    CHECK_THROWS_WITH(psi.forward(CVec<float>(200)), Contains("expected nx*ny*nz = 16*16*1 = 256"));
}
