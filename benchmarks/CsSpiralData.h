#pragma once
// bench_cs's field-corrected spiral data: forge's simulator (the smooth Shepp-Logan of forge-recon --demo, ring coil
// maps with a root-sum-of-squares of 1, a two-blob field map scaled to max |f| = max_hz) sampled by an
// undersampled multi-shot spiral with long readouts, through the exact field-corrected DFT (SENSE on Gdft), plus
// complex Gaussian noise. Written as BART's arrays so that bart pics and SigPy read the same k-space:
//   traj   3 x samples x shots      k in cycles per FOV (BART's unit and sign, forge's: docs/forge-recon.md)
//   ksp    1 x samples x shots x coils
//   sens   N x N x 1 x coils
//   ref    N x N                    the simulated magnitude
//   fmap   N x N                    the field map in rad/s (real)
//   times  samples x shots          seconds after excitation (real)
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

namespace forge_bench {

struct SpiralOptions {
    arma::uword size = 128;  // N x N image
    arma::uword coils = 8;
    arma::uword shots = 4;       // interleaves acquired
    double turns = 4;            // per interleave: shots * turns rings of N / 2 needed, here 4x fewer
    arma::uword samples = 2048;  // per interleave
    double dwell_us = 10;        // 2048 samples: a 20.5 ms readout
    double te_ms = 1;            // the first sample's time
    double max_hz = 150;         // the field map's largest |off-resonance|
    double noise = 0.01;         // standard deviation relative to the noise-free data's RMS
    unsigned seed = 12345;
};

// Writes NAME.hdr / NAME.cfl with the given dims (fastest first).
inline void write_cfl(const std::string& base, const std::vector<long>& dims, const arma::cx_fvec& data) {
    long n = 1;
    for (long d : dims) n *= d;
    if (n != long(data.n_elem)) throw std::runtime_error("write_cfl: " + base + ": dims do not match the data");
    std::ofstream h(base + ".hdr");
    h << "# Dimensions\n";
    for (long d : dims) h << d << " ";
    h << "\n";
    std::ofstream f(base + ".cfl", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.memptr()), std::streamsize(n * sizeof(std::complex<float>)));
    if (!h || !f) throw std::runtime_error("write_cfl: cannot write " + base);
}

inline void simulate_spiral(const std::string& dir, const SpiralOptions& o) {
    using forge::uword;
    const uword N = o.size, nc = o.coils, ns = o.samples, n1 = ns * o.shots;
    arma::fvec kx(n1), ky(n1), kz(n1, arma::fill::zeros), t(n1);
    const double kPi = 3.14159265358979323846;
    const forge::sim::Trajectory2D one = forge::sim::constant_speed_spiral(ns, N / 2.0, o.turns, 0.999);
    for (uword s = 0; s < o.shots; ++s) {
        const double a = 2 * kPi * double(s) / double(o.shots), c = std::cos(a), sn = std::sin(a);
        for (uword j = 0; j < ns; ++j) {
            kx(s * ns + j) = float(c * one.kx(j) - sn * one.ky(j));
            ky(s * ns + j) = float(sn * one.kx(j) + c * one.ky(j));
            t(s * ns + j) = float(1e-3 * o.te_ms + 1e-6 * o.dwell_us * double(j));
        }
    }
    const arma::fvec truth = forge::sim::smooth_shepp_logan_slice(N, 0, 1);
    arma::fvec fm = forge::sim::two_blob_field_map(N, 0);
    fm *= float(2 * kPi * o.max_hz / double(arma::max(arma::abs(fm))));
    const arma::cx_fvec maps = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc), nc);
    const forge::ImageGrid grid(N, N);
    const auto G = std::make_shared<const forge::Gdft<float>>(forge::Trajectory<float>(kx, ky, kz, t),
                                                              forge::PixelGeometry<float>::on_grid(grid, fm));
    const forge::SENSE<float, forge::LinearOperator<float>> E(G, maps, nc);
    const arma::cx_fvec x = arma::conv_to<arma::cx_fvec>::from(truth);
    arma::cx_fvec y = E * x;
    std::mt19937 gen(o.seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const float sigma = float(o.noise * arma::norm(y) / std::sqrt(double(y.n_elem)) / std::sqrt(2.0));
    for (auto& v : y) v += std::complex<float>(sigma * nd(gen), sigma * nd(gen));

    arma::cx_fvec traj(3 * n1, arma::fill::zeros);
    for (uword j = 0; j < n1; ++j) {
        traj(3 * j) = kx(j);
        traj(3 * j + 1) = ky(j);
    }
    const long lN = long(N), lns = long(ns), lsh = long(o.shots), lnc = long(nc);
    write_cfl(dir + "/traj", {3, lns, lsh}, traj);
    write_cfl(dir + "/ksp", {1, lns, lsh, lnc}, y);  // forge's coil-major samples are BART's [samples, shots, coils]
    write_cfl(dir + "/sens", {lN, lN, 1, lnc}, maps);
    write_cfl(dir + "/ref", {lN, lN}, arma::conv_to<arma::cx_fvec>::from(truth));
    write_cfl(dir + "/fmap", {lN, lN}, arma::conv_to<arma::cx_fvec>::from(fm));
    write_cfl(dir + "/times", {lns, lsh}, arma::conv_to<arma::cx_fvec>::from(t));
    std::printf("bench_cs spiral: %s: %llux%llu, %llu coils, %llu shots x %llu samples (%.1f ms readout, %g turns: "
                "%.2fx below Nyquist), field map max |f| %.0f Hz, noise %.3g\n",
                dir.c_str(), (unsigned long long)N, (unsigned long long)N, (unsigned long long)nc,
                (unsigned long long)o.shots, (unsigned long long)ns, 1e-3 * o.dwell_us * double(ns), o.turns,
                double(N) / (2.0 * double(o.shots) * o.turns), o.max_hz, o.noise);
}

}  // namespace forge_bench
