// Solver tests: PCG against Armadillo's solve of the normal equations on small well-conditioned problems
// (dense random operator, explicit difference matrix), arma == forgeCol paths, callback/tolerance
// behaviour, gradient descent, TV stationarity, and the documented quick example with Gdft.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"
#include "forge/Solvers/CirculantPreconditioner.h"
#include "forge/Solvers/recon_solve.h"
#include "forge/Solvers/solve_grad_desc.h"
#include "forge/Solvers/solve_pwls_pcg.h"

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
        return forgeCol<forgeComplex<T1>>(arma::Col<CT>(A * x.to_arma()));
    }
    forgeCol<forgeComplex<T1>> operator/(const forgeCol<forgeComplex<T1>>& y) const {
        return forgeCol<forgeComplex<T1>>(arma::Col<CT>(A.t() * y.to_arma()));
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

// A^H diag(W) A of a problem, the data term's Hessian / 2, explicitly.
arma::cx_mat normal_matrix(const Problem& p) {
    return p.A.t() * arma::diagmat(arma::conv_to<arma::cx_vec>::from(p.W)) * p.A;
}

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
    const arma::cx_mat H = normal_matrix(p) + 0.5 * p.beta * C.t() * C;
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
    CHECK(rel_error(xf.to_arma(), p.xref) < 1e-4);
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
        return arma::accu(p.W % arma::square(arma::abs(p.y - p.A * v))) + R.penalty(v);
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

TEST_CASE("solve_pwls_pcg's final cost, and a callback without the cost each iteration", "[solver][pcg][callback]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    const auto cost = [&](const arma::cx_vec& v) {
        return arma::accu(p.W % arma::square(arma::abs(p.y - p.A * v))) + R.penalty(v);
    };
    for (const arma::uword niter : {arma::uword(0), arma::uword(3), arma::uword(500)}) {
        INFO("niter " << niter);
        std::vector<PcgIterationInfo> full, bare;
        PcgOptions<double> opts;
        opts.tolerance = 1e-4;
        opts.callback = [&](const PcgIterationInfo& i) { full.push_back(i); };
        SolverReport withCost, without;
        const arma::cx_vec x = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, niter, opts, &withCost);
        opts.callback_cost = false;
        opts.callback = [&](const PcgIterationInfo& i) { bare.push_back(i); };
        const arma::cx_vec xb = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, niter, opts, &without);
        // the cost is only reported: the iterates are the same, bit for bit
        CHECK(arma::approx_equal(x, xb, "absdiff", 0.0));
        REQUIRE(full.size() == bare.size());
        for (size_t i = 0; i < bare.size(); ++i) {
            CHECK(std::isnan(bare[i].cost));
            CHECK(bare[i].gradient_norm == full[i].gradient_norm);
            CHECK(bare[i].step == full[i].step);
        }
        CHECK(withCost.final_cost == Approx(cost(x)).epsilon(1e-10));
        CHECK(without.final_cost == withCost.final_cost);
        if (!full.empty()) CHECK(withCost.final_cost == full.back().cost);
    }
    // the normal form: its final cost leaves y^H W y out unless data_norm2 gives it
    const arma::cx_mat N = normal_matrix(p);
    const arma::cx_vec b = p.A.t() * (p.W % p.y);
    DenseOp<double> Nop{N};  // Hermitian: N / x = N x
    PcgOptions<double> opts;
    opts.tolerance = 1e-4;
    opts.callback_cost = false;
    SolverReport rep;
    const arma::cx_vec xn = solve_pwls_pcg_normal<double>(x0, Nop, b, R, 500, opts, &rep);
    const double yWy = arma::accu(p.W % arma::square(arma::abs(p.y)));
    CHECK(rep.final_cost == Approx(cost(xn) - yWy).epsilon(1e-8).margin(1e-10 * yWy));
    opts.data_norm2 = yWy;
    solve_pwls_pcg_normal<double>(x0, Nop, b, R, 500, opts, &rep);
    CHECK(rep.final_cost == Approx(cost(xn)).epsilon(1e-10));
}

TEST_CASE("preconditioned PCG reaches the minimiser; the exact inverse Hessian in one iteration; bad M refused",
          "[solver][pcg][preconditioner]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    // the Hessian / 2 of the cost, from the penalty's own gradient (linear for QuadPenalty)
    arma::cx_mat H = normal_matrix(p);
    for (arma::uword j = 0; j < p.n; ++j) {
        arma::cx_vec e(p.n, arma::fill::zeros);
        e[j] = 1;
        H.col(j) += 0.5 * R.gradient(forgeCol<forgeComplex<double>>(e)).to_arma();
    }
    const arma::cx_mat Hinv = arma::inv_sympd(H);
    PcgOptions<double> opts;
    opts.tolerance = 1e-10;
    opts.preconditioner = [&](const forgeCol<forgeComplex<double>>& g) {
        return forgeCol<forgeComplex<double>>(arma::cx_vec(Hinv * g.to_arma()));
    };
    SolverReport rep;
    arma::cx_vec x = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 50, opts, &rep);
    CHECK(rel_error(x, p.xref) < 1e-9);
    CHECK(rep.iterations == 1);  // M = H^-1: the first step lands on the minimiser
    // a rough M (a Jacobi preconditioner: the diagonal's inverse) reaches the same minimiser; the tolerance is on ||g||
    const arma::vec d = arma::real(H.diag());
    opts.preconditioner = [&](const forgeCol<forgeComplex<double>>& g) {
        return forgeCol<forgeComplex<double>>(arma::cx_vec(g.to_arma() / d));
    };
    x = solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 500, opts, &rep);
    CHECK(rep.converged);
    CHECK(rep.final_gradient_norm <= 1e-10 * rep.initial_gradient_norm);
    CHECK(rel_error(x, p.xref) < 1e-8);
    // and so does the normal form
    const arma::cx_vec b = p.A.t() * (p.W % p.y);
    DenseOp<double> Nop{normal_matrix(p)};
    x = solve_pwls_pcg_normal<double>(x0, Nop, b, R, 500, opts, &rep);
    CHECK(rel_error(x, p.xref) < 1e-8);
    // an M that is not positive definite, or returns NaN, or a vector of another length, is an error
    opts.preconditioner = [](const forgeCol<forgeComplex<double>>& g) {
        forgeCol<forgeComplex<double>> z = g;
        z *= forgeComplex<double>(-1);
        return z;
    };
    CHECK_THROWS_WITH(solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 5, opts),
                      Catch::Contains("preconditioner is not positive definite"));
    opts.preconditioner = [](const forgeCol<forgeComplex<double>>& g) {
        forgeCol<forgeComplex<double>> z = g;
        z[0] = forgeComplex<double>(std::nan(""), 0);
        return z;
    };
    CHECK_THROWS_AS(solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 5, opts), forge::overflow_error);
    opts.preconditioner = [](const forgeCol<forgeComplex<double>>&) {
        return forgeCol<forgeComplex<double>>(arma::cx_vec(3, arma::fill::ones));
    };
    CHECK_THROWS_WITH(solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 5, opts), Catch::Contains("preconditioner"));
}

TEST_CASE("CirculantPreconditioner inverts a periodic convolution exactly; its support keeps the rest apart",
          "[solver][preconditioner]") {
    FORGE_INFO_SEED();
    const arma::uword Nx = 12, Ny = 10, n = Nx * Ny;
    // H x = k (*) x, periodic, with a positive symbol: k = 4 delta + a random Hermitian perturbation, built
    // directly and applied as a dense circulant matrix (the class's FFTs are checked against it)
    arma::cx_vec k(n, arma::fill::zeros);
    k[0] = 4;
    const arma::cx_vec r = 0.05 * complex_normal<double>(n);
    for (arma::uword y = 0; y < Ny; ++y)
        for (arma::uword x = 0; x < Nx; ++x) {
            const arma::uword i = x + Nx * y, j = (Nx - x) % Nx + Nx * ((Ny - y) % Ny);
            k[i] += 0.5 * (r[i] + std::conj(r[j]));  // k(-d) = conj(k(d)): H Hermitian
        }
    arma::cx_mat H(n, n);
    for (arma::uword a = 0; a < n; ++a)
        for (arma::uword b = 0; b < n; ++b) {
            const arma::uword dx = (a % Nx + Nx - b % Nx) % Nx, dy = (a / Nx + Ny - b / Nx) % Ny;
            H(a, b) = k[dx + Nx * dy];
        }
    REQUIRE(arma::eig_sym(arma::cx_mat(0.5 * (H + H.t()))).min() > 0.5);  // positive definite
    const arma::uword p = 5 + Nx * 7;  // any pixel: the response there, shifted back, is k
    arma::cx_vec e(n, arma::fill::zeros);
    e[p] = 1;
    const arma::cx_vec h = H * e;
    const CirculantPreconditioner<double> M(forge::ImageGrid(Nx, Ny), h, p, 1e-6);
    const arma::cx_vec x = complex_normal<double>(n);
    const arma::cx_vec z = M(forgeCol<forgeComplex<double>>(arma::cx_vec(H * x))).to_arma();
    CHECK(rel_error(z, x) < 1e-12);
    // with a support: the circulant's inverse between support pixels, a multiple of the identity outside
    arma::uvec support(n, arma::fill::ones);
    support.subvec(0, 2 * Nx - 1).zeros();
    const CirculantPreconditioner<double> Ms(forge::ImageGrid(Nx, Ny), h, p, 1e-6, support);
    const arma::cx_vec g = complex_normal<double>(n);
    arma::cx_vec gin = g, gout = g;
    gin.subvec(0, 2 * Nx - 1).zeros();
    gout.subvec(2 * Nx, n - 1).zeros();
    const arma::cx_vec zs = Ms(forgeCol<forgeComplex<double>>(g)).to_arma();
    arma::cx_vec zin = M(forgeCol<forgeComplex<double>>(gin)).to_arma();
    zin.subvec(0, 2 * Nx - 1).zeros();
    const arma::cx_vec zout = zs - zin;
    CHECK(rel_error(arma::cx_vec(zs.subvec(2 * Nx, n - 1)), arma::cx_vec(zin.subvec(2 * Nx, n - 1))) < 1e-12);
    const std::complex<double> c = arma::cdot(gout, zout) / arma::cdot(gout, gout);
    CHECK(c.real() > 0);
    CHECK(std::abs(c.imag()) < 1e-12 * c.real());
    CHECK(arma::norm(zout - c * gout) < 1e-12 * arma::norm(zout));
    // bad arguments are named
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), arma::cx_vec(n - 1), p),
                      Catch::Contains("h has"));
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), h, n), Catch::Contains("pixel"));
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), h, p, 0.0), Catch::Contains("floor"));
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), h, p, 1e-3, arma::uvec(3)),
                      Catch::Contains("support"));
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), arma::cx_vec(-h), p),
                      Catch::Contains("positive"));
    arma::cx_vec bad = h;
    bad[1] = std::nan("");
    CHECK_THROWS_WITH(CirculantPreconditioner<double>(forge::ImageGrid(Nx, Ny), bad, p), Catch::Contains("NaN"));
    CHECK_THROWS_WITH(M(forgeCol<forgeComplex<double>>(arma::cx_vec(n + 1))), Catch::Contains("expected"));
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
    const arma::cx_vec g = -2.0 * p.A.t() * (p.W % (p.y - p.A * x)) + R.gradient(x);
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
    // recon_solve gives the same answer on the host.
    ReconOptions<float> ro;
    ro.device = ReconDevice::Host;
    CHECK(rel_error(recon_solve<float>(kspace, G, R, 50, ro), image) < 1e-4);
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
    CHECK_THROWS_AS(recon_solve<double>(p.y, G, R, 5, ro), forge::invalid_argument);
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

// ---------------------------------------------------------------- scale, overflow, stop reasons

namespace {

// SENSE over an exact Gdft: 16x16 pixels, 4 Gaussian coil maps of about unit size, a 600-sample spiral, data of
// a smooth Shepp-Logan plus 1% noise. Float, as forge-recon solves.
struct SenseProblem {
    static constexpr arma::uword N = 16, n2 = N * N, nc = 4, n1 = 600;
    std::shared_ptr<Gdft<float>> G;
    arma::cx_fvec maps, y, truth;
    SenseProblem() {
        arma::fvec ix(n2), iy(n2), iz(n2, arma::fill::zeros);
        for (arma::uword j = 0; j < N; ++j)
            for (arma::uword i = 0; i < N; ++i) {
                ix(i + N * j) = (float(i) - N / 2.0f) / N;
                iy(i + N * j) = (float(j) - N / 2.0f) / N;
            }
        const forge::sim::Trajectory2D k = forge::sim::constant_speed_spiral(n1, N / 2.0, N / 4.0, 0.999);
        const arma::fvec kx = arma::conv_to<arma::fvec>::from(k.kx), ky = arma::conv_to<arma::fvec>::from(k.ky);
        const arma::fvec kz(n1, arma::fill::zeros), fm(n2, arma::fill::zeros), t(n1, arma::fill::zeros);
        G = std::make_shared<Gdft<float>>(n1, n2, kx, ky, kz, ix, iy, iz, fm, t);
        maps = arma::conv_to<arma::cx_fvec>::from(
            forge::sim::gaussian_coil_maps(arma::conv_to<arma::vec>::from(ix), arma::conv_to<arma::vec>::from(iy), nc));
        truth = arma::conv_to<arma::cx_fvec>::from(forge::sim::smooth_shepp_logan_slice(N, 0, 1));
        y = SENSE<float, Gdft<float>>(G, maps, nc) * truth;
        y += 0.01f * float(arma::norm(y) / std::sqrt(2.0 * y.n_elem)) * complex_normal<float>(y.n_elem);
    }
    // niter PCG iterations of SENSE with maps * mapScale on y * dataScale.
    arma::cx_fvec solve(double mapScale, double dataScale, const Robject<float>& R, arma::uword niter) const {
        const SENSE<float, Gdft<float>> E(G, arma::cx_fvec(maps * float(mapScale)), nc);
        const arma::cx_fvec x0(n2, arma::fill::zeros);
        return solve_pwls_pcg<float>(x0, E, arma::fvec(y.n_elem, arma::fill::ones), arma::cx_fvec(y * float(dataScale)),
                                     R, niter);
    }
};

// DenseOp times a gain, applied in two factors so that a gain beyond the element type's range still overflows
// only the output; or, with nan_out, an operator whose forward output holds a NaN.
struct GainOp {
    DenseOp<float> D;
    float g1 = 1, g2 = 1;
    bool nan_out = false;
    forgeCol<forgeComplex<float>> operator*(const forgeCol<forgeComplex<float>>& x) const {
        forgeCol<forgeComplex<float>> r = D * x;
        r *= forgeComplex<float>(g1);
        r *= forgeComplex<float>(g2);
        if (nan_out) r[0] = forgeComplex<float>(std::nanf(""), 0);
        return r;
    }
    forgeCol<forgeComplex<float>> operator/(const forgeCol<forgeComplex<float>>& y) const {
        forgeCol<forgeComplex<float>> r = D / y;
        r *= forgeComplex<float>(g1);
        r *= forgeComplex<float>(g2);
        return r;
    }
};

// A penalty with a constant gradient c and no curvature (R(x) = Re<c, x>), or a NaN gradient. (noinline: GCC
// would otherwise inline these speculatively into the solver's calls on QuadPenalty and warn about the member.)
struct LinearPenalty : Robject<float> {
    using Robject<float>::penalty;
    using Robject<float>::gradient;
    using Robject<float>::denom;
    ForgeVec c;
    bool nan_gradient = false;
    [[gnu::noinline]] float penalty(const ForgeVec& x) const override { return float(cdot(c, x).re); }
    [[gnu::noinline]] ForgeVec gradient(const ForgeVec&) const override {
        ForgeVec g = c;
        if (nan_gradient) g[0] = forgeComplex<float>(std::nanf(""), 0);
        return g;
    }
    float denom(const ForgeVec&, const ForgeVec&) const override { return 0; }
};

}  // namespace

TEST_CASE("solve_pwls_pcg does not depend on the scale of the data and the coil maps", "[solver][pcg][scale]") {
    FORGE_INFO_SEED();
    const SenseProblem p;
    const arma::uword niter = 15;
    // The same problem in other units: maps x1e5 and data x1e8 give the image x1e3 when beta (relative to the
    // data term's curvature, which grows as maps^2) is x1e10 and TV's delta (an image value) x1e3.
    const double beta = 1e-3 * p.n1;
    SECTION("QuadPenalty") {
        const arma::cx_fvec x = p.solve(1, 1, QuadPenalty<float>(p.N, p.N, 1, float(beta)), niter);
        INFO("NRMSE of the unscaled solve vs the truth " << rel_error(x, p.truth));
        REQUIRE(rel_error(x, p.truth) < 0.3);  // a real reconstruction, not zeros
        const arma::cx_fvec xs = p.solve(1e5, 1e8, QuadPenalty<float>(p.N, p.N, 1, float(beta * 1e10)), niter);
        CHECK(rel_error(arma::cx_fvec(xs / 1e3f), x) <= 1e-4);
        // finite data of any size: 1e30 and 1e-30 (maps unchanged, so beta too)
        const arma::cx_fvec xb = p.solve(1, 1e30, QuadPenalty<float>(p.N, p.N, 1, float(beta)), niter);
        CHECK(rel_error(arma::cx_fvec(xb / 1e30f), x) <= 1e-4);
        const arma::cx_fvec xt = p.solve(1, 1e-30, QuadPenalty<float>(p.N, p.N, 1, float(beta)), niter);
        CHECK(rel_error(arma::cx_fvec(xt / 1e-30f), x) <= 1e-4);
    }
    SECTION("TVPenalty") {
        const double delta = 0.05;
        const arma::cx_fvec x = p.solve(1, 1, TVPenalty<float>(p.N, p.N, 1, float(beta), float(delta)), niter);
        REQUIRE(rel_error(x, p.truth) < 0.3);
        const arma::cx_fvec xs =
            p.solve(1e5, 1e8, TVPenalty<float>(p.N, p.N, 1, float(beta * 1e10), float(delta * 1e3)), niter);
        CHECK(rel_error(arma::cx_fvec(xs / 1e3f), x) <= 1e-4);
    }
}

TEST_CASE("solve_pwls_pcg: an operator whose output overflows or is NaN raises, naming it", "[solver][errors][scale]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    GainOp G{DenseOp<float>{arma::conv_to<arma::cx_fmat>::from(p.A)}};
    QuadPenalty<float> R(p.Nx, p.Ny, 1, 0.5f);
    const forgeCol<forgeComplex<float>> x0(arma::cx_fvec(p.n, arma::fill::zeros)),
        y(arma::conv_to<arma::cx_fvec>::from(p.y));
    const forgeCol<float> W(arma::fvec(p.m, arma::fill::ones));
    using Catch::Contains;
    SECTION("gain 1e25: ||G d||^2 exceeds float") {
        G.g1 = 1e25f;
        CHECK_THROWS_AS(solve_pwls_pcg<float>(x0, G, W, y, R, 10), forge::overflow_error);
        CHECK_THROWS_WITH(solve_pwls_pcg<float>(x0, G, W, y, R, 10), Contains("operator") && Contains("iteration 1"));
    }
    SECTION("gain 1e40: G^H y itself is Inf") {
        G.g1 = 1e20f;
        G.g2 = 1e20f;
        CHECK_THROWS_WITH(solve_pwls_pcg<float>(x0, G, W, y, R, 10),
                          Contains("G^H W (y - G x)") && Contains("the operator's adjoint"));
    }
    SECTION("an operator that returns NaN") {
        G.nan_out = true;
        CHECK_THROWS_AS(solve_pwls_pcg<float>(x0, G, W, y, R, 10), forge::overflow_error);
        CHECK_THROWS_WITH(solve_pwls_pcg<float>(x0, G, W, y, R, 10), Contains("operator"));
    }
    SECTION("a penalty whose gradient is NaN") {
        LinearPenalty L;
        L.c = forgeCol<forgeComplex<float>>(arma::cx_fvec(p.n, arma::fill::ones));
        L.nan_gradient = true;
        CHECK_THROWS_WITH(solve_pwls_pcg<float>(x0, G, W, y, L, 10), Contains("penalty's gradient"));
    }
    SECTION("NaN or Inf in the inputs is a bad argument, named") {
        for (float v : {std::nanf(""), HUGE_VALF}) {
            forgeCol<forgeComplex<float>> yb = y, xb = x0;
            yb[3] = forgeComplex<float>(v, 0);
            xb[2] = forgeComplex<float>(0, v);
            CHECK_THROWS_AS(solve_pwls_pcg<float>(x0, G, W, yb, R, 10), forge::invalid_argument);
            CHECK_THROWS_WITH(solve_pwls_pcg<float>(x0, G, W, yb, R, 10), Contains("y has a NaN or Inf"));
            CHECK_THROWS_WITH(solve_pwls_pcg<float>(xb, G, W, y, R, 10), Contains("x0 has a NaN or Inf"));
            CHECK_THROWS_WITH(solve_pwls_pcg_normal<float>(x0, G, yb.n_elem == x0.n_elem ? yb : xb, R, 10),
                              Contains("b has a NaN or Inf"));
        }
    }
}

TEST_CASE("solve_pwls_pcg reports why it stopped", "[solver][pcg][stop]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    SolverReport rep;
    solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 3, {}, &rep);
    CHECK(rep.stop_reason == StopReason::IterationLimit);
    CHECK_FALSE(rep.converged);
    CHECK(rep.iterations == 3);
    PcgOptions<double> opts;
    opts.tolerance = 1e-3;
    solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 500, opts, &rep);
    CHECK(rep.stop_reason == StopReason::Tolerance);
    CHECK(rep.converged);
    // zero data from zero: the gradient is exactly zero, x0 is the minimiser
    const arma::cx_vec x = solve_pwls_pcg<double>(x0, G, p.W, arma::cx_vec(p.m, arma::fill::zeros), R, 5, {}, &rep);
    CHECK(rep.stop_reason == StopReason::ZeroGradient);
    CHECK(rep.converged);
    CHECK(rep.iterations == 0);
    CHECK(arma::norm(x) == 0);
    // no curvature along a non-zero gradient (an operator of zeros, a linear penalty): a flat direction, finite
    GainOp Z{DenseOp<float>{arma::cx_fmat(p.m, p.n, arma::fill::zeros)}};
    LinearPenalty L;
    L.c = forgeCol<forgeComplex<float>>(arma::cx_fvec(p.n, arma::fill::ones));
    const forgeCol<forgeComplex<float>> fx0(arma::cx_fvec(p.n, arma::fill::zeros)),
        fy(arma::conv_to<arma::cx_fvec>::from(p.y));
    const forgeCol<forgeComplex<float>> xf =
        solve_pwls_pcg<float>(fx0, Z, forgeCol<float>(arma::fvec(p.m, arma::fill::ones)), fy, L, 5, {}, &rep);
    CHECK(rep.stop_reason == StopReason::FlatDirection);
    CHECK(rep.iterations == 0);
    CHECK(arma::norm(xf.to_arma()) == 0);
    CHECK(std::string(stop_reason_name(StopReason::Tolerance)) == "tolerance");
}

TEST_CASE("solve_pwls_pcg_normal reports solve_pwls_pcg's cost when given y^H W y", "[solver][pcg][normal][cost]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    // N = A^H W A and b = A^H W y, explicitly
    DenseOp<double> N{normal_matrix(p)};
    const arma::cx_vec b = p.A.t() * (p.W % p.y);
    const double yWy = arma::accu(p.W % arma::square(arma::abs(p.y)));
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    const arma::cx_vec x0(p.n, arma::fill::zeros);
    std::vector<double> exact, normal, bare;
    PcgOptions<double> opts;
    opts.callback = [&](const PcgIterationInfo& i) { exact.push_back(i.cost); };
    solve_pwls_pcg<double>(x0, G, p.W, p.y, R, 12, opts);
    opts.callback = [&](const PcgIterationInfo& i) { bare.push_back(i.cost); };
    solve_pwls_pcg_normal<double>(x0, N, b, R, 12, opts);
    opts.data_norm2 = yWy;
    opts.callback = [&](const PcgIterationInfo& i) { normal.push_back(i.cost); };
    solve_pwls_pcg_normal<double>(x0, N, b, R, 12, opts);
    REQUIRE(exact.size() == 12);
    REQUIRE(normal.size() == 12);
    REQUIRE(bare.size() == 12);
    for (std::size_t i = 0; i < exact.size(); ++i) {
        INFO("iteration " << i + 1 << ": exact " << exact[i] << ", normal form " << normal[i]);
        CHECK(normal[i] >= 0);
        CHECK(std::fabs(normal[i] - exact[i]) <= 1e-9 * exact[i]);
        CHECK(std::fabs(bare[i] + yWy - exact[i]) <= 1e-9 * yWy);
    }
    opts.data_norm2 = HUGE_VAL;
    CHECK_THROWS_AS(solve_pwls_pcg_normal<double>(x0, N, b, R, 12, opts), forge::invalid_argument);
}

TEST_CASE("recon_solve's normal-equations path: b = G^H W y once, then N per iteration, to the same minimiser",
          "[solver][recon_solve][normal]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    // N = A^H W A, explicitly: recon_solve forms b = A^H W y from G and the weights itself
    DenseOp<double> N{normal_matrix(p)};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    ReconOptions<double> opts;
    opts.device = ReconDevice::Host;
    opts.weights = p.W;
    opts.pcg.tolerance = 1e-11;
    SolverReport rep;
    opts.report = &rep;
    const arma::cx_vec x = recon_solve<double>(p.y, G, N, R, 200, opts);
    INFO("iterations " << rep.iterations << " rel error " << rel_error(x, p.xref));
    CHECK(rel_error(x, p.xref) < 1e-8);  // Armadillo's solve of the normal equations
    CHECK(rep.converged);
    CHECK(rep.stop_reason == StopReason::Tolerance);

    // The cost it reports is ||W^{1/2}(y - A x)||^2 + R(x), iteration by iteration as recon_solve's other path
    // reports it (the same iterates up to rounding, since N = A^H W A exactly).
    std::vector<double> exact, normal;
    opts.pcg.tolerance = 0;
    opts.report = nullptr;
    opts.pcg.callback = [&](const PcgIterationInfo& i) { exact.push_back(i.cost); };
    recon_solve<double>(p.y, G, R, 12, opts);
    opts.pcg.callback = [&](const PcgIterationInfo& i) { normal.push_back(i.cost); };
    recon_solve<double>(p.y, G, N, R, 12, opts);
    REQUIRE(exact.size() == 12);
    REQUIRE(normal.size() == 12);
    for (std::size_t i = 0; i < exact.size(); ++i) {
        INFO("iteration " << i + 1 << ": exact " << exact[i] << ", normal path " << normal[i]);
        CHECK(std::fabs(normal[i] - exact[i]) <= 1e-9 * exact[i]);
    }

    // Unit weights (none given): the minimiser of ||y - A x||^2 + R(x), from N = A^H A.
    DenseOp<double> N1{arma::cx_mat(p.A.t() * p.A)};
    const arma::cx_mat C = difference_matrix(p.Nx, p.Ny);
    const arma::cx_vec x1ref =
        arma::solve(arma::cx_mat(p.A.t() * p.A + 0.5 * p.beta * C.t() * C), arma::cx_vec(p.A.t() * p.y));
    ReconOptions<double> unit;
    unit.device = ReconDevice::Host;
    unit.pcg.tolerance = 1e-11;
    CHECK(rel_error(recon_solve<double>(p.y, G, N1, R, 200, unit), x1ref) < 1e-8);

    // Bad input, by name.
    opts.pcg.callback = nullptr;
    ReconOptions<double> bad = opts;
    bad.weights = arma::vec(p.m - 1, arma::fill::ones);
    CHECK_THROWS_AS(recon_solve<double>(p.y, G, N, R, 5, bad), forge::invalid_argument);
    bad.weights = p.W;
    bad.weights[3] = -1;
    CHECK_THROWS_WITH(recon_solve<double>(p.y, G, N, R, 5, bad), Catch::Matchers::Contains("W[3]"));
    arma::cx_vec ynan = p.y;
    ynan[7] = NAN;
    CHECK_THROWS_WITH(recon_solve<double>(ynan, G, N, R, 5, opts), Catch::Matchers::Contains("data"));
    DenseOp<double> Nsmall{arma::cx_mat(p.n - 1, p.n - 1, arma::fill::eye)};
    CHECK_THROWS_WITH(recon_solve<double>(p.y, G, Nsmall, R, 5, opts), Catch::Matchers::Contains("N.n2()"));
    if (!forge::device::available()) {
        ReconOptions<double> gpu = opts;
        gpu.device = ReconDevice::GPU;
        CHECK_THROWS_AS(recon_solve<double>(p.y, G, N, R, 5, gpu), forge::cuda_error);
    }
}

TEST_CASE("recon_solve's data_scale solves the data times the factor, on both paths, and refuses 0, NaN and Inf",
          "[solver][recon_solve][scale]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem();
    DenseOp<double> G{p.A};
    DenseOp<double> N{normal_matrix(p)};
    QuadPenalty<double> R(p.Nx, p.Ny, 1, p.beta);
    ReconOptions<double> plain, scaled;
    plain.device = scaled.device = ReconDevice::Host;
    plain.weights = scaled.weights = p.W;
    scaled.data_scale = 0.125;  // a power of two: the same bits as the caller's scaled copy
    const arma::cx_vec y8 = p.y * 0.125;
    CHECK(arma::approx_equal(recon_solve<double>(p.y, G, R, 9, scaled), recon_solve<double>(y8, G, R, 9, plain),
                             "absdiff", 0.0));
    CHECK(arma::approx_equal(recon_solve<double>(p.y, G, N, R, 9, scaled), recon_solve<double>(y8, G, N, R, 9, plain),
                             "absdiff", 0.0));
    for (const double bad : {0.0, double(NAN), double(INFINITY)}) {
        scaled.data_scale = bad;
        CHECK_THROWS_WITH(recon_solve<double>(p.y, G, R, 3, scaled), Catch::Matchers::Contains("data_scale"));
        CHECK_THROWS_WITH(recon_solve<double>(p.y, G, N, R, 3, scaled), Catch::Matchers::Contains("data_scale"));
    }
}
