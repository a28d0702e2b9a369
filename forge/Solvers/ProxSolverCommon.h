#pragma once
// Shared pieces of the proximal solvers (solve_fista, solve_pogm, solve_admm): options, report, the data term as a
// normal operator, and the power iteration for the step size.
//
// The solvers minimise  Phi(x) = ||W^{1/2} (y - G x)||^2 + lambda R(x)  (R a ProxPenalty), or in the normal form
//   Phi(x) = x^H N x - 2 Re(x^H b) + lambda R(x)   (N = G^H W G, b = G^H W y; + y^H W y when data_norm2 is given),
// through the data term's gradient 2 (N x - b), which needs only N: with (G, W, y) it is G^H W G, and G's own
// normal() (a Toeplitz embedding, SENSE's fast normal) when W is all ones and G is a LinearOperator; with (N, b) it
// is N (ToeplitzNormal, NormalOf(A), ...). Each iteration applies N once (ADMM: once per inner CG step); N x is
// carried along by linearity where an iterate is a combination of earlier ones, so the cost in the callback comes
// without an extra apply.
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <type_traits>

#include "forge/Operators/LinearOperator.h"
#include "forge/Penalties/ProxPenalty.h"
#include "forge/Solvers/SolverCommon.h"

namespace forge {

template <typename T1>
struct ProxOptions {
    // FISTA, POGM: stop when ||composite gradient|| <= tolerance * its value at the first iteration. ADMM: stop when
    // the primal residual ||x - z|| <= tolerance * max(||x||, ||z||) and the dual residual rho ||z - z_prev|| <=
    // tolerance * ||rho u||. 0 runs all niter iterations.
    T1 tolerance = T1(0);
    // Called after every iteration with Phi at the returned iterate (computing it costs one penalty value; ADMM also
    // one extra apply of N), the residual the tolerance tests, and the step.
    std::function<void(const PcgIterationInfo&)> callback;
    // Normal forms only: y^H W y, so that the callback's cost is Phi(x) (otherwise Phi(x) - y^H W y).
    double data_norm2 = -1;
    // The Lipschitz constant of the data term's gradient, 2 lambda_max(N); 0: estimated by power iteration
    // (power_iterations applies of N, times lipschitz_margin to cover the estimate's shortfall). FISTA and POGM raise
    // it (to the curvature seen times lipschitz_margin, restarting the momentum) when a step shows more curvature.
    double lipschitz = 0;
    uword power_iterations = 30;
    double lipschitz_margin = 1.02;
    // FISTA, POGM: restart the momentum when the composite gradient and the last step disagree (O'Donoghue and
    // Candes 2015; Kim and Fessler 2018).
    bool restart = true;
    // FISTA: keep the previous iterate when the cost would rise (MFISTA, Beck and Teboulle 2009): Phi is
    // non-increasing (one penalty value per iteration).
    bool monotone = false;
    // ADMM: the augmented Lagrangian's rho (0: lambda_max(N), from the power iteration), the CG steps per x-update
    // (warm started), and residual balancing (rho doubled or halved when one residual is 10x the other).
    double rho = 0;
    uword cg_iterations = 5;
    bool adaptive_rho = true;
};

// What a proximal solver did. final_gradient_norm / initial_gradient_norm: the composite gradient (FISTA, POGM) or
// max(primal, dual residual) (ADMM).
struct ProxReport : SolverReport {
    double lipschitz = 0;        // the L used (step 1/L)
    uword normal_applies = 0;    // applies of N, the power iteration's included
    uword restarts = 0;          // momentum restarts (FISTA, POGM)
    double rho = 0;              // ADMM: the final rho
    double primal_residual = 0;  // ADMM
    double dual_residual = 0;    // ADMM
};

namespace solver_detail {

// The data term through N: apply(v) = N v, b, and y^H W y when known.
template <typename T1>
struct NormalData {
    std::function<FCx<T1>(const FCx<T1>&)> apply;
    FCx<T1> b;
    double offset = 0;
    mutable uword applies = 0;
    FCx<T1> normal(const FCx<T1>& v) const {
        ++applies;
        return apply(v);
    }
    // x^H N x - 2 Re(x^H b) + offset, from N x.
    double cost(const FCx<T1>& x, const FCx<T1>& Nx) const {
        return offset + re_dot<T1>(x, Nx) - 2.0 * re_dot<T1>(x, b);
    }
};

// All weights equal to one (then G^H W G is G's own normal).
template <typename T1>
bool all_ones(const forgeCol<T1>& W) {
    if (W.on_gpu()) return double(norm(forgeCol<T1>(W - T1(1)))) == 0;
    const T1* p = W.host_data();
    for (uword i = 0; i < W.n_elem; ++i)
        if (p[i] != T1(1)) return false;
    return true;
}

// G.normal(v) for a LinearOperator (its fast normal); never called for other types.
template <typename Op, typename V>
auto normal_of(const Op& G, const V& v) -> decltype(G.normal(v)) {
    return G.normal(v);
}
template <typename Op, typename V, typename... Ignored>
V normal_of(const Op& G, const V& v, Ignored...) {
    return G / (G * v);
}

template <typename T1, typename Op>
NormalData<T1> data_from_operator(const char* name, const FCx<T1>& x0, const Op& G, const forgeCol<T1>& W,
                                  const FCx<T1>& y) {
    require_same_place(name, x0, W, y);
    require_len(name, "W", W.n_elem, y.n_elem, "the length of y");
    require_valid_weights<T1>(name, W);
    pow2_rms(name, "y", y);  // finite
    pow2_rms(name, "x0", x0);
    NormalData<T1> d;
    const FCx<T1> Wy = times_w<T1>(W, y);
    d.b = G / Wy;
    require_len(name, "G / y", d.b.n_elem, x0.n_elem, "the length of x0");
    d.offset = re_dot<T1>(y, Wy);
    const bool fast = std::is_base_of<LinearOperator<T1>, Op>::value && all_ones<T1>(W);
    if (fast) {
        d.apply = [&G](const FCx<T1>& v) { return normal_of(G, v); };
    } else {
        d.apply = [&G, &W](const FCx<T1>& v) { return FCx<T1>(G / times_w<T1>(W, FCx<T1>(G * v))); };
    }
    return d;
}

template <typename T1, typename Op>
NormalData<T1> data_from_normal(const char* name, const FCx<T1>& x0, const Op& N, const FCx<T1>& b, double data_norm2) {
    if (x0.on_gpu() != b.on_gpu()) {
        throw residency_error(std::string(name) + ": x0 is on the " + (x0.on_gpu() ? "GPU" : "host") +
                              " and b on the " + (b.on_gpu() ? "GPU" : "host") + "; put both in the same place");
    }
    require_len(name, "b", b.n_elem, x0.n_elem, "the length of x0");
    pow2_rms(name, "b", b);
    pow2_rms(name, "x0", x0);
    if (std::isinf(data_norm2)) throw invalid_argument(std::string(name) + ": data_norm2 (y^H W y) must be finite");
    NormalData<T1> d;
    d.b = b;
    d.offset = data_norm2 >= 0 ? data_norm2 : 0.0;
    d.apply = [&N](const FCx<T1>& v) { return FCx<T1>(N * v); };
    return d;
}

// lambda_max(N) by power iteration from a fixed pseudo-random start (the same on host and device; its upload is the
// only host/device copy, made once before the loop).
template <typename T1>
double largest_eigenvalue(const NormalData<T1>& d, const FCx<T1>& like, uword iterations) {
    std::mt19937_64 g(12345);
    std::normal_distribution<double> nd;
    arma::Col<std::complex<T1>> h(like.n_elem);
    for (auto& v : h) v = std::complex<T1>(T1(nd(g)), T1(nd(g)));
    FCx<T1> v(h);
    if (like.on_gpu()) v.put_on_gpu();
    double lam = 0;
    for (uword k = 0; k < std::max<uword>(iterations, 1); ++k) {
        v *= forgeComplex<T1>(T1(1 / robust_norm(v)));
        FCx<T1> Nv = d.normal(v);
        lam = robust_norm(Nv);
        if (!(lam > 0) || !std::isfinite(lam)) break;
        v = std::move(Nv);
    }
    if (!std::isfinite(lam)) throw overflow_error("power iteration: N v is not finite (NaN or Inf)");
    return lam;
}

template <typename T1>
double step_lipschitz(const char* name, const NormalData<T1>& d, const FCx<T1>& x0, const ProxOptions<T1>& o) {
    if (o.lipschitz < 0 || !std::isfinite(o.lipschitz))
        throw invalid_argument(std::string(name) + ": options.lipschitz must be finite and >= 0 (0: estimate it)");
    if (o.lipschitz > 0) return o.lipschitz;
    const double L = 2 * largest_eigenvalue<T1>(d, x0, o.power_iterations) * o.lipschitz_margin;
    if (!(L > 0)) throw invalid_argument(std::string(name) + ": the normal operator is zero (lambda_max(N) = 0)");
    return L;
}

// The curvature of f(x) = x^H N x - 2 Re(x^H b) along a step d, 2 Re<d, N d> / ||d||^2 (exact: f is quadratic). When
// it exceeds L, L becomes it times 'margin' and true is returned (the power iteration underestimates lambda_max
// when the top eigenvalues are close, and a step of 1/L then overshoots).
template <typename T1>
bool raise_lipschitz(double& L, const FCx<T1>& step, const FCx<T1>& Nstep, double margin) {
    const double ss = re_dot<T1>(step, step);
    if (!(ss > 0)) return false;
    const double curv = 2.0 * re_dot<T1>(step, Nstep) / ss;
    if (!(curv > L) || !std::isfinite(curv)) return false;
    L = curv * std::max(margin, 1.0);
    return true;
}

template <typename T1>
void check_penalty(const char* name, const ProxPenalty<T1>& R, const FCx<T1>& x0) {
    require_len(name, "x0", x0.n_elem, R.n_pixels(), "the penalty's grid size");
}

// y = a x + b y
template <typename T1>
void lincomb(FCx<T1>& y, double a, const FCx<T1>& x, double b) {
    axpby(forgeComplex<T1>(T1(a)), x, forgeComplex<T1>(T1(b)), y);
}

// FISTA's and POGM's stopping rule on the gradient-map norm: sets the report's stop reason and says whether to stop.
template <typename T1>
bool gradient_stop(const ProxOptions<T1>& o, double gnorm, double g0, ProxReport& rep) {
    if (gnorm == 0) {
        rep.stop_reason = StopReason::ZeroGradient;
        return true;
    }
    if (o.tolerance > T1(0) && gnorm <= double(o.tolerance) * g0) {
        rep.stop_reason = StopReason::Tolerance;
        return true;
    }
    return false;
}

// The end of a FISTA or POGM run: the report's totals, copied to the caller's when asked for.
inline void finish_report(ProxReport& rep, double L, double g0, double gnorm, uword applies,
                          std::chrono::steady_clock::time_point t0, ProxReport* report) {
    rep.lipschitz = L;
    rep.converged = rep.stop_reason != StopReason::IterationLimit;
    rep.initial_gradient_norm = g0;
    rep.final_gradient_norm = gnorm;
    rep.normal_applies = applies;
    rep.elapsed_s = seconds_since(t0);
    if (report) *report = rep;
}

}  // namespace solver_detail
}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::ProxOptions;
using forge::ProxReport;
#endif
