// WaveletL1Penalty's default wavelet: db2, BART's pics -l1 filter (dau2), against its closed form in float64; and the
// property that makes it the default: on a piecewise-constant image (fresh random rectangles) the L1 norm of the
// detail coefficients, which the penalty weighs, is smaller with db2's 4 taps than with db4's 8.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Penalties/WaveletL1Penalty.h"

using namespace forge_test;
using forge::ImageGrid;
using forge::WaveletFamily;

TEST_CASE("WaveletL1Penalty's default wavelet is db2 with BART's dau2 filter", "[prox][wavelet]") {
    const forge::WaveletL1Options o;
    CHECK(o.family == WaveletFamily::Db2);
    const forge::WaveletL1Penalty<float> R(ImageGrid(64, 64), 1.0f);
    CHECK(R.transform().family() == WaveletFamily::Db2);
    // dau2's low-pass: (1 + sqrt 3, 3 + sqrt 3, 3 - sqrt 3, 1 - sqrt 3) / (4 sqrt 2).
    const double s3 = std::sqrt(3.0), d = 4 * std::sqrt(2.0);
    const std::vector<double> expect{(1 + s3) / d, (3 + s3) / d, (3 - s3) / d, (1 - s3) / d};
    const std::vector<double>& h = forge::wavelet_scaling_filter(R.transform().family());
    REQUIRE(h.size() == expect.size());
    for (std::size_t k = 0; k < h.size(); ++k) CHECK(std::abs(h[k] - expect[k]) < 1e-15);
}

TEST_CASE("db2's detail coefficients of a piecewise-constant image have a smaller L1 norm than db4's",
          "[prox][wavelet]") {
    FORGE_INFO_SEED();
    const arma::uword N = 128;
    std::uniform_int_distribution<int> pos(0, int(N) - 1), len(4, 48);
    std::uniform_real_distribution<double> val(-1.0, 1.0);
    double l2 = 0, l4 = 0;  // over a few images: one image's edges may favour either by a few per cent
    for (int trial = 0; trial < 4; ++trial) {
        arma::cx_vec img(N * N, arma::fill::zeros);
        for (int r = 0; r < 40; ++r) {  // rectangles at any position, cut at the edges
            const int x0 = pos(rng()), y0 = pos(rng()), w = len(rng()), h = len(rng());
            const std::complex<double> v(val(rng()), val(rng()));
            for (int y = y0; y < std::min(int(N), y0 + h); ++y)
                for (int x = x0; x < std::min(int(N), x0 + w); ++x) img(arma::uword(x) + N * arma::uword(y)) += v;
        }
        const forgeCol<forgeComplex<double>> x(img);
        const ImageGrid g(N, N);
        forge::WaveletL1Options o2, o4;
        o2.family = WaveletFamily::Db2;
        o4.family = WaveletFamily::Db4;
        o2.levels = o4.levels = 4;  // the same bands for both
        o2.random_shift = o4.random_shift = false;
        l2 += forge::WaveletL1Penalty<double>(g, 1.0, o2).value(x);
        l4 += forge::WaveletL1Penalty<double>(g, 1.0, o4).value(x);
    }
    INFO("db2 " << l2 << ", db4 " << l4);
    CHECK(l2 < l4);
}
