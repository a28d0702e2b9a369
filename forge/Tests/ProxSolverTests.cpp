// Proximal solvers (solve_fista, solve_pogm, solve_admm and their normal forms): the closed-form minimiser of the
// weighted L1 problem with the identity operator, agreement of the three methods with each other and with the normal
// forms on small dense problems (TV, wavelet L1) in float64, MFISTA's non-increasing cost, the callback's cost against
// a direct float64 evaluation, the tolerance stop, the use of an operator's own normal, and the errors.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "UserOperator.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"
#include "forge/Solvers/solve_admm.h"
#include "forge/Solvers/solve_fista.h"
#include "forge/Solvers/solve_pogm.h"

using namespace forge_test;
using forge::ImageGrid;

namespace {
using cd = std::complex<double>;

// A dense operator that counts its normal applies (its normal is its own override, as a Toeplitz normal would be).
class CountingOperator : public MatrixOperator<double> {
public:
    explicit CountingOperator(arma::cx_mat A) : MatrixOperator<double>(std::move(A)) {}
    mutable int normals = 0, applies = 0;

protected:
    void apply_host(const forge::forgeComplex<double>* in, forge::forgeComplex<double>* out, forge::uword nbatch,
                    bool forward) const override {
        ++applies;
        MatrixOperator<double>::apply_host(in, out, nbatch, forward);
    }
    void normal_impl(const forge::forgeComplex<double>* in, forge::forgeComplex<double>* out, forge::uword nbatch,
                     forge::Residency) const override {
        ++normals;
        const arma::cx_mat AHA = matrix().t() * matrix();
        for (forge::uword b = 0; b < nbatch; ++b) {
            const arma::cx_vec x(const_cast<cd*>(reinterpret_cast<const cd*>(in + b * AHA.n_cols)), AHA.n_cols, false);
            const arma::cx_vec y = AHA * x;
            std::memcpy(static_cast<void*>(out + b * AHA.n_cols), y.memptr(), y.n_elem * sizeof(cd));
        }
    }
};

arma::cx_mat random_matrix(arma::uword m, arma::uword n) {
    return arma::reshape(complex_normal<double>(m * n), m, n) / std::sqrt(double(m));
}

double cost_ref(const arma::cx_mat& A, const arma::vec& W, const arma::cx_vec& y, const arma::cx_vec& x, double pen) {
    const arma::cx_vec r = y - A * x;
    return arma::accu(W % arma::square(arma::abs(r))) + pen;
}
}  // namespace

TEST_CASE("FISTA, POGM and ADMM give the weighted soft threshold for the identity operator", "[prox][solver]") {
    FORGE_INFO_SEED();
    const arma::uword n = 40;
    const MatrixOperator<double> I(arma::eye<arma::cx_mat>(n, n));
    arma::cx_vec y = complex_normal<double>(n);
    // Four entries of modulus 0.2, under every threshold lambda / (2 w) >= 0.275 (w <= 2): the prox zeroes them
    // whatever the draw (drawn alone, no entry falls under the threshold about once in 400 draws).
    for (arma::uword i = 0; i < 4; ++i) y(i) *= 0.2 / std::max(std::abs(y(i)), 1e-300);
    const double lambda = 1.1;
    forge::L1Penalty<double> R(ImageGrid(n), lambda);
    const arma::cx_vec x0(n, arma::fill::zeros);
    for (bool uniform_w : {true, false}) {
        const arma::vec W = uniform_w ? arma::vec(n, arma::fill::ones) : uniform<double>(n, 0.5, 2.0);
        arma::cx_vec ref(n);  // argmin w |y - x|^2 + lambda |x| = soft(y, lambda / (2 w))
        for (arma::uword i = 0; i < n; ++i) {
            const double a = std::abs(y(i)), tau = lambda / (2 * W(i));
            ref(i) = a <= tau ? cd(0) : y(i) * ((a - tau) / a);
        }
        INFO("uniform weights: " << uniform_w);
        CHECK(arma::accu(ref == cd(0)) > 0);
        CHECK(rel_error(forge::solve_fista<double>(x0, I, W, y, R, 300), ref) < 1e-10);
        CHECK(rel_error(forge::solve_pogm<double>(x0, I, W, y, R, 300), ref) < 1e-10);
        CHECK(rel_error(forge::solve_admm<double>(x0, I, W, y, R, 300), ref) < 1e-8);
    }
}

TEST_CASE("FISTA, POGM and ADMM reach the same minimiser with TV and wavelet L1", "[prox][solver]") {
    FORGE_INFO_SEED();
    const ImageGrid g(8, 4);
    const arma::uword n = g.n_pixels(), m = 48;
    const arma::cx_mat A = random_matrix(m, n);
    const MatrixOperator<double> G(A);
    const arma::cx_vec y = complex_normal<double>(m);
    const arma::vec W = uniform<double>(m, 0.5, 1.5);
    const arma::cx_vec x0(n, arma::fill::zeros);
    forge::WaveletL1Options wo;
    wo.family = forge::WaveletFamily::Haar;
    wo.random_shift = false;
    forge::ExactTVPenalty<double> tv(g, 0.8, {forge::TVNorm::Isotropic, 50, true});
    forge::ExactTVPenalty<double> tva(g, 0.8, {forge::TVNorm::Anisotropic, 50, true});
    forge::WaveletL1Penalty<double> wl(g, 0.8, wo);
    const forge::ProxPenalty<double>* pens[] = {&tv, &tva, &wl};
    for (const forge::ProxPenalty<double>* R : pens) {
        INFO(R->name());
        forge::ProxReport rf, rp, ra;
        const arma::cx_vec xf = forge::solve_fista<double>(x0, G, W, y, *R, 3000, {}, &rf);
        const arma::cx_vec xp = forge::solve_pogm<double>(x0, G, W, y, *R, 3000, {}, &rp);
        forge::ProxOptions<double> ao;
        ao.cg_iterations = 10;
        const arma::cx_vec xa = forge::solve_admm<double>(x0, G, W, y, *R, 3000, ao, &ra);
        CHECK(rel_error(xp, xf) < 1e-5);
        CHECK(rel_error(xa, xf) < 1e-5);
        // The minimiser: no random perturbation lowers the cost.
        const double f0 = cost_ref(A, W, y, xf, R->value(xf));
        for (int k = 0; k < 200; ++k) {
            const arma::cx_vec xe = xf + 1e-4 * complex_normal<double>(n);
            CHECK(cost_ref(A, W, y, xe, R->value(xe)) >= f0 - 1e-9);
        }
        CHECK(rf.lipschitz > 0);
        CHECK(rf.normal_applies == rf.iterations + 1 + 30);  // one per iteration, x0's, the power iteration's
        // The normal forms with N = A^H W A and b = A^H W y iterate alike.
        const MatrixOperator<double> N(arma::cx_mat(A.t() * arma::diagmat(W) * A));
        const arma::cx_vec b = A.t() * (W % y);
        CHECK(rel_error(forge::solve_fista_normal<double>(x0, N, b, *R, 3000), xf) < 1e-6);
        CHECK(rel_error(forge::solve_admm_normal<double>(x0, N, b, *R, 3000, ao), xf) < 1e-5);
    }
}

TEST_CASE("Monotone FISTA never raises the cost, and the callback reports Phi(x)", "[prox][solver]") {
    FORGE_INFO_SEED();
    const ImageGrid g(6, 6);
    const arma::uword n = g.n_pixels(), m = 50;
    const arma::cx_mat A = random_matrix(m, n);
    const MatrixOperator<double> G(A);
    const arma::cx_vec y = complex_normal<double>(m);
    const arma::vec W(m, arma::fill::ones);
    forge::ExactTVPenalty<double> R(g, 0.5, {forge::TVNorm::Isotropic, 200, false});
    std::vector<double> costs;
    forge::ProxOptions<double> o;
    o.monotone = true;
    o.callback = [&](const forge::PcgIterationInfo& i) { costs.push_back(i.cost); };
    const arma::cx_vec x = forge::solve_fista<double>(arma::cx_vec(n, arma::fill::zeros), G, W, y, R, 80, o);
    REQUIRE(costs.size() == 80);
    for (size_t k = 1; k < costs.size(); ++k) CHECK(costs[k] <= costs[k - 1]);
    CHECK(std::abs(costs.back() - cost_ref(A, W, y, x, R.value(x))) < 1e-10 * costs.back());
    // POGM's and ADMM's callbacks report the same Phi at their iterate.
    for (int method = 0; method < 2; ++method) {
        double last = 0;
        forge::ProxOptions<double> q;
        q.callback = [&](const forge::PcgIterationInfo& i) { last = i.cost; };
        const arma::cx_vec xm = method == 0
                                    ? forge::solve_pogm<double>(arma::cx_vec(n, arma::fill::zeros), G, W, y, R, 20, q)
                                    : forge::solve_admm<double>(arma::cx_vec(n, arma::fill::zeros), G, W, y, R, 20, q);
        CHECK(std::abs(last - cost_ref(A, W, y, xm, R.value(xm))) < 1e-9 * last);
    }
}

TEST_CASE("Proximal solvers stop on the tolerance and use the operator's own normal", "[prox][solver]") {
    FORGE_INFO_SEED();
    const ImageGrid g(8, 8);
    const arma::uword n = g.n_pixels(), m = 100;
    CountingOperator G(random_matrix(m, n));
    const arma::cx_vec y = complex_normal<double>(m), x0(n, arma::fill::zeros);
    const arma::vec W(m, arma::fill::ones);
    forge::L1Penalty<double> R(g, 0.3);
    forge::ProxOptions<double> o;
    o.tolerance = 1e-6;
    forge::ProxReport rep;
    forge::solve_fista<double>(x0, G, W, y, R, 5000, o, &rep);
    CHECK(rep.stop_reason == forge::StopReason::Tolerance);
    CHECK(rep.iterations < 5000);
    CHECK(rep.final_gradient_norm <= 1e-6 * rep.initial_gradient_norm);
    CHECK(G.normals == int(rep.normal_applies));  // W = 1: every N apply is G's own normal
    CHECK(G.applies == 1);                        // only G^H y
    rep = forge::ProxReport();
    forge::solve_admm<double>(x0, G, W, y, R, 5000, o, &rep);
    CHECK(rep.stop_reason == forge::StopReason::Tolerance);
    CHECK(rep.primal_residual > 0);
}

TEST_CASE("Proximal solvers reject bad inputs naming them", "[prox][solver]") {
    using Catch::Matchers::Contains;
    const MatrixOperator<double> G(random_matrix(20, 16));
    forge::L1Penalty<double> R(ImageGrid(4, 4), 0.1);
    const arma::cx_vec y = complex_normal<double>(20);
    arma::vec W(20, arma::fill::ones);
    CHECK_THROWS_WITH(forge::solve_fista<double>(arma::cx_vec(15, arma::fill::zeros), G, W, y, R, 5),
                      Contains("solve_fista"));
    W(3) = -1;
    CHECK_THROWS_WITH(forge::solve_pogm<double>(arma::cx_vec(16, arma::fill::zeros), G, W, y, R, 5), Contains("W[3]"));
    W(3) = 1;
    forge::ProxOptions<double> o;
    o.cg_iterations = 0;
    CHECK_THROWS_WITH(forge::solve_admm<double>(arma::cx_vec(16, arma::fill::zeros), G, W, y, R, 5, o),
                      Contains("cg_iterations"));
    forge::WaveletL1Penalty<double> shifting(ImageGrid(4, 4), 0.1, {forge::WaveletFamily::Haar, 1, true, 0, false});
    CHECK_THROWS_WITH(forge::solve_admm<double>(arma::cx_vec(16, arma::fill::zeros), G, W, y, shifting, 5),
                      Contains("random_shift = false"));
    arma::cx_vec yb = y;
    yb(0) = cd(NAN, 0);
    CHECK_THROWS_WITH(forge::solve_fista<double>(arma::cx_vec(16, arma::fill::zeros), G, W, yb, R, 5),
                      Contains("y has a NaN"));
}
