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
// alpha = Re<d, -grad Phi> / (2 ||W^{1/2} G d||^2 + R.denom(d, x)): the exact minimiser along d for
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
// iterates up to rounding. The callback's cost is Phi(x) when PcgOptions::data_norm2 gives y^H W y, otherwise
// Phi(x) - y^H W y.
// Cost: SolverReport::final_cost is the callback's cost at the result, evaluated once after the loop; the callback's
// per-iteration cost (PcgOptions::callback_cost) takes a penalty evaluation and two reductions per iteration.
//
// Scale: the result does not depend on the scale of y, W or b. Inside, y and W (or b) are divided by powers of two
// near their root mean square and the search direction is brought to about unit norm before G or N sees it (exact
// in floating point, so data already near 1 give bit for bit the unscaled iterates); x0 and the result, the
// callback's numbers and the report are in the caller's units. Float overflows otherwise at data near 1e8 (||G d||^2
// and G^H y) and underflows near 1e-20.
//
// Errors: NaN or Inf in y, W, x0 or b throws forge::invalid_argument naming it. A value that is not finite inside
// the loop (gradient, curvature along the search direction, step, cost, result) throws forge::overflow_error naming
// it (the operator's output, the penalty's gradient or curvature, ...): an operator whose gain is too large for the
// element type, or one that returns NaN, is an error, never a quiet stop. The solver stops early (SolverReport::
// stop_reason) on the tolerance, on a gradient that is exactly zero, or on a finite curvature <= 0 along the
// search direction (no step lowers the cost).
//
// Residency: with arma::Col everything runs on the host, on forgeCol copies made once at entry. With forgeCol the
// result lives where x0 lives; x0, W and y (x0 and b) must all be on the host or all on the GPU. On the GPU every
// vector operation of the loop runs on the device (no host/device vector copies; only scalar reductions come back).
#include "forge/Solvers/SolverCommon.h"

namespace forge {
namespace solver_detail {

// How the loop's unknown and cost relate to the caller's: x = x_scale x' and Phi(x) = cost_scale Phi'(x'), both
// powers of two. The loop minimises Phi'(x') = D'(x') + R(x_scale x') / cost_scale, D' the data term of the
// scaled data (y / x_scale and W / w_scale, or b / x_scale), so that it has Phi's minimiser and, in range, exactly
// its iterates. The penalty is evaluated at the caller's x, which makes this exact for any Robject.
struct Scaling {
    double x_scale = 1, cost_scale = 1;
};

// The Polak-Ribiere loop of both solvers. The data term D(x) enters through a model m:
//   m.state(x)            s = L x, kept current by s += step * L d (L = G for the weighted least squares, N for
//                         the normal form)
//   m.half_gradient(s)    -grad D(x) / 2: G^H W (y - G x), or b - N x
//   m.apply(d)            L d
//   m.curvature(d, Ld)    d^H (Hessian of D / 2) d: ||W^{1/2} G d||^2, or Re<d, N d>
//   m.cost(x, s)          D(x), for the callback and SolverReport::final_cost
//   m.gradient_what, m.curvature_what    what half_gradient and curvature compute, for the error messages
// 'offset' is added to the callback's cost (y^H W y for the normal form when the caller gives it).
//
// Every quantity is checked: a NaN or Inf gradient, curvature, step, cost or result throws forge::overflow_error
// naming it. With finite inputs (checked at entry) and the scaling above, such a value comes from an operator or a
// penalty whose output leaves T1's range (or is NaN), and stopping quietly would return x0 as if converged.
template <typename T1, typename V, typename Model>
V pcg_loop(const char* name, const V& x0, const Model& m, const Robject<T1>& R, uword niter, const PcgOptions<T1>& opts,
           bool conjugate, const Scaling& sc, double offset, SolverReport* report) {
    using E = typename V::elem_type;
    const auto t0 = std::chrono::steady_clock::now();
    if (!(opts.tolerance >= T1(0))) throw invalid_argument(std::string(name) + ": tolerance must be >= 0");
    auto fail = [name](uword it, const std::string& what) {
        throw overflow_error(std::string(name) + ": " + what + " at iteration " + std::to_string(it));
    };
    V x = x0;
    if (sc.x_scale != 1) x *= E(T1(1 / sc.x_scale));
    V s = m.state(x);
    // The caller's x = x_scale x', where the penalty is evaluated (x itself when x_scale = 1).
    V xc;
    auto caller_x = [&]() -> const V& {
        if (sc.x_scale == 1) return x;
        xc = x;
        xc *= E(T1(sc.x_scale));
        return xc;
    };
    const double grad_scale = sc.x_scale / sc.cost_scale;               // grad_x' of R(x_scale x') / cost_scale
    const double curv_scale = sc.x_scale * sc.x_scale / sc.cost_scale;  // and its curvature, per R.denom
    const double caller_gradient = sc.cost_scale / sc.x_scale;          // ||grad Phi(x)|| per ||grad Phi'(x')||
    const char* overflow_hint = " (not finite: the operator's output leaves the range of the element type, its "
                                "gain is too large, or it returned NaN)";

    V ddir, oldgrad;
    double oldinprod = 0, g0 = 0, gnorm = 0, dscale = 1;
    double reference = -1;  // the tolerance's reference gradient norm: ||grad at x0|| unless tolerance_from_zero
    if (opts.tolerance_from_zero && opts.tolerance > T1(0) && robust_norm(x) > 0) {
        V zero = x;
        zero *= E(T1(0));
        V g = m.half_gradient(m.state(zero));
        g *= E(2);
        V gR = R.gradient(zero);
        if (grad_scale != 1) gR *= E(T1(grad_scale));
        g -= gR;
        reference = std::sqrt(re_dot<T1>(g, g));
        if (!std::isfinite(reference)) fail(0, std::string(m.gradient_what) + " at x = 0" + overflow_hint);
    }
    // Phi(x) in the caller's units (plus 'offset'); with 'check' a value that is not finite throws (the callback's),
    // without it is reported as it is (the final cost of data whose penalty exceeds T1 is then Inf).
    auto cost_at = [&](uword it, bool check) {
        const double data = sc.cost_scale * m.cost(x, s), pen = double(R.penalty(caller_x()));
        if (check && !std::isfinite(data)) fail(it, std::string("the data term of the cost") + overflow_hint);
        if (check && !std::isfinite(pen))
            fail(it, "the penalty's value R(x) is not finite (it exceeds the element type)");
        return offset + data + pen;
    };
    SolverReport rep;
    for (uword it = 1; it <= niter; ++it) {
        const V& xr = caller_x();
        V ngrad = m.half_gradient(s);
        ngrad *= E(2);
        {
            V gR = R.gradient(xr);
            if (grad_scale != 1) gR *= E(T1(grad_scale));
            ngrad -= gR;
        }
        // The preconditioned gradient z = M g (g itself without a preconditioner). Polak-Ribiere on it:
        // gamma = Re<z, g - g_old> / Re<z_old, g_old>; the tolerance stays on ||g||.
        V zstore;
        if (opts.preconditioner) zstore = opts.preconditioner(ngrad);
        const V& z = opts.preconditioner ? zstore : ngrad;
        // The PR numerator's cross term comes with ||g||^2: one wait on the GPU instead of two.
        double newinprod = 0, cross = 0, gg = 0;
        if (opts.preconditioner) {
            require_len(name, "the preconditioner's output", z.n_elem, ngrad.n_elem, "the length of x");
            const auto [g2, zg] = re_dot2<T1>(ngrad, ngrad, z, ngrad);
            gg = double(T1(g2));
            newinprod = double(T1(zg));
            if (conjugate && it > 1) cross = re_dot<T1>(z, oldgrad);
            if (std::isfinite(gg) && (!std::isfinite(newinprod) || !std::isfinite(cross)))
                fail(it, "the preconditioner's output M g is not finite (NaN or Inf)");
            if (std::isfinite(gg) && gg > 0 && !(newinprod > 0))
                throw invalid_argument(std::string(name) +
                                       ": the preconditioner is not positive definite: Re<M g, g> = " +
                                       std::to_string(newinprod) + " at iteration " + std::to_string(it));
        } else if (conjugate && it > 1) {
            const auto [g2, og] = re_dot2<T1>(ngrad, ngrad, oldgrad, ngrad);
            gg = newinprod = double(T1(g2));  // re_dot's values
            cross = double(T1(og));
        } else {
            gg = newinprod = re_dot<T1>(ngrad, ngrad);
        }
        gnorm = std::sqrt(gg);
        if (!std::isfinite(gnorm)) {  // find the part that is not finite
            if (!std::isfinite(robust_norm(m.half_gradient(s)))) fail(it, std::string(m.gradient_what) + overflow_hint);
            if (!std::isfinite(robust_norm(R.gradient(xr))))
                fail(it, "the penalty's gradient R.gradient(x) is not finite (NaN or Inf)");
            fail(it, "||gradient||^2 overflows the element type (the operator's gain is too large)");
        }
        if (it == 1) {
            g0 = gnorm;
            if (reference < 0) reference = g0;
        }
        if (gnorm == 0) {
            rep.stop_reason = StopReason::ZeroGradient;
            break;
        }
        if (opts.tolerance > T1(0) && gnorm <= double(opts.tolerance) * reference) {
            rep.stop_reason = StopReason::Tolerance;
            break;
        }
        if (it == 1 || !conjugate) {
            ddir = z;
        } else {
            double gamma = (newinprod - cross) / oldinprod;  // Polak-Ribiere
            if (!(gamma > 0)) gamma = 0;                     // PR+ restart
            scale_add<T1>(ddir, T1(gamma / dscale), z);      // d = z + gamma d_prev (ddir = dscale d_prev)
        }
        // The direction scaled to about unit norm (by a power of two: exact) before the operator sees it: ||d||
        // grows with the operator's gain, and G d (||G||^2 ||d||) would leave T1's range long before x does.
        // On the GPU ||d|| and the slope Re<d, g> come from one pass (one wait): scaling d by a power of two scales
        // the slope's sum exactly, so both are the values the separate reductions give. Where ||d||^2 or the slope
        // leaves T1's range, and on the host, robust_norm and the slope of the scaled d.
        double slope = 0;
        bool fused = false;
        if (on_gpu(ddir)) {
            const auto [dd, dg] = re_dot2<T1>(ddir, ddir, ddir, ngrad);
            const double dnorm = double(T1(std::sqrt(double(T1(dd)))));  // norm()'s value: ||d||^2 rounded first
            if (dnorm > 0 && std::isfinite(dnorm)) {
                dscale = 1 / pow2_near<T1>(dnorm);
                slope = double(T1(dg * dscale));  // re_dot's value on the scaled d
                fused = std::isfinite(slope);
            }
        }
        if (!fused) dscale = 1 / pow2_near<T1>(robust_norm(ddir));
        if (dscale != 1) ddir *= E(T1(dscale));
        if (!fused) slope = re_dot<T1>(ddir, ngrad);
        if (!(slope > 0)) {  // not a descent direction: restart with (preconditioned) steepest descent
            ddir = z;
            dscale = 1 / pow2_near<T1>(opts.preconditioner ? robust_norm(z) : gnorm);
            if (dscale != 1) ddir *= E(T1(dscale));
            slope = newinprod * dscale;
        }
        if (conjugate) {
            oldgrad = std::move(ngrad);
            oldinprod = newinprod;
        }
        V Ld = m.apply(ddir);
        const double curv = m.curvature(ddir, Ld);
        if (!std::isfinite(curv)) fail(it, std::string(m.curvature_what) + overflow_hint);
        const double rcurv = curv_scale * double(R.denom(ddir, xr));
        if (!std::isfinite(rcurv)) fail(it, "the penalty's curvature R.denom(d, x) is not finite (NaN or Inf)");
        const double denom = 2.0 * curv + rcurv;
        if (!(denom > 0)) {  // finite and <= 0: no step along d lowers the cost
            rep.stop_reason = StopReason::FlatDirection;
            break;
        }
        const double step = slope / denom;
        if (!std::isfinite(step)) fail(it, "the step length is not finite (the curvature along d underflowed)");
        add_scaled<T1>(x, T1(step), ddir);
        add_scaled<T1>(s, T1(step), Ld);
        rep.iterations = it;
        if (opts.callback) {
            PcgIterationInfo info;
            info.iteration = it;
            info.cost = opts.callback_cost ? cost_at(it, true) : std::numeric_limits<double>::quiet_NaN();
            info.gradient_norm = caller_gradient * gnorm;
            info.step = step * dscale / (caller_gradient / sc.x_scale);  // along the caller's direction
            info.elapsed_s = seconds_since(t0);
            opts.callback(info);
        }
    }
    rep.final_cost = cost_at(rep.iterations, false);
    rep.converged = rep.stop_reason != StopReason::IterationLimit;
    rep.initial_gradient_norm = caller_gradient * g0;
    rep.final_gradient_norm = caller_gradient * gnorm;
    if (sc.x_scale != 1) x *= E(T1(sc.x_scale));
    if (!std::isfinite(robust_norm(x))) {
        throw overflow_error(std::string(name) +
                             ": the solution is not finite: the image exceeds the range of the element type");
    }
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
    const char* gradient_what = "G^H W (y - G x), the operator's adjoint of the weighted residual,";
    const char* curvature_what = "||W^{1/2} G d||^2, the operator's output along the search direction,";
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
    const char* gradient_what = "b - N x, the normal operator's output,";
    const char* curvature_what = "Re<d, N d>, the normal operator's output along the search direction,";
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

// v / scale as a new vector, or v itself when scale is 1 (no copy).
template <typename Vec>
const Vec& divided(const Vec& v, double scale, Vec& storage) {
    if (scale == 1) return v;
    using E = typename Vec::elem_type;
    storage = v;
    storage *= E(real_t<E>(1 / scale));
    return storage;
}

// The data and the weights are divided by powers of two near their RMS, so that the solve does not depend on their
// scale: the data term ||W^{1/2} G d||^2 and G^H W y of data near 1e8 (or weights near 1e30) overflow float.
template <typename T1, typename Op, typename V, typename WV>
V pwls_core(const char* name, const V& x0, const Op& G, const WV& W, const V& y, const Robject<T1>& R, uword niter,
            const PcgOptions<T1>& opts, bool conjugate, SolverReport* report) {
    require_same_place(name, x0, W, y);
    require_len(name, "W", W.n_elem, y.n_elem, "the length of y");
    require_valid_weights<T1>(name, W);
    const double ys = pow2_rms(name, "y", y), ws = pow2_rms(name, "W", W);
    pow2_rms(name, "x0", x0);
    V ystore;
    WV wstore;
    const WeightedLeastSquares<T1, Op, V, WV> m{name, G, divided(W, ws, wstore), divided(y, ys, ystore)};
    return pcg_loop<T1>(name, x0, m, R, niter, opts, conjugate, Scaling{ys, ys * ys * ws}, 0.0, report);
}

// The iteration of pwls_core on (N, b): gradient 2 (b - N x) - grad R(x), step denominator 2 Re<d, N d> + R.denom.
// b is divided by a power of two near its RMS (x with it).
template <typename T1, typename Op, typename V>
V pwls_normal_core(const char* name, const V& x0, const Op& N, const V& b, const Robject<T1>& R, uword niter,
                   const PcgOptions<T1>& opts, SolverReport* report) {
    if (on_gpu(x0) != on_gpu(b)) {
        throw residency_error(std::string(name) + ": x0 is on the " + (on_gpu(x0) ? "GPU" : "host") + " and b on the " +
                              (on_gpu(b) ? "GPU" : "host") + "; put both in the same place (put_on_gpu/get_from_gpu)");
    }
    require_len(name, "b", b.n_elem, x0.n_elem, "the length of x0");
    if (std::isinf(opts.data_norm2))
        throw invalid_argument(std::string(name) + ": data_norm2 (y^H W y) is infinite; it must be finite");
    const double bs = pow2_rms(name, "b", b);
    pow2_rms(name, "x0", x0);
    V bstore;
    const NormalEquations<T1, Op, V> m{name, N, divided(b, bs, bstore)};
    const double offset = opts.data_norm2 >= 0 ? opts.data_norm2 : 0.0;
    return pcg_loop<T1>(name, x0, m, R, niter, opts, true, Scaling{bs, bs * bs}, offset, report);
}

// arma::Col in and out: one conversion of x0, W and y at entry and of the result at exit.
template <typename T1, typename Op>
arma::Col<std::complex<T1>> pwls_at_boundary(const char* name, const arma::Col<std::complex<T1>>& x0, const Op& G,
                                             const arma::Col<T1>& W, const arma::Col<std::complex<T1>>& y,
                                             const Robject<T1>& R, uword niter, const PcgOptions<T1>& opts,
                                             bool conjugate, SolverReport* report) {
    const FCx<T1> fx0(x0), fy(y);
    const forgeCol<T1> fW(W);
    return pwls_core<T1>(name, fx0, G, fW, fy, R, niter, opts, conjugate, report).to_arma();
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
    return solver_detail::pwls_normal_core<T1>("solve_pwls_pcg_normal", fx0, N, fb, R, niter, opts, report).to_arma();
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_pwls_pcg_normal(const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                                 const forgeCol<forgeComplex<T1>>& b, const Robject<T1>& R, uword niter,
                                                 const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_normal_core<T1>("solve_pwls_pcg_normal", x0, N, b, R, niter, opts, report);
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::solve_pwls_pcg;
using forge::solve_pwls_pcg_normal;
#endif
