// Time segmentation's phase maps made on the GPU against the host's, the stacked diagonal that takes weights on
// the GPU (its host copy on first host use, NaN refused there), and time-segmented operators built on a machine
// with a GPU applied on the host.
#include <complex>
#include <limits>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"

using namespace forge_test;
using arma::uword;

TEMPLATE_TEST_CASE("GPU segment phase maps equal the host's; a StackedDiagonal of GPU weights applies on both sides",
                   "[gpu][TimeSegmentation][phases]", float, double) {
    using T = TestType;
    using FC = forge::forgeCol<forge::forgeComplex<T>>;
    FORGE_INFO_SEED();
    const arma::Col<T> fm = uniform<T>(3000, -1e5, 1e5);
    const arma::vec tau = arma::linspace<arma::vec>(-1e-3, 3e-2, 7);
    const auto onGpu = forge::TimeSegmentationCore<T>::segment_phase_maps(fm, tau, "phases");
    const FC host = forge::TimeSegmentationCore<T>::segment_phases(fm, tau);
    const auto* a = reinterpret_cast<const std::complex<T>*>(onGpu->weights().host_data());
    const auto* b = reinterpret_cast<const std::complex<T>*>(host.host_data());
    double worst = 0;
    for (uword i = 0; i < host.n_elem; ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    CHECK(worst <= (std::is_same<T, float>::value ? 2e-7 : 1e-10));
    // The diagonal of GPU-made weights applies on the GPU and (after its host copy) on the host alike.
    const forge::StackedDiagonal<T> fromHost(FC(host), tau.n_elem);
    const arma::Col<std::complex<T>> x = complex_normal<T>(fm.n_elem);
    FC xd(x);
    xd.put_on_gpu();
    FC yd = onGpu->forward(xd);
    yd.get_from_gpu();
    CHECK(rel_error(yd.to_arma(), arma::Col<std::complex<T>>(fromHost * x)) <= 1e-6);
    CHECK(rel_error(arma::Col<std::complex<T>>(*onGpu * x), arma::Col<std::complex<T>>(fromHost * x)) <= 1e-6);
    // NaN among GPU weights is refused.
    arma::Col<std::complex<T>> w = arma::conv_to<arma::Col<std::complex<T>>>::from(host.to_arma());
    w[1234] = std::complex<T>(std::numeric_limits<T>::quiet_NaN(), 0);
    FC bad(w);
    bad.put_on_gpu();
    CHECK_THROWS_WITH(forge::StackedDiagonal<T>(std::move(bad), tau.n_elem, "phases"),
                      Catch::Matchers::Contains("NaN or Inf"));
}

TEST_CASE("TimeSegmentation built on a machine with a GPU applies on the host as on the GPU",
          "[gpu][TimeSegmentation][phases]") {
    FORGE_INFO_SEED();
    const uword n1 = 600, N = 12, n2 = N * N;
    const arma::fvec kx = uniform<float>(n1, -6, 6), ky = uniform<float>(n1, -6, 6), kz(n1, arma::fill::zeros);
    arma::fvec ix(n2), iy(n2), iz(n2, arma::fill::zeros);
    for (uword k = 0; k < n2; ++k) ix[k] = (float(k % N) - 6) / 12, iy[k] = (float(k / N) - 6) / 12;
    const arma::fvec fm = uniform<float>(n2, -600, 600), t = arma::linspace<arma::fvec>(0, 8e-3, n1);
    const forge::Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, arma::fvec(n2, arma::fill::zeros),
                               arma::fvec(n1, arma::fill::zeros));
    const forge::TimeSegmentation<float, forge::Gdft<float>> S(G, fm, t, 4, forge::TSInterp::MinMax);
    const arma::cx_fvec x = complex_normal<float>(n2);
    const arma::cx_fvec onHost = S * x;
    forge::forgeCol<forge::forgeComplex<float>> xd(x);
    xd.put_on_gpu();
    auto yd = S.forward(xd);
    yd.get_from_gpu();
    CHECK(rel_error(yd.to_arma(), onHost) <= 1e-5);
}
