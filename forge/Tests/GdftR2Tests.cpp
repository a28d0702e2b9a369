// Tests of GdftR2 on the CPU: the sinc factor of the field map's gradients against a float64 brute-force sum, the
// zero-field case against Gdft, and the gradient maps against independent finite differences (GdftTestProblem.h).
#include <complex>

#include "GdftTestProblem.h"

using namespace gdft_test;

// ============================================================================ brute force
TEMPLATE_TEST_CASE("GdftR2: forward and adjoint match a float64 brute-force sum with the sinc factor",
                   "[gdftr2][operators]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());

    SECTION("gradients computed from the field map") {
        const auto G = make_gdftr2(g);
        CHECK(G->has_gradients());
        const RefGrads r = ref_gradients(d(g.FM), g.nx, g.ny, g.nz);
        // The random field map makes the sinc factor matter: it is far from 1 for many pairs.
        REQUIRE(arma::max(arma::abs(r.gx)) * 10e-3 > 0.2);
        const double ef = forge_test::rel_error(CxVec<T1>(*G * x), brute_forward(g, r, d(x)));
        const double ea = forge_test::rel_error(CxVec<T1>(*G / y), brute_adjoint(g, r, d(y)));
        INFO("forward rel error " << ef << ", adjoint rel error " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        // ... and differs clearly from plain Gdft on the same geometry.
        CHECK(forge_test::rel_error(CxVec<T1>(*G * x), CxVec<T1>(*make_gdft(g) * x)) > 1e-2);
    }
    SECTION("gradients given by the caller") {
        RefGrads r;
        r.nx = double(g.nx);
        r.ny = double(g.ny);
        r.nz = double(g.nz);
        const arma::Col<T1> gx = forge_test::uniform<T1>(g.n2(), -40, 40);
        const arma::Col<T1> gy = forge_test::uniform<T1>(g.n2(), -40, 40);
        const arma::Col<T1> gz = forge_test::uniform<T1>(g.n2(), -40, 40);
        r.gx = d(gx);
        r.gy = d(gy);
        r.gz = d(gz);
        const forge::GdftR2<T1> G(g.n1(), g.n2(), g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t, gx, gy, gz, g.nx, g.ny,
                                  g.nz);
        const double ef = forge_test::rel_error(CxVec<T1>(G * x), brute_forward(g, r, d(x)));
        const double ea = forge_test::rel_error(CxVec<T1>(G / y), brute_adjoint(g, r, d(y)));
        INFO("forward rel error " << ef << ", adjoint rel error " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        const forgeCol<forgeComplex<T1>> fx(x);
        CHECK(forge_test::rel_error((G * fx).to_arma(), CxVec<T1>(G * x)) == 0.0);
    }
}

TEMPLATE_TEST_CASE("GdftR2: zero field map equals Gdft times the per-sample voxel sinc", "[gdftr2][operators]", float,
                   double) {
    // With FM = 0 the gradient maps vanish and B(j,k) = sincPG(kx_j/numX) sincPG(ky_j/numY) sincPG(kz_j/numZ)
    // no longer depends on the pixel: GdftR2 = diag(B_j) Gdft. For k = 0 samples (B = 1) they agree exactly.
    using T1 = TestType;
    FORGE_INFO_SEED();
    auto g = random_geometry<T1>(8, 8, 4, 300);
    g.FM.zeros();
    g.kx[0] = g.ky[0] = g.kz[0] = T1(0);  // the k-space centre: B = 1
    const auto G = make_gdft(g);
    const auto R = make_gdftr2(g);
    arma::Col<T1> gx, gy, gz;
    forge::GdftR2<T1>::field_map_gradients(g.FM, g.nx, g.ny, g.nz, gx, gy, gz);
    CHECK(arma::norm(d(gx)) + arma::norm(d(gy)) + arma::norm(d(gz)) == 0.0);

    arma::vec b(g.n1());
    for (uword j = 0; j < g.n1(); ++j)
        b[j] = sinc_ref(double(g.kx[j]) / g.nx) * sinc_ref(double(g.ky[j]) / g.ny) * sinc_ref(double(g.kz[j]) / g.nz);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());
    const CxVec<T1> Rx = *R * x, Gx = *G * x;
    const double ef = forge_test::rel_error(Rx, arma::cx_vec(d(Gx) % b));
    const double ea =
        forge_test::rel_error(CxVec<T1>(*R / y), d(CxVec<T1>(*G / arma::conv_to<CxVec<T1>>::from(d(y) % b))));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());
    CHECK(std::abs(cxd(Rx[0]) - cxd(Gx[0])) <= tol<T1>() * std::abs(cxd(Gx[0])));
}

// ============================================================================ gradient maps
TEMPLATE_TEST_CASE("GdftR2: field-map gradients match an independent finite difference", "[gdftr2][operators]", float,
                   double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const double rtol = std::is_same<T1, float>::value ? 1e-6 : 1e-14;
    struct Dims {
        uword nx, ny, nz;
    };
    for (const Dims dm : {Dims{5, 4, 3}, Dims{6, 5, 1}, Dims{1, 7, 2}, Dims{2, 1, 1}, Dims{1, 1, 1}}) {
        INFO("grid " << dm.nx << " x " << dm.ny << " x " << dm.nz);
        const uword n = dm.nx * dm.ny * dm.nz;
        // Random map: compare with the independent differences.
        const arma::Col<T1> fm = forge_test::uniform<T1>(n, -400, 400);
        arma::Col<T1> gx, gy, gz;
        forge::GdftR2<T1>::field_map_gradients(fm, dm.nx, dm.ny, dm.nz, gx, gy, gz);
        REQUIRE(gx.n_elem == n);
        REQUIRE(gy.n_elem == n);
        REQUIRE(gz.n_elem == n);
        const RefGrads r = ref_gradients(d(fm), dm.nx, dm.ny, dm.nz);
        const double scale = 800 / (2 * kPi);
        CHECK(arma::max(arma::abs(d(gx) - r.gx)) <= rtol * scale);
        CHECK(arma::max(arma::abs(d(gy) - r.gy)) <= rtol * scale);
        CHECK(arma::max(arma::abs(d(gz) - r.gz)) <= rtol * scale);
        if (dm.nx == 1) CHECK(arma::norm(d(gx)) == 0.0);
        if (dm.ny == 1) CHECK(arma::norm(d(gy)) == 0.0);
        if (dm.nz == 1) CHECK(arma::norm(d(gz)) == 0.0);

        // A linear ramp a x + b y + c z: every difference, faces included, is exactly (a, b, c)/(2 pi).
        // Any wrap into the next row or slice would break this at the faces.
        const double a = 13.0, bb = -7.0, c = 29.0;
        arma::Col<T1> ramp(n);
        for (uword z = 0; z < dm.nz; ++z)
            for (uword y = 0; y < dm.ny; ++y)
                for (uword x = 0; x < dm.nx; ++x) ramp[x + dm.nx * (y + dm.ny * z)] = T1(a * x + bb * y + c * z);
        forge::GdftR2<T1>::field_map_gradients(ramp, dm.nx, dm.ny, dm.nz, gx, gy, gz);
        const double ex = dm.nx > 1 ? a / (2 * kPi) : 0.0, ey = dm.ny > 1 ? bb / (2 * kPi) : 0.0,
                     ez = dm.nz > 1 ? c / (2 * kPi) : 0.0;
        CHECK(arma::max(arma::abs(d(gx) - ex)) <= rtol * 10);
        CHECK(arma::max(arma::abs(d(gy) - ey)) <= rtol * 10);
        CHECK(arma::max(arma::abs(d(gz) - ez)) <= rtol * 10);
    }
    // Wrong FM length for the grid.
    arma::Col<T1> gx, gy, gz;
    CHECK_BAD_ARG(forge::GdftR2<T1>::field_map_gradients(arma::Col<T1>(11), 3, 2, 2, gx, gy, gz), names("field_map"));
}
