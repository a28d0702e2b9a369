#pragma once
// Shared pieces of forge's iterative solvers: options, per-iteration information, and the small set of
// vector operations the loops need, on forgeCol (host or device). The solvers' arma::Col overloads convert
// once at entry and once at exit; inside the loop every vector is a forgeCol (arma_conversion_stats() counts
// the conversions). With device-resident forgeCol every operation runs on the GPU; only scalars come back.
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
struct PcgIterationInfo {
    uword iteration = 0;
    double cost = 0;           // ||W^{1/2}(y - G x)||^2 + R(x) at the new x
    double gradient_norm = 0;  // ||gradient of the cost|| at the x the step started from
    double step = 0;           // step length taken along the search direction
    double elapsed_s = 0;      // wall time since the solver started, in seconds
};

template <typename T1>
struct PcgOptions {
    // Stop when ||gradient|| <= tolerance * ||gradient at x0|| (0 = run all niter iterations).
    T1 tolerance = T1(0);
    // Called after every iteration. Computing the cost costs one extra penalty evaluation per iteration,
    // done only when a callback is set.
    std::function<void(const PcgIterationInfo&)> callback;
};

// What a solver did (filled when a SolverReport* is passed).
struct SolverReport {
    uword iterations = 0;
    bool converged = false;  // stopped by the tolerance
    double final_gradient_norm = 0;
    double initial_gradient_norm = 0;
    double elapsed_s = 0;
};

namespace solver_detail {

template <typename T1>
using FCx = forgeCol<forgeComplex<T1>>;

// Re(a^H b), accumulated in double.
template <typename T1>
double re_dot(const FCx<T1>& a, const FCx<T1>& b) {
    return double(cdot(a, b).re);
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
          << " and y on the " << (gy ? "GPU" : "host") << "; put all three in the same place (putOnGPU/getFromGPU)";
        throw residency_error(m.str());
    }
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace solver_detail
}  // namespace forge

#ifndef FORGE_NO_GLOBAL_NAMES
using forge::PcgIterationInfo;
using forge::PcgOptions;
using forge::SolverReport;
#endif
