// Solver tests: PCG against Armadillo's solve of the normal equations on small well-conditioned problems
// (dense random operator, explicit difference matrix), arma == forgeCol paths, callback/tolerance
// behaviour, gradient descent, TV stationarity, and the documented quick example with Gdft.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/Operators/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Solvers/reconSolve.hpp"
#include "forge/Solvers/solve_grad_desc.hpp"
#include "forge/Solvers/solve_pwls_pcg.hpp"

using namespace forge_test;

namespace {

// A dense operator: the simplest thing with * and / (solvers must not need more).
template <typename T1>
struct DenseOp {
    using CT = std::complex<T1>;
    arma::Mat<CT> A;
    arma::Col<CT> operator*(const arma::Col<CT>& x) const { return A * x; }
    arma::Col<CT> operator/(const arma::Col<CT>& y) const { return A.t() * y; }
    forgeCol<forgeComplex<T1>> operator*(const forgeCol<forgeComplex<T1>>& x) const {
        return forgeCol<forgeComplex<T1>>(arma::Col<CT>(A * x.getArma()));
    }
    forgeCol<forgeComplex<T1>> operator/(const forgeCol<forgeComplex<T1>>& y) const {
        return forgeCol<forgeComplex<T1>>(arma::Col<CT>(A.t() * y.getArma()));
    }
    arma::uword n2() const { return A.n_cols; }
};

// Explicit first-difference matrix of an Nx x Ny image (x fastest), built independently of the penalty code.
arma::cx_mat difference_matrix(arma::uword Nx, arma::uword Ny) {
    std::vector<arma::cx_rowvec> rows;
    const arma::uword n = Nx * Ny;
    for (arma::uword y = 0; y < Ny; ++y)
        for (arma::uword x = 0; x + 1 < Nx; ++x) {
            arma::cx_rowvec r(n, arma::fill::zeros);
            r(x + 1 + Nx * y) = 1;
            r(x + Nx * y) = -1;
            rows.push_back(r);
        }
    for (arma::uword y = 0; y + 1 < Ny; ++y)
        for (arma::uword x = 0; x < Nx; ++x) {
            arma::cx_rowvec r(n, arma::fill::zeros);
            r(x + Nx * (y + 1)) = 1;
            r(x + Nx * y) = -1;
            rows.push_back(r);
        }
    arma::cx_mat C(rows.size(), n);
    for (arma::uword i = 0; i < rows.size(); ++i) C.row(i) = rows[i];
    return C;
}

struct Problem {
    arma::uword Nx = 6, Ny = 5, n = 30, m = 80;
    arma::cx_mat A;
    arma::vec W;
    arma::cx_vec y;
    double beta = 0.5;
    arma::cx_vec xref;  // normal-equations solution
};

Problem make_problem() {
    Problem p;
    p.A = arma::cx_mat(p.m, p.n);
    const arma::cx_vec a = complex_normal<double>(p.m * p.n);
    std::copy(a.begin(), a.end(), p.A.begin());
    p.A /= std::sqrt(double(p.m));
    p.W = uniform<double>(p.m, 0.5, 2.0);
    p.y = complex_normal<double>(p.m);
    const arma::cx_mat C = difference_matrix(p.Nx, p.Ny);
    // Minimiser of ||W^{1/2}(y - A x)||^2 + beta/2 ||C x||^2.
    const arma::cx_mat H =
        p.A.t() * arma::diagmat(arma::conv_to<arma::cx_vec>::from(p.W)) * p.A + 0.5 * p.beta * C.t() * C;
    p.xref = arma::solve(H, arma::cx_vec(p.A.t() * (p.W % p.y)));
    return p;
}

}  // namespace

TEST_CASE("solve_pwls_pcg converges to the normal-equations solution (double)", "[solver][pcg]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    SolverReport rep;
    PcgOptions<double> opts;
    opts.tolerance = 1e-11;
    const arma::cx_vec x = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 200, opts, &rep);
    INFO("iterations " << rep.iterations << " rel error " << rel_error(x, p.xref));
    CHECK(rel_error(x, p.xref) < 1e-8);
    // Conjugate gradients on a quadratic: converged within about n iterations (steepest descent would not).
    CHECK(rep.converged);
    CHECK(rep.iterations <= 2 * p.n);
}

TEST_CASE("solve_pwls_pcg in float and on forgeCol matches the double solution", "[solver][pcg][float]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<float> G{arma::conv_to<arma::cx_fmat>::from(p.A)};
    QuadPenalty<float> R(p.Nx, p.Ny, 1, float(p.beta));
    const arma::fvec W = arma::conv_to<arma::fvec>::from(p.W);
    const arma::cx_fvec y = arma::conv_to<arma::cx_fvec>::from(p.y);
    const arma::cx_fvec x0(p.n, arma::fill::zeros);
    const arma::cx_fvec xa = solve_pwls_pcg<float>(x0, G, W, y, R, 60);
    CHECK(rel_error(xa, p.xref) < 1e-4);
    forgeCol<forgeComplex<float>> fx0(x0), fy(y);
    forgeCol<float> fW(W);
    const forgeCol<forgeComplex<float>> xf = solve_pwls_pcg<float>(fx0, G, fW, fy, R, 60);
    CHECK_FALSE(xf.on_gpu());
    CHECK(rel_error(xf.getArma(), p.xref) < 1e-4);
}

TEST_CASE("solve_pwls_pcg callback reports a decreasing cost and the tolerance stops early",
          "[solver][pcg][callback]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    std::vector<PcgIterationInfo> log;
    PcgOptions<double> opts;
    opts.tolerance = 1e-4;
    opts.callback = [&](const PcgIterationInfo& i) { log.push_back(i); };
    SolverReport rep;
    const arma::cx_vec x =
        solve_pwls_pcg<double>(arma::cx_vec(p.n, arma::fill::zeros), G, p.W, p.y, R, 500, opts, &rep);
    REQUIRE(log.size() >= 2);
    CHECK(rep.converged);
    CHECK(rep.iterations < 500);
    CHECK(rep.final_gradient_norm <= 1e-4 * rep.initial_gradient_norm);
    const auto cost = [&](const arma::cx_vec& v) {
        return arma::accu(p.W % arma::square(arma::abs(p.y - p.A * v))) + R.Penalty(v);
    };
    for (size_t i = 0; i < log.size(); ++i) {
        CHECK(log[i].iteration == i + 1);
        if (i > 0) {
            CHECK(log[i].cost <= log[i - 1].cost * (1 + 1e-12));
            CHECK(log[i].elapsed_s >= log[i - 1].elapsed_s);
        }
    }
    CHECK(log.back().cost == Approx(cost(x)).epsilon(1e-10));
    CHECK(log.back().cost >= cost(p.xref) * (1 - 1e-10));
}

TEST_CASE("solve_grad_desc reaches the same minimiser as PCG", "[solver][graddesc]") {
    FORGE_INFO_SEED();
    Problem p = make_problem();
    p.beta = 0.5;
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x = solve_grad_desc<double>(arma::cx_vec(p.n, arma::fill::zeros), G, p.W, p.y, R, 3000);
    CHECK(rel_error(x, p.xref) < 1e-5);
}

TEST_CASE("solve_pwls_pcg with TVPenalty reaches a stationary point with monotone cost", "[solver][pcg][tv]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    TVPenalty<double> R(p.Nx, p.Ny, 1, 0.5, 0.1);
    std::vector<double> costs;
    PcgOptions<double> opts;
    opts.callback = [&](const PcgIterationInfo& i) { costs.push_back(i.cost); };
    const arma::cx_vec x = solve_pwls_pcg<double>(arma::cx_vec(p.n, arma::fill::zeros), G, p.W, p.y, R, 400, opts);
    for (size_t i = 1; i < costs.size(); ++i) CHECK(costs[i] <= costs[i - 1] * (1 + 1e-12));
    // Gradient of the full cost, computed independently: -2 A^H W (y - A x) + grad R.
    const arma::cx_vec g = -2.0 * p.A.t() * (p.W % (p.y - p.A * x)) + R.Gradient(x);
    const arma::cx_vec g0 = -2.0 * p.A.t() * (p.W % p.y);
    CHECK(arma::norm(g) < 1e-6 * arma::norm(g0));
}

TEST_CASE("Quick example: Cartesian Gdft + QuadPenalty recovers a smooth image", "[solver][example]") {
    FORGE_INFO_SEED();
    // As in docs: 8x8 image, 64 Cartesian samples, no field map.
    arma::uword Nx = 8, Ny = 8, n1 = Nx * Ny, n2 = Nx * Ny;
    arma::fvec kx(n1), ky(n1), kz(n1, arma::fill::zeros);
    arma::fvec ix(n2), iy(n2), iz(n2, arma::fill::zeros);
    for (arma::uword j = 0; j < Ny; ++j)
        for (arma::uword i = 0; i < Nx; ++i) {
            kx(i + Nx * j) = float(i) - Nx / 2.0f;
            ky(i + Nx * j) = float(j) - Ny / 2.0f;
            ix(i + Nx * j) = (float(i) - Nx / 2.0f) / Nx;
            iy(i + Nx * j) = (float(j) - Ny / 2.0f) / Ny;
        }
    arma::fvec FM(n2, arma::fill::zeros), t(n1, arma::fill::zeros);
    Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, t);
    arma::cx_fvec image(n2, arma::fill::ones);
    arma::cx_fvec kspace = G * image;
    arma::fvec W(n1, arma::fill::ones);
    QuadPenalty<float> R(Nx, Ny, 1, 0.01f);
    arma::cx_fvec x0(n2, arma::fill::zeros);
    arma::cx_fvec xhat = solve_pwls_pcg<float>(x0, G, W, kspace, R, 50);
    // A constant image has zero roughness, so it is the exact minimiser.
    CHECK(rel_error(xhat, image) < 1e-4);
    // reconSolve gives the same answer on the host.
    ReconOptions<float> ro;
    ro.device = ReconDevice::Host;
    CHECK(rel_error(reconSolve<float>(kspace, G, R, 50, ro), image) < 1e-4);
}

TEST_CASE("Solvers reject inconsistent arguments", "[solver][errors]") {
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    CHECK_THROWS_WITH(solve_pwls_pcg<double>(x0, G, arma::vec(p.m - 1, arma::fill::ones), p.y, R, 5),
                      Catch::Contains("W has") && Catch::Contains("expected"));
    CHECK_THROWS_AS(solve_pwls_pcg<double>(arma::cx_vec(p.n + 1, arma::fill::zeros), G, p.W, p.y, R, 5),
                    std::exception);
    PcgOptions<double> bad;
    bad.tolerance = -1;
    CHECK_THROWS_AS(solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 5, bad), forge::invalid_argument);
    ReconOptions<double> ro;
    ro.weights = arma::vec(3, arma::fill::ones);
    CHECK_THROWS_AS(reconSolve<double>(p.y, G, R, 5, ro), forge::invalid_argument);
}

TEST_CASE("solve_pwls_pcg rejects negative, NaN and Inf weights, naming W", "[solver][errors][weights]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    const arma::uword bad = arma::uword(uniform<double>(1, 0, double(p.m) - 1e-9)(0));
    INFO("bad weight at " << bad);
    for (double v : {-1.0, -1e-30, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
        INFO("W[bad] = " << v);
        arma::vec W = p.W;
        W(bad) = v;
        CHECK_THROWS_AS(solve_pwls_pcg<double>(x0, G, W, p.y, R, 5), forge::invalid_argument);
        CHECK_THROWS_WITH(solve_pwls_pcg<double>(x0, G, W, p.y, R, 5),
                          Catch::Contains("W[" + std::to_string(bad) + "]") && Catch::Contains(">= 0"));
        forgeCol<float> fW(arma::conv_to<arma::fvec>::from(W));
        forgeCol<forgeComplex<float>> fx0(arma::cx_fvec(p.n, arma::fill::zeros)),
            fy(arma::conv_to<arma::cx_fvec>::from(p.y));
        DenseOp<float> Gf{arma::conv_to<arma::cx_fmat>::from(p.A)};
        QuadPenalty<float> Rf(p.Nx, p.Ny, 1, float(p.beta));
        CHECK_THROWS_WITH(solve_pwls_pcg<float>(fx0, Gf, fW, fy, Rf, 5), Catch::Contains("W["));
        CHECK_THROWS_AS(solve_grad_desc<double>(x0, G, W, p.y, R, 5), forge::invalid_argument);
    }
    // Zero weights are allowed (samples left out): the solve equals the one without those samples.
    arma::vec W0 = p.W;
    W0(bad) = 0;
    PcgOptions<double> opts;
    opts.tolerance = 1e-12;
    const arma::cx_vec x = solve_pwls_pcg<double>(x0, G, W0, p.y, R, 300, opts);
    arma::uvec keep = arma::find(W0 > 0);
    DenseOp<double> Gk{arma::cx_mat(p.A.rows(keep))};
    const arma::cx_vec xk = solve_pwls_pcg<double>(x0, Gk, arma::vec(p.W(keep)), arma::cx_vec(p.y(keep)), R, 300, opts);
    CHECK(rel_error(x, xk) < 1e-8);
}

TEST_CASE("solve_pwls_pcg tolerance: stops early and the returned image meets it", "[solver][pcg][tolerance]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    // Gradient of ||W^{1/2}(y - A x)||^2 + beta/2 ||C x||^2 from the explicit matrices.
    const arma::cx_mat C = difference_matrix(p.Nx, p.Ny);
    const auto grad = [&](const arma::cx_vec& x) {
        return arma::cx_vec(2.0 * p.A.t() * (arma::conv_to<arma::cx_vec>::from(p.W) % (p.A * x - p.y)) +
                            p.beta * C.t() * (C * x));
    };
    const double g0 = arma::norm(grad(x0));
    for (double tol : {1e-2, 1e-4, 1e-7}) {
        INFO("tolerance " << tol);
        PcgOptions<double> opts;
        opts.tolerance = tol;
        SolverReport rep;
        const arma::cx_vec x = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 1000, opts, &rep);
        CHECK(rep.converged);
        CHECK(rep.iterations < 1000);
        CHECK(arma::norm(grad(x)) <= tol * g0 * (1 + 1e-9));
        // and it stopped at the first iterate that met it: one iteration fewer does not
        if (rep.iterations > 0) {
            const arma::cx_vec xm = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, rep.iterations - 1);
            CHECK(arma::norm(grad(xm)) > tol * g0);
        }
    }
}
