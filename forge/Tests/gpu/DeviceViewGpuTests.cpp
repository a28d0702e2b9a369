// GPU tests of forgeCol::device_view: a view reads and writes memory owned elsewhere in place, makes no
// host transfers, never frees that memory, and operators and solvers accept views like owning vectors.
#include <complex>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge;
using forge_test::complex_normal;
using forge_test::rel_error;
using forge_test::uniform;
using cvec = forgeCol<forgeComplex<float>>;

TEST_CASE("device_view: in-place arithmetic writes the viewed memory and frees nothing", "[gpu][forgeCol][view]") {
    const uword n = 1000;
    arma::cx_fvec a = complex_normal<float>(n), b = complex_normal<float>(n);
    DeviceBuffer owner(n * sizeof(forgeComplex<float>));  // memory owned by "another library"
    device::copy_to_device(owner.get(), a.memptr(), n * sizeof(forgeComplex<float>));
    cvec gb(b);
    gb.put_on_gpu();

    device::reset_transfer_stats();
    {
        cvec view = cvec::device_view(owner.as<forgeComplex<float>>(), n);
        view += gb;  // in place, on the device
        view *= forgeComplex<float>(2.0f, 0.0f);
        cvec copy = view;  // an owning copy
        CHECK(!copy.is_view());
        CHECK(copy.device_memptr() != owner.as<forgeComplex<float>>());
    }  // the view and the copy are gone; 'owner' must still be valid
    const auto stats = device::transfer_stats();
    CHECK(stats.host_to_device_count == 0);
    CHECK(stats.device_to_host_count == 0);

    arma::cx_fvec back(n);
    device::copy_to_host(back.memptr(), owner.get(), n * sizeof(forgeComplex<float>));
    CHECK(rel_error(back, arma::cx_fvec(2.0f * (a + b))) < 1e-6);
}

TEST_CASE("device_view: Gdft and solve_pwls_pcg on views equal the owning device vectors", "[gpu][forgeCol][view]") {
    const uword N = 16, n2 = N * N, n1 = 400;
    arma::fvec kx = uniform<float>(n1, -8, 8), ky = uniform<float>(n1, -8, 8), kz(n1, arma::fill::zeros);
    arma::fvec ix(n2), iy(n2), iz(n2, arma::fill::zeros), FM = uniform<float>(n2, -300, 300);
    arma::fvec t = arma::linspace<arma::fvec>(0, 5e-3, n1);
    for (uword k = 0; k < n2; ++k) {
        ix[k] = (float(k % N) - N / 2.0f) / N;
        iy[k] = (float(k / N) - N / 2.0f) / N;
    }
    Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, t);
    const arma::cx_fvec x = complex_normal<float>(n2), y = complex_normal<float>(n1);

    cvec gx(x), gy(y);
    gx.put_on_gpu();
    gy.put_on_gpu();
    const cvec viewX = cvec::device_view(gx.device_memptr(), n2);
    const cvec viewY = cvec::device_view(gy.device_memptr(), n1);
    cvec fwdOwned = G * gx, fwdView = G * viewX;
    fwdOwned.get_from_gpu();
    fwdView.get_from_gpu();
    CHECK(rel_error(fwdView.to_arma(), fwdOwned.to_arma()) == 0.0);

    forgeCol<float> W(n1, 1.0f);
    W.put_on_gpu();
    const forgeCol<float> viewW = forgeCol<float>::device_view(W.device_memptr(), n1);
    cvec x0(n2, forgeComplex<float>(0, 0));
    x0.put_on_gpu();
    const cvec viewX0 = cvec::device_view(x0.device_memptr(), n2);
    QuadPenalty<float> R(N, N, 1, 1.0f);
    device::reset_transfer_stats();
    cvec solvedView = solve_pwls_pcg<float>(viewX0, G, viewW, viewY, R, 5);
    CHECK(device::transfer_stats().host_to_device_count == 0);
    CHECK(device::transfer_stats().device_to_host_count == 0);
    CHECK(solvedView.on_gpu());
    CHECK(!solvedView.is_view());
    cvec solvedOwned = solve_pwls_pcg<float>(x0, G, W, gy, R, 5);
    solvedView.get_from_gpu();
    solvedOwned.get_from_gpu();
    CHECK(rel_error(solvedView.to_arma(), solvedOwned.to_arma()) == 0.0);
}
