#pragma once
// pcSenseTimeSeg<T1>: pcSENSE (phase-corrected multi-shot SENSE, see pcSENSE.h) with the per-shot exact DFT
// replaced by time-segmented field correction over a Gnufft:
//
//   forward  y_{c,s} = A_s (x .* S_c .* exp(-i P_s)),   A_s = TimeSegmentation(Gnufft(shot s), field_map, t_s, L, type)
//   adjoint  x       = sum_c sum_s conj(S_c) .* exp(+i P_s) .* (A_s^H y_{c,s})
//
// Same data order and arguments as pcSENSE, except that the image is a Cartesian Nx x Ny x Nz grid (Gnufft's
// conventions: k in cycles/FOV in [-N/2, N/2), pixel r = (x - N/2)/N, x fastest), plus L and the interpolator.
//
//   pcSenseTimeSeg<float> A(kx, ky, kz, t, Nx, Ny, Nz, field_map, maps, shotPhases, nc, L, TSInterp::MinMax);
//   pcSenseTimeSeg<float> A(shots, ImageGrid{Nx, Ny, Nz}, field_map, maps, shotPhases, nc, L);   // geometry types
#include "forge/Operators/MultiShotSense.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/nufft/Gnufft.h"

namespace forge {

template <typename T1>
class pcSenseTimeSeg : public MultiShotSense<T1, TimeSegmentation<T1, Gnufft<T1>>> {
public:
    using ShotOp = TimeSegmentation<T1, Gnufft<T1>>;
    using typename MultiShotSense<T1, ShotOp>::ArmaVec;

    pcSenseTimeSeg(const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz, const arma::Mat<T1>& t,
                   uword Nx, uword Ny, uword Nz, const arma::Col<T1>& field_map, const ArmaVec& maps,
                   const arma::Mat<T1>& shotPhases, uword nc, uword L, TSInterp type = TSInterp::MinMax,
                   NufftOptions options = NufftOptions());

    // The same from the geometry types: one Trajectory per shot (every shot of the same length, with its times t),
    // the image grid, the field map (rad/s, one value per pixel), then the rest as above.
    pcSenseTimeSeg(const std::vector<Trajectory<T1>>& shots, const ImageGrid& grid, const arma::Col<T1>& field_map,
                   const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc, uword L,
                   TSInterp type = TSInterp::MinMax, NufftOptions options = NufftOptions())
        : pcSenseTimeSeg(detail::ShotMatrices<T1>(shots, "pcSenseTimeSeg"), grid, field_map, maps, shotPhases, nc, L,
                         type, options) {}

private:
    pcSenseTimeSeg(const detail::ShotMatrices<T1>& k, const ImageGrid& grid, const arma::Col<T1>& field_map,
                   const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc, uword L, TSInterp type,
                   NufftOptions options)
        : pcSenseTimeSeg(k.kx, k.ky, k.kz, k.t, (grid.check("pcSenseTimeSeg"), grid.nx), grid.ny, grid.nz, field_map,
                         maps, shotPhases, nc, L, type, std::move(options)) {}
};

extern template class pcSenseTimeSeg<float>;
extern template class pcSenseTimeSeg<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::pcSenseTimeSeg;
#endif
