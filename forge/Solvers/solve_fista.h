#pragma once
// solve_fista: FISTA (Beck and Teboulle, 2009) with adaptive restart, for compressed sensing:
//
//   xhat = argmin_x  Phi(x) = ||W^{1/2} (y - G x)||^2 + lambda R(x)      R: a ProxPenalty (L1Penalty,
//                                                                        WaveletL1Penalty, ExactTVPenalty)
//   solve_fista(x0, G, W, y, R, niter, opts, &report)
//   solve_fista_normal(x0, N, b, R, niter, opts, &report)     N = G^H W G (e.g. ToeplitzNormal), b = G^H W y
//
// Each iteration: z = prox_{lambda R / L}(x - grad f(x) / L), grad f(x) = 2 (N x - b), L = 2 lambda_max(N) from a power
// iteration (ProxOptions::lipschitz to give it; raised, with a momentum restart, whenever the curvature of f along a
// step exceeds it, which N of the step gives exactly); then the momentum step x = z + ((t - 1) / t_next) (z - z_prev).
// One apply of N per iteration (N x of the momentum point is combined from N z and N z_prev). With restart (the
// default) the momentum is reset when Re<z - x, z - z_prev> <= 0 (the step and the composite gradient disagree);
// with monotone the returned iterate is kept when the new one would raise Phi (MFISTA), so Phi never increases.
// Stops on the iteration limit or on ||composite gradient|| = L ||x - z|| <= tolerance times its first value.
//
// Residency as solve_pwls_pcg: the result lives where x0 lives; x0, W and y (x0 and b) all on the host or all on
// the GPU; on the GPU every vector operation of the loop runs on the device (no host/device vector copies inside the
// loop). NaN or Inf in the inputs throws forge::invalid_argument naming them; a cost or gradient that is not finite
// in the loop throws forge::overflow_error.
#include "forge/Solvers/ProxSolverCommon.h"

namespace forge {
namespace solver_detail {

template <typename T1>
FCx<T1> fista_core(const char* name, const FCx<T1>& x0, const NormalData<T1>& d, const ProxPenalty<T1>& R, uword niter,
                   const ProxOptions<T1>& o, ProxReport* report) {
    using E = forgeComplex<T1>;
    const auto t0 = std::chrono::steady_clock::now();
    check_penalty(name, R, x0);
    if (!(o.tolerance >= T1(0))) throw invalid_argument(std::string(name) + ": tolerance must be >= 0");
    ProxReport rep;
    double L = step_lipschitz(name, d, x0, o);
    rep.lipschitz = L;
    const bool need_cost = o.monotone || bool(o.callback);

    FCx<T1> x = x0, Nx = d.normal(x);  // the momentum point
    FCx<T1> zk = x, Nzk = Nx;          // the accepted iterate x_k and N x_k
    FCx<T1> zprev = x, Nzprev = Nx;    // x_{k-1}
    double cost_k = need_cost ? d.cost(zk, Nzk) + R.value(zk) : 0.0;
    double t = 1, g0 = 0, gnorm = 0;
    for (uword it = 1; it <= niter; ++it) {
        // z = prox(x - (2/L)(N x - b))
        FCx<T1> z = x;
        lincomb<T1>(z, -2.0 / L, Nx, 1.0);
        axpy(E(T1(2.0 / L)), d.b, z);
        R.prox(z, T1(1.0 / L));
        FCx<T1> Nz = d.normal(z);
        FCx<T1> step = z - x;  // -(1/L) composite gradient
        gnorm = L * robust_norm(step);
        const bool raised = raise_lipschitz<T1>(L, step, FCx<T1>(Nz - Nx), o.lipschitz_margin);
        if (!std::isfinite(gnorm))
            throw overflow_error(std::string(name) + ": the composite gradient is not finite at iteration " +
                                 std::to_string(it) + " (the operator's output leaves the element type's range)");
        if (it == 1) g0 = gnorm;
        double cost_z = 0;
        bool accept = true;
        if (need_cost) {
            cost_z = d.cost(z, Nz) + R.value(z);
            if (!std::isfinite(cost_z))
                throw overflow_error(std::string(name) + ": the cost is not finite at iteration " + std::to_string(it));
            accept = !o.monotone || cost_z <= cost_k;
        }
        // Restart: the new step goes against the previous one. (A rejected step keeps t, as MFISTA.)
        if (raised || (o.restart && accept && it > 1 && re_dot<T1>(step, FCx<T1>(z - zk)) <= 0)) {
            t = 1;
            ++rep.restarts;
        }
        const double tn = 0.5 * (1 + std::sqrt(1 + 4 * t * t));
        // The new accepted iterate and the next momentum point y = x_k + (t/tn)(z - x_k) + ((t-1)/tn)(x_k - x_{k-1}).
        if (accept) {
            zprev = std::move(zk);
            Nzprev = std::move(Nzk);
            zk = z;
            Nzk = Nz;
            if (need_cost) cost_k = cost_z;
        } else {
            zprev = zk;
            Nzprev = Nzk;
        }
        const double a = t / tn, c = (t - 1) / tn;
        x = zk;
        lincomb<T1>(x, a, z, 1.0 - a);
        axpy(E(T1(c)), FCx<T1>(zk - zprev), x);
        Nx = Nzk;
        lincomb<T1>(Nx, a, Nz, 1.0 - a);
        axpy(E(T1(c)), FCx<T1>(Nzk - Nzprev), Nx);
        t = tn;
        rep.iterations = it;
        if (o.callback) {
            PcgIterationInfo info;
            info.iteration = it;
            info.cost = cost_k;
            info.gradient_norm = gnorm;
            info.step = 1.0 / L;
            info.elapsed_s = seconds_since(t0);
            o.callback(info);
        }
        if (gradient_stop(o, gnorm, g0, rep)) break;
    }
    finish_report(rep, L, g0, gnorm, d.applies, t0, report);
    return zk;
}

}  // namespace solver_detail

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_fista(const forgeCol<forgeComplex<T1>>& x0, const Op& G, const forgeCol<T1>& W,
                                       const forgeCol<forgeComplex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                       const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_operator<T1>("solve_fista", x0, G, W, y);
    return solver_detail::fista_core<T1>("solve_fista", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_fista(const arma::Col<std::complex<T1>>& x0, const Op& G, const arma::Col<T1>& W,
                                        const arma::Col<std::complex<T1>>& y, const ProxPenalty<T1>& R, uword niter,
                                        const ProxOptions<T1>& opts = {}, ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fy(y);
    const forgeCol<T1> fW(W);
    return solve_fista<T1>(fx0, G, fW, fy, R, niter, opts, report).to_arma();
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_fista_normal(const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                              const forgeCol<forgeComplex<T1>>& b, const ProxPenalty<T1>& R,
                                              uword niter, const ProxOptions<T1>& opts = {},
                                              ProxReport* report = nullptr) {
    const auto d = solver_detail::data_from_normal<T1>("solve_fista_normal", x0, N, b, opts.data_norm2);
    return solver_detail::fista_core<T1>("solve_fista_normal", x0, d, R, niter, opts, report);
}

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_fista_normal(const arma::Col<std::complex<T1>>& x0, const Op& N,
                                               const arma::Col<std::complex<T1>>& b, const ProxPenalty<T1>& R,
                                               uword niter, const ProxOptions<T1>& opts = {},
                                               ProxReport* report = nullptr) {
    const solver_detail::FCx<T1> fx0(x0), fb(b);
    return solve_fista_normal<T1>(fx0, N, fb, R, niter, opts, report).to_arma();
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::solve_fista;
using forge::solve_fista_normal;
#endif
