// GPU proximal penalties and solvers: each prox, value and wavelet transform on device-resident vectors equals the
// host computation (same formulas, float and double), the results stay on the device, and FISTA / POGM / ADMM on the
// device equal their host solves with no host/device vector copies inside the loop (the power iteration's start
// vector is the one upload, made once).
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"
#include "forge/Solvers/solve_admm.h"
#include "forge/Solvers/solve_fista.h"
#include "forge/Solvers/solve_pogm.h"

using namespace forge_test;
using forge::ImageGrid;

namespace {
template <typename T>
using CVec = forgeCol<forgeComplex<T>>;

template <typename T>
CVec<T> on_device(const arma::Col<std::complex<T>>& v) {
    CVec<T> f(v);
    f.put_on_gpu();
    return f;
}
template <typename T>
arma::Col<std::complex<T>> to_host(CVec<T> v) {
    REQUIRE(v.on_gpu());
    v.get_from_gpu();
    return v.to_arma();
}
template <typename T>
double tol_for() {
    return std::is_same<T, float>::value ? 1e-5 : 1e-12;
}
}  // namespace

TEMPLATE_TEST_CASE("Device wavelet transforms equal the host ones (1D, 2D, 3D)", "[gpu][prox][wavelet]", float,
                   double) {
    FORGE_INFO_SEED();
    const ImageGrid grids[] = {ImageGrid(64), ImageGrid(32, 16), ImageGrid(16, 8, 8)};
    for (const ImageGrid& g : grids)
        for (auto f : {forge::WaveletFamily::Haar, forge::WaveletFamily::Db2, forge::WaveletFamily::Db4}) {
            forge::OrthoWavelet<TestType> psi(g, f);
            const arma::Col<std::complex<TestType>> x = complex_normal<TestType>(g.n_pixels());
            const CVec<TestType> hx(x), dx = on_device(x);
            CHECK(rel_error(to_host(psi.forward(dx)), psi.forward(hx).to_arma()) < tol_for<TestType>());
            CHECK(rel_error(to_host(psi.inverse(dx)), psi.inverse(hx).to_arma()) < tol_for<TestType>());
        }
}

TEMPLATE_TEST_CASE("Device proxes and values equal the host ones", "[gpu][prox][penalty]", float, double) {
    FORGE_INFO_SEED();
    const ImageGrid g(32, 24, 4);
    const arma::Col<std::complex<TestType>> v = complex_normal<TestType>(g.n_pixels());
    const TestType t = TestType(0.7);
    forge::L1Penalty<TestType> l1(g, TestType(0.5));
    forge::WaveletL1Options wo;
    wo.seed = 3;
    forge::WaveletL1Penalty<TestType> wh(g, TestType(0.4), wo), wd(g, TestType(0.4), wo);  // same shifts
    forge::ExactTVPenalty<TestType> tvi_h(g, TestType(0.3)), tvi_d(g, TestType(0.3));
    forge::ExactTVPenalty<TestType> tva_h(g, TestType(0.3), {forge::TVNorm::Anisotropic, 10, true}),
        tva_d(g, TestType(0.3), {forge::TVNorm::Anisotropic, 10, true});
    const std::pair<const forge::ProxPenalty<TestType>*, const forge::ProxPenalty<TestType>*> pairs[] = {
        {&l1, &l1}, {&wh, &wd}, {&tvi_h, &tvi_d}, {&tva_h, &tva_d}};
    for (const auto& p : pairs) {
        INFO(p.first->name());
        for (int call = 0; call < 3; ++call) {  // repeated calls: the wavelet shifts and the TV warm start advance
            CVec<TestType> h(v), d = on_device(v);
            p.first->prox(h, t);
            p.second->prox(d, t);
            CHECK(rel_error(to_host(d), h.to_arma()) < 10 * tol_for<TestType>());
        }
        const CVec<TestType> d = on_device(v);
        CHECK(std::abs(p.second->value(d) - p.first->value(CVec<TestType>(v))) <
              tol_for<TestType>() * p.first->value(CVec<TestType>(v)));
    }
}

TEST_CASE("Device FISTA, POGM and ADMM equal the host solves and copy nothing inside the loop", "[gpu][prox][solver]") {
    FORGE_INFO_SEED();
    const arma::uword N = 16, n2 = N * N, n1 = 700;
    const arma::fvec kx = uniform<float>(n1, -8, 8), ky = uniform<float>(n1, -8, 8), kz(n1, arma::fill::zeros);
    arma::fvec ix(n2), iy(n2), iz(n2, arma::fill::zeros), FM(n2, arma::fill::zeros), tt(n1, arma::fill::zeros);
    for (arma::uword y = 0; y < N; ++y)
        for (arma::uword x = 0; x < N; ++x) {
            ix(x + N * y) = (float(x) - N / 2.0f) / N;
            iy(x + N * y) = (float(y) - N / 2.0f) / N;
        }
    Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, tt);
    const arma::cx_fvec y = complex_normal<float>(n1), x0(n2, arma::fill::zeros);
    const ImageGrid g(N, N);
    for (bool ones : {true, false}) {
        const arma::fvec W = ones ? arma::fvec(n1, arma::fill::ones) : uniform<float>(n1, 0.5, 1.5);
        for (int method = 0; method < 3; ++method)
            for (int which = 0; which < 2; ++which) {
                INFO("method " << method << " penalty " << which << " unit weights " << ones);
                forge::WaveletL1Options wo;
                wo.family = forge::WaveletFamily::Db2;
                wo.random_shift = method != 2;  // ADMM needs a fixed penalty
                forge::WaveletL1Penalty<float> wh(g, 2.0f, wo), wd(g, 2.0f, wo);
                forge::ExactTVPenalty<float> th(g, 2.0f), td(g, 2.0f);
                const forge::ProxPenalty<float>& Rh = which ? static_cast<const forge::ProxPenalty<float>&>(th) : wh;
                const forge::ProxPenalty<float>& Rd = which ? static_cast<const forge::ProxPenalty<float>&>(td) : wd;
                auto solve = [&](const auto& x, const auto& w, const auto& yy, const forge::ProxPenalty<float>& R,
                                 arma::uword niter) {
                    if (method == 0) return forge::solve_fista<float>(x, G, w, yy, R, niter);
                    if (method == 1) return forge::solve_pogm<float>(x, G, w, yy, R, niter);
                    return forge::solve_admm<float>(x, G, w, yy, R, niter);
                };
                const arma::cx_fvec xh = solve(x0, W, y, Rh, 15);
                CVec<float> dx0 = on_device(x0), dy = on_device(y);
                forgeCol<float> dW(W);
                dW.put_on_gpu();
                G.prepare_device();
                forge::device::reset_transfer_stats();
                CVec<float> xd = solve(dx0, dW, dy, Rd, 15);
                const auto st = forge::device::transfer_stats();
                CHECK(st.host_to_device_count <= 1);  // the power iteration's start vector
                CHECK(st.device_to_host_count == 0);
                CHECK(rel_error(to_host(xd), xh) < 2e-3);
            }
    }
}
