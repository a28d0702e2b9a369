#include "forge/Operators/dft/GdftR2.h"

#include "forge/Core/Validation.h"
#include "forge/Operators/dft/cpu/DftCpuKernels.h"

namespace forge {

template <typename T1>
void GdftR2<T1>::field_map_gradients(const arma::Col<T1>& field_map, uword numX, uword numY, uword numZ,
                                     arma::Col<T1>& Gx, arma::Col<T1>& Gy, arma::Col<T1>& Gz) {
    const uword n = checked_product("GdftR2::field_map_gradients", {{"numX", numX}, {"numY", numY}, {"numZ", numZ}});
    require_length("GdftR2::field_map_gradients", "field_map", field_map.n_elem, n, "numX*numY*numZ");
    Gx.zeros(n);
    Gy.zeros(n);
    Gz.zeros(n);
    // d/d(axis) of field_map in rad/s per voxel, divided by 2 pi: cycles/s per voxel. Central differences
    // inside, one-sided at the faces (never wrapping into the next row or slice), 0 on a length-1 axis.
    auto diff = [&](uword i, uword pos, uword len, uword stride) -> double {
        if (len < 2) return 0.0;
        if (pos == 0) return double(field_map[i + stride]) - double(field_map[i]);
        if (pos == len - 1) return double(field_map[i]) - double(field_map[i - stride]);
        return (double(field_map[i + stride]) - double(field_map[i - stride])) / 2.0;
    };
    for (uword z = 0; z < numZ; ++z)
        for (uword y = 0; y < numY; ++y)
            for (uword x = 0; x < numX; ++x) {
                const uword i = x + numX * (y + numY * z);
                Gx[i] = T1(diff(i, x, numX, 1) / dftcpu::kTwoPi);
                Gy[i] = T1(diff(i, y, numY, numX) / dftcpu::kTwoPi);
                Gz[i] = T1(diff(i, z, numZ, numX * numY) / dftcpu::kTwoPi);
            }
}

template <typename T1>
FieldMapGradients<T1> GdftR2<T1>::field_map_gradients(const arma::Col<T1>& field_map, const ImageGrid& grid) {
    grid.check("GdftR2::field_map_gradients");
    FieldMapGradients<T1> g;
    field_map_gradients(field_map, grid.nx, grid.ny, grid.nz, g.gx, g.gy, g.gz);
    return g;
}

namespace {
// The grid check must come before the gradients are computed from field_map, so it names the grid, not field_map.
void require_grid(uword n2, uword numX, uword numY, uword numZ) {
    require_positive("GdftR2", "numX", numX);
    require_positive("GdftR2", "numY", numY);
    require_positive("GdftR2", "numZ", numZ);
    const uword n = checked_product("GdftR2", {{"numX", numX}, {"numY", numY}, {"numZ", numZ}});
    if (n != n2) {
        throw invalid_argument("GdftR2: grid numX x numY x numZ = " + std::to_string(numX) + " x " +
                               std::to_string(numY) + " x " + std::to_string(numZ) + " = " + std::to_string(n) +
                               " pixels, expected n2 = " + std::to_string(n2));
    }
}

// The same for the geometry constructors: the grid against the pixel geometry.
void require_grid(const ImageGrid& grid, uword pixels) {
    grid.check("GdftR2");
    if (grid.n_pixels() != pixels) {
        throw invalid_argument("GdftR2: grid " + grid.to_string() + " = " + std::to_string(grid.n_pixels()) +
                               " pixels, but the pixel geometry has " + std::to_string(pixels) +
                               " (the length of pixels.x)");
    }
}

template <typename T1>
bool any_nonzero(const FieldMapGradients<T1>& g) {
    auto nz = [](const arma::Col<T1>& v) { return arma::any(v != T1(0)); };
    return nz(g.gx) || nz(g.gy) || nz(g.gz);
}

constexpr const char* kGeometryGradientNames[3] = {"gradients.gx", "gradients.gy", "gradients.gz"};
}  // namespace

template <typename T1>
GdftR2<T1>::GdftR2(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const ImageGrid& grid,
                   const DftOptions& options)
    : DftOperator<T1>("GdftR2", k, pixels, pixels.has_field_map(), options) {
    require_grid(grid, pixels.n_pixels());
    arma::Col<T1> Gx, Gy, Gz;
    field_map_gradients(pixels.field_map_or_zeros(), grid.nx, grid.ny, grid.nz, Gx, Gy, Gz);
    this->set_gradients("GdftR2", Gx, Gy, Gz, grid.nx, grid.ny, grid.nz);
    this->make_pipeline();
}

template <typename T1>
GdftR2<T1>::GdftR2(const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, const ImageGrid& grid,
                   const FieldMapGradients<T1>& gradients, const DftOptions& options)
    : DftOperator<T1>("GdftR2", k, pixels, pixels.has_field_map() || any_nonzero(gradients), options) {
    require_grid(grid, pixels.n_pixels());
    this->set_gradients("GdftR2", gradients.gx, gradients.gy, gradients.gz, grid.nx, grid.ny, grid.nz,
                        kGeometryGradientNames);
    this->make_pipeline();
}

template <typename T1>
GdftR2<T1>::GdftR2(const GdftR2& pixels, const Trajectory<T1>& k) : DftOperator<T1>("GdftR2", pixels, k) {
    this->share_pipeline(pixels);
}

template <typename T1>
GdftR2<T1>::GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                   const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz,
                   const arma::Col<T1>& field_map, const arma::Col<T1>& t, uword numX, uword numY, uword numZ,
                   const DftOptions& options)
    : DftOperator<T1>("GdftR2", n1, n2, kx, ky, kz, ix, iy, iz, field_map, t, options) {
    require_grid(n2, numX, numY, numZ);
    arma::Col<T1> Gx, Gy, Gz;
    field_map_gradients(field_map, numX, numY, numZ, Gx, Gy, Gz);
    this->set_gradients("GdftR2", Gx, Gy, Gz, numX, numY, numZ);
    this->make_pipeline();
}

template <typename T1>
GdftR2<T1>::GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                   const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz,
                   const arma::Col<T1>& field_map, const arma::Col<T1>& t, const arma::Col<T1>& Gx,
                   const arma::Col<T1>& Gy, const arma::Col<T1>& Gz, uword numX, uword numY, uword numZ,
                   const DftOptions& options)
    : DftOperator<T1>("GdftR2", n1, n2, kx, ky, kz, ix, iy, iz, field_map, t, options) {
    require_grid(n2, numX, numY, numZ);
    this->set_gradients("GdftR2", Gx, Gy, Gz, numX, numY, numZ);
    this->make_pipeline();
}

template class GdftR2<float>;
template class GdftR2<double>;

}  // namespace forge
