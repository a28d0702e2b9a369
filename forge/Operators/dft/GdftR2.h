#pragma once
// GdftR2<T1>: Gdft with the sinc R2* factor from the field map's gradients (DftOperator.h).
//   GdftR2<float> G(k, PixelGeometry<float>::on_grid(grid, field_map), grid);
// computes the gradients itself from the field map on the grid (x fastest; as many pixels as the pixel
// geometry): central differences / (2 pi) in cycles/s per voxel, one-sided at the faces, 0 along an axis of
// length 1 (field_map_gradients). GdftR2(k, pixels, grid, gradients) takes them from the caller (same units).
// Positional form: GdftR2<float> G(n1, n2, kx, ky, kz, ix, iy, iz, field_map, t, numX, numY, numZ), and with
// Gx, Gy, Gz before numX.
#include "forge/Operators/dft/DftOperator.h"

namespace forge {

// Gradient maps of a field map for GdftR2's sinc factor, in cycles/s per voxel: one entry per pixel each.
template <typename T1>
struct FieldMapGradients {
    arma::Col<T1> gx, gy, gz;
};

template <typename T1>
class GdftR2 : public DftOperator<T1> {
public:
    // The samples of k and the pixels of 'pixels' on 'grid' (grid.n_pixels() pixels, x fastest), the gradient
    // maps computed from the field map (an empty one is zero; the trajectory's times may then be empty too).
    // A vector of the wrong length throws forge::invalid_argument naming it.
    GdftR2(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const ImageGrid& grid,
           const DftOptions& options = {});
    // The same with the caller's gradient maps.
    GdftR2(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const ImageGrid& grid,
           const FieldMapGradients<T1>& gradients, const DftOptions& options = {});
    // The pixels (positions, field map, gradient maps), options and GPU plan of 'pixels' with the samples of k.
    GdftR2(const GdftR2& pixels, const Trajectory<T1>& k);

    GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
           const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& field_map,
           const arma::Col<T1>& t, uword numX, uword numY, uword numZ, const DftOptions& options = {});
    GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
           const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& field_map,
           const arma::Col<T1>& t, const arma::Col<T1>& Gx, const arma::Col<T1>& Gy, const arma::Col<T1>& Gz,
           uword numX, uword numY, uword numZ, const DftOptions& options = {});

    // The gradient maps of field_map as GdftR2 computes them (cycles/s per voxel); exposed for tests and users.
    static FieldMapGradients<T1> field_map_gradients(const arma::Col<T1>& field_map, const ImageGrid& grid);
    static void field_map_gradients(const arma::Col<T1>& field_map, uword numX, uword numY, uword numZ,
                                    arma::Col<T1>& Gx, arma::Col<T1>& Gy, arma::Col<T1>& Gz);
};

extern template class GdftR2<float>;
extern template class GdftR2<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::GdftR2;
#endif
