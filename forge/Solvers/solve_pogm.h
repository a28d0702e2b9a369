#pragma once
// solve_pogm: the proximal optimized gradient method (POGM; Taylor, Hendrickx and Glineur 2017) with adaptive
// restart (Kim and Fessler 2018), for the problems of solve_fista:
//
//   solve_pogm(x0, G, W, y, R, niter, opts, &report)
//   solve_pogm_normal(x0, N, b, R, niter, opts, &report)
//
// Per iteration (L = 2 lambda_max(N), alpha = 1/L; theta's last step uses the 8 theta^2 rule, as POGM's bound needs):
//   u = x - alpha grad f(x)
//   z = u + beta (u - u_prev) + gamma (u - x) - beta alpha / zeta_prev (x - z_prev),  beta = (theta - 1) / theta_next,
//       gamma = theta / theta_next
//   x = prox_{zeta lambda R}(z), zeta = alpha (1 + beta + gamma)
// and the momentum restarts when the composite gradient g = grad f(x_prev) - (x - z) / zeta and the step of
// y = x_prev - alpha g disagree, and L is raised (with a restart) when the curvature of f along a step exceeds it. POGM's worst-case cost bound is about half of FISTA's for the same iterations. One
// apply of N per iteration. Stopping rule, residency and errors as solve_fista.
#include "forge/Solvers/ProxSolverCommon.h"

namespace forge {
namespace solver_detail {

template <typename T1>
FCx<T1> pogm_core(const char* name, const FCx<T1>& x0, const NormalData<T1>& d, const ProxPenalty<T1>& R, uword niter,
                  const ProxOptions<T1>& o, ProxReport* report) {
    using E = forgeComplex<T1>;
    const auto t0 = std::chrono::steady_clock::now();
    check_penalty(name, R, x0);
    if (!(o.tolerance >= T1(0))) throw invalid_argument(std::string(name) + ": tolerance must be >= 0");
    ProxReport rep;
    double L = step_lipschitz(name, d, x0, o), alpha = 1.0 / L;
    rep.lipschitz = L;

    FCx<T1> x = x0, Nx = d.normal(x);
    FCx<T1> uold = x0, zold = x0, yold = x0;
    double told = 1, zetaold = 1, g0 = 0, gnorm = 0;
    for (uword it = 1; it <= niter; ++it) {
        // fgrad = 2 (N x - b); u = x - alpha fgrad
        FCx<T1> fgrad = Nx - d.b;
        fgrad *= E(T1(2));
        FCx<T1> u = x;
        axpy(E(T1(-alpha)), fgrad, u);
        const double tnew = 0.5 * (1 + std::sqrt(1 + (it == niter ? 8 : 4) * told * told));
        const double beta = (told - 1) / tnew, gamma = told / tnew;
        FCx<T1> z = u;
        axpy(E(T1(beta)), FCx<T1>(u - uold), z);
        axpy(E(T1(gamma)), FCx<T1>(u - x), z);
        if (beta != 0) axpy(E(T1(-beta * alpha / zetaold)), FCx<T1>(x - zold), z);
        const double zeta = alpha * (1 + beta + gamma);
        FCx<T1> xnew = z;
        R.prox(xnew, T1(zeta));
        // Composite gradient g = fgrad - (xnew - z) / zeta, and y = x - alpha g.
        FCx<T1> g = fgrad;
        axpy(E(T1(-1 / zeta)), FCx<T1>(xnew - z), g);
        gnorm = robust_norm(g);
        if (!std::isfinite(gnorm))
            throw overflow_error(std::string(name) + ": the composite gradient is not finite at iteration " +
                                 std::to_string(it) + " (the operator's output leaves the element type's range)");
        if (it == 1) g0 = gnorm;
        FCx<T1> ynew = x;
        axpy(E(T1(-alpha)), g, ynew);
        FCx<T1> Nxnew = d.normal(xnew);
        // POGM's steps reach 3/L: an L below the largest curvature of f (a power iteration short of lambda_max)
        // stalls it far from the minimiser. The curvature along x_new - x is exact from N of both.
        const bool raised = raise_lipschitz<T1>(L, FCx<T1>(xnew - x), FCx<T1>(Nxnew - Nx), o.lipschitz_margin);
        if (raised) alpha = 1.0 / L;
        told = tnew;
        if (raised || (o.restart && it > 1 && -re_dot<T1>(g, FCx<T1>(ynew - yold)) <= 0)) {
            told = 1;
            ++rep.restarts;
        }
        uold = std::move(u);
        zold = std::move(z);
        zetaold = zeta;
        yold = std::move(ynew);
        x = std::move(xnew);
        Nx = std::move(Nxnew);
        rep.iterations = it;
        if (o.callback) {
            PcgIterationInfo info;
            info.iteration = it;
            info.cost = d.cost(x, Nx) + R.value(x);
            info.gradient_norm = gnorm;
            info.step = zeta;
            info.elapsed_s = seconds_since(t0);
            o.callback(info);
        }
        if (gradient_stop(o, gnorm, g0, rep)) break;
    }
    finish_report(rep, L, g0, gnorm, d.applies, t0, report);
    return x;
}

}  // namespace solver_detail

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_pogm(const forgeCol<forgeComplex<T1>>& x0, const Op& G, const forgeCol<T1>& W,
                                      const forgeCol<forgeComplex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                      const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_operator<T1>("solve_pogm", x0, G, W, y);
    return solver_detail::pogm_core<T1>("solve_pogm", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_pogm(const arma::Col<std::complex<T1>>& x0, const Op& G, const arma::Col<T1>& W,
                                       const arma::Col<std::complex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                       const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fy(y);
    const forgeCol<T1> fW(W);
    return solve_pogm<T1>(fx0, G, fW, fy, R, niter, opts, report).to_arma();
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_pogm_normal(const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                             const forgeCol<forgeComplex<T1>>& b, const ProxPenalty<T1>& R, uword niter,
                                             const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_normal<T1>("solve_pogm_normal", x0, N, b, opts.data_norm2);
    return solver_detail::pogm_core<T1>("solve_pogm_normal", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_pogm_normal(const arma::Col<std::complex<T1>>& x0, const Op& N,
                                              const arma::Col<std::complex<T1>>& b, const ProxPenalty<T1>& R,
                                              uword niter, const ProxOptions<T1>& opts = {},
                                              ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fb(b);
    return solve_pogm_normal<T1>(fx0, N, fb, R, niter, opts, report).to_arma();
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::solve_pogm;
using forge::solve_pogm_normal;
#endif
