#include "forge/Operators/pcSENSE.h"

namespace forge {

template <typename T1>
pcSENSE<T1>::pcSENSE(const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz, const arma::Mat<T1>& t,
                     const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz,
                     const arma::Col<T1>& field_map, const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc)
    : MultiShotSense<T1, Gdft<T1>>("pcSENSE", kx, ky, kz, t, ix.n_elem, maps, shotPhases, nc) {
    const uword n2 = ix.n_elem;
    require_length("pcSENSE", "iy", iy.n_elem, n2, "length(ix)");
    require_length("pcSENSE", "iz", iz.n_elem, n2, "length(ix)");
    require_length("pcSENSE", "field_map", field_map.n_elem, n2, "length(ix)");
    // Shot 0 makes the GPU plan (pixel geometry uploaded once); every other shot shares it and adds only its
    // own samples, so switching shots on the device moves no data.
    const Gdft<T1> first(kx.n_rows, n2, kx.col(0), ky.col(0), kz.col(0), ix, iy, iz, field_map, t.col(0));
    this->add_shot(first);
    for (uword s = 1; s < kx.n_cols; ++s) {
        this->add_shot(Gdft<T1>(first, kx.n_rows, kx.col(s), ky.col(s), kz.col(s), t.col(s)));
    }
    this->finish();
}

template class pcSENSE<float>;
template class pcSENSE<double>;

}  // namespace forge
