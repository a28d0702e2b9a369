#pragma once
// Reconstruction problems for the tests of forge::recon: a smooth Shepp-Logan seen by ring coils, data by the exact
// Gdft plus complex noise (ReconTests, ReconProxTests); random slices sharing a trajectory (OperatorCacheTests,
// ReconGpuTests).
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

namespace forge_test {

// N x N smooth Shepp-Logan, nc ring coil maps (root-sum-of-squares 1), samples k (cycles/FOV), data from the exact
// Gdft (SENSE) plus complex noise at 'noise' of the data RMS.
inline forge::recon::ReconProblem sense_problem(std::size_t N, std::size_t nc, const forge::sim::Trajectory2D& k,
                                                double noise) {
    forge::recon::ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    forge::recon::ReconFrame fr;
    fr.kx = arma::conv_to<arma::fvec>::from(k.kx);
    fr.ky = arma::conv_to<arma::fvec>::from(k.ky);
    const std::size_t n1 = fr.kx.n_elem;
    fr.kz = arma::fvec(n1, arma::fill::zeros);
    fr.t = arma::fvec(n1, arma::fill::zeros);
    const arma::fvec truth = forge::sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::cx_fvec maps = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc), nc);
    forge::Gdft<float> G(n1, P.n2(), fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, arma::fvec(P.n2(), arma::fill::zeros),
                         fr.t);
    fr.y = forge::SENSE<float, forge::Gdft<float>>(G, maps, nc) *
           arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(truth));
    fr.y += float(noise * arma::norm(fr.y) / std::sqrt(2.0 * fr.y.n_elem)) * complex_normal<float>(fr.y.n_elem);
    P.frames.push_back(fr);
    P.smaps.push_back(maps);
    P.reference.push_back(truth);
    P.n1total = P.n1max = n1;
    return P;
}

// 'spokes' radial spokes of 2N samples over |k| < N/2: dense at the centre, so its normal operator is poorly
// conditioned and PCG needs many iterations.
inline forge::recon::ReconProblem radial_problem(std::size_t N, std::size_t nc, std::size_t spokes, double noise) {
    return sense_problem(N, nc, forge::sim::radial_spokes(spokes, 2 * N, double(N)), noise);
}

// 'slices' slices of an Nx x Ny grid, nc coils, one trajectory of n1 random samples within the grid's k-space and
// random readout times (5 ms), random maps and data per slice; field maps uniform in +-'field' rad/s, one shared by
// the slices for which own(s) is false, the others each their own.
template <typename Own>
forge::recon::ReconProblem random_slices(std::size_t Nx, std::size_t Ny, std::size_t slices, std::size_t nc,
                                         std::size_t n1, double field, Own own) {
    forge::recon::ReconProblem P;
    P.Nx = Nx;
    P.Ny = Ny;
    P.nslices = slices;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    const arma::fvec kx = uniform<float>(n1, -double(Nx) / 2, double(Nx) / 2);
    const arma::fvec ky = uniform<float>(n1, -double(Ny) / 2, double(Ny) / 2);
    const arma::fvec t = uniform<float>(n1, 0, 0.005);
    const arma::fvec shared = uniform<float>(P.n2(), -field, field);
    for (std::size_t s = 0; s < slices; ++s) {
        forge::recon::ReconFrame fr;
        fr.slice = s;
        fr.kx = kx;
        fr.ky = ky;
        fr.kz = arma::fvec(n1, arma::fill::zeros);
        fr.t = t;
        fr.y = complex_normal<float>(n1 * nc);
        P.frames.push_back(fr);
        P.smaps.push_back(complex_normal<float>(P.n2() * nc));
        P.field_map.push_back(own(s) ? arma::fvec(uniform<float>(P.n2(), -field, field)) : shared);
    }
    P.n1total = n1 * slices;
    P.n1max = n1;
    return P;
}

}  // namespace forge_test
