#pragma once
// TimeSegmentation<T1, Tobj>: off-resonance (field map) correction by time segmentation around any
// field-free encoding operator G (Gnufft, Gfft, ...):
//
//   exp(-i FM_k t_j) ~= sum_{l=0..L} a_l(t_j) exp(-i FM_k tau_l),   tau_l = t_min + l (t_max - t_min) / L
//   forward  s = sum_l a_l .* G (exp(-i FM tau_l) .* m)
//   adjoint  m = sum_l exp(+i FM tau_l) .* G^H (conj(a_l) .* s)      (the exact adjoint of the forward)
//
// so that TimeSegmentation(G, FM, t, L) approximates Gdft(..., FM, t) (forward exp(-i(2 pi k.r + FM t))).
// L segments use L+1 nodes, i.e. L+1 applications of G per transform. 1 <= L <= n1 (more segments than
// samples cost more than the exact Gdft), and the interpolators and phase maps, about
// (L+1) (n1 + 2 n1 + 2 n2) complex values, must fit in the machine's memory. Interpolators:
//   TSInterp::Hanning  a_l(t) = 1/2 (1 + cos(pi (t - tau_l) / dtau)) for |t - tau_l| < dtau (Sutton et al. 2003)
//   TSInterp::MinMax   least-squares (min-max) interpolators a(t) = (E^H D E)^-1 E^H D e(t) over the
//                      field-map histogram D (Fessler et al. 2005)
// Units: FM in rad/s (n2 entries, one per pixel of G), t in seconds (n1 entries, one per sample of G).
// choose_segments() picks the smallest L whose estimated RMS error over the (field map, time) pairs is below a
// requested value and reports the achieved RMS and maximum errors; for random images the relative error of
// the operator against Gdft is close to that RMS value.
// Host data runs on the host; a forgeCol on the GPU runs wherever G runs it (all element-wise work on the GPU).
#include <complex>
#include <memory>
#include <mutex>
#include <vector>

#include <armadillo>

#include "forge/Core/forgeCol.h"

namespace forge {

enum class TSInterp { Hanning, MinMax };

struct TSErrorReport {
    uword L = 0;             // number of segments (L+1 interpolation nodes)
    double rms_error = 0;    // RMS of |exp(-i w t) - sum_l a_l(t) exp(-i w tau_l)| over the field map and times
    double max_error = 0;    // its maximum over the same pairs
};

template <typename T1, typename Tobj>
class TimeSegmentation {
public:
    using complex_type = std::complex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<forgeComplex<T1>>;

    TimeSegmentation(const Tobj& G, const arma::Col<T1>& fieldMap, const arma::Col<T1>& timeVec, uword L,
                     TSInterp type = TSInterp::Hanning);

    ArmaVec operator*(const ArmaVec& image) const;
    ForgeVec operator*(const ForgeVec& image) const;
    ArmaVec operator/(const ArmaVec& kdata) const;
    ForgeVec operator/(const ForgeVec& kdata) const;

    uword n1() const { return n1_; }
    uword n2() const { return n2_; }
    uword L() const { return L_; }
    TSInterp interpolator() const { return type_; }
    // Interpolator values a_l(t_j): n1 x (L+1).
    arma::Mat<std::complex<T1>> interpolators() const;

    // Estimated approximation error of L segments for this field map and these times (finite values; L as for
    // the operator, with n1 = timeVec's length).
    static TSErrorReport approximation_error(const arma::Col<T1>& fieldMap, const arma::Col<T1>& timeVec, uword L,
                                             TSInterp type);
    // Smallest L (1..min(Lmax, n1)) with estimated RMS error <= 0.9 * target (a 10% margin for the binning of
    // the estimate); throws forge::invalid_argument, giving both numbers, when even the largest L does not.
    static TSErrorReport choose_segments(const arma::Col<T1>& fieldMap, const arma::Col<T1>& timeVec,
                                         double targetError, TSInterp type = TSInterp::MinMax, uword Lmax = 64);

private:
    ForgeVec apply(const ForgeVec& in, bool forward) const;
    struct Factors {
        std::vector<ForgeVec> a, aConj, phase, phaseConj;  // per node
    };
    const Factors& factors_for(bool gpu) const;

    Tobj G_;
    uword n1_, n2_, L_;
    TSInterp type_;
    Factors host_;
    mutable std::shared_ptr<Factors> device_;
    mutable std::shared_ptr<std::mutex> deviceMutex_;
};

}  // namespace forge

#ifndef FORGE_NO_GLOBAL_NAMES
using forge::TimeSegmentation;
using forge::TSInterp;
#endif
