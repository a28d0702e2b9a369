#include "forge/Operators/pcSENSE.h"

#include <cmath>
#include <sstream>

namespace forge {

namespace {
template <typename M>
void require_shape(const char* name, const M& m, uword rows, uword cols, const char* expect) {
    if (m.n_rows != rows || m.n_cols != cols) {
        std::ostringstream s;
        s << "pcSENSE: " << name << " is " << m.n_rows << " x " << m.n_cols << ", expected " << expect << " = "
          << rows << " x " << cols;
        throw invalid_argument(s.str());
    }
}
template <typename V>
void require_len(const char* name, const V& v, uword n, const char* expect) {
    if (v.n_elem != n) {
        std::ostringstream s;
        s << "pcSENSE: " << name << " has " << v.n_elem << " entries, expected " << expect << " = " << n;
        throw invalid_argument(s.str());
    }
}
}  // namespace

template <typename T1>
pcSENSE<T1>::pcSENSE(const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz,
                     const arma::Mat<T1>& t, const arma::Col<T1>& ix, const arma::Col<T1>& iy,
                     const arma::Col<T1>& iz, const arma::Col<T1>& FM, const ArmaVec& maps,
                     const arma::Mat<T1>& shotPhases, uword nc)
    : nsamp_(kx.n_rows), nshots_(kx.n_cols), n2_(ix.n_elem), nc_(nc) {
    if (nc == 0) throw invalid_argument("pcSENSE: nc (number of coils) must be at least 1, got 0");
    if (nsamp_ == 0 || nshots_ == 0)
        throw invalid_argument("pcSENSE: kx must be samplesPerShot x nShots with both at least 1");
    if (n2_ == 0) throw invalid_argument("pcSENSE: ix must have at least one pixel");
    require_shape("ky", ky, nsamp_, nshots_, "size(kx)");
    require_shape("kz", kz, nsamp_, nshots_, "size(kx)");
    require_shape("t", t, nsamp_, nshots_, "size(kx)");
    require_len("iy", iy, n2_, "length(ix)");
    require_len("iz", iz, n2_, "length(ix)");
    require_len("FM", FM, n2_, "length(ix)");
    require_len("maps", maps, n2_ * nc, "n2 * nc");
    require_shape("shotPhases", shotPhases, n2_, nshots_, "n2 x nShots");
    shots_.reserve(nshots_);
    for (uword s = 0; s < nshots_; ++s) {
        Gdft<T1> G(nsamp_, n2_, kx.col(s), ky.col(s), kz.col(s), ix, iy, iz, FM, t.col(s));
        // Combined maps S_c .* exp(-i P_s): the phase is folded into the coil maps once, here.
        ArmaVec m(n2_ * nc);
        for (uword k = 0; k < n2_; ++k) {
            const double p = double(shotPhases(k, s));
            const complex_type e(T1(std::cos(p)), T1(-std::sin(p)));
            for (uword c = 0; c < nc; ++c) m[c * n2_ + k] = maps[c * n2_ + k] * e;
        }
        shots_.emplace_back(G, m, nc);
    }
}

template <typename T1>
typename pcSENSE<T1>::ForgeVec pcSENSE<T1>::operator*(const ForgeVec& x) const {
    require_len("x", x, n2_, "n2");
    ForgeVec out = ForgeVec::same_place(x, n_data());
    for (uword s = 0; s < nshots_; ++s) {
        ForgeVec ys = shots_[s] * x;  // coil-major, nsamp per coil
        for (uword c = 0; c < nc_; ++c) sense_detail::copy_block(ys, c * nsamp_, out, (c * nshots_ + s) * nsamp_, nsamp_);
    }
    return out;
}

template <typename T1>
typename pcSENSE<T1>::ForgeVec pcSENSE<T1>::operator/(const ForgeVec& y) const {
    require_len("y", y, n_data(), "samplesPerShot * nShots * nc");
    ForgeVec out;
    ForgeVec ys = ForgeVec::same_place(y, nsamp_ * nc_);
    for (uword s = 0; s < nshots_; ++s) {
        for (uword c = 0; c < nc_; ++c) sense_detail::copy_block(y, (c * nshots_ + s) * nsamp_, ys, c * nsamp_, nsamp_);
        if (s == 0) {
            out = shots_[s] / ys;
        } else {
            out += shots_[s] / ys;
        }
    }
    return out;
}

template <typename T1>
void pcSENSE<T1>::set_coil_batching(bool on) {
    for (auto& S : shots_) S.set_coil_batching(on);
}
template <typename T1>
void pcSENSE<T1>::prepare_device() const {
    for (const auto& S : shots_) S.prepare_device();
}

template class pcSENSE<float>;
template class pcSENSE<double>;

}  // namespace forge
