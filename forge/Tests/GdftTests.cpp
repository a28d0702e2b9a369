// Tests of Gdft on the CPU against references written here, independently of forge (GdftTestProblem.h): float64
// brute-force sums, FFTW on Cartesian grids, an analytic constant-field case; and the operator checks
// (OperatorChecks.h) of Gdft and GdftR2. Fresh random inputs every run (FORGE_TEST_SEED replays).
#include <complex>
#include <type_traits>

#include "GdftTestProblem.h"
#include "OperatorChecks.h"

using namespace gdft_test;

// ============================================================================ brute force
TEMPLATE_TEST_CASE("Gdft: forward and adjoint match a float64 brute-force sum", "[gdft][operators]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const auto G = make_gdft(g);
    REQUIRE(G->n1() == 300);
    REQUIRE(G->n2() == 256);
    CHECK_FALSE(G->has_gradients());
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());

    const CxVec<T1> Gx = *G * x;
    const CxVec<T1> Gty = *G / y;
    REQUIRE(Gx.n_elem == g.n1());
    REQUIRE(Gty.n_elem == g.n2());
    const double ef = forge_test::rel_error(Gx, brute_forward(g, RefGrads{}, d(x)));
    const double ea = forge_test::rel_error(Gty, brute_adjoint(g, RefGrads{}, d(y)));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());

    // The forgeCol overloads compute the same thing.
    const forgeCol<forgeComplex<T1>> fx(x), fy(y);
    CHECK(forge_test::rel_error((*G * fx).to_arma(), Gx) == 0.0);
    CHECK(forge_test::rel_error((*G / fy).to_arma(), Gty) == 0.0);

    // Two vectors back to back through the batch entry points give the two single results.
    const CxVec<T1> x2 = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> xb = arma::join_cols(x, x2);
    const CxVec<T1> yb = arma::join_cols(y, y);
    const CxVec<T1> fb = G->forward_batch(forgeCol<forgeComplex<T1>>(xb), 2).to_arma();
    const CxVec<T1> ab = G->adjoint_batch(forgeCol<forgeComplex<T1>>(yb), 2).to_arma();
    REQUIRE(fb.n_elem == 2 * g.n1());
    REQUIRE(ab.n_elem == 2 * g.n2());
    CHECK(forge_test::rel_error(CxVec<T1>(fb.head(g.n1())), Gx) < tol<T1>());
    CHECK(forge_test::rel_error(CxVec<T1>(fb.tail(g.n1())), brute_forward(g, RefGrads{}, d(x2))) < tol<T1>());
    CHECK(forge_test::rel_error(CxVec<T1>(ab.tail(g.n2())), Gty) < tol<T1>());
}

// ============================================================================ operator checks
// The dot test keeps the bound and the scale of the hand-written test it replaced: |<Gx,y> - <x,G^H y>| / (|Gx||y|)
// below tol<T1>(). normal() is adjoint after forward (no override), so it must match it bit for bit. The batched CPU
// loops sum in another order than the single-vector ones (measured 1.8e-7 float, 4.6e-16 double): a batch equals
// its vectors to rounding, the bound of the Gfft and Gnufft batch tests.
TEMPLATE_TEST_CASE("Gdft and GdftR2: adjoint, normal and batch checks", "[gdft][gdftr2][operators]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const auto G = make_gdft(g);
    const auto R = make_gdftr2(g);
    for (const forge::DftOperator<T1>* op :
         {static_cast<const forge::DftOperator<T1>*>(G.get()), static_cast<const forge::DftOperator<T1>*>(R.get())}) {
        forge_test::check_adjoint(*op, tol<T1>());
        forge_test::check_normal(*op, 0.0);
        forge_test::check_normal(*op, 0.0, 3);
        forge_test::check_batch(*op, 3, std::is_same<T1, float>::value ? 1e-6 : 1e-14);
    }
}

// ============================================================================ conventions
TEMPLATE_TEST_CASE("Gdft: Cartesian grid with zero field map equals the centred FFTW transform",
                   "[gdft][operators][conventions]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    struct Dims {
        uword nx, ny, nz;
    };
    for (const Dims dims : {Dims{16, 12, 1}, Dims{8, 6, 4}}) {
        INFO("grid " << dims.nx << " x " << dims.ny << " x " << dims.nz);
        Geometry<T1> g;
        set_grid(g, dims.nx, dims.ny, dims.nz);
        const uword n = dims.nx * dims.ny * dims.nz;
        // Sample j sits on the Cartesian grid point (u, v, w) with j = u + nx (v + ny w), k = index - N/2.
        g.kx.set_size(n);
        g.ky.set_size(n);
        g.kz.set_size(n);
        for (uword w = 0; w < dims.nz; ++w)
            for (uword v = 0; v < dims.ny; ++v)
                for (uword u = 0; u < dims.nx; ++u) {
                    const uword j = u + dims.nx * (v + dims.ny * w);
                    g.kx[j] = T1(double(u) - double(dims.nx / 2));
                    g.ky[j] = T1(double(v) - double(dims.ny / 2));
                    g.kz[j] = T1(double(w) - double(dims.nz / 2));
                }
        g.FM.zeros(n);
        g.t = forge_test::uniform<T1>(n, 0.0, 10e-3);  // times do not matter without a field map
        const auto G = make_gdft(g);
        const CxVec<T1> x = forge_test::complex_normal<T1>(n);
        const CxVec<T1> y = forge_test::complex_normal<T1>(n);
        const double ef =
            forge_test::rel_error(CxVec<T1>(*G * x), centred_fftw(d(x), dims.nx, dims.ny, dims.nz, FFTW_FORWARD));
        const double ea =
            forge_test::rel_error(CxVec<T1>(*G / y), centred_fftw(d(y), dims.nx, dims.ny, dims.nz, FFTW_BACKWARD));
        INFO("forward vs FFTW_FORWARD " << ef << ", adjoint vs FFTW_BACKWARD " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        // The opposite sign convention is far off (the test pins the sign, not just magnitudes).
        CHECK(forge_test::rel_error(CxVec<T1>(*G * x), centred_fftw(d(x), dims.nx, dims.ny, dims.nz, FFTW_BACKWARD)) >
              0.1);
    }
}

TEMPLATE_TEST_CASE("Gdft: a constant field map f0 multiplies the data by exp(-i f0 t)",
                   "[gdft][operators][conventions]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    auto g = random_geometry<T1>(8, 8, 4, 300);
    const double f0 = double(T1(forge_test::uniform<double>(1, 2 * kPi * 20, 2 * kPi * 80)[0]));  // rad/s
    INFO("f0 = " << f0 << " rad/s");
    g.FM.zeros();
    const auto G0 = make_gdft(g);
    g.FM.fill(T1(f0));
    const auto Gf = make_gdft(g);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());
    arma::cx_vec ph(g.n1());
    for (uword j = 0; j < g.n1(); ++j) ph[j] = std::polar(1.0, -f0 * double(g.t[j]));
    REQUIRE(arma::max(d(g.t)) * f0 > 1.0);  // the phase ramp spans more than a radian

    // Forward: data of the shifted map = data of the zero map times exp(-i f0 t_j).
    const arma::cx_vec ref_f = d(CxVec<T1>(*G0 * x)) % ph;
    const double ef = forge_test::rel_error(CxVec<T1>(*Gf * x), ref_f);
    // Adjoint: G_f0^H y = G_0^H (y exp(+i f0 t)).
    const arma::cx_vec yd = d(y) % arma::conj(ph);
    const double ea = forge_test::rel_error(CxVec<T1>(*Gf / y), d(CxVec<T1>(*G0 / arma::conv_to<CxVec<T1>>::from(yd))));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());
    // Also against the brute force directly (guards against both operators sharing one error).
    CHECK(forge_test::rel_error(CxVec<T1>(*Gf * x), brute_forward(g, RefGrads{}, d(x))) < tol<T1>());
}
