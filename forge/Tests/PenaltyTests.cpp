// Penalty tests: values against independent float64 references built from arma::cx_cube differences,
// gradients against central finite differences of the penalty value, curvature (denom) against the second
// difference of the penalty, float against double, and argument checks.
#include <array>
#include <cmath>
#include <complex>
#include <memory>

#include "TestHelpers.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"

using namespace forge_test;

namespace {

// All first differences (forward, no wrap) of an Nx x Ny x Nz image stored x fastest, as one vector.
arma::cx_vec all_differences(const arma::cx_vec& x, arma::uword Nx, arma::uword Ny, arma::uword Nz) {
    arma::cx_cube X(x.memptr(), Nx, Ny, Nz);  // copies; arma cubes are column-major = x fastest
    arma::cx_vec out;
    if (Nx > 1) {
        arma::cx_cube d = X.rows(1, Nx - 1) - X.rows(0, Nx - 2);
        out = arma::join_cols(out, arma::vectorise(d));
    }
    if (Ny > 1) {
        arma::cx_cube d = X.cols(1, Ny - 1) - X.cols(0, Ny - 2);
        out = arma::join_cols(out, arma::vectorise(d));
    }
    if (Nz > 1) {
        arma::cx_cube d = X.slices(1, Nz - 1) - X.slices(0, Nz - 2);
        out = arma::join_cols(out, arma::vectorise(d));
    }
    return out;
}

double ref_quad(const arma::cx_vec& x, arma::uword Nx, arma::uword Ny, arma::uword Nz, double beta) {
    arma::cx_vec d = all_differences(x, Nx, Ny, Nz);
    return 0.5 * beta * std::pow(arma::norm(d), 2);
}
double ref_tv(const arma::cx_vec& x, arma::uword Nx, arma::uword Ny, arma::uword Nz, double beta, double delta) {
    arma::cx_vec d = all_differences(x, Nx, Ny, Nz);
    double s = 0;
    for (auto v : d) s += delta * delta * (std::sqrt(1.0 + std::norm(v) / (delta * delta)) - 1.0);
    return beta * s;
}

template <typename P>
void check_gradient_by_finite_differences(const P& R, arma::uword n, double tol) {
    const arma::cx_vec x = complex_normal<double>(n);
    const arma::cx_vec v = complex_normal<double>(n);
    const arma::cx_vec g = R.gradient(x);
    const double h = 1e-5;
    const double fd = (R.penalty(arma::cx_vec(x + h * v)) - R.penalty(arma::cx_vec(x - h * v))) / (2 * h);
    const double an = arma::cdot(g, v).real();  // Re(g^H v)
    INFO("finite difference " << fd << " vs gradient " << an);
    CHECK(std::abs(fd - an) <= tol * std::abs(an));
    // The imaginary direction too (a gradient that ignored Im(x) would fail here).
    const arma::cx_vec iv = std::complex<double>(0, 1) * v;
    const double fdi = (R.penalty(arma::cx_vec(x + h * iv)) - R.penalty(arma::cx_vec(x - h * iv))) / (2 * h);
    CHECK(std::abs(fdi - arma::cdot(g, iv).real()) <= tol * std::abs(fdi));
}

}  // namespace

TEST_CASE("QuadPenalty value matches a float64 difference reference (2D and 3D)", "[penalty][quad]") {
    FORGE_INFO_SEED();
    for (auto dims : {std::array<arma::uword, 3>{7, 5, 1}, std::array<arma::uword, 3>{6, 5, 4},
                      std::array<arma::uword, 3>{9, 1, 1}}) {
        const arma::uword Nx = dims[0], Ny = dims[1], Nz = dims[2], n = Nx * Ny * Nz;
        const double beta = uniform<double>(1, 0.1, 3.0)[0];
        QuadPenalty<double> R(Nx, Ny, Nz, beta);
        const arma::cx_vec x = complex_normal<double>(n);
        const double ref = ref_quad(x, Nx, Ny, Nz, beta);
        CHECK(std::abs(R.penalty(x) - ref) <= 1e-12 * ref);
        // Gradient = beta C^H C x: <g, x> = beta ||Cx||^2 = 2 R(x).
        CHECK(std::abs(arma::cdot(R.gradient(x), x).real() - 2 * ref) <= 1e-10 * ref);
    }
}

TEST_CASE("QuadPenalty of a constant image is zero and its gradient vanishes", "[penalty][quad]") {
    QuadPenalty<double> R(6, 5, 3, 2.0);
    arma::cx_vec x(90);
    x.fill(std::complex<double>(1.7, -0.3));
    CHECK(R.penalty(x) == Approx(0.0).margin(1e-12));
    CHECK(arma::norm(R.gradient(x)) < 1e-12);
}

TEST_CASE("TVPenalty value matches the Charbonnier reference", "[penalty][tv]") {
    FORGE_INFO_SEED();
    for (auto dims : {std::array<arma::uword, 3>{8, 6, 1}, std::array<arma::uword, 3>{5, 4, 3}}) {
        const arma::uword Nx = dims[0], Ny = dims[1], Nz = dims[2], n = Nx * Ny * Nz;
        const double beta = 0.7, delta = uniform<double>(1, 0.05, 2.0)[0];
        TVPenalty<double> R(Nx, Ny, Nz, beta, delta);
        const arma::cx_vec x = complex_normal<double>(n);
        const double ref = ref_tv(x, Nx, Ny, Nz, beta, delta);
        CHECK(std::abs(R.penalty(x) - ref) <= 1e-12 * ref);
    }
}

TEST_CASE("TVPenalty approaches beta*delta*sum|d| for delta << |d| and QuadPenalty for delta >> |d|", "[penalty][tv]") {
    FORGE_INFO_SEED();
    const arma::uword Nx = 6, Ny = 5;
    const arma::cx_vec x = complex_normal<double>(Nx * Ny);
    const arma::cx_vec d = all_differences(x, Nx, Ny, 1);
    const double l1 = arma::accu(arma::abs(d));
    TVPenalty<double> small(Nx, Ny, 1, 1.0, 1e-4);
    CHECK(small.penalty(x) / 1e-4 == Approx(l1).epsilon(1e-3));
    TVPenalty<double> large(Nx, Ny, 1, 1.0, 1e4);
    QuadPenalty<double> quad(Nx, Ny, 1, 1.0);
    CHECK(large.penalty(x) == Approx(quad.penalty(x)).epsilon(1e-6));
}

TEST_CASE("Penalty gradients match finite differences of the penalty value", "[penalty][gradient]") {
    FORGE_INFO_SEED();
    SECTION("QuadPenalty 2D") { check_gradient_by_finite_differences(QuadPenalty<double>(8, 7, 1, 1.3), 56, 1e-6); }
    SECTION("QuadPenalty 3D") { check_gradient_by_finite_differences(QuadPenalty<double>(5, 4, 3, 0.4), 60, 1e-6); }
    SECTION("TVPenalty 2D") { check_gradient_by_finite_differences(TVPenalty<double>(8, 7, 1, 1.3, 0.3), 56, 1e-6); }
    SECTION("TVPenalty 3D") { check_gradient_by_finite_differences(TVPenalty<double>(5, 4, 3, 0.4, 2.0), 60, 1e-6); }
}

TEST_CASE("Penalty Denom is the curvature along the direction", "[penalty][denom]") {
    FORGE_INFO_SEED();
    const arma::uword Nx = 7, Ny = 6, Nz = 2, n = Nx * Ny * Nz;
    const arma::cx_vec x = complex_normal<double>(n);
    const arma::cx_vec d = complex_normal<double>(n);
    auto second_difference = [&](const Robject<double>& R, double h) {
        return (R.penalty(arma::cx_vec(x + h * d)) + R.penalty(arma::cx_vec(x - h * d)) - 2 * R.penalty(x)) / (h * h);
    };
    QuadPenalty<double> Q(Nx, Ny, Nz, 0.9);
    // Quadratic: Denom = beta ||C d||^2 exactly = the second derivative.
    const double cd2 = std::pow(arma::norm(all_differences(d, Nx, Ny, Nz)), 2);
    CHECK(Q.denom(d, x) == Approx(0.9 * cd2).epsilon(1e-12));
    CHECK(Q.denom(d, x) == Approx(second_difference(Q, 1e-3)).epsilon(1e-6));
    // Charbonnier: Denom is the Huber majorizer's curvature, >= the true curvature, and equal to
    // beta sum w(|Cx|) |Cd|^2 with w = 1/sqrt(1 + |Cx|^2/delta^2).
    const double delta = 0.5;
    TVPenalty<double> T(Nx, Ny, Nz, 0.9, delta);
    const arma::cx_vec cx = all_differences(x, Nx, Ny, Nz), cdv = all_differences(d, Nx, Ny, Nz);
    double ref = 0;
    for (arma::uword i = 0; i < cx.n_elem; ++i)
        ref += std::norm(cdv[i]) / std::sqrt(1.0 + std::norm(cx[i]) / (delta * delta));
    CHECK(T.denom(d, x) == Approx(0.9 * ref).epsilon(1e-12));
    CHECK(T.denom(d, x) >= second_difference(T, 1e-3) * (1 - 1e-6));
}

TEST_CASE("Float penalties agree with double penalties", "[penalty][float]") {
    FORGE_INFO_SEED();
    const arma::uword Nx = 16, Ny = 12, Nz = 3, n = Nx * Ny * Nz;
    const arma::cx_vec xd = complex_normal<double>(n), dd = complex_normal<double>(n);
    const arma::cx_fvec xf = arma::conv_to<arma::cx_fvec>::from(xd), df = arma::conv_to<arma::cx_fvec>::from(dd);
    TVPenalty<double> Td(Nx, Ny, Nz, 0.3, 0.2);
    TVPenalty<float> Tf(Nx, Ny, Nz, 0.3f, 0.2f);
    CHECK(double(Tf.penalty(xf)) == Approx(Td.penalty(xd)).epsilon(1e-5));
    CHECK(rel_error(Tf.gradient(xf), Td.gradient(xd)) < 1e-5);
    CHECK(double(Tf.denom(df, xf)) == Approx(Td.denom(dd, xd)).epsilon(1e-5));
    QuadPenalty<double> Qd(Nx, Ny, Nz, 0.3);
    QuadPenalty<float> Qf(Nx, Ny, Nz, 0.3f);
    CHECK(rel_error(Qf.gradient(xf), Qd.gradient(xd)) < 1e-5);
}

// The forgeCol overloads (what the solvers call, on host and device vectors) against float64 references
// written out here: the penalty as a sum over the finite differences, the gradient as C^H (w . C x) assembled
// pair by pair, and Denom as sum w |C d|^2, with w = beta for QuadPenalty and beta / sqrt(1 + |Cx|^2/delta^2)
// for TVPenalty.
TEST_CASE("Penalties on forgeCol host vectors match float64 difference references", "[penalty][forgeCol]") {
    FORGE_INFO_SEED();
    for (auto dims : {std::array<arma::uword, 3>{8, 5, 1}, std::array<arma::uword, 3>{6, 5, 4}}) {
        const arma::uword Nx = dims[0], Ny = dims[1], Nz = dims[2], n = Nx * Ny * Nz;
        const arma::cx_fvec x = complex_normal<float>(n), d = complex_normal<float>(n);
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), dd = arma::conv_to<arma::cx_vec>::from(d);
        const double beta = uniform<double>(1, 0.2, 2.0)[0], delta = uniform<double>(1, 0.1, 1.5)[0];
        for (bool tv : {false, true}) {
            // weight of one difference v of x (the derivative of the penalty term with respect to |v|^2, times 2)
            auto w = [&](std::complex<double> v) {
                return tv ? beta / std::sqrt(1.0 + std::norm(v) / (delta * delta)) : beta;
            };
            double value = 0, denom = 0;
            arma::cx_vec grad(n, arma::fill::zeros);
            const arma::uword stride[3] = {1, Nx, Nx * Ny}, len[3] = {Nx, Ny, Nz};
            for (int a = 0; a < 3; ++a) {
                if (len[a] < 2) continue;
                for (arma::uword i = 0; i < n; ++i) {
                    const arma::uword c = (i / stride[a]) % len[a];
                    if (c + 1 == len[a]) continue;  // no wrap
                    const arma::uword j = i + stride[a];
                    const std::complex<double> v = xd[j] - xd[i], dv = dd[j] - dd[i];
                    value += tv ? beta * delta * delta * (std::sqrt(1.0 + std::norm(v) / (delta * delta)) - 1.0)
                                : 0.5 * beta * std::norm(v);
                    grad[j] += w(v) * v;
                    grad[i] -= w(v) * v;
                    denom += w(v) * std::norm(dv);
                }
            }
            std::unique_ptr<Robject<float>> R;
            if (tv)
                R = std::make_unique<TVPenalty<float>>(Nx, Ny, Nz, float(beta), float(delta));
            else
                R = std::make_unique<QuadPenalty<float>>(Nx, Ny, Nz, float(beta));
            const forgeCol<forgeComplex<float>> fx(x), fd(d);
            INFO((tv ? "TVPenalty " : "QuadPenalty ") << Nx << "x" << Ny << "x" << Nz);
            CHECK(double(R->penalty(fx)) == Approx(value).epsilon(1e-5));
            CHECK(rel_error(R->gradient(fx).to_arma(), grad) < 1e-5);
            CHECK(double(R->denom(fd, fx)) == Approx(denom).epsilon(1e-5));
        }
    }
}

TEST_CASE("Penalties reject bad arguments with clear messages", "[penalty][errors]") {
    CHECK_THROWS_AS(QuadPenalty<float>(0, 4, 1, 1.0f), forge::invalid_argument);
    CHECK_THROWS_AS(QuadPenalty<float>(4, 4, 1, -1.0f), forge::invalid_argument);
    CHECK_THROWS_AS(TVPenalty<float>(4, 4, 1, 1.0f, 0.0f), forge::invalid_argument);
    CHECK_THROWS_AS(TVPenalty<double>(4, 4, 1, 1.0, std::nan("")), forge::invalid_argument);
    QuadPenalty<float> R(4, 4, 1, 1.0f);
    arma::cx_fvec wrong(15, arma::fill::ones);
    CHECK_THROWS_WITH(R.penalty(wrong), Catch::Contains("expected Nx*Ny*Nz") && Catch::Contains("16"));
    CHECK_THROWS_AS(R.gradient(wrong), forge::invalid_argument);
    CHECK_THROWS_AS(R.denom(wrong, arma::cx_fvec(16, arma::fill::ones)), forge::invalid_argument);
}

TEST_CASE("Penalties reject grids whose pixel count wraps", "[penalty][errors][sizes]") {
    // 2^22 per axis: 2^66 pixels wrap to 0, which an empty image would match.
    const forge::uword a = forge::uword(1) << 22;
    CHECK_THROWS_WITH(QuadPenalty<float>(a, a, a, 1.0f), Catch::Contains("QuadPenalty: Nx * Ny * Nz"));
    CHECK_THROWS_WITH(TVPenalty<double>(a, a, a, 1.0, 0.1), Catch::Contains("TVPenalty: Nx * Ny * Nz"));
    // Nx * Ny alone (the z stride) wraps to 0 here.
    CHECK_THROWS_AS(QuadPenalty<double>(forge::uword(1) << 32, forge::uword(1) << 32, 1, 1.0), forge::invalid_argument);
}
