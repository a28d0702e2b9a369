#include "forge/Operators/dft/Gdft.h"

namespace forge {

template <typename T1>
Gdft<T1>::Gdft(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const DftOptions& options)
    : DftOperator<T1>("Gdft", k, pixels, pixels.has_field_map(), options) {
    this->make_pipeline();
}

template <typename T1>
Gdft<T1>::Gdft(const Gdft& pixels, const Trajectory<T1>& k) : DftOperator<T1>("Gdft", pixels, k) {
    this->share_pipeline(pixels);
}

template <typename T1>
Gdft<T1>::Gdft(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
               const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz,
               const arma::Col<T1>& field_map, const arma::Col<T1>& t, const DftOptions& options)
    : DftOperator<T1>("Gdft", n1, n2, kx, ky, kz, ix, iy, iz, field_map, t, options) {
    this->make_pipeline();
}

template <typename T1>
Gdft<T1>::Gdft(const Gdft& pixels, uword n1, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
               const arma::Col<T1>& t)
    : DftOperator<T1>("Gdft", pixels, n1, kx, ky, kz, t) {
    this->share_pipeline(pixels);
}

template class Gdft<float>;
template class Gdft<double>;

}  // namespace forge
