#pragma once
// TimeSegmentation<T1, Tobj>: off-resonance (field map) correction by time segmentation around any
// field-free encoding operator G (Gnufft, Gfft, ...):
//
//   exp(-i FM_k t_j) ~= sum_{l=0..L} a_l(t_j) exp(-i FM_k tau_l),   tau_l = t_min + l (t_max - t_min) / L
//   forward  s = sum_l a_l .* G (exp(-i field_map tau_l) .* m)
//   adjoint  m = sum_l exp(+i field_map tau_l) .* G^H (conj(a_l) .* s)      (the exact adjoint of the forward)
//
// so that TimeSegmentation(G, field_map, t, L) approximates Gdft(..., field_map, t) (forward exp(-i(2 pi k.r +
// field_map t))). L segments use L+1 nodes, i.e. L+1 applications of G per transform. 1 <= L <= n1 (more segments than
// samples cost more than the exact Gdft), and the interpolators and phase maps, about
// (L+1) (n1 + 2 n1 + 2 n2) complex values, must fit in the machine's memory. Interpolators:
//   TSInterp::Hanning  a_l(t) = 1/2 (1 + cos(pi (t - tau_l) / dtau)) for |t - tau_l| < dtau (Sutton et al. 2003)
//   TSInterp::MinMax   least-squares (min-max) interpolators a(t) = (E^H D E)^-1 E^H D e(t) over the
//                      field-map histogram D (Fessler et al. 2005)
// Units: field_map in rad/s (n2 entries, one per pixel of G), t in seconds (n1 entries, one per sample of G).
// choose_segments() picks the smallest L whose estimated RMS error over the (field map, time) pairs is below a
// requested value and reports the achieved RMS and maximum errors; for random images the relative error of
// the operator against Gdft is close to that RMS value.
// Built from parts (Composition.h): Chain(StackedDiagonal(exp(-i field_map tau_l), L+1), Batched(G, L+1),
// AdjointOf(StackedDiagonal(conj(a_l), L+1))): the L+1 segments go to G as one batch (one batched Gnufft,
// Gfft or Gdft call), and the adjoint follows by construction. G is any LinearOperator<T1>, user-written
// ones included. Host data runs on the host; a forgeCol on the GPU runs wherever G runs it (all
// element-wise work on the GPU).
#include <complex>
#include <memory>

#include <armadillo>

#include "forge/Operators/Composition.h"

namespace forge {

enum class TSInterp { Hanning, MinMax };

struct TSErrorReport {
    uword L = 0;           // number of segments (L+1 interpolation nodes)
    double rms_error = 0;  // RMS of |exp(-i w t) - sum_l a_l(t) exp(-i w tau_l)| over the field map and times
    double max_error = 0;  // its maximum over the same pairs
};

// The factors of L segments: interpolators a_l(t_j) (n1 x (L+1)) and node times tau_l (L+1 entries, seconds),
// so that exp(-i FM_k t_j) ~= sum_l a_l(t_j) exp(-i FM_k tau_l).
struct TSFactors {
    arma::cx_mat a;
    arma::vec tau;
};

// The segmented operator for any G (compiled for float and double); TimeSegmentation<T1, Tobj> below adds
// the typed access to G.
template <typename T1>
class TimeSegmentationCore : public ComposedOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;

    TimeSegmentationCore(OperatorPtr<T1> G, const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec, uword L,
                         TSInterp type);

    uword n1() const { return this->codomain_size(); }
    uword L() const { return L_; }
    TSInterp interpolator() const { return type_; }
    // Interpolator values a_l(t_j): n1 x (L+1).
    arma::Mat<std::complex<T1>> interpolators() const;
    // The segments' phase maps exp(-i field_map tau_l) as the operator applies them (ToeplitzNormal built from this
    // operator shares them).
    const std::shared_ptr<const StackedDiagonal<T1>>& phase_maps() const { return phases_; }

    // The interpolators and nodes the operator uses for this field map and these times (same checks).
    static TSFactors segment_factors(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec, uword L,
                                     TSInterp type);

    // The segments' phase maps exp(-i field_map tau_l), l = 0 .. tau.n_elem - 1, back to back (the order of
    // StackedDiagonal's weights), in double before the rounding to T1, on the host threads.
    static forgeCol<forgeComplex<T1>> segment_phases(const arma::Col<T1>& field_map, const arma::vec& tau);
    // The same as a stacked diagonal (the operator's phase maps): made on the GPU when there is one (the host copy
    // on first host use), where tens of MB of maps are made in microseconds and need no upload; else on the host.
    static std::shared_ptr<StackedDiagonal<T1>> segment_phase_maps(const arma::Col<T1>& field_map, const arma::vec& tau,
                                                                   std::string name);

    // Estimated approximation error of L segments for this field map and these times (finite values; L as for
    // the operator, with n1 = timeVec's length).
    static TSErrorReport approximation_error(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec, uword L,
                                             TSInterp type);
    // Smallest L (1..min(Lmax, n1)) with estimated RMS error <= 0.9 * target (a 10% margin for the binning of
    // the estimate); throws forge::invalid_argument, giving both numbers, when even the largest L does not.
    static TSErrorReport choose_segments(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec,
                                         double targetError, TSInterp type = TSInterp::MinMax, uword Lmax = 64);

protected:
    const LinearOperator<T1>& parts() const override { return *parts_; }

private:
    uword L_;
    TSInterp type_;
    std::shared_ptr<const StackedDiagonal<T1>> interp_;  // conj(a_l): its adjoint is the weighted segment sum
    std::shared_ptr<const StackedDiagonal<T1>> phases_;  // exp(-i field_map tau_l)
    OperatorPtr<T1> parts_;
};

template <typename T1, typename Tobj = LinearOperator<T1>>
class TimeSegmentation : public TimeSegmentationCore<T1> {
    static_assert(std::is_base_of<LinearOperator<T1>, Tobj>::value,
                  "TimeSegmentation: G must be a forge::LinearOperator<T1>");

public:
    // G is copied (Tobj by value) or shared (a pointer).
    TimeSegmentation(const Tobj& G, const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec, uword L,
                     TSInterp type = TSInterp::Hanning)
        : TimeSegmentation(std::make_shared<Tobj>(G), field_map, timeVec, L, type) {}
    TimeSegmentation(std::shared_ptr<const Tobj> G, const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec,
                     uword L, TSInterp type = TSInterp::Hanning)
        : TimeSegmentationCore<T1>(G, field_map, timeVec, L, type), G_(std::move(G)) {}
    const Tobj& encoding_operator() const { return *G_; }

private:
    std::shared_ptr<const Tobj> G_;
};

extern template class TimeSegmentationCore<float>;
extern template class TimeSegmentationCore<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::TimeSegmentation;
using forge::TimeSegmentationCore;
using forge::TSFactors;
using forge::TSInterp;
#endif
