// The checks forge-recon runs before it reconstructs (forge/Recon/Reconstruct.h): remove_spikes() leaves out samples
// no measurement gives and nothing else; uncovered_energy() measures how much of the data's gridded image lies where
// the coil maps vanish.
#include <omp.h>

#include <cmath>
#include <complex>

#include "ReconTestProblems.h"
#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/Trajectories.h"

using namespace forge_test;
using forge::recon::ReconProblem;

namespace {

ReconProblem radial(double noise) { return radial_problem(32, 4, 33, noise); }

arma::cx_fvec solve(const ReconProblem& P) {
    forge::recon::ReconSettings S;
    S.iterations = 20;
    return forge::recon::reconstruct(P, false, S).complex_image.front();
}

double relative_difference(const arma::cx_fvec& a, const arma::cx_fvec& b) {
    return double(arma::norm(a - b) / arma::norm(b));
}

}  // namespace

TEST_CASE("remove_spikes of a slice large enough for threads: the same spikes on 1, 2 and 7 threads",
          "[recon][checks]") {
    FORGE_INFO_SEED();
    // 65536 samples x 8 coils (4 MiB: forge::detail::parallel_pass forks), three spikes in three coils
    forge::recon::ReconFrame fr;
    const std::size_t n1 = 65536, nc = 8;
    fr.kx = forge_test::uniform<float>(n1, -16, 16);
    fr.ky = forge_test::uniform<float>(n1, -16, 16);
    fr.kz.zeros(n1);
    fr.t.zeros(n1);
    fr.y = arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(n1 * nc));
    const std::size_t spikes[3] = {7, n1 / 2 + 3, n1 - 1};
    for (std::size_t i = 0; i < 3; ++i) fr.y[(2 * i + 1) * n1 + spikes[i]] = std::complex<float>(1e20f, -1e20f);
    const int saved = omp_get_max_threads();
    for (int threads : {1, 2, 7}) {
        omp_set_num_threads(threads);
        forge::recon::ReconFrame f = fr;
        INFO(threads << " threads");
        CHECK(forge::recon::remove_spikes(f, nc) == 3);
        REQUIRE(f.kx.n_elem == n1 - 3);
        CHECK(f.kx[7] == fr.kx[8]);
        CHECK(f.y[n1 - 4] == fr.y[n1 - 2]);                // coil 0's last kept sample
        CHECK(f.y[7 * (n1 - 3) + 7] == fr.y[7 * n1 + 8]);  // coil 7, after the first spike's sample
    }
    omp_set_num_threads(saved);
}

TEST_CASE("remove_spikes leaves out a sample of 1e25 or 3e38 and nothing of clean data", "[recon][checks]") {
    for (double noise : {0.0, 0.01}) {
        ReconProblem P = radial(noise);
        const std::size_t n1 = P.frames[0].kx.n_elem;
        CHECK(forge::recon::remove_spikes(P) == std::vector<std::size_t>{0});
        CHECK(P.frames[0].kx.n_elem == n1);
    }
    // fully sampled Cartesian 32x32, noise-free: the k-space centre is the largest sample and stays
    {
        forge::sim::Trajectory2D k;
        k.kx.set_size(32 * 32);
        k.ky.set_size(32 * 32);
        for (int y = 0; y < 32; ++y)
            for (int x = 0; x < 32; ++x) {
                k.kx[32 * y + x] = x - 16;
                k.ky[32 * y + x] = y - 16;
            }
        ReconProblem P = sense_problem(32, 4, k, 0.0);
        CHECK(forge::recon::remove_spikes(P) == std::vector<std::size_t>{0});
    }
    const ReconProblem clean = radial(0.01);
    const arma::cx_fvec reference = solve(clean);
    const std::size_t n1 = clean.frames[0].kx.n_elem, j = n1 / 2 + 7;
    for (float spike : {1e25f, 3e38f}) {
        ReconProblem P = clean;
        P.frames[0].y[2 * n1 + j] = spike;  // coil 2
        CHECK(forge::recon::remove_spikes(P) == std::vector<std::size_t>{1});
        const auto& fr = P.frames[0];
        REQUIRE(fr.kx.n_elem == n1 - 1);
        CHECK(fr.y.n_elem == 4 * (n1 - 1));
        CHECK(fr.t.n_elem == n1 - 1);
        CHECK(P.n1total == n1 - 1);
        CHECK(P.n1max == n1 - 1);
        // the samples after it moved up by one, in every coil
        CHECK(fr.kx[j] == clean.frames[0].kx[j + 1]);
        CHECK(fr.y[3 * (n1 - 1) + j] == clean.frames[0].y[3 * n1 + j + 1]);
        CHECK(fr.y[j - 1] == clean.frames[0].y[j - 1]);
        // the image without it is the clean data's, to the weight of one sample of n1
        const double d = relative_difference(solve(P), reference);
        INFO("spike " << spike << ": relative difference " << d);
        CHECK(d < 0.01);
    }
    // two spikes of different sizes: both
    ReconProblem two = clean;
    two.frames[0].y[j] = 3e38f;
    two.frames[0].y[n1 + 5] = std::complex<float>(0, 1e25f);
    CHECK(forge::recon::remove_spikes(two) == std::vector<std::size_t>{2});
    // a frame under 100 samples is left as it is; a frame of the wrong size is refused
    forge::recon::ReconFrame small;
    small.kx = small.ky = small.kz = small.t = arma::fvec(50, arma::fill::zeros);
    small.y = arma::cx_fvec(50, arma::fill::ones);
    small.y[3] = 1e25f;
    CHECK(forge::recon::remove_spikes(small, 1) == 0);
    CHECK_THROWS_AS(forge::recon::remove_spikes(small, 2), forge::invalid_argument);
}

TEST_CASE("uncovered_energy: the share of the gridded image where the coil maps vanish", "[recon][checks]") {
    ReconProblem P = radial(0.01);
    const double covered = forge::recon::uncovered_energy(P, 0);
    INFO("the true maps: " << covered);
    CHECK(covered == 0.0);  // ring coils cover every pixel

    // masked to the object (the phantom's support): the gridded image's blur and noise outside
    // the object: where the phantom exceeds 2% of its largest value
    const arma::fvec truth = P.reference[0];
    const float edge = 0.02f * truth.max();
    const std::size_t n2 = P.n2();
    ReconProblem masked = P;
    for (std::size_t c = 0; c < P.nc; ++c)
        for (std::size_t k = 0; k < n2; ++k)
            if (truth[k] <= edge) masked.smaps[0][c * n2 + k] = 0;
    const double tight = forge::recon::uncovered_energy(masked, 0);
    INFO("maps masked to the object: " << tight);
    CHECK(tight < 0.05);

    // zero on the object: most of the energy
    ReconProblem inverted = P;
    for (std::size_t c = 0; c < P.nc; ++c)
        for (std::size_t k = 0; k < n2; ++k)
            if (truth[k] > edge) inverted.smaps[0][c * n2 + k] = 0;
    const double removed = forge::recon::uncovered_energy(inverted, 0);
    INFO("maps zero on the object: " << removed);
    CHECK(removed > 0.5);

    // the data's scale does not matter: 1e30 stays in range
    ReconProblem large = inverted;
    large.frames[0].y *= 1e30f;
    CHECK(std::abs(forge::recon::uncovered_energy(large, 0) - removed) < 1e-4);

    CHECK_THROWS_AS(forge::recon::uncovered_energy(P, 1), forge::invalid_argument);
    ReconProblem none = P;
    none.smaps.clear();
    CHECK_THROWS_AS(forge::recon::uncovered_energy(none, 0), forge::invalid_argument);
}
