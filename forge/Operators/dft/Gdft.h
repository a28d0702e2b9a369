#pragma once
// Gdft<T1>: exact field-corrected non-uniform DFT (see DftOperator.h for the formula and units).
//   Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, t);   y = G * x;   x = G / y;
//   Gdft<float> H(G, m1, kx2, ky2, kz2, t2);   // G's pixels and field map, another sample set
// n1 = number of k-space samples (kx, ky, kz, t have n1 entries), n2 = number of pixels
// (ix, iy, iz, FM have n2 entries).
#include "forge/Operators/dft/DftOperator.h"

namespace forge {

template <typename T1>
class Gdft : public DftOperator<T1> {
public:
    Gdft(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
         const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& FM,
         const arma::Col<T1>& t);
    // The pixels (ix, iy, iz, FM) of 'pixels' with n1 new samples. On the GPU both run on one plan: the
    // pixel geometry stays uploaded once and only this sample set is added (multi-shot operators).
    Gdft(const Gdft& pixels, uword n1, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
         const arma::Col<T1>& t);
};

extern template class Gdft<float>;
extern template class Gdft<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::Gdft;
#endif
