#pragma once
// Gdft<T1>: exact field-corrected non-uniform DFT (see DftOperator.h for the formula and units).
//   Trajectory<float> k{kx, ky, kz, t};                      // t may be empty without a field map
//   Gdft<float> G(k, PixelGeometry<float>::on_grid(grid, field_map));   y = G * x;   x = G / y;
//   Gdft<float> H(G, k2);                                    // G's pixels, field map and plan, other samples
//   Gdft<float> M(k, pixels, {nullptr, {0, 1}});             // options (DftOptions.h): here two GPUs
// Positional form: Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, field_map, t) with n1 = number of k-space samples
// (kx, ky, kz, t have n1 entries), n2 = number of pixels (ix, iy, iz, field_map have n2 entries).
#include "forge/Operators/dft/DftOperator.h"

namespace forge {

template <typename T1>
class Gdft : public DftOperator<T1> {
public:
    // The samples of k and the pixels of 'pixels'. An empty field map is zero; the trajectory's times may then
    // be empty too. A vector of the wrong length throws forge::invalid_argument naming it.
    Gdft(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const DftOptions& options = {});
    // The pixels (positions, field map), options and GPU plan of 'pixels' with the samples of k: the pixel
    // geometry stays uploaded once and only this sample set is added (multi-shot operators).
    Gdft(const Gdft& pixels, const Trajectory<T1>& k);

    Gdft(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
         const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& field_map,
         const arma::Col<T1>& t, const DftOptions& options = {});
    // The pixels of 'pixels' with n1 new samples (kx, ky, kz, t of n1 entries each), as Gdft(pixels, k).
    Gdft(const Gdft& pixels, uword n1, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
         const arma::Col<T1>& t);
};

extern template class Gdft<float>;
extern template class Gdft<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::Gdft;
#endif
