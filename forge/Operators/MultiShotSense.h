#pragma once
// MultiShotSense<T1, ShotOp>: what pcSENSE and pcSenseTimeSeg share. One coil-batched SENSE per shot s
// whose coil maps carry the shot's phase, S_c .* exp(-i P_s), so that
//
//   forward  y_{c,s} = A_s (x .* S_c .* exp(-i P_s))
//   adjoint  x       = sum_c sum_s conj(S_c) .* exp(+i P_s) .* (A_s^H y_{c,s})
//
// with data ordered shot fastest within coil: y_{c,s} (samplesPerShot values) at
// [(c*nShots + s) * samplesPerShot, ...). The derived classes build A_s (exact Gdft, or time-segmented
// Gnufft) and hand each shot to add_shot(). Host and device forgeCol data, as SENSE.
#include <cmath>
#include <vector>

#include "forge/Core/Validation.h"
#include "forge/Operators/SENSE.h"

namespace forge {

template <typename T1, typename ShotOp>
class MultiShotSense {
public:
    using complex_type = std::complex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<forgeComplex<T1>>;

    ForgeVec operator*(const ForgeVec& x) const {
        require_length(name_, "x", x.n_elem, n2_, "n2");
        ForgeVec out = ForgeVec::same_place(x, n_data());
        for (uword s = 0; s < nshots_; ++s) {
            const ForgeVec ys = shots_[s] * x;  // coil-major, samplesPerShot per coil
            for (uword c = 0; c < nc_; ++c)
                sense_detail::copy_block(ys, c * nsamp_, out, (c * nshots_ + s) * nsamp_, nsamp_);
        }
        return out;
    }
    ForgeVec operator/(const ForgeVec& y) const {
        require_length(name_, "y", y.n_elem, n_data(), "samplesPerShot * nShots * nc");
        ForgeVec out;
        ForgeVec ys = ForgeVec::same_place(y, nsamp_ * nc_);
        for (uword s = 0; s < nshots_; ++s) {
            for (uword c = 0; c < nc_; ++c)
                sense_detail::copy_block(y, (c * nshots_ + s) * nsamp_, ys, c * nsamp_, nsamp_);
            if (s == 0) {
                out = shots_[s] / ys;
            } else {
                out += shots_[s] / ys;
            }
        }
        return out;
    }
    ArmaVec operator*(const ArmaVec& x) const { return (*this * ForgeVec(x)).getArma(); }
    ArmaVec operator/(const ArmaVec& y) const { return (*this / ForgeVec(y)).getArma(); }

    // Coil batching of the per-shot SENSE operators (default on).
    void set_coil_batching(bool on) {
        for (auto& S : shots_) S.set_coil_batching(on);
    }
    void prepare_device() const {
        for (const auto& S : shots_) S.prepare_device();
    }

    uword n1() const { return nsamp_ * nshots_; }  // samples per coil (all shots)
    uword n2() const { return n2_; }                // pixels
    uword n_coils() const { return nc_; }
    uword n_shots() const { return nshots_; }
    uword samples_per_shot() const { return nsamp_; }
    uword n_data() const { return nData_; }  // length of A * x: samplesPerShot * nShots * nc

protected:
    // Checks the arguments every multi-shot operator takes (trajectory and time matrices of
    // samplesPerShot x nShots, nc maps of n2 pixels, n2 x nShots phase maps).
    MultiShotSense(const char* name, const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz,
                   const arma::Mat<T1>& t, uword n2, const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc)
        : name_(name), nsamp_(kx.n_rows), nshots_(kx.n_cols), n2_(n2), nc_(nc) {
        require_positive(name, "nc (number of coils)", nc);
        if (nsamp_ == 0 || nshots_ == 0) {
            throw invalid_argument(std::string(name) + ": kx must be samplesPerShot x nShots with both at least 1");
        }
        require_positive(name, "n2 (number of pixels)", n2);
        require_shape(name, "ky", ky, nsamp_, nshots_, "size(kx)");
        require_shape(name, "kz", kz, nsamp_, nshots_, "size(kx)");
        require_shape(name, "t", t, nsamp_, nshots_, "size(kx)");
        nData_ = checked_product(name, {{"samplesPerShot", nsamp_}, {"nShots", nshots_}, {"nc", nc}});
        require_length(name, "maps", maps.n_elem, checked_product(name, {{"n2", n2}, {"nc", nc}}), "n2 * nc");
        require_shape(name, "shotPhases", shotPhases, n2, nshots_, "n2 x nShots");
        shots_.reserve(nshots_);
    }

    // Adds shot s (in order): its operator A_s and the coil maps with its phase folded in once, here.
    void add_shot(const ShotOp& A, const ArmaVec& maps, const arma::Mat<T1>& shotPhases) {
        const uword s = shots_.size();
        ArmaVec m(n2_ * nc_);
        for (uword k = 0; k < n2_; ++k) {
            const double p = double(shotPhases(k, s));
            const complex_type e(T1(std::cos(p)), T1(-std::sin(p)));
            for (uword c = 0; c < nc_; ++c) m[c * n2_ + k] = maps[c * n2_ + k] * e;
        }
        shots_.emplace_back(A, m, nc_);
    }

private:
    const char* name_;
    uword nsamp_, nshots_, n2_, nc_;
    uword nData_ = 0;
    std::vector<SENSE<T1, ShotOp>> shots_;
};

}  // namespace forge
