#include "forge/Operators/TimeSegmentation.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/cuda/SenseKernels.h"
#include "forge/Operators/detail/FixedOrderProduct.h"

namespace forge {

namespace {
constexpr double kPi = 3.14159265358979323846;

struct Nodes {
    double t0, dtau;
    uword L;
    double tau(uword l) const { return t0 + double(l) * dtau; }
};
Nodes make_nodes(double tmin, double tmax, uword L) {
    double dtau = (tmax - tmin) / double(L);
    if (!(dtau > 0)) dtau = 1.0;  // all samples at one time: a_0 = 1
    return {tmin, dtau, L};
}

// Histogram of v over nb equal bins: centres and weights of the non-empty bins.
void histogram(const arma::vec& v, uword nb, arma::vec& centres, arma::vec& weights) {
    const double lo = v.min(), hi = v.max();
    if (!(hi > lo)) {
        centres = arma::vec{lo};
        weights = arma::vec{double(v.n_elem)};
        return;
    }
    arma::vec cnt(nb, arma::fill::zeros);
    const double w = (hi - lo) / double(nb);
    for (double x : v) cnt(std::min(nb - 1, uword((x - lo) / w)))++;
    arma::uvec nz = arma::find(cnt > 0);
    centres.set_size(nz.n_elem);
    weights = cnt(nz);
    for (uword i = 0; i < nz.n_elem; ++i) centres(i) = lo + (double(nz(i)) + 0.5) * w;
}

// Bin counts are clamped in double before the conversion: a huge span would not fit a uword.
uword field_bins(const arma::vec& fm, const arma::vec& t) {
    const double span = (fm.max() - fm.min()) * (t.max() - t.min());
    return uword(std::min(4096.0, std::max(64.0, std::ceil(span / 0.02))));
}

// E(b, l) = exp(-i w_b tau_l)
arma::cx_mat node_phases(const arma::vec& w, const Nodes& n) {
    arma::cx_mat E(w.n_elem, n.L + 1);
    for (uword l = 0; l <= n.L; ++l)
        for (uword b = 0; b < w.n_elem; ++b) E(b, l) = std::polar(1.0, -w(b) * n.tau(l));
    return E;
}
// X(b, i) = exp(-i w_b t_i)
arma::cx_mat time_phases(const arma::vec& w, const arma::vec& t) {
    arma::cx_mat X(w.n_elem, t.n_elem);
    for (uword i = 0; i < t.n_elem; ++i)
        for (uword b = 0; b < w.n_elem; ++b) X(b, i) = std::polar(1.0, -w(b) * t(i));
    return X;
}
// The same at n equally spaced times t_i = t0 + i dt, by rotating each row by exp(-i w_b dt) from one time to the
// next (a complex product instead of a sine and cosine: the tables of coefficients() hold up to 4096 x 65537
// entries), recomputed exactly every 64 times so that rounding does not accumulate (relative error ~1e-14).
arma::cx_mat time_phases_uniform(const arma::vec& w, double t0, double dt, uword n) {
    constexpr uword kExactEvery = 64;
    const uword nb = w.n_elem;
    arma::cx_mat X(nb, n);
    arma::cx_vec step(nb);
    for (uword b = 0; b < nb; ++b) step(b) = std::polar(1.0, -w(b) * dt);
    for (uword i = 0; i < n; ++i) {
        std::complex<double>* x = X.colptr(i);
        if (i % kExactEvery == 0) {
            const double ti = t0 + double(i) * dt;
            for (uword b = 0; b < nb; ++b) x[b] = std::polar(1.0, -w(b) * ti);
        } else {
            const std::complex<double>* prev = X.colptr(i - 1);
            for (uword b = 0; b < nb; ++b) x[b] = prev[b] * step(b);
        }
    }
    return X;
}

// Least-squares (min-max) interpolators over a field-map histogram (centres w, weights c):
// a(t) = (E^H D E)^+ E^H D x(t) = M x(t), M = (E^H D E)^+ E^H D ((L+1) x bins), for many times at once.
// The products are detail::fixed_order_*: the interpolators, and so every image made with them, are the same bits
// on any number of threads (a threaded BLAS's are not).
arma::cx_mat minmax_operator(const arma::vec& w, const arma::vec& c, const Nodes& n) {
    const arma::cx_mat E = node_phases(w, n);
    const arma::cx_vec cc = arma::conv_to<arma::cx_vec>::from(c);
    arma::cx_mat DE = E.each_col() % cc;
    arma::cx_mat EHE = detail::fixed_order_transpose_product(E, DE, true);
    arma::cx_mat P = arma::pinv(EHE, 1e-12 * arma::norm(EHE, 2));
    return detail::fixed_order_product(P, arma::cx_mat(DE.t()));
}
// (M X)^T for M = minmax_operator(): the interpolators at the times whose phases X are given, times x (L+1).
arma::cx_mat interpolators_at(const arma::cx_mat& M, const arma::cx_mat& X) {
    return detail::fixed_order_transpose_product(X, arma::cx_mat(M.st()), false);
}
// a at the times whose phases X = time_phases(w, times) are given: times x (L+1).
arma::cx_mat minmax_at(const arma::vec& w, const arma::vec& c, const Nodes& n, const arma::cx_mat& X) {
    return interpolators_at(minmax_operator(w, c, n), X);
}

// Interpolator matrix (n x (L+1)) at the times t.
arma::cx_mat coefficients(const arma::vec& fm, const arma::vec& t, const Nodes& n, uword nbins, TSInterp type) {
    const uword L = n.L;
    arma::cx_mat A(t.n_elem, L + 1, arma::fill::none);  // every branch writes every entry (no serial zeroing first)
    if (type == TSInterp::Hanning) {
        for (uword l = 0; l <= L; ++l)
            for (uword j = 0; j < t.n_elem; ++j) {
                const double d = std::abs(t(j) - n.tau(l)) / n.dtau;
                A(j, l) = d < 1 ? 0.5 * (1 + std::cos(kPi * d)) : 0.0;
            }
        return A;
    }
    arma::vec centres, weights;
    histogram(fm, nbins, centres, weights);
    const double T = t.max() - t.min();
    if (!(T > 0)) {
        A.each_row() = minmax_at(centres, weights, n, time_phases(centres, arma::vec{t(0)}));
        return A;
    }
    // a(t) is smooth on the scale 1/max|w|: tabulate it finely and interpolate linearly (relative error
    // about (max|w| T / nt)^2 / 8), unless there are fewer times than table entries: then exactly.
    const double wmax = std::max(std::abs(fm.min()), std::abs(fm.max()));
    const uword nt = uword(std::min(65536.0, std::max(1024.0, 64 * wmax * T)));
    if (t.n_elem <= nt) return minmax_at(centres, weights, n, time_phases(centres, t));
    // The table by blocks of times: each block's phases (bins x block) stay in cache, where the whole table's
    // (up to 4096 x 65537) were tens of MB of first-touch page faults.
    const arma::cx_mat M = minmax_operator(centres, weights, n);
    arma::cx_mat tab(nt + 1, L + 1);
    constexpr uword kBlock = 256;
    const double dt = T / double(nt);
    for (uword i0 = 0; i0 <= nt; i0 += kBlock) {
        const uword count = std::min(kBlock, nt + 1 - i0);
        tab.rows(i0, i0 + count - 1) =
            interpolators_at(M, time_phases_uniform(centres, t.min() + double(i0) * dt, dt, count));
    }
    // Sample by sample on the threads, entry by entry (assigning whole rows of the column-major A through
    // arma took 13 s for 131072 samples).
    const double t0 = t.min();
    const long long n1 = static_cast<long long>(t.n_elem);
#pragma omp parallel for if (n1 >= (1 << 15))
    for (long long jj = 0; jj < n1; ++jj) {
        const uword j = uword(jj);
        const double x = (t(j) - t0) / T * double(nt);
        const uword i = std::min<uword>(nt - 1, uword(x));
        const double f = x - double(i);
        for (uword l = 0; l <= L; ++l) A(j, l) = (1 - f) * tab(i, l) + f * tab(i + 1, l);
    }
    return A;
}

// Bounds L before anything of size L is allocated. More segments than samples only add applications of G
// (n1 of them cost more than the exact Gdft), so L <= n1. The memory the interpolators, phase maps and, for
// min-max, the least-squares tables take must fit in this machine's memory. 'operatorFactors': the n1 x
// (L+1) interpolators and 2 (L+1) vectors of n1 and of n2 entries the operator keeps; else (the error
// estimate) the interpolators at <= 256 time bins only.
void require_segments(const char* where, uword L, uword n1, uword n2, TSInterp type, double complexBytes,
                      bool operatorFactors) {
    if (L == 0) {
        throw invalid_argument(std::string(where) + ": L (number of time segments) must be at least 1, got 0");
    }
    if (L > n1) {
        std::ostringstream m;
        m << where << ": L = " << L << " time segments exceed the " << n1
          << " samples (timeVec entries); more segments than samples only add applications of G (from there on "
             "the exact Gdft is cheaper): use L <= "
          << n1;
        throw invalid_argument(m.str());
    }
    const double nodes = double(L) + 1, cd = 16;  // complex<double>
    double bytes = operatorFactors ? nodes * (double(n1) * (cd + 2 * complexBytes) + double(n2) * 2 * complexBytes)
                                   : nodes * 256 * cd * 2;
    if (type == TSInterp::MinMax) bytes += nodes * (65537.0 + 4096.0) * cd * 2 + nodes * nodes * cd * 4;
    const double mem = detail::physical_memory_bytes();
    if (mem > 0 && bytes > mem) {
        std::ostringstream m;
        m.precision(3);
        m << where << ": L = " << L << " time segments need about " << bytes / double(1ull << 30)
          << " GiB for the interpolators and phase maps (n1 = " << n1 << " samples, n2 = " << n2
          << " pixels), more than this machine's " << mem / double(1ull << 30) << " GiB of memory; use fewer segments";
        throw invalid_argument(m.str());
    }
}

template <typename T1>
void check_inputs(uword n1, uword n2, const arma::Col<T1>& fm, const arma::Col<T1>& t, uword L, TSInterp type) {
    const char* where = "TimeSegmentation";
    require_length(where, "field_map", fm.n_elem, n2, "n2 (pixels of G)");
    require_length(where, "timeVec", t.n_elem, n1, "n1 (samples of G)");
    require_finite(where, "field_map", fm.memptr(), fm.n_elem);
    require_finite(where, "timeVec", t.memptr(), t.n_elem);
    require_segments(where, L, n1, n2, type, double(sizeof(std::complex<T1>)), true);
}
}  // namespace

template <typename T1>
TimeSegmentationCore<T1>::TimeSegmentationCore(OperatorPtr<T1> G, const arma::Col<T1>& field_map,
                                               const arma::Col<T1>& timeVec, uword L, TSInterp type)
    : ComposedOperator<T1>("TimeSegmentation", 0, 0), L_(L), type_(type) {
    if (!G) throw invalid_argument("TimeSegmentation: G is a null operator");
    const uword n1 = G->codomain_size(), n2 = G->domain_size();
    check_inputs(n1, n2, field_map, timeVec, L, type);
    this->set_sizes(n1, n2);
    this->set_domain_shape(G->domain_shape());  // the image is G's
    const TSFactors f = segment_factors(field_map, timeVec, L, type);
    const arma::cx_mat& A = f.a;
    using C = std::complex<T1>;
    forgeCol<forgeComplex<T1>> aConj((L + 1) * n1);
    C* ac = reinterpret_cast<C*>(aConj.memptr());
    for (uword l = 0; l <= L; ++l)
        for (uword j = 0; j < n1; ++j) ac[l * n1 + j] = C(std::conj(A(j, l)));
    phases_ = segment_phase_maps(field_map, f.tau, "TimeSegmentation phase maps");
    interp_ = std::make_shared<StackedDiagonal<T1>>(std::move(aConj), L + 1, "TimeSegmentation interpolators");
    parts_ = chain<T1>(phases_, std::make_shared<Batched<T1>>(std::move(G), L + 1),
                       std::make_shared<AdjointOf<T1>>(interp_));
}

template <typename T1>
TSFactors TimeSegmentationCore<T1>::segment_factors(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec,
                                                    uword L, TSInterp type) {
    const char* where = "TimeSegmentation::segment_factors";
    if (field_map.is_empty() || timeVec.is_empty())
        throw invalid_argument(std::string(where) + ": field_map and timeVec must not be empty");
    require_finite(where, "field_map", field_map.memptr(), field_map.n_elem);
    require_finite(where, "timeVec", timeVec.memptr(), timeVec.n_elem);
    require_segments(where, L, timeVec.n_elem, field_map.n_elem, type, double(sizeof(std::complex<T1>)), true);
    const arma::vec fm = arma::conv_to<arma::vec>::from(field_map), t = arma::conv_to<arma::vec>::from(timeVec);
    const Nodes n = make_nodes(t.min(), t.max(), L);
    TSFactors f;
    f.a = coefficients(fm, t, n, field_bins(fm, t), type);
    f.tau.set_size(L + 1);
    for (uword l = 0; l <= L; ++l) f.tau(l) = n.tau(l);
    return f;
}

template <typename T1>
forgeCol<forgeComplex<T1>> TimeSegmentationCore<T1>::segment_phases(const arma::Col<T1>& field_map,
                                                                    const arma::vec& tau) {
    using C = std::complex<T1>;
    const uword n2 = field_map.n_elem, S = tau.n_elem;
    forgeCol<forgeComplex<T1>> out(S * n2);
    C* p = reinterpret_cast<C*>(out.memptr());
    // Uniform nodes (make_nodes's): exp(-i f tau_l) = exp(-i f tau_0) exp(-i f dtau)^l, two sincos per pixel
    // instead of S; the products' rounding (S - 1 of them, in double) stays far below float's.
    const double dtau = S > 1 ? tau(1) - tau(0) : 0.0, scale = S > 0 ? arma::abs(tau).max() : 0.0;
    bool uniform = true;
    for (uword l = 0; l < S; ++l) uniform = uniform && std::abs(tau(l) - (tau(0) + double(l) * dtau)) <= 1e-12 * scale;
    const long long n = static_cast<long long>(n2);
#pragma omp parallel for if (n * static_cast <long long>(S) >= (1 << 15))
    for (long long k = 0; k < n; ++k) {
        const double f = double(field_map[uword(k)]);
        if (!uniform) {
            for (uword l = 0; l < S; ++l) p[l * n2 + uword(k)] = C(std::polar(1.0, -f * tau(l)));
            continue;
        }
        std::complex<double> v = std::polar(1.0, -f * tau(0));
        const std::complex<double> step = std::polar(1.0, -f * dtau);
        for (uword l = 0; l < S; ++l, v *= step) p[l * n2 + uword(k)] = C(v);
    }
    return out;
}

template <typename T1>
std::shared_ptr<StackedDiagonal<T1>> TimeSegmentationCore<T1>::segment_phase_maps(const arma::Col<T1>& field_map,
                                                                                  const arma::vec& tau,
                                                                                  std::string name) {
    const uword S = tau.n_elem, n2 = field_map.n_elem;
    if (!device::available())
        return std::make_shared<StackedDiagonal<T1>>(segment_phases(field_map, tau), S, std::move(name));
    forgeCol<T1> fm(field_map);
    fm.put_on_gpu();
    forgeCol<double> t(tau);
    t.put_on_gpu();
    auto maps = forgeCol<forgeComplex<T1>>::device_uninitialized(S * n2);
    cuda::segment_phases<T1>(fm.device_memptr(), n2, t.device_memptr(), S, maps.device_memptr());
    // (fm and t go in stream order, after the kernel: no wait)
    return std::make_shared<StackedDiagonal<T1>>(std::move(maps), S, std::move(name));
}

template <typename T1>
arma::Mat<std::complex<T1>> TimeSegmentationCore<T1>::interpolators() const {
    const uword n1 = this->codomain_size();
    arma::Mat<std::complex<T1>> A(n1, L_ + 1);
    const forgeComplex<T1>* w = interp_->weights().host_data();
    for (uword l = 0; l <= L_; ++l)
        for (uword j = 0; j < n1; ++j) A(j, l) = std::conj(std::complex<T1>(w[l * n1 + j].re, w[l * n1 + j].im));
    return A;
}

namespace {
// What the error estimate of every L shares: the field-map and time histograms (centres and weights) and the
// phases exp(-i w_b t_i) at their centres.
struct ErrorTables {
    arma::vec wc, ww, tc, tw;
    arma::cx_mat X;  // bins of w x bins of t
    double tmin = 0, tmax = 0;
};
ErrorTables error_tables(const arma::vec& fm, const arma::vec& t) {
    ErrorTables e;
    histogram(fm, field_bins(fm, t), e.wc, e.ww);
    histogram(t, 256, e.tc, e.tw);
    e.X = time_phases(e.wc, e.tc);
    e.tmin = t.min();
    e.tmax = t.max();
    return e;
}
// RMS and largest |exp(-i w t) - sum_l a_l(t) exp(-i w tau_l)| over the histograms, with the interpolators as the
// operator builds them (same nodes and field histogram) at the time-bin centres.
TSErrorReport error_of(const ErrorTables& e, uword L, TSInterp type) {
    const Nodes n = make_nodes(e.tmin, e.tmax, L);
    arma::cx_mat A;
    if (type == TSInterp::Hanning) {
        A = coefficients(e.wc, e.tc, n, e.wc.n_elem, type);
    } else {
        A = minmax_at(e.wc, e.ww, n, e.X);
    }
    const arma::mat err = arma::abs(e.X.st() - detail::fixed_order_product(A, arma::cx_mat(node_phases(e.wc, n).st())));
    const arma::mat w = e.tw * e.ww.t();
    const double sum = arma::accu(w % err % err), wsum = arma::accu(w), mx = err.max();
    return {L, std::sqrt(sum / wsum), mx};
}
}  // namespace

template <typename T1>
TSErrorReport TimeSegmentationCore<T1>::approximation_error(const arma::Col<T1>& field_map,
                                                            const arma::Col<T1>& timeVec, uword L, TSInterp type) {
    const char* where = "TimeSegmentation::approximation_error";
    if (field_map.is_empty() || timeVec.is_empty())
        throw invalid_argument(std::string(where) + ": field_map and timeVec must not be empty");
    // NaN would drop out of the histograms and leave a falsely small error.
    require_finite(where, "field_map", field_map.memptr(), field_map.n_elem);
    require_finite(where, "timeVec", timeVec.memptr(), timeVec.n_elem);
    require_segments(where, L, timeVec.n_elem, field_map.n_elem, type, double(sizeof(std::complex<T1>)), false);
    const arma::vec fm = arma::conv_to<arma::vec>::from(field_map), t = arma::conv_to<arma::vec>::from(timeVec);
    return error_of(error_tables(fm, t), L, type);
}

template <typename T1>
TSErrorReport TimeSegmentationCore<T1>::choose_segments(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec,
                                                        double targetError, TSInterp type, uword Lmax) {
    if (!(targetError > 0)) {
        std::ostringstream m;
        m << "TimeSegmentation::choose_segments: targetError = " << targetError << "; expected a positive value";
        throw invalid_argument(m.str());
    }
    if (Lmax == 0) throw invalid_argument("TimeSegmentation::choose_segments: Lmax must be at least 1, got 0");
    if (field_map.is_empty() || timeVec.is_empty())
        throw invalid_argument("TimeSegmentation::choose_segments: field_map and timeVec must not be empty");
    // No more segments than samples (see require_segments).
    const uword last = std::min<uword>(Lmax, timeVec.n_elem);
    const double goal = 0.9 * targetError;
    TSErrorReport r;
    const char* where = "TimeSegmentation::choose_segments";
    require_finite(where, "field_map", field_map.memptr(), field_map.n_elem);
    require_finite(where, "timeVec", timeVec.memptr(), timeVec.n_elem);
    const ErrorTables tables =
        error_tables(arma::conv_to<arma::vec>::from(field_map), arma::conv_to<arma::vec>::from(timeVec));
    for (uword L = 1; L <= last; ++L) {
        require_segments(where, L, timeVec.n_elem, field_map.n_elem, type, double(sizeof(std::complex<T1>)), false);
        r = error_of(tables, L, type);
        if (r.rms_error <= goal) return r;
    }
    std::ostringstream m;
    m << "TimeSegmentation::choose_segments: even L = " << last << " segments give an estimated RMS error of "
      << r.rms_error << ", above " << goal << " = 0.9 x the requested " << targetError
      << " (the 10% margin covers the estimate's binning); ";
    if (last < Lmax) {
        m << "there are only " << timeVec.n_elem << " samples, and more segments than samples do not help: use Gdft";
    } else {
        m << "raise Lmax or use Gdft";
    }
    throw invalid_argument(m.str());
}

template class TimeSegmentationCore<float>;
template class TimeSegmentationCore<double>;

}  // namespace forge
