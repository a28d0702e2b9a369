#pragma once
// pcSENSE<T1>: phase-corrected multi-shot SENSE with the exact field-corrected DFT per shot.
//
//   forward  y_{c,s} = G_s (x .* S_c .* exp(-i P_s))        for coil c < nc, shot s < nShots
//   adjoint  x       = sum_c sum_s conj(S_c) .* exp(+i P_s) .* (G_s^H y_{c,s})
//
// G_s = Gdft<T1>(kx.col(s), ky.col(s), kz.col(s), ix, iy, iz, field_map, t.col(s)) is shot s's exact DFT with
// field correction, and P_s the shot's phase map in radians (e.g. motion-induced phase in diffusion).
// Data order: shot fastest within coil, i.e. y_{c,s} (samplesPerShot values) at
//   [(c*nShots + s) * samplesPerShot, (c*nShots + s + 1) * samplesPerShot).
//
//   pcSENSE<float> A(kx, ky, kz, t, ix, iy, iz, field_map, maps, shotPhases, nc);   y = A * x;   x = A / y;
//   pcSENSE<float> A(shots, PixelGeometry<float>::on_grid(grid, field_map), maps, shotPhases, nc);  // geometry types
//
//   kx, ky, kz  k-space trajectory, cycles/FOV, arma::Mat<T1> of samplesPerShot x nShots (column s = shot s)
//   t           readout time of each sample, seconds, samplesPerShot x nShots
//   ix, iy, iz  pixel coordinates in FOV units, n2 entries
//   field_map          field map, rad/s, n2 entries
//   maps        nc coil sensitivity maps of n2 pixels back to back (coil c at [c*n2, (c+1)*n2))
//   shotPhases  phase maps in radians, n2 x nShots (column s = P_s)
//   nc          number of coils
//
// Host and device forgeCol data: on the GPU each shot runs as one coil-batched SENSE over that shot's
// Gdft, with all intermediate vectors on the device. All shots share one GPU plan (CudaDftPipeline): the
// pixel geometry is uploaded once and each shot's samples once, at construction; shot_operator(s).gpu_plan()
// is the same for every s.
#include "forge/Operators/MultiShotSense.h"
#include "forge/Operators/dft/Gdft.h"

namespace forge {

template <typename T1>
class pcSENSE : public MultiShotSense<T1, Gdft<T1>> {
public:
    using typename MultiShotSense<T1, Gdft<T1>>::ArmaVec;

    pcSENSE(const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz, const arma::Mat<T1>& t,
            const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz, const arma::Col<T1>& field_map,
            const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc);

    // The same from the geometry types, as Gdft takes them: one Trajectory per shot (every shot of the same
    // length; its times t for the field correction), the pixels with their field map (empty: none), then maps,
    // shotPhases and nc as above.
    pcSENSE(const std::vector<Trajectory<T1>>& shots, const PixelGeometry<T1>& pixels, const ArmaVec& maps,
            const arma::Mat<T1>& shotPhases, uword nc)
        : pcSENSE(detail::ShotMatrices<T1>(shots, "pcSENSE"), checked(pixels), maps, shotPhases, nc) {}

private:
    static const PixelGeometry<T1>& checked(const PixelGeometry<T1>& p) {
        p.check("pcSENSE");
        return p;
    }
    pcSENSE(const detail::ShotMatrices<T1>& k, const PixelGeometry<T1>& p, const ArmaVec& maps,
            const arma::Mat<T1>& shotPhases, uword nc)
        : pcSENSE(k.kx, k.ky, k.kz, k.t, p.x, p.y, p.z,
                  p.field_map.is_empty() ? arma::Col<T1>(p.n_pixels(), arma::fill::zeros) : p.field_map, maps,
                  shotPhases, nc) {}
};

extern template class pcSENSE<float>;
extern template class pcSENSE<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::pcSENSE;
#endif
