#pragma once
// GdftR2<T1>: Gdft with the sinc R2* factor from the field map's gradients (DftOperator.h).
//   GdftR2<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, t, numX, numY, numZ);
// computes Gx, Gy, Gz itself from FM on the numX x numY x numZ grid (x fastest; n2 = numX*numY*numZ):
// central differences / (2 pi) in cycles/s per voxel, one-sided at the faces, 0 along an axis of
// length 1. The second constructor takes Gx, Gy, Gz from the caller (same units).
#include "forge/Operators/dft/DftOperator.h"

namespace forge {

template <typename T1>
class GdftR2 : public DftOperator<T1> {
public:
    GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
           const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& FM,
           const arma::Col<T1>& t, uword numX, uword numY, uword numZ);
    GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
           const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& FM,
           const arma::Col<T1>& t, const arma::Col<T1>& Gx, const arma::Col<T1>& Gy, const arma::Col<T1>& Gz,
           uword numX, uword numY, uword numZ);

    // The gradient maps of FM as GdftR2 computes them (cycles/s per voxel); exposed for tests and users.
    static void field_map_gradients(const arma::Col<T1>& FM, uword numX, uword numY, uword numZ, arma::Col<T1>& Gx,
                                    arma::Col<T1>& Gy, arma::Col<T1>& Gz);
};

extern template class GdftR2<float>;
extern template class GdftR2<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::GdftR2;
#endif
