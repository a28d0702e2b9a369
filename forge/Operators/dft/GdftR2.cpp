#include "forge/Operators/dft/GdftR2.h"

#include "forge/Core/Validation.h"
#include "forge/Operators/dft/cpu/DftCpuKernels.h"

namespace forge {

template <typename T1>
void GdftR2<T1>::field_map_gradients(const arma::Col<T1>& FM, uword numX, uword numY, uword numZ, arma::Col<T1>& Gx,
                                     arma::Col<T1>& Gy, arma::Col<T1>& Gz) {
    const uword n = checked_product("GdftR2::field_map_gradients", {{"numX", numX}, {"numY", numY}, {"numZ", numZ}});
    require_length("GdftR2::field_map_gradients", "FM", FM.n_elem, n, "numX*numY*numZ");
    Gx.zeros(n);
    Gy.zeros(n);
    Gz.zeros(n);
    // d/d(axis) of FM in rad/s per voxel, divided by 2 pi: cycles/s per voxel. Central differences
    // inside, one-sided at the faces (never wrapping into the next row or slice), 0 on a length-1 axis.
    auto diff = [&](uword i, uword pos, uword len, uword stride) -> double {
        if (len < 2) return 0.0;
        if (pos == 0) return double(FM[i + stride]) - double(FM[i]);
        if (pos == len - 1) return double(FM[i]) - double(FM[i - stride]);
        return (double(FM[i + stride]) - double(FM[i - stride])) / 2.0;
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

namespace {
// The grid check must come before the gradients are computed from FM, so it names the grid, not FM.
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
}  // namespace

template <typename T1>
GdftR2<T1>::GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                   const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& FM,
                   const arma::Col<T1>& t, uword numX, uword numY, uword numZ, const DftOptions& options)
    : DftOperator<T1>("GdftR2", n1, n2, kx, ky, kz, ix, iy, iz, FM, t, options) {
    require_grid(n2, numX, numY, numZ);
    arma::Col<T1> Gx, Gy, Gz;
    field_map_gradients(FM, numX, numY, numZ, Gx, Gy, Gz);
    this->set_gradients("GdftR2", Gx, Gy, Gz, numX, numY, numZ);
    this->make_pipeline();
}

template <typename T1>
GdftR2<T1>::GdftR2(uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz,
                   const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& FM,
                   const arma::Col<T1>& t, const arma::Col<T1>& Gx, const arma::Col<T1>& Gy, const arma::Col<T1>& Gz,
                   uword numX, uword numY, uword numZ, const DftOptions& options)
    : DftOperator<T1>("GdftR2", n1, n2, kx, ky, kz, ix, iy, iz, FM, t, options) {
    require_grid(n2, numX, numY, numZ);
    this->set_gradients("GdftR2", Gx, Gy, Gz, numX, numY, numZ);
    this->make_pipeline();
}

template class GdftR2<float>;
template class GdftR2<double>;

}  // namespace forge
