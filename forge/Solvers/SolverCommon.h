#pragma once
// Shared pieces of forge's iterative solvers: options, per-iteration information, and the small set of
// vector operations the loops need, on forgeCol (host or device). The solvers' arma::Col overloads convert
// once at entry and once at exit; inside the loop every vector is a forgeCol (arma_conversion_stats() counts
// the conversions). With device-resident forgeCol every operation runs on the GPU; only scalars come back.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <armadillo>

#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Penalties/Robject.h"

namespace forge {

// What a solver reports after each iteration (iteration counts from 1).
// Quantities are in the units of the caller's x, y and W, whatever scaling the solver applies inside.
struct PcgIterationInfo {
    uword iteration = 0;
    double cost = 0;           // Phi(x) = ||W^{1/2}(y - G x)||^2 + R(x) at the new x
    double gradient_norm = 0;  // ||gradient of the cost|| at the x the step started from
    double step = 0;           // step length taken along the search direction
    double elapsed_s = 0;      // wall time since the solver started, in seconds
};

template <typename T1>
struct PcgOptions {
    // Stop when ||gradient|| <= tolerance * ||gradient at x0|| (0 = run all niter iterations).
    T1 tolerance = T1(0);
    // The tolerance's reference is the gradient at x = 0 instead of at x0 (one more gradient evaluation, an apply
    // of the operator and of its adjoint, when x0 is not 0): a solve started from an earlier image (a warm start)
    // then stops where one started from zero would, rather than at a fraction of its own, smaller, first gradient.
    bool tolerance_from_zero = false;
    // Called after every iteration. Computing the cost costs one extra penalty evaluation per iteration,
    // done only when a callback is set.
    std::function<void(const PcgIterationInfo&)> callback;
    // solve_pwls_pcg_normal only: y^H W y of the data behind b = G^H W y. Given (>= 0), the callback's cost is
    // Phi(x) = y^H W y + x^H N x - 2 Re(x^H b) + R(x), the cost solve_pwls_pcg reports; otherwise (< 0, the
    // default) the normal form knows no y and reports Phi(x) - y^H W y.
    double data_norm2 = -1;
    // The callback's info.cost: computed every iteration (true), or NaN (false), which saves the cost's
    // reductions each iteration (on the GPU three waits for the device); SolverReport::final_cost has it at the end.
    bool callback_cost = true;
    // M, an approximation of the inverse Hessian (Hermitian positive definite, any scale): the search directions
    // follow M g instead of the gradient g (preconditioned conjugate gradients), which reaches the same minimiser in
    // fewer iterations where M matches the Hessian's spectrum (CirculantPreconditioner.h). Empty: none (M = I).
    // Called once an iteration with a vector where the solve runs (host or GPU), it returns one of the same length
    // and place. The tolerance stays on ||g||.
    using Preconditioner = std::function<forgeCol<forgeComplex<T1>>(const forgeCol<forgeComplex<T1>>&)>;
    Preconditioner preconditioner;
};

// Why a solver stopped.
enum class StopReason {
    IterationLimit,  // ran niter iterations
    Tolerance,       // ||gradient|| <= tolerance * ||initial gradient||
    ZeroGradient,    // the gradient is exactly zero: x is the minimiser
    FlatDirection,   // the cost's curvature along the search direction is not positive (finite): no step decreases
                     // it (a direction in the operator's and the penalty's null space, or rounding at convergence)
};

inline const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::IterationLimit: return "iteration limit";
        case StopReason::Tolerance: return "tolerance";
        case StopReason::ZeroGradient: return "zero gradient";
        case StopReason::FlatDirection: return "flat search direction";
    }
    return "?";
}

// The same as a token, as forge-recon's --report and Python's report write it: "iteration_limit", "tolerance",
// "zero_gradient", "flat_direction".
inline const char* stop_reason_token(StopReason r) {
    switch (r) {
        case StopReason::IterationLimit: return "iteration_limit";
        case StopReason::Tolerance: return "tolerance";
        case StopReason::ZeroGradient: return "zero_gradient";
        case StopReason::FlatDirection: return "flat_direction";
    }
    return "unknown";
}

// What a solver did (filled when a SolverReport* is passed).
struct SolverReport {
    uword iterations = 0;
    bool converged = false;  // stopped before the iteration limit (stop_reason other than IterationLimit)
    StopReason stop_reason = StopReason::IterationLimit;
    double final_gradient_norm = 0;    // at the start of the last iteration (or where it stopped)
    double initial_gradient_norm = 0;  // at x0
    double elapsed_s = 0;
    // PCG solvers: the cost at the returned x, as their callback reports it (PcgIterationInfo::cost; the normal form
    // without PcgOptions::data_norm2 leaves y^H W y out), evaluated once at the end. NaN where not computed.
    double final_cost = std::numeric_limits<double>::quiet_NaN();
};

namespace solver_detail {

template <typename T1>
using FCx = forgeCol<forgeComplex<T1>>;

// Re(a^H b), accumulated in double.
template <typename T1>
double re_dot(const FCx<T1>& a, const FCx<T1>& b) {
    return double(cdot(a, b).re);
}

// (Re(a^H b), Re(c^H d)): on the GPU the double sums behind re_dot (which rounds them to T1), from one pass and
// one wait for both; on the host re_dot's values.
template <typename T1>
std::pair<double, double> re_dot2(const FCx<T1>& a, const FCx<T1>& b, const FCx<T1>& c, const FCx<T1>& d) {
    if (!a.on_gpu()) return {re_dot<T1>(a, b), re_dot<T1>(c, d)};
    for (const FCx<T1>* v : {&b, &c, &d}) detail::require_same_place_and_size(a, *v, "re_dot2");
    return device::re_dot2(a.device_memptr(), b.device_memptr(), c.device_memptr(), d.device_memptr(), a.n_elem);
}

// Re(a^H diag(w) a) = sum w |a|^2
template <typename T1>
double weighted_norm2(const FCx<T1>& a, const forgeCol<T1>& w) {
    return re_dot<T1>(a, FCx<T1>(a % w));
}

template <typename T1>
FCx<T1> times_w(const forgeCol<T1>& w, const FCx<T1>& a) {
    return a % w;
}

// y += a x
template <typename T1>
void add_scaled(FCx<T1>& y, T1 a, const FCx<T1>& x) {
    axpy(forgeComplex<T1>(a), x, y);
}
// y = x + b y
template <typename T1>
void scale_add(FCx<T1>& y, T1 b, const FCx<T1>& x) {
    axpby(forgeComplex<T1>(1), x, forgeComplex<T1>(b), y);
}

template <typename T1>
double vnorm(const FCx<T1>& a) {
    return double(norm(a));
}

template <typename T>
bool on_gpu(const forgeCol<T>& v) {
    return v.on_gpu();
}

inline void require_len(const char* solver, const char* name, uword actual, uword expected, const char* what) {
    if (actual != expected) {
        std::ostringstream m;
        m << solver << ": " << name << " has " << actual << " entries, expected " << what << " = " << expected;
        throw invalid_argument(m.str());
    }
}

// W: one finite weight >= 0 per sample. A negative weight makes the cost unbounded below (the step
// denominator turns negative and the solver would stop without a word); NaN/Inf poison every iterate.
template <typename T1>
void require_valid_weights(const char* solver, const T1* w, uword n) {
    for (uword i = 0; i < n; ++i) {
        if (!(std::isfinite(w[i]) && w[i] >= T1(0))) {
            std::ostringstream m;
            m << solver << ": W[" << i << "] is " << w[i] << "; the weights must be finite and >= 0";
            throw invalid_argument(m.str());
        }
    }
}
template <typename T1>
void require_valid_weights(const char* solver, const arma::Col<T1>& W) {
    require_valid_weights(solver, W.memptr(), W.n_elem);
}
// On the GPU without copying W to the host, from two exact tests: 0 * W is 0 exactly where W is finite
// (NaN where it is NaN or Inf), and W - |W| is 0 exactly where W >= 0.
template <typename T1>
void require_valid_weights(const char* solver, const forgeCol<T1>& W) {
    if (!W.on_gpu()) return require_valid_weights(solver, W.host_data(), W.n_elem);
    const bool finite = double(norm(forgeCol<T1>(W * T1(0)))) == 0;
    if (!finite || !(double(norm(forgeCol<T1>(W - abs(W)))) == 0)) {
        throw invalid_argument(std::string(solver) + ": W has " + (finite ? "a negative entry" : "a NaN or Inf entry") +
                               "; the weights must be finite and >= 0");
    }
}

template <typename XV, typename WV, typename YV>
void require_same_place(const char* solver, const XV& x0, const WV& W, const YV& y) {
    const bool gx = on_gpu(x0), gw = on_gpu(W), gy = on_gpu(y);
    if (gx != gw || gx != gy) {
        std::ostringstream m;
        m << solver << ": x0 is on the " << (gx ? "GPU" : "host") << ", W on the " << (gw ? "GPU" : "host")
          << " and y on the " << (gy ? "GPU" : "host") << "; put all three in the same place (put_on_gpu/get_from_gpu)";
        throw residency_error(m.str());
    }
}

// ---- scaling. Multiplying by a power of two is exact in floating point (while nothing leaves the normal range), so
// a solve on y / 2^e, scaled back, gives exactly the iterates of the solve on y wherever that one stays in range.

// The power of two nearest to v > 0 (1 for v = 0, Inf or NaN), its exponent clamped so that it and its inverse
// are normal T1 numbers.
template <typename T1>
double pow2_near(double v) {
    if (!(v > 0) || !std::isfinite(v)) return 1.0;
    int e = std::ilogb(v);
    if (std::ldexp(v, -e) >= 1.4142135623730951) ++e;
    const int lo = std::numeric_limits<T1>::min_exponent, hi = std::numeric_limits<T1>::max_exponent - 2;
    return std::ldexp(1.0, std::max(lo, std::min(hi, e)));
}

// ||v|| as a double, also where ||v||^2 leaves T1's range (forgeCol's norm() returns T1, and on the GPU rounds
// ||v||^2 to T1): then retried on v times a power of two. NaN when v holds a NaN, +Inf when it holds an Inf.
template <typename T>
double robust_norm(const forgeCol<T>& v) {
    using R = real_t<T>;
    const double n = double(norm(v));
    if (std::isnan(n) || (n > 0 && std::isfinite(n))) return n;
    // Down by 2^-k when the squares overflowed, up by 2^k when they underflowed (v != 0 below ~sqrt(min T1)):
    // k = half the exponent range plus 24 bits brings sum |v|^2 of up to 2^40 entries back into range.
    const int k = std::numeric_limits<R>::max_exponent / 2 + 24;
    const int shift = std::isinf(n) ? -k : k;
    forgeCol<T> w(v);
    w *= T(R(std::ldexp(1.0, shift)));
    const double m = double(norm(w));
    return std::isfinite(m) ? std::ldexp(m, -shift) : m;
}

// The power of two nearest to the root mean square of v (1 for v = 0). Throws forge::invalid_argument naming
// 'what' when v holds a NaN or an Inf.
template <typename T>
double pow2_rms(const char* solver, const char* what, const forgeCol<T>& v) {
    const double n = robust_norm(v);
    if (!std::isfinite(n)) {
        throw invalid_argument(std::string(solver) + ": " + what + " has a NaN or Inf entry (" + what +
                               " must be finite)");
    }
    return v.n_elem ? pow2_near<real_t<T>>(n / std::sqrt(double(v.n_elem))) : 1.0;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace solver_detail
}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::PcgIterationInfo;
using forge::PcgOptions;
using forge::SolverReport;
using forge::StopReason;
#endif
