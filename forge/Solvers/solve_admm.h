#pragma once
// solve_admm: the alternating direction method of multipliers (scaled form; Boyd et al. 2011) for the problems of
// solve_fista, split as f(x) + lambda R(z) with x = z:
//
//   solve_admm(x0, G, W, y, R, niter, opts, &report)
//   solve_admm_normal(x0, N, b, R, niter, opts, &report)      e.g. N = ToeplitzNormal: the x-update runs on it
//
//   x = argmin f(x) + rho/2 ||x - z + u||^2:  (N + rho/2 I) x = b + rho/2 (z - u), by cg_iterations conjugate
//       gradient steps warm started from the previous x (N x is carried along, so each step is one apply of N)
//   z = prox_{lambda R / rho}(x + u)
//   u = u + x - z
// rho: ProxOptions::rho, or lambda_max(N) from a power iteration; with adaptive_rho it is doubled when the primal
// residual ||x - z|| exceeds 10 times the dual residual rho ||z - z_prev|| and halved in the opposite case (u rescaled
// with it). Returns z (which has the penalty's structure: zeros of the soft threshold, flat TV regions). Stops on the
// iteration limit or when both residuals are below tolerance (ProxOptions). The callback's cost needs N z: one extra
// apply per iteration, only when a callback is set. Residency and errors as solve_fista. The penalty must be the
// same function on every prox call: a WaveletL1Penalty with random shifts throws forge::invalid_argument (its
// changing transform leaves the multiplier u inconsistent; FISTA and POGM take it).
#include "forge/Solvers/ProxSolverCommon.h"

namespace forge {
namespace solver_detail {

template <typename T1>
FCx<T1> admm_core(const char* name, const FCx<T1>& x0, const NormalData<T1>& d, const ProxPenalty<T1>& R, uword niter,
                  const ProxOptions<T1>& o, ProxReport* report) {
    using E = forgeComplex<T1>;
    const auto t0 = std::chrono::steady_clock::now();
    check_penalty(name, R, x0);
    if (!(o.tolerance >= T1(0))) throw invalid_argument(std::string(name) + ": tolerance must be >= 0");
    if (o.cg_iterations == 0) throw invalid_argument(std::string(name) + ": options.cg_iterations must be >= 1");
    // The multiplier u accumulates the penalty's subgradients; a penalty whose prox changes from call to call (random
    // wavelet shifts) leaves u inconsistent and the iterates drift far from any minimiser.
    if (!R.fixed_between_calls())
        throw invalid_argument(std::string(name) + ": " + R.name() +
                               " changes between prox calls (random shifts); ADMM needs a fixed penalty: set "
                               "random_shift = false, or use solve_fista / solve_pogm");
    if (o.rho < 0 || !std::isfinite(o.rho))
        throw invalid_argument(std::string(name) + ": options.rho must be finite and >= 0 (0: chosen from N)");
    ProxReport rep;
    double rho = o.rho;
    if (rho == 0) {
        rho = largest_eigenvalue<T1>(d, x0, o.power_iterations);
        if (!(rho > 0)) throw invalid_argument(std::string(name) + ": the normal operator is zero (lambda_max(N) = 0)");
    }
    FCx<T1> x = x0, Nx = d.normal(x), z = x0, u = FCx<T1>::same_place(x0, x0.n_elem);
    u.zeros();
    double g0 = 0, r = 0, s = 0;
    for (uword it = 1; it <= niter; ++it) {
        // x-update: CG on (N + rho/2) x = b + rho/2 (z - u), from the current x.
        const double h = rho / 2;
        FCx<T1> res = d.b;  // res = rhs - (N + h) x
        axpy(E(T1(h)), FCx<T1>(z - u), res);
        res -= Nx;
        axpy(E(T1(-h)), x, res);
        FCx<T1> p = res;
        double rr = re_dot<T1>(res, res);
        for (uword k = 0; k < o.cg_iterations && rr > 0; ++k) {
            FCx<T1> Np = d.normal(p);
            const double pAp = re_dot<T1>(p, Np) + h * re_dot<T1>(p, p);
            if (!(pAp > 0) || !std::isfinite(pAp)) {
                if (!std::isfinite(pAp))
                    throw overflow_error(std::string(name) +
                                         ": the normal operator's output is not finite at "
                                         "iteration " +
                                         std::to_string(it));
                break;
            }
            const double a = rr / pAp;
            axpy(E(T1(a)), p, x);
            axpy(E(T1(a)), Np, Nx);
            axpy(E(T1(-a)), Np, res);
            axpy(E(T1(-a * h)), p, res);
            const double rr_new = re_dot<T1>(res, res);
            lincomb<T1>(p, 1.0, res, rr_new / rr);  // p = res + (rr_new / rr) p
            rr = rr_new;
        }
        // z-update and the multiplier.
        FCx<T1> zold = std::move(z);
        z = x + u;
        R.prox(z, T1(1 / rho));
        FCx<T1> xz = x - z;
        u += xz;
        r = robust_norm(xz);
        s = rho * robust_norm(FCx<T1>(z - zold));
        if (!std::isfinite(r) || !std::isfinite(s))
            throw overflow_error(std::string(name) + ": the residuals are not finite at iteration " +
                                 std::to_string(it) + " (the operator's output leaves the element type's range)");
        if (it == 1) g0 = std::max(r, s);
        rep.iterations = it;
        if (o.callback) {
            PcgIterationInfo info;
            info.iteration = it;
            info.cost = d.cost(z, d.normal(z)) + R.value(z);
            info.gradient_norm = std::max(r, s);
            info.step = 1 / rho;
            info.elapsed_s = seconds_since(t0);
            o.callback(info);
        }
        if (o.tolerance > T1(0)) {
            const double tol = double(o.tolerance);
            const double xn = std::max(robust_norm(x), robust_norm(z)), un = rho * robust_norm(u);
            if (r <= tol * xn && s <= tol * un) {
                rep.stop_reason = StopReason::Tolerance;
                break;
            }
        }
        if (o.adaptive_rho) {
            if (r > 10 * s) {
                rho *= 2;
                u *= E(T1(0.5));
            } else if (s > 10 * r) {
                rho /= 2;
                u *= E(T1(2));
            }
        }
    }
    rep.converged = rep.stop_reason != StopReason::IterationLimit;
    rep.initial_gradient_norm = g0;
    rep.final_gradient_norm = std::max(r, s);
    rep.primal_residual = r;
    rep.dual_residual = s;
    rep.rho = rho;
    rep.normal_applies = d.applies;
    rep.elapsed_s = seconds_since(t0);
    if (report) *report = rep;
    return z;
}

}  // namespace solver_detail

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_admm(const forgeCol<forgeComplex<T1>>& x0, const Op& G, const forgeCol<T1>& W,
                                      const forgeCol<forgeComplex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                      const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_operator<T1>("solve_admm", x0, G, W, y);
    return solver_detail::admm_core<T1>("solve_admm", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_admm(const arma::Col<std::complex<T1>>& x0, const Op& G, const arma::Col<T1>& W,
                                       const arma::Col<std::complex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                       const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fy(y);
    const forgeCol<T1> fW(W);
    return solve_admm<T1>(fx0, G, fW, fy, R, niter, opts, report).to_arma();
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_admm_normal(const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                             const forgeCol<forgeComplex<T1>>& b, const ProxPenalty<T1>& R, uword niter,
                                             const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_normal<T1>("solve_admm_normal", x0, N, b, opts.data_norm2);
    return solver_detail::admm_core<T1>("solve_admm_normal", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_admm_normal(const arma::Col<std::complex<T1>>& x0, const Op& N,
                                              const arma::Col<std::complex<T1>>& b, const ProxPenalty<T1>& R,
                                              uword niter, const ProxOptions<T1>& opts = {},
                                              ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fb(b);
    return solve_admm_normal<T1>(fx0, N, fb, R, niter, opts, report).to_arma();
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::solve_admm;
using forge::solve_admm_normal;
#endif
