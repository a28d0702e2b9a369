// GPU solver tests: solve_pwls_pcg on device-resident data with field-corrected SENSE equals the CPU
// solve, keeps its result on the device, and makes no host/device vector copies (transfer counter);
// TV on the device; recon_solve's GPU paths (A and A^H per iteration; the normal equations; data_scale); the
// circulant preconditioner on the device against the host, alone and in PCG.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Solvers/CirculantPreconditioner.h"
#include "forge/Solvers/recon_solve.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge_test;

namespace {
constexpr double kPi = 3.14159265358979323846;
using FVec = forgeCol<forgeComplex<float>>;

struct Setup {
    arma::uword N = 24, n2 = 576, n1 = 1200, nc = 4;
    arma::fvec kx, ky, kz, ix, iy, iz, FM, t;
    arma::cx_fvec maps, y;
};
Setup make_setup() {
    Setup s;
    s.kx = uniform<float>(s.n1, -double(s.N) / 2, double(s.N) / 2);
    s.ky = uniform<float>(s.n1, -double(s.N) / 2, double(s.N) / 2);
    s.kz.zeros(s.n1);
    s.t = arma::linspace<arma::fvec>(0, 10e-3, s.n1);
    s.ix.set_size(s.n2);
    s.iy.set_size(s.n2);
    s.iz.zeros(s.n2);
    for (arma::uword y = 0; y < s.N; ++y)
        for (arma::uword x = 0; x < s.N; ++x) {
            s.ix(x + s.N * y) = (float(x) - s.N / 2.0f) / s.N;
            s.iy(x + s.N * y) = (float(y) - s.N / 2.0f) / s.N;
        }
    s.FM = uniform<float>(s.n2, -2 * kPi * 100, 2 * kPi * 100);
    s.maps = complex_normal<float>(s.n2 * s.nc);
    s.y = complex_normal<float>(s.n1 * s.nc);
    return s;
}
}  // namespace

TEST_CASE("Device PCG with SENSE equals the CPU solve and makes no host/device copies", "[gpu][solver][pcg]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    const arma::fvec W = uniform<float>(s.n1 * s.nc, 0.5, 1.5);
    const arma::cx_fvec x0(s.n2, arma::fill::zeros);
    const arma::uword niter = 15;
    const arma::cx_fvec xcpu = solve_pwls_pcg<float>(x0, S, W, s.y, R, niter);

    FVec gx0(x0), gy(s.y);
    forgeCol<float> gW(W);
    gx0.put_on_gpu();
    gy.put_on_gpu();
    gW.put_on_gpu();
    S.prepare_device();
    int calls = 0;
    PcgOptions<float> opts;
    opts.callback = [&](const PcgIterationInfo&) { ++calls; };
    forge::device::reset_transfer_stats();
    FVec xg = solve_pwls_pcg<float>(gx0, S, gW, gy, R, niter, opts);
    const auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    CHECK(calls == int(niter));
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(xg.to_arma(), xcpu) < 5e-3);
}

TEST_CASE("Device PCG with TVPenalty equals the CPU solve", "[gpu][solver][tv]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    TVPenalty<float> R(s.N, s.N, 1, 20.0f, 0.5f);
    const arma::fvec W(s.n1 * s.nc, arma::fill::ones);
    const arma::cx_fvec x0(s.n2, arma::fill::zeros);
    const arma::cx_fvec xcpu = solve_pwls_pcg<float>(x0, S, W, s.y, R, 10);
    FVec gx0(x0), gy(s.y);
    forgeCol<float> gW(W);
    gx0.put_on_gpu();
    gy.put_on_gpu();
    gW.put_on_gpu();
    FVec xg = solve_pwls_pcg<float>(gx0, S, gW, gy, R, 10);
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(xg.to_arma(), xcpu) < 5e-3);
}

TEST_CASE("recon_solve runs on the GPU and matches the host", "[gpu][solver][recon_solve]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    ReconOptions<float> host, gpu;
    host.device = ReconDevice::Host;
    gpu.device = ReconDevice::GPU;
    const arma::cx_fvec a = recon_solve<float>(s.y, S, R, 8, host);
    const arma::cx_fvec b = recon_solve<float>(s.y, S, R, 8, gpu);
    CHECK(rel_error(b, a) < 5e-3);
}

TEST_CASE("recon_solve's normal-equations path runs on the GPU and matches the host and the other path",
          "[gpu][solver][recon_solve][normal]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    const forge::OperatorPtr<float> S = forge::share(SENSE<float, Gdft<float>>(G, s.maps, s.nc));
    const forge::NormalOf<float> N(S);  // S^H S exactly: the same minimiser as the other path
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    ReconOptions<float> host, gpu;
    host.device = ReconDevice::Host;
    gpu.device = ReconDevice::GPU;
    const arma::cx_fvec a = recon_solve<float>(s.y, *S, N, R, 8, host);
    const arma::cx_fvec b = recon_solve<float>(s.y, *S, N, R, 8, gpu);
    const arma::cx_fvec c = recon_solve<float>(s.y, *S, R, 8, gpu);
    CHECK(rel_error(b, a) < 5e-3);
    CHECK(rel_error(b, c) < 5e-3);
}

TEST_CASE("recon_solve's data_scale on the GPU gives the image of the data scaled on the host, on both paths",
          "[gpu][solver][recon_solve][scale]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    const forge::OperatorPtr<float> S = forge::share(SENSE<float, Gdft<float>>(G, s.maps, s.nc));
    const forge::NormalOf<float> N(S);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    ReconOptions<float> plain, scaled;
    plain.device = scaled.device = ReconDevice::GPU;
    scaled.data_scale = 0.0625f;  // divided on the device after the upload
    const arma::cx_fvec y16 = s.y * 0.0625f;
    // (equal up to the order of the device's sums, which may differ between runs: 1e-6 against PCG's 1e-3)
    CHECK(rel_error(recon_solve<float>(s.y, *S, N, R, 8, scaled), recon_solve<float>(y16, *S, N, R, 8, plain)) < 1e-6);
    CHECK(rel_error(recon_solve<float>(s.y, *S, R, 8, scaled), recon_solve<float>(y16, *S, R, 8, plain)) < 1e-6);
}

TEST_CASE("CirculantPreconditioner on the GPU equals the host, and so does the PCG it preconditions",
          "[gpu][solver][preconditioner]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    const arma::uword p = s.N / 2 + s.N * (s.N / 2);
    arma::cx_fvec e(s.n2, arma::fill::zeros);
    e[p] = 1;
    const arma::cx_fvec h = arma::cx_fvec(S / (S * e)) + 0.5f * R.gradient(FVec(e)).to_arma();
    arma::uvec support(s.n2, arma::fill::ones);
    support.head(s.N * 3).zeros();  // three rows outside
    for (const bool masked : {false, true}) {
        INFO("support " << masked);
        const CirculantPreconditioner<float> M(forge::ImageGrid(s.N, s.N), h, p, kCirculantFloor,
                                               masked ? support : arma::uvec());
        const FVec g(complex_normal<float>(s.n2));
        FVec gd = g;
        gd.put_on_gpu();
        FVec zd = M(gd);
        REQUIRE(zd.on_gpu());
        zd.get_from_gpu();
        const arma::cx_fvec zh = M(g).to_arma();
        CHECK(rel_error(zd.to_arma(), zh) < 1e-5);
    }
    PcgOptions<float> opts;
    opts.preconditioner = CirculantPreconditioner<float>(forge::ImageGrid(s.N, s.N), h, p);
    const arma::fvec W(s.n1 * s.nc, arma::fill::ones);
    const arma::cx_fvec x0(s.n2, arma::fill::zeros);
    const arma::cx_fvec xcpu = solve_pwls_pcg<float>(x0, S, W, s.y, R, 12, opts);
    FVec gx0(x0), gy(s.y);
    forgeCol<float> gW(W);
    gx0.put_on_gpu();
    gy.put_on_gpu();
    gW.put_on_gpu();
    FVec xg = solve_pwls_pcg<float>(gx0, S, gW, gy, R, 12, opts);
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(xg.to_arma(), xcpu) < 5e-3);
}

TEST_CASE("Device solver refuses mixed host/device arguments", "[gpu][solver][errors]") {
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f);
    FVec gx0(arma::cx_fvec(s.n2, arma::fill::zeros)), gy(s.y);
    forgeCol<float> W(arma::fvec(s.n1 * s.nc, arma::fill::ones));  // stays on the host
    gx0.put_on_gpu();
    gy.put_on_gpu();
    CHECK_THROWS_AS(solve_pwls_pcg<float>(gx0, S, W, gy, R, 3), forge::residency_error);
}

TEST_CASE("Device PCG does not depend on the scale of the data and the maps", "[gpu][solver][scale]") {
    FORGE_INFO_SEED();
    const Setup s = make_setup();
    Gdft<float> G(s.n1, s.n2, s.kx, s.ky, s.kz, s.ix, s.iy, s.iz, s.FM, s.t);
    SENSE<float, Gdft<float>> S(G, s.maps, s.nc);
    // maps x1e5 and data x1e8: the image x1e3 when beta (relative to the data curvature) is x1e10
    SENSE<float, Gdft<float>> Sb(G, arma::cx_fvec(s.maps * 1e5f), s.nc);
    QuadPenalty<float> R(s.N, s.N, 1, 5.0f), Rb(s.N, s.N, 1, 5e10f);
    const arma::cx_fvec x0(s.n2, arma::fill::zeros);
    const arma::cx_fvec xcpu = solve_pwls_pcg<float>(x0, S, arma::fvec(s.n1 * s.nc, arma::fill::ones), s.y, R, 10);
    FVec gx0(x0), gy(arma::cx_fvec(s.y * 1e8f));
    forgeCol<float> gW(arma::fvec(s.n1 * s.nc, arma::fill::ones));
    gx0.put_on_gpu();
    gy.put_on_gpu();
    gW.put_on_gpu();
    Sb.prepare_device();
    forge::device::reset_transfer_stats();
    FVec xg = solve_pwls_pcg<float>(gx0, Sb, gW, gy, Rb, 10);
    const auto st = forge::device::transfer_stats();  // the scaling is done on the device too
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(arma::cx_fvec(xg.to_arma() / 1e3f), xcpu) < 5e-3);
    // maps x1e18 on the device: ||S d||^2 leaves float; an error, never a quiet stop
    SENSE<float, Gdft<float>> Sh(G, arma::cx_fvec(s.maps * 1e18f), s.nc);
    CHECK_THROWS_AS(solve_pwls_pcg<float>(gx0, Sh, gW, gy, R, 5), forge::overflow_error);
}
