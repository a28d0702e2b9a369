// Map estimation from the data (forge/Recon/CoilPreprocessing.h, CoilMaps.h, FieldMapEstimation.h):
// noise whitening against a known covariance, coil compression, coil maps against known smooth maps, and
// the penalized field-map estimate of a simulated two-echo scan against the true map.
#include <cmath>
#include <complex>
#include <vector>

#include <armadillo>
#include <catch2/catch.hpp>

#include "CoilMapReference.h"
#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/CoilPreprocessing.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"
#include "forge/Solvers/recon_solve.h"

using namespace forge;
using namespace forge::recon;
using cxf = std::complex<float>;

namespace {

// samples x coils of complex Gaussian noise with covariance L L^H.
arma::cx_fmat correlated_noise(arma::uword n, const arma::cx_mat& L) {
    const arma::uword nc = L.n_rows;
    arma::cx_mat Z(n, nc);
    const arma::cx_vec z = forge_test::complex_normal<double>(n * nc) / std::sqrt(2.0);
    std::copy(z.begin(), z.end(), Z.begin());
    return arma::conv_to<arma::cx_fmat>::from(Z * L.st());
}

arma::cx_mat random_lower(arma::uword nc) {
    arma::cx_mat L(nc, nc, arma::fill::zeros);
    const arma::cx_vec r = forge_test::complex_normal<double>(nc * nc);
    for (arma::uword i = 0; i < nc; ++i)
        for (arma::uword j = 0; j <= i; ++j)
            L(i, j) = i == j ? std::complex<double>(1.0 + 0.3 * i, 0) : 0.4 * r(i * nc + j);
    return L;
}

// Ring coil maps scaled so that sum_c |S_c|^2 = 1 at every pixel.
arma::cx_fvec normalised_ring_maps(std::size_t N, std::size_t nc) {
    arma::cx_fvec m = sim::ring_coil_maps(N, nc);
    const std::size_t n2 = N * N;
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += std::norm(m[c * n2 + k]);
        for (std::size_t c = 0; c < nc; ++c) m[c * n2 + k] /= float(std::sqrt(e));
    }
    return m;
}

// A one-frame 2D problem: data = SENSE(Gdft) applied to the image, with complex noise of std 'noise' x RMS.
ReconProblem simulated_problem(std::size_t N, std::size_t nc, const arma::fvec& kx, const arma::fvec& ky,
                               const arma::fvec& img, const arma::cx_fvec& maps, double noise) {
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    set_pixel_grid(P);
    ReconFrame fr;
    fr.kx = kx;
    fr.ky = ky;
    fr.kz.zeros(kx.n_elem);
    fr.t.zeros(kx.n_elem);
    arma::fvec fm(P.n2(), arma::fill::zeros);
    Gdft<float> G(kx.n_elem, P.n2(), fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
    SENSE<float, Gdft<float>> E(G, maps, nc);
    fr.y = E * arma::conv_to<arma::cx_fvec>::from(img);
    const double rms = arma::norm(fr.y) / std::sqrt(double(fr.y.n_elem));
    fr.y += arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(fr.y.n_elem) *
                                               (noise * rms / std::sqrt(2.0)));
    P.frames.push_back(fr);
    return P;
}

// Relative error of estimated maps against the true ones inside 'inside', after the best common phase.
double map_error(const arma::cx_fvec& est, const arma::cx_fvec& truth, const arma::uvec& inside, std::size_t nc) {
    const std::size_t n2 = inside.n_elem;
    std::complex<double> dot = 0;
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t k = 0; k < n2; ++k)
            if (inside[k])
                dot += std::conj(std::complex<double>(est[c * n2 + k])) * std::complex<double>(truth[c * n2 + k]);
    const std::complex<double> ph = std::abs(dot) > 0 ? dot / std::abs(dot) : 1.0;
    double err = 0, ref = 0;
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t k = 0; k < n2; ++k)
            if (inside[k]) {
                err += std::norm(std::complex<double>(est[c * n2 + k]) * ph - std::complex<double>(truth[c * n2 + k]));
                ref += std::norm(std::complex<double>(truth[c * n2 + k]));
            }
    return std::sqrt(err / ref);
}

// The head of the phantom: pixels inside its outer ellipse (dark regions included).
arma::uvec head_support(std::size_t N) {
    arma::uvec in(N * N);
    // the outer ellipse alone: a = 0.69, b = 0.92 of 0.46 FOV, shrunk by two pixels
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const double px = (double(x) - double(N / 2)) / double(N) / 0.46,
                         py = (double(y) - double(N / 2)) / double(N) / 0.46;
            const double r = std::sqrt(px * px / (0.69 * 0.69) + py * py / (0.92 * 0.92));
            in[x + N * y] = r < 1.0 - 2.0 / (0.46 * 0.69 * double(N)) ? 1 : 0;
        }
    return in;
}

}  // namespace

TEST_CASE("Noise whitening: the whitened noise of an independent set has identity covariance", "[maps][noise]") {
    INFO("seed " << forge_test::test_seed());
    const arma::uword nc = 8;
    const arma::cx_mat L = random_lower(nc);
    const arma::cx_mat truth = L * L.t();
    // exact covariance: W Psi W^H = I
    const arma::cx_mat W0 = whitening_matrix(truth);
    CHECK(arma::abs(W0 * truth * W0.t() - arma::eye<arma::cx_mat>(nc, nc)).max() < 1e-10);
    // estimated from 20000 samples, applied to 20000 other samples
    const arma::cx_mat W = whitening_matrix(noise_covariance(correlated_noise(20000, L)));
    const arma::cx_mat C = noise_covariance(apply_coil_transform(correlated_noise(20000, L), W));
    double offMax = 0, diagDev = 0;
    for (arma::uword i = 0; i < nc; ++i)
        for (arma::uword j = 0; j < nc; ++j)
            if (i == j)
                diagDev = std::max(diagDev, std::abs(C(i, i) - 1.0));
            else
                offMax = std::max(offMax, std::abs(C(i, j)));
    INFO("max |off-diagonal| " << offMax << ", max |diagonal - 1| " << diagDev);
    CHECK(offMax <= 0.05);
    CHECK(diagDev <= 0.05);
    // the unwhitened noise is far from white (the test would notice a no-op)
    const arma::cx_mat C0 = noise_covariance(correlated_noise(20000, L));
    CHECK(arma::abs(C0 - arma::eye<arma::cx_mat>(nc, nc)).max() > 0.2);

    CHECK_THROWS_AS(noise_covariance(arma::cx_fmat(1, nc)), forge::invalid_argument);
    CHECK_THROWS_AS(whitening_matrix(arma::cx_mat(3, 4, arma::fill::ones)), forge::invalid_argument);
    arma::cx_mat singular(2, 2, arma::fill::ones);
    CHECK_THROWS_WITH(whitening_matrix(singular), Catch::Contains("not positive definite"));
}

TEST_CASE("Coil compression keeps the data of coils that mix fewer sources, and transforms the maps", "[maps][cc]") {
    INFO("seed " << forge_test::test_seed());
    const std::size_t N = 16, nc = 8, n2 = N * N;
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    set_pixel_grid(P);
    // 8 coils that are mixtures of 3 maps
    const arma::cx_fvec base = sim::ring_coil_maps(N, 3);
    arma::cx_fmat mix = arma::conv_to<arma::cx_fmat>::from(arma::cx_mat(3, nc, arma::fill::randn));
    const arma::cx_fmat B(const_cast<cxf*>(base.memptr()), n2, 3, false, true);
    arma::cx_fmat S = B * mix;
    P.smaps.push_back(arma::vectorise(S));
    ReconFrame fr;
    const sim::Trajectory2D k = sim::cartesian_grid(N, N);
    fr.kx = arma::conv_to<arma::fvec>::from(k.kx);
    fr.ky = arma::conv_to<arma::fvec>::from(k.ky);
    fr.kz.zeros(n2);
    fr.t.zeros(n2);
    arma::fvec fm(n2, arma::fill::zeros);
    Gdft<float> G(n2, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
    SENSE<float, Gdft<float>> E(G, P.smaps[0], nc);
    const arma::cx_fvec x = arma::conv_to<arma::cx_fvec>::from(sim::smooth_shepp_logan_slice(N, 0, 1));
    fr.y = E * x;
    P.frames.push_back(fr);
    double energy = 0;
    const arma::cx_mat A = coil_compression_matrix(P, 3, &energy);
    CHECK(energy > 0.99999);
    // one block of samples x coils (the frame's coil-major data) gives the same matrix
    double blockEnergy = 0;
    const arma::cx_mat Ab = coil_compression_matrix(arma::cx_fmat(fr.y.memptr(), n2, nc, false, true), 3, &blockEnergy);
    CHECK(arma::norm(Ab - A, "fro") < 1e-10 * arma::norm(A, "fro"));
    CHECK(std::abs(blockEnergy - energy) < 1e-12);
    CHECK_THROWS_WITH(coil_compression_matrix(arma::cx_fmat(0, nc), 3), Catch::Contains("0 samples"));
    apply_coil_transform(P, A);
    REQUIRE(P.nc == 3);
    // the compressed data are the compressed maps' data
    SENSE<float, Gdft<float>> Ec(G, P.smaps[0], 3);
    const arma::cx_fvec yc = Ec * x;
    CHECK(arma::norm(yc - P.frames[0].y) / arma::norm(yc) < 1e-4);
    CHECK_THROWS_WITH(coil_compression_matrix(P, 4), Catch::Contains("nv is 4"));
    CHECK_THROWS_AS(apply_coil_transform(P, arma::cx_mat(2, 5)), forge::invalid_argument);
}

TEST_CASE("Coil maps estimated from the data reproduce known smooth maps inside the object", "[maps][coils]") {
    INFO("seed " << forge_test::test_seed());
    const std::size_t N = 64, nc = 8;
    const arma::fvec img = sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::cx_fvec truth = normalised_ring_maps(N, nc);
    const arma::uvec inside = head_support(N);

    SECTION("Cartesian, fully sampled") {
        const sim::Trajectory2D k = sim::cartesian_grid(N, N);
        const ReconProblem P = simulated_problem(N, nc, arma::conv_to<arma::fvec>::from(k.kx),
                                                 arma::conv_to<arma::fvec>::from(k.ky), img, truth, 0.01);
        std::vector<arma::uvec> masks;
        const auto maps = estimate_coil_maps(P, {}, &masks);
        const double e = map_error(maps[0], truth, inside, nc);
        INFO("relative map error inside the object " << e);
        CHECK(e <= 0.05);
        // normalised inside the mask, 0 outside; the mask holds the whole head
        for (std::size_t k2 = 0; k2 < N * N; ++k2) {
            double s = 0;
            for (std::size_t c = 0; c < nc; ++c) s += std::norm(maps[0][c * N * N + k2]);
            if (masks[0][k2])
                REQUIRE(std::fabs(s - 1) < 1e-4);
            else
                REQUIRE(s == 0);
            if (inside[k2]) REQUIRE(masks[0][k2] == 1);
        }
        CHECK(arma::accu(masks[0]) < N * N * 9 / 10);  // the corners are background
        for (std::size_t corner : {std::size_t(0), N - 1, N * (N - 1), N * N - 1}) CHECK(masks[0][corner] == 0);
    }
    SECTION("Cartesian, 3x undersampled with a 16-line calibration region") {
        const sim::Trajectory2D k = sim::cartesian_grid(N, N);
        std::vector<arma::uword> keep;
        for (arma::uword j = 0; j < k.kx.n_elem; ++j) {
            const long ky = std::lround(k.ky[j]);
            if (ky % 3 == 0 || std::abs(ky) < 8) keep.push_back(j);
        }
        const arma::uvec idx(keep);
        const ReconProblem P =
            simulated_problem(N, nc, arma::conv_to<arma::fvec>::from(arma::vec(k.kx.elem(idx))),
                              arma::conv_to<arma::fvec>::from(arma::vec(k.ky.elem(idx))), img, truth, 0.01);
        std::array<double, 3> width{};
        const auto maps = estimate_coil_maps(P, {}, nullptr, &width);
        CHECK(width[1] <= 15.0 + 1e-9);  // the calibration region, not the 24 asked for
        const double e = map_error(maps[0], truth, inside, nc);
        INFO("relative map error inside the object " << e << ", calibration width " << width[1]);
        CHECK(e <= 0.05);
    }
    SECTION("Spiral (non-Cartesian)") {
        arma::vec kx, ky;
        for (std::size_t sh = 0; sh < 2; ++sh) {
            const sim::Trajectory2D t = sim::spiral_interleave_normalised(3072, 16, sh, 2);
            kx = arma::join_cols(kx, t.kx * double(N));
            ky = arma::join_cols(ky, t.ky * double(N));
        }
        const ReconProblem P = simulated_problem(N, nc, arma::conv_to<arma::fvec>::from(kx),
                                                 arma::conv_to<arma::fvec>::from(ky), img, truth, 0.01);
        const auto maps = estimate_coil_maps(P);
        const double e = map_error(maps[0], truth, inside, nc);
        INFO("relative map error inside the object " << e);
        CHECK(e <= 0.05);
    }
    SECTION("bad input is refused by name") {
        CoilMapOptions o;
        o.kernel = 4;
        CHECK_THROWS_WITH(coil_maps_from_images(arma::cx_fmat(N * N, nc), N, N, 1, o), Catch::Contains("kernel is 4"));
        CHECK_THROWS_WITH(coil_maps_from_images(arma::cx_fmat(10, nc), N, N, 1), Catch::Contains("coilImages is 10x8"));
        const sim::Trajectory2D k = sim::cartesian_grid(N, N);
        std::vector<arma::uword> keep;
        for (arma::uword j = 0; j < k.kx.n_elem; ++j)
            if (std::lround(k.ky[j]) % 2 == 0) keep.push_back(j);
        const arma::uvec idx(keep);
        const ReconProblem P = simulated_problem(N, 2, arma::conv_to<arma::fvec>::from(arma::vec(k.kx.elem(idx))),
                                                 arma::conv_to<arma::fvec>::from(arma::vec(k.ky.elem(idx))), img,
                                                 normalised_ring_maps(N, 2), 0.0);
        CHECK_THROWS_WITH(estimate_coil_maps(P), Catch::Contains("calibration region"));
    }
}

TEST_CASE("A CoilMapCache kept across calls gives each call the maps of a call without it, bit for bit",
          "[maps][coils]") {
    INFO("seed " << forge_test::test_seed());
    const std::size_t N = 64, nc = 4;
    const arma::fvec img = sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::cx_fvec truth = normalised_ring_maps(N, nc);
    arma::vec sx, sy;
    for (std::size_t sh = 0; sh < 2; ++sh) {
        const sim::Trajectory2D t = sim::spiral_interleave_normalised(3072, 16, sh, 2);
        sx = arma::join_cols(sx, t.kx * double(N));
        sy = arma::join_cols(sy, t.ky * double(N));
    }
    const sim::Trajectory2D c = sim::cartesian_grid(N, N);
    std::vector<arma::uword> keep;
    for (arma::uword j = 0; j < c.kx.n_elem; ++j)
        if (std::lround(c.ky[j]) % 2 == 0 || std::abs(std::lround(c.ky[j])) < 8) keep.push_back(j);
    const arma::uvec idx(keep);
    const arma::fvec spiralX = arma::conv_to<arma::fvec>::from(sx), spiralY = arma::conv_to<arma::fvec>::from(sy);
    const ReconProblem spiral = simulated_problem(N, nc, spiralX, spiralY, img, truth, 0.01);
    const ReconProblem spiral2 = simulated_problem(N, nc, spiralX, spiralY, img, truth, 0.01);  // other noise
    const ReconProblem cartesian =
        simulated_problem(N, nc, arma::conv_to<arma::fvec>::from(arma::vec(c.kx.elem(idx))),
                          arma::conv_to<arma::fvec>::from(arma::vec(c.ky.elem(idx))), img, truth, 0.01);
    // the spiral turned by a small angle: the same number of samples, other positions
    const float a = 0.05f;
    const ReconProblem turned = simulated_problem(N, nc, std::cos(a) * spiralX - std::sin(a) * spiralY,
                                                  std::sin(a) * spiralX + std::cos(a) * spiralY, img, truth, 0.01);
    // on the host: a GPU's gridding sums by atomics, in another order on every run
    CoilMapOptions plain, wide;
    plain.device = wide.device = Device::Host;
    wide.calibration = 32;
    struct Call {
        const ReconProblem* P;
        CoilMapOptions o;
    };
    CoilMapCache cache;
    for (const Call& call : {Call{&spiral, plain}, Call{&spiral2, plain}, Call{&cartesian, plain}, Call{&spiral, wide},
                             Call{&turned, wide}, Call{&turned, plain}, Call{&spiral, plain}}) {
        std::vector<arma::uvec> cachedMasks, freshMasks;
        std::array<double, 3> cachedWidth{}, freshWidth{};
        const auto cached = estimate_coil_maps(*call.P, call.o, &cachedMasks, &cachedWidth, nullptr, &cache);
        const auto fresh = estimate_coil_maps(*call.P, call.o, &freshMasks, &freshWidth);
        CHECK(arma::approx_equal(cached[0], fresh[0], "absdiff", 0.0f));
        CHECK(arma::all(cachedMasks[0] == freshMasks[0]));
        CHECK(cachedWidth == freshWidth);
    }
}

TEST_CASE("Coil maps keep an object that a bright spot, coil shading and a phase ramp make dim; a spike is left out",
          "[maps][coils][mask]") {
    INFO("seed " << forge_test::test_seed());
    // 128^2 (finer than the 52-point map grid of the default calibration: the maps are interpolated). The head is
    // shaded to 1/20 of its brightness on one side; one small spot is 30 times its brightest part; and a
    // quadratic phase, an off-resonance's exp(-i w TE), cancels much of the low-resolution images there. A
    // threshold of 5% of the largest window amplitude cut most of such a head (the real spiral phantom of
    // ../shared/data/octopus-spiral lost 38% of its energy so).
    const std::size_t N = 128, nc = 8, n2 = N * N;
    const arma::uvec inside = head_support(N);
    arma::cx_fvec obj(n2, arma::fill::zeros);
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const std::size_t k = x + N * y;
            if (!inside[k]) continue;
            const double u = (double(x) - double(N / 2)) / double(N), v = (double(y) - double(N / 2)) / double(N);
            const double shade = std::pow(20.0, -(u + 0.5));  // 1 at the left, 1/20 at the right
            // 3 cycles from the centre to the corners: up to 10 cycles/FOV locally, near the calibration's edge
            const double phase = 2 * M_PI * 3 * ((u - 0.1) * (u - 0.1) + v * v) / 0.25;
            obj[k] = cxf(std::polar(shade, phase));
            if (std::hypot(u + 0.25, v) < 0.03) obj[k] *= 30.0f;  // the bright spot, near the left coils
        }
    const arma::cx_fvec truth = normalised_ring_maps(N, nc);
    // radial, 2x oversampled readouts: the object with each coil's map through a NUFFT
    arma::vec kx, ky;
    const std::size_t spokes = 96, ns = 2 * N;
    for (std::size_t s = 0; s < spokes; ++s) {
        const double a = M_PI * double(s) / double(spokes);
        for (std::size_t j = 0; j < ns; ++j) {
            const double r = (double(j) - double(ns / 2)) * double(N) / double(ns);
            kx = arma::join_cols(kx, arma::vec{r * std::cos(a)});
            ky = arma::join_cols(ky, arma::vec{r * std::sin(a)});
        }
    }
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    set_pixel_grid(P);
    ReconFrame fr;
    fr.kx = arma::conv_to<arma::fvec>::from(kx);
    fr.ky = arma::conv_to<arma::fvec>::from(ky);
    fr.kz.zeros(kx.n_elem);
    fr.t.zeros(kx.n_elem);
    {
        const Gnufft<float> G(kx.n_elem, N, N, 1, fr.kx, fr.ky, fr.kz);
        const std::size_t n1 = kx.n_elem;
        fr.y.set_size(n1 * nc);
        for (std::size_t c = 0; c < nc; ++c)
            fr.y.subvec(c * n1, (c + 1) * n1 - 1) = G * arma::cx_fvec(truth.subvec(c * n2, (c + 1) * n2 - 1) % obj);
        const double rms = arma::norm(fr.y) / std::sqrt(double(fr.y.n_elem));
        fr.y += arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(fr.y.n_elem) * (0.002 * rms));
    }
    P.frames.push_back(fr);
    // the energy of the object's own image (|obj|^2) that a mask drops
    auto object_dropped = [&](const arma::uvec& mask) {
        double out = 0, all = 0;
        for (std::size_t k = 0; k < n2; ++k) {
            all += std::norm(obj[k]);
            if (!mask[k]) out += std::norm(obj[k]);
        }
        return out / all;
    };
    CoilMapOptions o;
    o.device = ReconDevice::Host;
    std::vector<arma::uvec> masks;
    std::vector<CoilMapStats> stats;
    const auto maps = estimate_coil_maps(P, o, &masks, nullptr, &stats);
    REQUIRE(stats.size() == 1);
    INFO("dropped (object) " << object_dropped(masks[0]) << ", dropped (calibration) " << stats[0].dropped_energy
                             << ", level " << stats[0].level << ", mask " << arma::accu(masks[0]) << " of " << n2);
    CHECK(stats[0].grid[0] < N);  // the eigenvectors on the coarser map grid
    CHECK(object_dropped(masks[0]) <= 0.01);
    CHECK(stats[0].dropped_energy <= 0.01);
    CHECK_FALSE(stats[0].mask_dropped);
    CHECK(stats[0].outliers == 0);
    CHECK(arma::accu(masks[0]) < n2 * 9 / 10);  // still a mask: the corners are background
    CHECK(forge_test::map_direction_error(maps[0], truth, inside, nc) <= 0.1);

    SECTION("one spike of 1e25 in the calibration region is left out; the maps are those without it") {
        ReconProblem Q = P;
        std::size_t centre = 0;
        for (std::size_t j = 0; j < kx.n_elem; ++j)
            if (std::hypot(kx[j], ky[j]) < std::hypot(kx[centre], ky[centre])) centre = j;
        Q.frames[0].y[3 * kx.n_elem + centre + 5] = cxf(1e25f, -1e25f);
        std::vector<arma::uvec> qmasks;
        std::vector<CoilMapStats> qstats;
        const auto qmaps = estimate_coil_maps(Q, o, &qmasks, nullptr, &qstats);
        CHECK(qstats[0].outliers == 1);
        CHECK(qmaps[0].is_finite());
        CHECK(object_dropped(qmasks[0]) <= 0.01);
        CHECK(forge_test::map_direction_error(qmaps[0], truth, inside, nc) <= 0.1);
    }
    SECTION("data in units of 1e30 or 1e-30 give the same maps and mask") {
        for (float scale : {1e30f, 1e-30f}) {
            ReconProblem Q = P;
            Q.frames[0].y *= scale;
            std::vector<arma::uvec> qmasks;
            const auto qmaps = estimate_coil_maps(Q, o, &qmasks);
            INFO("scale " << scale);
            CHECK(qmaps[0].is_finite());
            CHECK(arma::accu(qmasks[0] != masks[0]) <= n2 / 1000);
            // on the object (the background's eigenvectors follow the noise, and so the rounding)
            CHECK(forge_test::map_direction_error(qmaps[0], maps[0], inside, nc) <= 1e-3);
        }
    }
    SECTION("options out of range are refused by name") {
        CoilMapOptions bad = o;
        bad.max_dropped_energy = 0.7;
        CHECK_THROWS_WITH(estimate_coil_maps(P, bad), Catch::Contains("max_dropped_energy is 0.7"));
        bad.max_dropped_energy = std::nan("");
        CHECK_THROWS_WITH(estimate_coil_maps(P, bad), Catch::Contains("max_dropped_energy"));
    }
}

TEST_CASE("Coil maps of a 3D Cartesian volume reproduce known smooth maps", "[maps][coils][3d]") {
    INFO("seed " << forge_test::test_seed());
    const std::size_t N = 24, Nz = 12, nc = 6, n2 = N * N * Nz;
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.Nz = Nz;
    P.nc = nc;
    set_pixel_grid(P);
    // an ellipsoid and 3D Gaussian coil maps around it, normalised
    arma::fvec img(n2);
    arma::cx_fvec truth(n2 * nc);
    arma::uvec inside(n2);
    for (std::size_t k = 0; k < n2; ++k) {
        const double x = P.ix[k], y = P.iy[k], z = P.iz[k];
        const double r = std::sqrt(x * x / 0.12 + y * y / 0.09 + z * z / 0.09);
        img[k] = float(0.5 * (1 - std::tanh((r - 1) * 8)));
        inside[k] = r < 0.85;
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) {
            const double a = 2 * M_PI * c / nc, cz = c % 2 ? 0.3 : -0.3;
            const double d2 =
                std::pow(x - 0.6 * std::cos(a), 2) + std::pow(y - 0.6 * std::sin(a), 2) + std::pow(z - cz, 2);
            truth[c * n2 + k] = std::polar(float(std::exp(-d2 / 0.5)), float(0.5 * c + x - y));
            e += std::norm(truth[c * n2 + k]);
        }
        for (std::size_t c = 0; c < nc; ++c) truth[c * n2 + k] /= float(std::sqrt(e));
    }
    ReconFrame fr;
    for (std::size_t z = 0; z < Nz; ++z)
        for (std::size_t y = 0; y < N; ++y)
            for (std::size_t x = 0; x < N; ++x) {
                fr.kx.resize(fr.kx.n_elem + 1);
                fr.ky.resize(fr.ky.n_elem + 1);
                fr.kz.resize(fr.kz.n_elem + 1);
                fr.kx(fr.kx.n_elem - 1) = float(double(x) - double(N / 2));
                fr.ky(fr.ky.n_elem - 1) = float(double(y) - double(N / 2));
                fr.kz(fr.kz.n_elem - 1) = float(double(z) - double(Nz / 2));
            }
    fr.t.zeros(fr.kx.n_elem);
    arma::fvec fm(n2, arma::fill::zeros);
    Gdft<float> G(fr.kx.n_elem, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
    SENSE<float, Gdft<float>> E(G, truth, nc);
    fr.y = E * arma::conv_to<arma::cx_fvec>::from(img);
    P.frames.push_back(fr);
    CoilMapOptions o;
    o.calibration = 12;
    o.kernel = 3;
    const auto maps = estimate_coil_maps(P, o);
    const double e = map_error(maps[0], truth, inside, nc);
    INFO("relative map error inside the object " << e);
    CHECK(e <= 0.05);
}

TEST_CASE("Penalized field map of a two-echo scan: +-150 Hz, 1% noise, RMS error <= 3 Hz, no wraps",
          "[maps][fieldmap]") {
    INFO("seed " << forge_test::test_seed());
    const std::size_t N = 64, n2 = N * N;
    ReconProblem P;
    P.Nx = P.Ny = N;
    set_pixel_grid(P);
    const arma::fvec rho = sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::vec w = sim::bump_and_ramp_field_map(arma::conv_to<arma::vec>::from(P.ix),
                                                     arma::conv_to<arma::vec>::from(P.iy), 150.0);  // rad/s
    const std::vector<double> te{1.0e-3, 3.5e-3};  // 2.5 ms apart: up to 0.75 pi of phase difference
    const double sigma = 0.01 * double(rho.max());
    std::vector<arma::cx_fvec> echoes;
    for (double t : te) {
        arma::cx_fvec y(n2);
        for (std::size_t k = 0; k < n2; ++k) y[k] = std::polar(rho[k], float(-w[k] * t));  // forward exp(-i w t)
        y += arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(n2) * (sigma / std::sqrt(2.0)));
        echoes.push_back(y);
    }
    // inside the object: the head where it gives signal (the map is not measurable where rho = 0)
    arma::uvec inside = head_support(N);
    for (std::size_t k = 0; k < n2; ++k)
        if (rho[k] < 0.1f * rho.max()) inside[k] = 0;
    auto rms_hz = [&](const arma::fvec& est, double* maxErr) {
        double s = 0, mx = 0;
        std::size_t n = 0;
        for (std::size_t k = 0; k < n2; ++k)
            if (inside[k]) {
                const double e = (double(est[k]) - w[k]) / (2 * M_PI);
                s += e * e;
                mx = std::max(mx, std::fabs(e));
                ++n;
            }
        *maxErr = mx;
        return std::sqrt(s / double(n));
    };
    std::vector<double> cost;
    const arma::fvec est = estimate_field_map(echoes, te, N, N, 1, {}, &cost);
    double maxErr = 0, maxPd = 0;
    const double rms = rms_hz(est, &maxErr);
    const double rmsPd = rms_hz(phase_difference_field_map(echoes, te), &maxPd);
    INFO("RMS error inside the head: penalized " << rms << " Hz (max " << maxErr << "), phase difference " << rmsPd
                                                 << " Hz (max " << maxPd << ")");
    CHECK(rms <= 3.0);
    CHECK(maxErr < 0.1 / (te[1] - te[0]));  // no wrap: one would be off by 1 / dt = 400 Hz
    CHECK(rms < rmsPd);
    // the surrogate iteration never increases the cost
    for (std::size_t i = 1; i < cost.size(); ++i) REQUIRE(cost[i] <= cost[i - 1] * (1 + 1e-12) + 1e-15);

    CHECK_THROWS_WITH(estimate_field_map({echoes[0]}, {te[0]}, N, N, 1), Catch::Contains("at least 2"));
    CHECK_THROWS_WITH(estimate_field_map(echoes, {te[0], te[0]}, N, N, 1), Catch::Contains("are equal"));
    CHECK_THROWS_WITH(estimate_field_map(echoes, te, N, N + 2, 1), Catch::Contains("expected 4224"));
}
