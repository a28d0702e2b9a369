#pragma once
// SENSE reconstruction problems for the tests of forge::recon (ReconTests, ReconProxTests): a smooth Shepp-Logan
// seen by ring coils, data by the exact Gdft plus complex noise.
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

}  // namespace forge_test
