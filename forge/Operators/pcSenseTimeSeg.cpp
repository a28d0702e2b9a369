#include "forge/Operators/pcSenseTimeSeg.h"

namespace forge {

template <typename T1>
pcSenseTimeSeg<T1>::pcSenseTimeSeg(const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz,
                                   const arma::Mat<T1>& t, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& field_map,
                                   const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc, uword L,
                                   TSInterp type, NufftOptions options)
    : MultiShotSense<T1, ShotOp>("pcSenseTimeSeg", kx, ky, kz, t,
                                 checked_product("pcSenseTimeSeg", {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}}), maps,
                                 shotPhases, nc) {
    require_positive("pcSenseTimeSeg", "L (number of time segments)", L);
    require_length("pcSenseTimeSeg", "field_map", field_map.n_elem, this->n2(), "Nx*Ny*Nz");
    for (uword s = 0; s < kx.n_cols; ++s) {
        const Gnufft<T1> G(kx.n_rows, Nx, Ny, Nz, kx.col(s), ky.col(s), kz.col(s), options);
        this->add_shot(ShotOp(G, field_map, t.col(s), L, type));
    }
    this->finish();
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));  // the Gnufft grid, whether or not the shots report it
}

template class pcSenseTimeSeg<float>;
template class pcSenseTimeSeg<double>;

}  // namespace forge
