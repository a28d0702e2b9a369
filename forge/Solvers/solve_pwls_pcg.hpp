#pragma once
// solve_pwls_pcg: penalized weighted least squares by nonlinear conjugate gradients (Polak-Ribiere).
//
//   xhat = argmin_x  Phi(x) = ||W^{1/2} (y - G x)||^2 + R(x)
//
//   x0    initial image (n2), e.g. zeros
//   G     any LinearOperator<T1> (forge/Operators/LinearOperator.h: Gdft, GdftR2, SENSE, pcSENSE, ..., or
//         one of your own), or any type with G * x and G / y on forgeCol<forgeComplex<T1>>
//   W     real, finite, non-negative data weights (one per data sample), e.g. ones; others throw
//         forge::invalid_argument naming W
//   y     measured data
//   R     penalty (Robject<T1>: QuadPenalty, TVPenalty, ...)
//   niter maximum number of iterations (each costs one G * and one G /)
//
// Each iteration takes the negative gradient -grad Phi = 2 G^H W (y - G x) - grad R(x), forms the
// Polak-Ribiere direction (restarting on steepest descent when it is not a descent direction), and steps
// alpha = Re<d, -grad Phi> / (2 ||W^{1/2} G d||^2 + R.Denom(d, x)): the exact minimiser along d for
// quadratic R, a majorize-minimize step (monotone cost) for TVPenalty. G x is updated recursively.
// For QuadPenalty with R = beta/2 ||C x||^2 the fixed point solves the normal equations
//   (G^H W G + beta/2 C^H C) x = G^H W y.
//
// solve_pwls_pcg_normal: the same iteration from the normal equations' side, for a normal operator that is
// cheaper than G and G^H (ToeplitzNormal: FFTs on a 2x grid) and a right-hand side computed once:
//
//   xhat = argmin_x  x^H N x - 2 Re(x^H b) + R(x)    (= Phi(x) - y^H W y  when N = G^H W G and b = G^H W y)
//
//   N     a square Hermitian positive semidefinite operator applied as N * x: ToeplitzNormal, NormalOf(A) for an
//         operator A whose normal() is fast (e.g. SENSE on with_normal(G, ToeplitzNormal)), or any LinearOperator
//   b     G^H W y, e.g. G / (W .* y) with the exact G (its length is N's)
// Each iteration applies N once (to the search direction; N x is updated recursively) and the penalty; the
// directions, steps and stopping rule are solve_pwls_pcg's, so with N = G^H W G exactly both produce the same
// iterates up to rounding. The callback's cost is Phi(x) - y^H W y.
//
// Residency: with arma::Col everything runs on the host, on forgeCol copies made once at entry. With forgeCol the
// result lives where x0 lives; x0, W and y (x0 and b) must all be on the host or all on the GPU. On the GPU every
// vector operation of the loop runs on the device (no host/device vector copies; only scalar reductions come back).
#include "forge/Solvers/SolverCommon.hpp"

namespace forge {
namespace solver_detail {

// The Polak-Ribiere loop of both solvers. The data term D(x) enters through a model m:
//   m.state(x)            s = L x, kept current by s += step * L d (L = G for the weighted least squares, N for
//                         the normal form)
//   m.half_gradient(s)    -grad D(x) / 2: G^H W (y - G x), or b - N x
//   m.apply(d)            L d
//   m.curvature(d, Ld)    d^H (Hessian of D / 2) d: ||W^{1/2} G d||^2, or Re<d, N d>
//   m.cost(x, s)          D(x), for the callback
//   m.nan_hint            what to check when the gradient is not finite
template <typename T1, typename V, typename Model>
V pcg_loop(const char* name, const V& x0, const Model& m, const Robject<T1>& R, uword niter, const PcgOptions<T1>& opts,
           bool conjugate, SolverReport* report) {
    using E = typename V::elem_type;
    const auto t0 = std::chrono::steady_clock::now();
    if (!(opts.tolerance >= T1(0))) throw invalid_argument(std::string(name) + ": tolerance must be >= 0");
    V x = x0;
    V s = m.state(x);

    V ddir, oldgrad;
    double oldinprod = 0, g0 = 0, gnorm = 0;
    SolverReport rep;
    for (uword it = 1; it <= niter; ++it) {
        V ngrad = m.half_gradient(s);
        ngrad *= E(2);
        ngrad -= R.Gradient(x);
        const double newinprod = re_dot<T1>(ngrad, ngrad);
        gnorm = std::sqrt(newinprod);
        if (it == 1) g0 = gnorm;
        if (gnorm == 0 || (opts.tolerance > T1(0) && gnorm <= double(opts.tolerance) * g0)) {
            rep.converged = true;
            break;
        }
        if (!std::isfinite(gnorm)) {
            throw std::runtime_error(std::string(name) + ": the gradient is not finite at iteration " +
                                     std::to_string(it) + " (check " + m.nan_hint + " for NaN/Inf)");
        }
        if (it == 1 || !conjugate) {
            ddir = ngrad;
        } else {
            double gamma = (newinprod - re_dot<T1>(oldgrad, ngrad)) / oldinprod;  // Polak-Ribiere
            if (!(gamma > 0)) gamma = 0;                                          // PR+ restart
            scale_add<T1>(ddir, T1(gamma), ngrad);                                // d = ngrad + gamma d
        }
        double slope = re_dot<T1>(ddir, ngrad);
        if (!(slope > 0)) {  // not a descent direction: restart with steepest descent
            ddir = ngrad;
            slope = newinprod;
        }
        if (conjugate) {
            oldgrad = std::move(ngrad);
            oldinprod = newinprod;
        }
        V Ld = m.apply(ddir);
        const double denom = 2.0 * m.curvature(ddir, Ld) + double(R.Denom(ddir, x));
        if (!(denom > 0) || !std::isfinite(denom)) break;  // flat direction: nothing more to gain
        const double step = slope / denom;
        add_scaled<T1>(x, T1(step), ddir);
        add_scaled<T1>(s, T1(step), Ld);
        rep.iterations = it;
        if (opts.callback) {
            PcgIterationInfo info;
            info.iteration = it;
            info.cost = m.cost(x, s) + double(R.Penalty(x));
            info.gradient_norm = gnorm;
            info.step = step;
            info.elapsed_s = seconds_since(t0);
            opts.callback(info);
        }
    }
    rep.initial_gradient_norm = g0;
    rep.final_gradient_norm = gnorm;
    rep.elapsed_s = seconds_since(t0);
    if (report) *report = rep;
    return x;
}

// D(x) = ||W^{1/2} (y - G x)||^2.
template <typename T1, typename Op, typename V, typename WV>
struct WeightedLeastSquares {
    const char* name;
    const Op& G;
    const WV& W;
    const V& y;
    const char* nan_hint = "the data, weights and penalty";
    V state(const V& x) const {
        V Ax = G * x;
        require_len(name, "G * x0", Ax.n_elem, y.n_elem, "the length of y");
        return Ax;
    }
    V half_gradient(const V& Ax) const { return G / times_w<T1>(W, V(y - Ax)); }
    V apply(const V& d) const { return G * d; }
    double curvature(const V&, const V& Ad) const { return weighted_norm2<T1>(Ad, W); }
    double cost(const V&, const V& Ax) const { return weighted_norm2<T1>(V(y - Ax), W); }
};

// D(x) = x^H N x - 2 Re(x^H b).
template <typename T1, typename Op, typename V>
struct NormalEquations {
    const char* name;
    const Op& N;
    const V& b;
    const char* nan_hint = "b, the normal operator and the penalty";
    V state(const V& x) const {
        V Nx = N * x;
        require_len(name, "N * x0", Nx.n_elem, x.n_elem, "the length of x0 (N must be square)");
        return Nx;
    }
    V half_gradient(const V& Nx) const { return b - Nx; }
    V apply(const V& d) const { return N * d; }
    double curvature(const V& d, const V& Nd) const { return re_dot<T1>(d, Nd); }
    double cost(const V& x, const V& Nx) const { return re_dot<T1>(x, Nx) - 2.0 * re_dot<T1>(x, b); }
};

template <typename T1, typename Op, typename V, typename WV>
V pwls_core(const char* name, const V& x0, const Op& G, const WV& W, const V& y, const Robject<T1>& R, uword niter,
            const PcgOptions<T1>& opts, bool conjugate, SolverReport* report) {
    require_same_place(name, x0, W, y);
    require_len(name, "W", W.n_elem, y.n_elem, "the length of y");
    require_valid_weights<T1>(name, W);
    const WeightedLeastSquares<T1, Op, V, WV> m{name, G, W, y};
    return pcg_loop<T1>(name, x0, m, R, niter, opts, conjugate, report);
}

// The iteration of pwls_core on (N, b): gradient 2 (b - N x) - grad R(x), step denominator 2 Re<d, N d> + R.Denom.
template <typename T1, typename Op, typename V>
V pwls_normal_core(const char* name, const V& x0, const Op& N, const V& b, const Robject<T1>& R, uword niter,
                   const PcgOptions<T1>& opts, SolverReport* report) {
    if (on_gpu(x0) != on_gpu(b)) {
        throw residency_error(std::string(name) + ": x0 is on the " + (on_gpu(x0) ? "GPU" : "host") + " and b on the " +
                              (on_gpu(b) ? "GPU" : "host") + "; put both in the same place (putOnGPU/getFromGPU)");
    }
    require_len(name, "b", b.n_elem, x0.n_elem, "the length of x0");
    const NormalEquations<T1, Op, V> m{name, N, b};
    return pcg_loop<T1>(name, x0, m, R, niter, opts, true, report);
}

// arma::Col in and out: one conversion of x0, W and y at entry and of the result at exit.
template <typename T1, typename Op>
arma::Col<std::complex<T1>> pwls_at_boundary(const char* name, const arma::Col<std::complex<T1>>& x0, const Op& G,
                                             const arma::Col<T1>& W, const arma::Col<std::complex<T1>>& y,
                                             const Robject<T1>& R, uword niter, const PcgOptions<T1>& opts,
                                             bool conjugate, SolverReport* report) {
    const FCx<T1> fx0(x0), fy(y);
    const forgeCol<T1> fW(W);
    return pwls_core<T1>(name, fx0, G, fW, fy, R, niter, opts, conjugate, report).getArma();
}

}  // namespace solver_detail

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_pwls_pcg(const arma::Col<std::complex<T1>>& x0, const Op& G, const arma::Col<T1>& W,
                                           const arma::Col<std::complex<T1>>& y, const Robject<T1>& R, uword niter,
                                           const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_at_boundary<T1>("solve_pwls_pcg", x0, G, W, y, R, niter, opts, true, report);
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_pwls_pcg(const forgeCol<forgeComplex<T1>>& x0, const Op& G, const forgeCol<T1>& W,
                                          const forgeCol<forgeComplex<T1>>& y, const Robject<T1>& R, uword niter,
                                          const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_core<T1>("solve_pwls_pcg", x0, G, W, y, R, niter, opts, true, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_pwls_pcg_normal(const arma::Col<std::complex<T1>>& x0, const Op& N,
                                                  const arma::Col<std::complex<T1>>& b, const Robject<T1>& R,
                                                  uword niter, const PcgOptions<T1>& opts = {},
                                                  SolverReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fb(b);
    return solver_detail::pwls_normal_core<T1>("solve_pwls_pcg_normal", fx0, N, fb, R, niter, opts, report).getArma();
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_pwls_pcg_normal(const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                                 const forgeCol<forgeComplex<T1>>& b, const Robject<T1>& R, uword niter,
                                                 const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_normal_core<T1>("solve_pwls_pcg_normal", x0, N, b, R, niter, opts, report);
}

}  // namespace forge

#ifndef FORGE_NO_GLOBAL_NAMES
using forge::solve_pwls_pcg;
using forge::solve_pwls_pcg_normal;
#endif
