// GPU tests of the reconstruction stack's operators: penalties CPU == GPU, SENSE and pcSENSE on device data
// (CPU == GPU, adjointness, batched == coil-by-coil, results stay on the device).
#include <cmath>
#include <complex>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"

using namespace forge_test;

namespace {

constexpr double kPi = 3.14159265358979323846;
using FVec = forgeCol<forgeComplex<float>>;

FVec on_gpu(const arma::cx_fvec& v) {
    FVec f(v);
    f.put_on_gpu();
    return f;
}
arma::cx_fvec to_host(FVec v) {
    v.get_from_gpu();
    return v.to_arma();
}

struct Geo {
    arma::uword Nx, Ny, Nz, n2, n1;
    arma::fvec kx, ky, kz, ix, iy, iz, FM, t;
};
Geo make_geo(arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1) {
    Geo g{Nx, Ny, Nz, Nx * Ny * Nz, n1, {}, {}, {}, {}, {}, {}, {}, {}};
    g.kx = uniform<float>(n1, -double(Nx) / 2, double(Nx) / 2);
    g.ky = uniform<float>(n1, -double(Ny) / 2, double(Ny) / 2);
    g.kz = Nz > 1 ? uniform<float>(n1, -double(Nz) / 2, double(Nz) / 2) : arma::fvec(n1, arma::fill::zeros);
    g.t = arma::sort(uniform<float>(n1, 0.0, 12e-3));
    g.ix.set_size(g.n2);
    g.iy.set_size(g.n2);
    g.iz.set_size(g.n2);
    for (arma::uword z = 0; z < Nz; ++z)
        for (arma::uword y = 0; y < Ny; ++y)
            for (arma::uword x = 0; x < Nx; ++x) {
                const arma::uword k = x + Nx * (y + Ny * z);
                g.ix(k) = (float(x) - Nx / 2.0f) / Nx;
                g.iy(k) = (float(y) - Ny / 2.0f) / Ny;
                g.iz(k) = Nz > 1 ? (float(z) - Nz / 2.0f) / Nz : 0.0f;
            }
    g.FM = uniform<float>(g.n2, -2 * kPi * 100, 2 * kPi * 100);
    return g;
}
Gdft<float> gdft(const Geo& g) { return Gdft<float>(g.n1, g.n2, g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t); }

}  // namespace

TEST_CASE("GPU penalties equal the CPU penalties", "[gpu][penalty]") {
    FORGE_INFO_SEED();
    const arma::uword Nx = 33, Ny = 20, Nz = 7, n = Nx * Ny * Nz;
    const arma::cx_fvec x = complex_normal<float>(n), d = complex_normal<float>(n);
    const FVec gx = on_gpu(x), gd = on_gpu(d);
    QuadPenalty<float> Q(Nx, Ny, Nz, 0.7f);
    TVPenalty<float> T(Nx, Ny, Nz, 0.7f, 0.3f);
    TVPenalty<float> T2(Nx, Ny, 1, 0.7f, 0.3f);  // a 2D penalty
    for (const Robject<float>* R : {static_cast<const Robject<float>*>(&Q), static_cast<const Robject<float>*>(&T)}) {
        CHECK(double(R->penalty(gx)) == Approx(double(R->penalty(x))).epsilon(1e-5));
        const FVec g = R->gradient(gx);
        CHECK(g.on_gpu());
        CHECK(rel_error(to_host(g), arma::cx_fvec(R->gradient(x))) < 1e-6);
        CHECK(double(R->denom(gd, gx)) == Approx(double(R->denom(d, x))).epsilon(1e-5));
    }
    const arma::cx_fvec x2 = x.head(Nx * Ny);
    CHECK(rel_error(to_host(T2.gradient(on_gpu(x2))), arma::cx_fvec(T2.gradient(x2))) < 1e-6);
    // double on the device too
    TVPenalty<double> Td(Nx, Ny, Nz, 0.7, 0.3);
    const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
    forgeCol<forgeComplex<double>> gxd(xd);
    gxd.put_on_gpu();
    forgeCol<forgeComplex<double>> gg = Td.gradient(gxd);
    gg.get_from_gpu();
    CHECK(rel_error(gg.to_arma(), arma::cx_vec(Td.gradient(xd))) < 1e-12);
    CHECK(Td.penalty(gxd) == Approx(Td.penalty(xd)).epsilon(1e-12));
}

TEST_CASE("GPU SENSE equals CPU SENSE, stays on the device and is adjoint", "[gpu][sense]") {
    FORGE_INFO_SEED();
    const Geo g = make_geo(16, 12, 4, 1500);
    const arma::uword nc = 6;
    const arma::cx_fvec maps = complex_normal<float>(g.n2 * nc);
    SENSE<float, Gdft<float>> S(gdft(g), maps, nc);
    REQUIRE(S.encoding_operator().gpu_enabled());
    const arma::cx_fvec x = complex_normal<float>(g.n2), y = complex_normal<float>(g.n1 * nc);
    const arma::cx_fvec fx_cpu = S * x, ay_cpu = S / y;

    const FVec gx = on_gpu(x), gy = on_gpu(y);
    const FVec fx = S * gx, ay = S / gy;
    CHECK(fx.on_gpu());
    CHECK(ay.on_gpu());
    CHECK(rel_error(to_host(fx), fx_cpu) < 1e-4);
    CHECK(rel_error(to_host(ay), ay_cpu) < 1e-4);
    check_adjoint(S, forge_test::adjoint_tolerance<float>(), DotScale::Norms, 1, forge::Residency::Device);

    SECTION("batched == coil-by-coil on the GPU") {
        CHECK(rel_error(to_host(S.forward_batched(gx)), to_host(S.forward_coil_by_coil(gx))) < 1e-5);
        CHECK(rel_error(to_host(S.adjoint_batched(gy)), to_host(S.adjoint_coil_by_coil(gy))) < 1e-5);
    }
    SECTION("no host/device copies once the maps are on the device") {
        S.prepare_device();
        forge::device::reset_transfer_stats();
        FVec a = S * gx;
        FVec b = S / gy;
        FVec c = S.forward_coil_by_coil(gx);
        FVec d = S.adjoint_coil_by_coil(gy);
        const auto st = forge::device::transfer_stats();
        CHECK(st.host_to_device_count == 0);
        CHECK(st.device_to_host_count == 0);
    }
}

TEST_CASE("GPU pcSENSE equals CPU pcSENSE and is adjoint", "[gpu][pcsense]") {
    FORGE_INFO_SEED();
    const Geo g = make_geo(16, 16, 1, 1);
    const arma::uword ns = 4, nsamp = 600, nc = 3;
    arma::fmat kx(nsamp, ns), ky(nsamp, ns), kz(nsamp, ns, arma::fill::zeros), t(nsamp, ns), P(g.n2, ns);
    for (arma::uword s = 0; s < ns; ++s) {
        kx.col(s) = uniform<float>(nsamp, -8, 8);
        ky.col(s) = uniform<float>(nsamp, -8, 8);
        t.col(s) = arma::sort(uniform<float>(nsamp, 0, 10e-3));
        P.col(s) = uniform<float>(g.n2, -kPi, kPi);
    }
    const arma::cx_fvec maps = complex_normal<float>(g.n2 * nc);
    pcSENSE<float> A(kx, ky, kz, t, g.ix, g.iy, g.iz, g.FM, maps, P, nc);
    const arma::cx_fvec x = complex_normal<float>(g.n2), y = complex_normal<float>(A.n_data());
    const FVec fx = A * on_gpu(x), ay = A / on_gpu(y);
    CHECK(fx.on_gpu());
    CHECK(ay.on_gpu());
    CHECK(rel_error(to_host(fx), arma::cx_fvec(A * x)) < 1e-4);
    CHECK(rel_error(to_host(ay), arma::cx_fvec(A / y)) < 1e-4);
    check_adjoint(A, forge_test::adjoint_tolerance<float>(), DotScale::Norms, 1, forge::Residency::Device);
    A.set_coil_batching(false);
    CHECK(rel_error(to_host(A * on_gpu(x)), to_host(fx)) < 1e-5);
    A.set_coil_batching(true);

    // One plan serves every shot: the pixel geometry was uploaded once, each shot's samples once.
    const forge::cuda::CudaDftPipeline* plan = A.shot_operator(0).gpu_plan();
    REQUIRE(plan != nullptr);
    for (arma::uword s = 0; s < ns; ++s) CHECK(A.shot_operator(s).gpu_plan() == plan);
    CHECK(plan->pixel_uploads() == 1);
    CHECK(plan->point_uploads() == ns);
    // Switching shots moves no data: applies on device data make no host/device copy at all.
    A.prepare_device();
    const FVec dx = on_gpu(x);
    forge::device::reset_transfer_stats();
    const FVec r = A * dx;
    const FVec q = A / r;
    forge::device::synchronize();
    const auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    CHECK(plan->point_uploads() == ns);
    CHECK(rel_error(to_host(q), arma::cx_fvec(A / arma::cx_fvec(A * x))) < 1e-4);
}
