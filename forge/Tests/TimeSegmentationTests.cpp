// TimeSegmentation: field-corrected operators built from Gfft/Gnufft against the exact Gdft with a field map.
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <string>

#include <omp.h>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/TimeSegmentation.h"

using namespace forge_test;

namespace {
constexpr double kPi = 3.14159265358979323846;

// A smooth random field map (rad/s) on an Nx x Ny grid: a random low-order polynomial plus a Gaussian bump,
// scaled so that max |FM| = peak.
arma::vec smooth_field_map(arma::uword Nx, arma::uword Ny, double peak) {
    arma::vec c = uniform<double>(6, -1, 1);
    arma::vec fm(Nx * Ny);
    for (arma::uword y = 0; y < Ny; ++y)
        for (arma::uword x = 0; x < Nx; ++x) {
            const double u = (double(x) - Nx / 2.0) / Nx * 2, v = (double(y) - Ny / 2.0) / Ny * 2;
            fm(x + Nx * y) = c(0) + c(1) * u + c(2) * v + c(3) * u * v + c(4) * u * u +
                             2 * c(5) * std::exp(-((u - 0.2) * (u - 0.2) + v * v) * 6);
        }
    return fm * (peak / arma::abs(fm).max());
}

// Relative errors of A against ref, forward and adjoint, over several random probes:
// sqrt(sum_i ||(A - ref) x_i||^2 / sum_i ||ref x_i||^2). Both directions estimate the same quantity,
// ||A - ref||_F / ||ref||_F; one probe alone scatters by tens of percent where the error sits in a few
// pixels or samples, too much for comparing the two directions.
template <typename Op>
std::pair<double, double> errors(const Op& A, const forge::Gdft<double>& ref) {
    constexpr int kProbes = 8;
    double fwdErr = 0, fwdRef = 0, adjErr = 0, adjRef = 0;
    for (int i = 0; i < kProbes; ++i) {
        arma::cx_vec x = complex_normal<double>(A.n2()), y = complex_normal<double>(A.n1());
        const arma::cx_vec rx = ref * x, ry = ref / y;
        fwdErr += std::pow(arma::norm(A * x - rx), 2);
        fwdRef += std::pow(arma::norm(rx), 2);
        adjErr += std::pow(arma::norm(A / y - ry), 2);
        adjRef += std::pow(arma::norm(ry), 2);
    }
    return {std::sqrt(fwdErr / fwdRef), std::sqrt(adjErr / adjRef)};
}
}  // namespace

TEST_CASE("TimeSegmentation(Gfft) approaches Gdft with a field map as L grows", "[TimeSegmentation][ts]") {
    FORGE_INFO_SEED();
    const arma::uword N = 16;
    forge::Gfft<double> F(N, N);
    arma::mat r = F.image_coords(), k = F.kspace_coords();
    arma::vec fm = smooth_field_map(N, N, 2 * kPi * 60);          // up to 60 Hz off resonance
    arma::vec t = arma::regspace(0, double(F.n1() - 1)) * 40e-6;  // EPI-like: 10 ms readout
    forge::Gdft<double> ref(F.n1(), F.n2(), k.col(0), k.col(1), k.col(2), r.col(0), r.col(1), r.col(2), fm, t);

    for (auto type : {forge::TSInterp::Hanning, forge::TSInterp::MinMax}) {
        INFO("interpolator " << (type == forge::TSInterp::Hanning ? "Hanning" : "MinMax"));
        double prev = 1e9, first = 0;
        for (arma::uword L : {1, 2, 4, 8}) {
            forge::TimeSegmentation<double, forge::Gfft<double>> A(F, fm, t, L, type);
            REQUIRE(A.n1() == F.n1());
            REQUIRE(A.n2() == F.n2());
            auto e = errors(A, ref);
            auto est = forge::TimeSegmentation<double, forge::Gfft<double>>::approximation_error(fm, t, L, type);
            INFO("L " << L << " fwd " << e.first << " adj " << e.second << " estimated rms " << est.rms_error << " max "
                      << est.max_error);
            CHECK(e.first < prev);
            CHECK(e.second < 1.5 * e.first + 1e-12);
            // The RMS estimate predicts the operator error for random images.
            CHECK(e.first < 1.5 * est.rms_error + 1e-12);
            CHECK(e.first > 0.5 * est.rms_error);
            CHECK(est.max_error >= est.rms_error);
            if (L == 1) first = e.first;
            prev = e.first;
        }
        // The L = 1 error depends on the random field map (0.2-0.5 here), so the bounds are relative to
        // it: Hanning interpolation converges like 1/L (8x from L = 1 to 8), min-max far faster.
        if (type == forge::TSInterp::MinMax) {
            CHECK(prev < 1e-3 * first);
            CHECK(prev < 1e-4);
        } else {
            CHECK(prev < first / 8);
        }
    }
    // Min-max interpolators beat Hanning ones at the same L.
    forge::TimeSegmentation<double, forge::Gfft<double>> H(F, fm, t, 3, forge::TSInterp::Hanning);
    forge::TimeSegmentation<double, forge::Gfft<double>> M(F, fm, t, 3, forge::TSInterp::MinMax);
    CHECK(errors(M, ref).first < 0.5 * errors(H, ref).first);
}

TEST_CASE("TimeSegmentation(Gnufft) with auto-chosen L meets the requested error", "[TimeSegmentation][ts]") {
    FORGE_INFO_SEED();
    const arma::uword N = 24, n1 = 2400;
    // A 4-interleave spiral, t from 0 to 16 ms along each interleave.
    arma::vec kx(n1), ky(n1), t(n1);
    for (arma::uword j = 0; j < n1; ++j) {
        const arma::uword il = j % 4, s = j / 4;
        const double f = double(s) / (n1 / 4), rad = f * (N / 2 - 0.6), th = 2 * kPi * (6 * f + il / 4.0);
        kx(j) = rad * std::cos(th);
        ky(j) = rad * std::sin(th);
        t(j) = 16e-3 * f;
    }
    arma::vec kz(n1, arma::fill::zeros);
    forge::Gfft<double> cart(N, N);
    arma::mat r = cart.image_coords();
    arma::vec fm = smooth_field_map(N, N, 2 * kPi * 80);
    forge::Gdft<double> ref(n1, N * N, kx, ky, kz, r.col(0), r.col(1), r.col(2), fm, t);
    forge::Gnufft<double> G(n1, N, N, 1, kx, ky, kz);
    using TS = forge::TimeSegmentation<double, forge::Gnufft<double>>;
    // Hanning interpolators converge only like 1/L; min-max ones much faster.
    for (auto tt : {std::make_pair(2e-2, forge::TSInterp::Hanning), std::make_pair(2e-2, forge::TSInterp::MinMax),
                    std::make_pair(2e-3, forge::TSInterp::MinMax)}) {
        {
            const double target = tt.first;
            const auto type = tt.second;
            forge::TSErrorReport rep = TS::choose_segments(fm, t, target, type);
            TS A(G, fm, t, rep.L, type);
            auto e = errors(A, ref);
            INFO("target " << target << " type " << int(type) << " L " << rep.L << " est " << rep.rms_error << " fwd "
                           << e.first << " adj " << e.second);
            CHECK(rep.rms_error <= target);
            CHECK(e.first <= target);
            CHECK(e.second <= target);
            if (rep.L > 1) {
                CHECK(TS::approximation_error(fm, t, rep.L - 1, type).rms_error > 0.9 * target);
            }
        }
    }
    // The operator checks of the time-segmented operator.
    TS A(G, fm, t, 5, forge::TSInterp::MinMax);
    check_adjoint(A, adjoint_tolerance<double>(), DotScale::Norms);
    check_normal(A, 0.0);
    check_batch(A, 3, 0.0);
    arma::cx_vec x = complex_normal<double>(A.n2());
    // float operators work too.
    forge::Gnufft<float> Gf(n1, N, N, 1, arma::conv_to<arma::fvec>::from(kx), arma::conv_to<arma::fvec>::from(ky),
                            arma::conv_to<arma::fvec>::from(kz));
    forge::TimeSegmentation<float, forge::Gnufft<float>> Af(Gf, arma::conv_to<arma::fvec>::from(fm),
                                                            arma::conv_to<arma::fvec>::from(t), 8,
                                                            forge::TSInterp::MinMax);
    arma::cx_fvec xf = arma::conv_to<arma::cx_fvec>::from(x);
    CHECK(rel_error(Af * xf, ref * x) < 1e-3);
    check_adjoint(Af, adjoint_tolerance<float>(), DotScale::Norms);
    check_normal(Af, 0.0);
    check_batch(Af, 3, 0.0);
}

TEST_CASE("TimeSegmentation gives the same result on any number of threads", "[TimeSegmentation][ts][threads]") {
    // With at least as many segments as threads the segments run in parallel (one region per
    // application) and are added in segment order: bit-for-bit the single-thread result.
    FORGE_INFO_SEED();
    const arma::uword N = 16, n1 = 1200;
    arma::vec kx = uniform<double>(n1, -double(N / 2), double(N / 2) - 1e-3);
    arma::vec ky = uniform<double>(n1, -double(N / 2), double(N / 2) - 1e-3), kz(n1, arma::fill::zeros);
    arma::vec t = arma::sort(uniform<double>(n1, 0, 10e-3)), fm = smooth_field_map(N, N, 2 * kPi * 60);
    forge::Gnufft<double> G(n1, N, N, 1, kx, ky, kz);
    forge::TimeSegmentation<double, forge::Gnufft<double>> A(G, fm, t, 5, forge::TSInterp::MinMax);
    const arma::cx_vec x = complex_normal<double>(A.n2()), y = complex_normal<double>(A.n1());
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const arma::cx_vec f1 = A * x, a1 = A / y;
    for (int threads : {2, 3, 6}) {
        omp_set_num_threads(threads);
        const arma::cx_vec ft = A * x, at = A / y;
        INFO(threads << " threads");
        CHECK(arma::approx_equal(ft, f1, "absdiff", 0.0));
        CHECK(arma::approx_equal(at, a1, "absdiff", 0.0));
    }
    omp_set_num_threads(saved);
    // And the adjoint is still the adjoint of the forward.
    check_adjoint(A, adjoint_tolerance<double>(), DotScale::Norms);
}

TEST_CASE("choose_segments returns the first L whose approximation_error meets 0.9 x the target",
          "[TimeSegmentation][ts]") {
    FORGE_INFO_SEED();
    // A random field map (+-100 Hz) and readout times (0 to 20 ms, unsorted): choose_segments shares its tables
    // between the L it tries; approximation_error builds them for one L.
    const arma::fvec fm = 2 * 3.14159265f * 100 * (2 * arma::randu<arma::fvec>(500) - 1);
    const arma::fvec t = 0.02f * arma::randu<arma::fvec>(3000);
    using Core = forge::TimeSegmentationCore<float>;
    for (auto type : {forge::TSInterp::MinMax, forge::TSInterp::Hanning}) {
        // (Hanning interpolators converge slowly: 1e-3 needs more than 64 segments here)
        for (double target : {1e-1, 1e-2, type == forge::TSInterp::MinMax ? 1e-3 : 3e-2}) {
            const forge::TSErrorReport r = Core::choose_segments(fm, t, target, type, 64);
            arma::uword first = 0;
            forge::TSErrorReport at;
            for (arma::uword L = 1; L <= 64 && first == 0; ++L) {
                at = Core::approximation_error(fm, t, L, type);
                if (at.rms_error <= 0.9 * target) first = L;
            }
            INFO("type " << int(type) << ", target " << target << ": chose L = " << r.L << ", first L = " << first);
            REQUIRE(first > 0);
            CHECK(r.L == first);
            CHECK(r.rms_error == Approx(at.rms_error).epsilon(1e-12));
            CHECK(r.max_error == Approx(at.max_error).epsilon(1e-12));
        }
    }
}

TEST_CASE("TimeSegmentation rejects bad inputs", "[TimeSegmentation][ts][errors]") {
    forge::Gfft<float> F(8, 8);
    arma::fvec fm(64, arma::fill::zeros), t(64, arma::fill::zeros);
    using TS = forge::TimeSegmentation<float, forge::Gfft<float>>;
    CHECK_THROWS_WITH(TS(F, fm, t, 0), Catch::Contains("L (number of time segments) must be at least 1"));
    CHECK_THROWS_WITH(TS(F, arma::fvec(63), t, 2), Catch::Contains("field_map has 63 entries"));
    CHECK_THROWS_WITH(TS(F, fm, arma::fvec(65), 2), Catch::Contains("timeVec has 65 entries"));
    CHECK_THROWS_AS(TS::choose_segments(fm, t, 0.0), forge::invalid_argument);
    arma::fvec big = arma::linspace<arma::fvec>(-3000, 3000, 64), tl = arma::linspace<arma::fvec>(0, 0.05f, 64);
    CHECK_THROWS_WITH(TS::choose_segments(big, tl, 1e-6, forge::TSInterp::Hanning, 3), Catch::Contains("L = 3"));
    TS A(F, fm, t, 2);
    CHECK_THROWS_WITH(A * arma::cx_fvec(10), Catch::Contains("expected n2 = 64"));
}

TEST_CASE("TimeSegmentation bounds L by the samples and the memory it needs", "[TimeSegmentation][ts][errors]") {
    forge::Gfft<float> F(8, 8);
    const arma::fvec fm = arma::linspace<arma::fvec>(-300, 300, 64), t = arma::linspace<arma::fvec>(0, 0.01f, 64);
    using TS = forge::TimeSegmentation<float, forge::Gfft<float>>;
    CHECK_NOTHROW(TS(F, fm, t, 64));
    // 65 segments for 64 samples: more nodes than samples.
    REQUIRE_THROWS_WITH(TS(F, fm, t, 65), Catch::Contains("L = 65 time segments exceed the 64 samples"));
    CHECK_THROWS_AS(TS(F, fm, t, 1000000, forge::TSInterp::MinMax), forge::invalid_argument);
    CHECK_THROWS_WITH(TS::approximation_error(fm, t, 1000000, forge::TSInterp::Hanning), Catch::Contains("L <= 64"));
    // Within the sample count but beyond any machine's memory: 2e5 samples and 2e5 segments would need
    // 2e5 x 2e5 interpolators (~1 TiB); refused before anything is allocated.
    const arma::uword n1 = 200000;
    const arma::fvec k(n1, arma::fill::zeros), r(4, arma::fill::zeros), tl = arma::linspace<arma::fvec>(0, 0.02f, n1);
    const forge::Gdft<float> G(n1, 4, k, k, k, r, r, r, r, tl);
    CHECK_THROWS_WITH((forge::TimeSegmentation<float, forge::Gdft<float>>(G, r, tl, n1)),
                      Catch::Contains("GiB") && Catch::Contains("memory"));
}

TEST_CASE("TimeSegmentation error estimates reject non-finite inputs and say what they compare",
          "[TimeSegmentation][ts][errors]") {
    using TS = forge::TimeSegmentation<float, forge::Gfft<float>>;
    FORGE_INFO_SEED();
    arma::fvec fm = uniform<float>(64, -600, 600), t = arma::linspace<arma::fvec>(0, 0.01f, 64);
    CHECK(TS::approximation_error(fm, t, 2, forge::TSInterp::Hanning).rms_error > 0);
    for (arma::uword i : {arma::uword(0), arma::uword(17)}) {
        arma::fvec bad = fm;
        bad(i) = std::numeric_limits<float>::quiet_NaN();
        CHECK_THROWS_WITH(TS::approximation_error(bad, t, 4, forge::TSInterp::Hanning),
                          Catch::Contains("field_map[" + std::to_string(i) + "] is nan"));
        CHECK_THROWS_WITH(TS::choose_segments(bad, t, 1e-2), Catch::Contains("field_map"));
        arma::fvec badt = t;
        badt(i) = std::numeric_limits<float>::infinity();
        CHECK_THROWS_WITH(TS::approximation_error(fm, badt, 4, forge::TSInterp::MinMax), Catch::Contains("timeVec"));
    }
    // The failure message gives the RMS estimate, the value it was compared with (0.9 x the target) and the target.
    const arma::fvec big = arma::linspace<arma::fvec>(-3000, 3000, 64), tl = arma::linspace<arma::fvec>(0, 0.05f, 64);
    const double est = TS::approximation_error(big, tl, 3, forge::TSInterp::Hanning).rms_error;
    const double target = est / 0.95;  // est < target, but est > 0.9 x target
    std::ostringstream goal;
    goal << 0.9 * target << " = 0.9 x the requested " << target;
    CHECK_THROWS_WITH(TS::choose_segments(big, tl, target, forge::TSInterp::Hanning, 3),
                      Catch::Contains("above " + goal.str()));
    CHECK_THROWS_WITH(TS::choose_segments(big, arma::fvec(), 1e-2), Catch::Contains("must not be empty"));
    // With fewer samples than Lmax the search stops at n1 and says why.
    CHECK_THROWS_WITH(TS::choose_segments(big, tl, 1e-9, forge::TSInterp::Hanning, 100),
                      Catch::Contains("L = 64") && Catch::Contains("only 64 samples"));
}

// ---------------------------------------------------------------------------- pcSenseTimeSeg
#include "forge/Operators/pcSENSE.h"
#include "forge/Operators/pcSenseTimeSeg.h"

TEST_CASE("pcSenseTimeSeg approximates pcSENSE (exact DFT) and is adjoint", "[TimeSegmentation][pcSenseTimeSeg]") {
    FORGE_INFO_SEED();
    const arma::uword N = 16, ns = 600, nshots = 2, nc = 3;
    arma::mat kx(ns, nshots), ky(ns, nshots), kz(ns, nshots, arma::fill::zeros), t(ns, nshots);
    for (arma::uword s = 0; s < nshots; ++s)
        for (arma::uword j = 0; j < ns; ++j) {
            const double f = double(j) / ns, th = 2 * kPi * (5 * f + 0.5 * s);
            kx(j, s) = f * (N / 2 - 0.5) * std::cos(th);
            ky(j, s) = f * (N / 2 - 0.5) * std::sin(th);
            t(j, s) = 10e-3 * f;
        }
    forge::Gfft<double> cart(N, N);
    arma::mat r = cart.image_coords();
    arma::vec fm = smooth_field_map(N, N, 2 * kPi * 50);
    arma::cx_vec maps = complex_normal<double>(N * N * nc);
    arma::mat phases = uniform<double>(N * N * nshots, -kPi, kPi);
    phases.reshape(N * N, nshots);
    forge::pcSENSE<double> exact(kx, ky, kz, t, r.col(0), r.col(1), r.col(2), fm, maps, phases, nc);
    forge::pcSenseTimeSeg<double> A(kx, ky, kz, t, N, N, 1, fm, maps, phases, nc, 6, forge::TSInterp::MinMax);
    REQUIRE(A.n_data() == exact.n_data());
    arma::cx_vec x = complex_normal<double>(N * N), y = complex_normal<double>(A.n_data());
    const double ef = rel_error(A * x, exact * x), ea = rel_error(A / y, exact / y);
    INFO("forward " << ef << " adjoint " << ea);
    CHECK(ef < 2e-3);
    CHECK(ea < 2e-3);
    check_adjoint(A, adjoint_tolerance<double>(), DotScale::Norms);
    check_normal(A, 0.0);
    check_batch(A, 2, 0.0);
    CHECK_THROWS_AS(forge::pcSenseTimeSeg<double>(kx, ky, kz, t, N, N, 1, fm, maps, phases, nc, 0),
                    forge::invalid_argument);
    CHECK_THROWS_AS(forge::pcSenseTimeSeg<double>(kx, ky, kz, t, N, N, 1, arma::vec(10), maps, phases, nc, 4),
                    forge::invalid_argument);
}
