// forge::recon's operator choice and the Toeplitz path's set-up: choose_operator() against its own cost model
// (estimate_seconds() at given rates: the least estimated time, Toeplitz kernels and right-hand side counted against
// the iterations asked for; the exact DFT within 1.2x of the fastest approximation), the calibration (fixed rates
// when off, the rates file, the micro-runs), the Toeplitz right-hand side by the NUFFT against the exact Gdft's
// (the image and its solve), the stage times every solve records (set-up, right-hand side, iterations), the time
// segments the model prices against those the operators build, and the choices under the rates an H200 measured
// against the operators' times there.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <filesystem>
#include <string>

#include "TestHelpers.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/DemoAcquisition.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

using namespace forge_test;
using forge::recon::EncodingOperator;
using forge::recon::ReconProblem;
using forge::recon::ReconSettings;
using forge::recon::ToeplitzRhs;

namespace {

// N x N smooth Shepp-Logan seen by nc ring coils along 'spokes' radial spokes of 2N samples (readout times from
// 0 to 'readout' seconds); with 'fieldmap' the demo's two-blob map, simulated by the exact field-corrected Gdft
// (SENSE) in double, plus 1% complex noise.
ReconProblem radial(std::size_t N, std::size_t nc, std::size_t spokes, bool fieldmap, double readout = 8e-3) {
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    const forge::sim::Trajectory2D k = forge::sim::radial_spokes(spokes, 2 * N, double(N));
    forge::recon::ReconFrame fr;
    fr.kx = arma::conv_to<arma::fvec>::from(k.kx);
    fr.ky = arma::conv_to<arma::fvec>::from(k.ky);
    const std::size_t n1 = fr.kx.n_elem;
    fr.kz = arma::fvec(n1, arma::fill::zeros);
    fr.t = arma::fvec(n1);
    for (std::size_t i = 0; i < n1; ++i) fr.t[i] = float(readout * double(i % (2 * N)) / double(2 * N));
    const arma::fvec fm = fieldmap ? forge::sim::two_blob_field_map(N, 0) : arma::fvec(P.n2(), arma::fill::zeros);
    const arma::fvec truth = forge::sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::cx_fvec maps = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc), nc);
    const arma::vec z(n1, arma::fill::zeros);
    forge::Gdft<double> G(n1, P.n2(), arma::conv_to<arma::vec>::from(fr.kx), arma::conv_to<arma::vec>::from(fr.ky), z,
                          arma::conv_to<arma::vec>::from(P.ix), arma::conv_to<arma::vec>::from(P.iy),
                          arma::conv_to<arma::vec>::from(P.iz), arma::conv_to<arma::vec>::from(fm),
                          arma::conv_to<arma::vec>::from(fr.t));
    const arma::cx_vec y = forge::SENSE<double, forge::Gdft<double>>(G, arma::conv_to<arma::cx_vec>::from(maps), nc) *
                           arma::cx_vec(arma::conv_to<arma::cx_vec>::from(truth));
    fr.y = arma::conv_to<arma::cx_fvec>::from(y);
    fr.y += float(0.01 * arma::norm(fr.y) / std::sqrt(2.0 * fr.y.n_elem)) * complex_normal<float>(fr.y.n_elem);
    P.frames.push_back(fr);
    P.smaps.push_back(maps);
    if (fieldmap) P.field_map.push_back(fm);
    P.reference.push_back(truth);
    P.n1total = P.n1max = n1;
    return P;
}

// The sizes alone: N x N pixels, nc coils, one frame of n1 samples, no data; with 'fieldmap' a field map of zeros
// (L = 1, the least: the cost model prices the L the operators would choose for the frame).
ReconProblem sized(std::size_t N, std::size_t nc, std::size_t n1, bool fieldmap) {
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    forge::recon::ReconFrame fr;
    fr.kx = fr.ky = fr.kz = fr.t = arma::fvec(n1, arma::fill::zeros);
    P.frames.push_back(fr);
    if (fieldmap) P.field_map.push_back(arma::fvec(P.n2(), arma::fill::zeros));
    P.n1total = P.n1max = n1;
    return P;
}

// The geometry of one slice of forge-recon --demo's spiral (no data: what the cost model reads), as
// benchmarks/bench_operator_choice reconstructs it; with 'fieldmap' its field map to correct.
ReconProblem demo_spiral_geometry(std::size_t N, std::size_t nc, bool fieldmap) {
    forge::sim::DemoOptions o;
    o.size = N;
    o.slices = 1;
    o.coils = nc;
    o.simulate = false;
    const forge::sim::DemoAcquisition A = forge::sim::demo_acquisition(o);
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    const forge::sim::SimulatedFrame& f = A.spiral.frames.front();
    forge::recon::ReconFrame fr;
    fr.kx = f.k.kx, fr.ky = f.k.ky, fr.t = f.k.t;
    fr.kz = arma::fvec(f.k.kx.n_elem, arma::fill::zeros);
    P.frames.push_back(fr);
    if (fieldmap) P.field_map.push_back(A.field_map.front());
    P.n1total = P.n1max = fr.kx.n_elem;
    return P;
}

double relative_difference(const arma::cx_fvec& a, const arma::cx_fvec& b) {
    return double(
        arma::norm(arma::cx_vec(arma::conv_to<arma::cx_vec>::from(a) - arma::conv_to<arma::cx_vec>::from(b))) /
        arma::norm(arma::conv_to<arma::cx_vec>::from(b)));
}

}  // namespace

TEST_CASE("choose_operator takes the least estimated time, an exact DFT within 1.2x of the fastest approximation",
          "[recon][operator][toeplitz]") {
    FORGE_INFO_SEED();
    for (bool fieldmap : {false, true}) {
        const EncodingOperator nufft = fieldmap ? EncodingOperator::TimeSeg : EncodingOperator::Nufft;
        bool sawToeplitz = false, sawNufft = false, sawDft = false;
        for (std::size_t n1 : {std::size_t(2000), std::size_t(512000)}) {
            const ReconProblem P = sized(128, 2, n1, fieldmap);
            for (int iterations : {1, 2, 5, 20, 50, 100, 1000, 100000, 10000000}) {
                for (bool gpu : {false, true}) {
                    const forge::recon::CostRates r = forge::recon::fixed_cost_rates(gpu);
                    // tolerance 0: every iteration priced
                    const auto c = forge::recon::choose_operator(P, iterations, gpu, true, r, 0.0);
                    ReconSettings S;
                    S.iterations = iterations;
                    S.gpu = gpu;
                    const double tT = forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true, r);
                    const double tN = forge::recon::estimate_seconds(P, S, nufft, true, r);
                    const double tD = forge::recon::estimate_seconds(P, S, EncodingOperator::Dft, true, r);
                    INFO("field map " << fieldmap << ", " << n1 << " samples, " << iterations << " iterations, gpu "
                                      << gpu << ": dft " << tD << " s, toeplitz " << tT << " s, "
                                      << forge::recon::operator_name(nufft) << " " << tN << " s; chose "
                                      << forge::recon::operator_name(c.op) << ": " << c.reason);
                    CHECK(tT > 0);
                    CHECK(tN > 0);
                    CHECK(tD > 0);
                    const double approx = std::min(tT, tN);
                    const EncodingOperator expected =
                        tD <= forge::recon::kExactPreference * approx || tD <= forge::recon::kExactFloorSeconds
                            ? EncodingOperator::Dft
                            : (tT < tN ? EncodingOperator::Toeplitz : nufft);
                    CHECK(c.op == expected);
                    CHECK_THAT(c.reason, Catch::Matchers::Contains("toeplitz"));
                    if (!fieldmap) CHECK_THAT(c.reason, Catch::Matchers::Contains("no field map"));
                    (c.op == EncodingOperator::Toeplitz ? sawToeplitz : c.op == nufft ? sawNufft : sawDft) = true;
                }
            }
        }
        // the kernels are paid once, the NUFFT's interpolation every iteration, the DFT wins small problems
        CHECK(sawToeplitz);
        CHECK(sawNufft);
        CHECK(sawDft);
    }
}

TEST_CASE("choose_operator prices a solve with a tolerance at the iterations it is expected to take",
          "[recon][operator]") {
    using forge::recon::kExpectedIterations;
    CHECK(forge::recon::expected_iterations(50, forge::recon::kDefaultTolerance) == kExpectedIterations);
    CHECK(forge::recon::expected_iterations(10, forge::recon::kDefaultTolerance) == 10);
    CHECK(forge::recon::expected_iterations(1000, 0.0) == 1000);
    const forge::recon::CostRates r = forge::recon::fixed_cost_rates(false);
    for (bool fieldmap : {false, true}) {
        const ReconProblem P = sized(64, 8, 6144, fieldmap);
        const auto a = forge::recon::choose_operator(P, 1000, false, true, r);
        const auto b = forge::recon::choose_operator(P, kExpectedIterations, false, true, r, 0.0);
        CHECK(a.op == b.op);
        CHECK_THAT(a.reason, Catch::Matchers::Contains("estimated for 30 of at most 1000 iterations"));
    }
}

TEST_CASE("choose_operator's calibrated choice is a function of the rates alone", "[recon][operator][calibration]") {
    const ReconProblem P = sized(128, 8, 25856, false);
    forge::recon::CostRates r = forge::recon::fixed_cost_rates(false);
    const auto a = forge::recon::choose_operator(P, 50, false, true, r);
    const auto b = forge::recon::choose_operator(P, 50, false, true, r);
    CHECK(a.op == b.op);
    CHECK(a.reason == b.reason);
    // fast FFTs (Toeplitz iterations) and slow interpolation: toeplitz; the reverse: nufft; a fast DFT: dft
    r.fft = 1e12, r.taps = 1e6, r.kernels = 1e-3;
    CHECK(forge::recon::choose_operator(P, 50, false, true, r).op == EncodingOperator::Toeplitz);
    r.fft = 1e8, r.taps = 1e12, r.plan = 1e12, r.kernels = 1e3;
    CHECK(forge::recon::choose_operator(P, 50, false, true, r).op == EncodingOperator::Nufft);
    r.dft = 1e15;
    CHECK(forge::recon::choose_operator(P, 50, false, true, r).op == EncodingOperator::Dft);
    // with a field map the DFT's rate is dft_field
    const ReconProblem F = sized(128, 8, 25856, true);
    r.dft_field = 1e3;
    CHECK(forge::recon::choose_operator(F, 50, false, true, r).op != EncodingOperator::Dft);
}

TEST_CASE("calibration off gives the fixed rates; the rates file round-trips", "[recon][operator][calibration]") {
    forge::recon::set_cost_calibration(false);
    CHECK_FALSE(forge::recon::cost_calibration());
    for (bool gpu : {false, true}) {
        const forge::recon::CostRates f = forge::recon::fixed_cost_rates(gpu), c = forge::recon::cost_rates(gpu);
        CHECK(c.source == "fixed");
        CHECK(c.dft == f.dft);
        CHECK(c.dft_field == f.dft_field);
        CHECK(c.fft == f.fft);
        CHECK(c.taps == f.taps);
        CHECK(c.plan == f.plan);
        CHECK(c.kernels == f.kernels);
        CHECK(c.vector == f.vector);
        CHECK(c.apply == f.apply);
        const ReconProblem P = sized(128, 2, 512000, true);
        ReconSettings S;
        S.gpu = gpu;
        CHECK(forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true) ==
              forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true, f));
        CHECK(forge::recon::choose_operator(P, 50, gpu).op == forge::recon::choose_operator(P, 50, gpu, true, f).op);
    }
    forge::recon::CostRates r{2e9, 3e8, 4e10, 5e8, 6e6, 0.7, 4e8, 2e-5, "measured"};
    const std::string path = (std::filesystem::temp_directory_path() / "forge-test-cost-model.txt").string();
    REQUIRE(forge::recon::write_cost_rates(path, r));
    forge::recon::CostRates back;
    REQUIRE(forge::recon::read_cost_rates(path, back));
    CHECK(back.dft == Approx(r.dft).epsilon(1e-5));
    CHECK(back.dft_field == Approx(r.dft_field).epsilon(1e-5));
    CHECK(back.fft == Approx(r.fft).epsilon(1e-5));
    CHECK(back.taps == Approx(r.taps).epsilon(1e-5));
    CHECK(back.plan == Approx(r.plan).epsilon(1e-5));
    CHECK(back.kernels == Approx(r.kernels).epsilon(1e-5));
    CHECK(back.vector == Approx(r.vector).epsilon(1e-5));
    CHECK(back.apply == Approx(r.apply).epsilon(1e-5));
    CHECK_THAT(back.source, Catch::Matchers::StartsWith("cached"));
    CHECK_FALSE(forge::recon::read_cost_rates(path + ".missing", back));
    CHECK(forge::recon::cost_model_key(false).rfind("cpu-", 0) == 0);
    CHECK(forge::recon::cost_model_key(false).find('/') == std::string::npos);
}

TEST_CASE("measure_cost_rates times every kernel in a few tenths of a second at most",
          "[recon][operator][calibration]") {
    const auto t0 = std::chrono::steady_clock::now();
    const forge::recon::CostRates r = forge::recon::measure_cost_rates(false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("dft " << r.dft << " field " << r.dft_field << " fft " << r.fft << " taps " << r.taps << " plan " << r.plan
                << " kernels " << r.kernels << " in " << s << " s");
    CHECK(r.source == "measured");
    for (double v : {r.dft, r.dft_field, r.fft, r.taps, r.plan, r.kernels, r.vector, r.apply})
        CHECK((std::isfinite(v) && v > 0));
    CHECK(s < 2.0);  // a few tens of ms idle; a loaded shared machine is slower
}

TEST_CASE("estimate_seconds counts the Toeplitz kernels once and its iterations as FFTs only",
          "[recon][operator][toeplitz]") {
    const ReconProblem P = sized(32, 4, 4096, true);
    ReconSettings S;
    auto at = [&](EncodingOperator op, int iterations) {
        S.iterations = iterations;
        return forge::recon::estimate_seconds(P, S, op, true, forge::recon::fixed_cost_rates(S.gpu));
    };
    for (bool gpu : {false, true}) {
        S.gpu = gpu;
        const double t0 = at(EncodingOperator::Toeplitz, 1), t1 = at(EncodingOperator::Toeplitz, 101);
        const double t2 = at(EncodingOperator::Toeplitz, 201);
        const double n0 = at(EncodingOperator::TimeSeg, 1), n1 = at(EncodingOperator::TimeSeg, 101);
        const double n2 = at(EncodingOperator::TimeSeg, 201);
        INFO("gpu " << gpu << ": toeplitz " << t0 << " -> " << t1 << " -> " << t2 << " s, timeseg " << n0 << " -> "
                    << n1 << " -> " << n2 << " s");
        if (!gpu) CHECK(t0 > n0);      // one iteration on the CPU: the kernels dominate
        CHECK((t1 - t0) < (n1 - n0));  // per iteration: FFTs only, no interpolation
        // the set-up (kernels, right-hand side; the NUFFT's plan) counted once, the iterations linearly
        CHECK(t2 - t1 == Approx(t1 - t0).epsilon(1e-9));
        CHECK(n2 - n1 == Approx(n1 - n0).epsilon(1e-9));
        CHECK(t0 > (t1 - t0) / 100);
        CHECK(n0 > (n1 - n0) / 100);
        // without field correction a single kernel, no segments (at t1's 101 iterations)
        S.iterations = 101;
        const double plain = forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, false,
                                                            forge::recon::fixed_cost_rates(gpu));
        CHECK(plain < t1);
    }
}

TEST_CASE("the Toeplitz path's right-hand side by the NUFFT gives the exact right-hand side's image",
          "[recon][toeplitz][rhs]") {
    FORGE_INFO_SEED();
    for (bool fieldmap : {false, true}) {
        const ReconProblem P = radial(32, 4, 48, fieldmap);
        ReconSettings S;
        S.op = EncodingOperator::Toeplitz;
        S.iterations = 15;
        S.tolerance = 0;
        S.toeplitz_rhs = ToeplitzRhs::Exact;
        CHECK_FALSE(forge::recon::toeplitz_rhs_by_nufft(P, 0, S, true));
        const auto exact = forge::recon::reconstruct(P, true, S);
        S.toeplitz_rhs = ToeplitzRhs::Nufft;
        CHECK(forge::recon::toeplitz_rhs_by_nufft(P, 0, S, true));
        const auto nufft = forge::recon::reconstruct(P, true, S);
        S.op = EncodingOperator::Dft;  // the exact model throughout
        const auto dft = forge::recon::reconstruct(P, true, S);
        const double dNufft = relative_difference(nufft.complex_image[0], exact.complex_image[0]);
        const double dExact = relative_difference(exact.complex_image[0], dft.complex_image[0]);
        INFO("field map " << fieldmap << ": |nufft rhs - exact rhs| / |exact rhs| = " << dNufft
                          << ", |toeplitz (exact rhs) - dft| / |dft| = " << dExact);
        // G^H y by the NUFFT (W = 5, relative error ~1e-4; with a field map time-segmented for 5e-4) moves the
        // image by about that much; the Toeplitz operator's own error (1e-3 with a field map) is of that order
        CHECK(dNufft < (fieldmap ? 1e-3 : 3e-4));  // measured 1.2e-4 and 5.6e-5
        CHECK(dNufft > 0);                         // a different operator ran
        REQUIRE(nufft.solves.size() == 1);
        CHECK(nufft.solves[0].report.iterations == 15);
    }
}

TEST_CASE("toeplitz_rhs_by_nufft (Auto) keeps the exact DFT where it is cheap and takes the NUFFT where it is not",
          "[recon][toeplitz][rhs]") {
    ReconSettings S;
    S.op = EncodingOperator::Toeplitz;
    CHECK_FALSE(forge::recon::toeplitz_rhs_by_nufft(radial(16, 2, 16, false), 0, S, true));
    // 128x128 x 8 coils x 200 spokes of 256: 8.4e9 sample-pixel products for the exact G^H y
    const ReconProblem big = radial(128, 8, 200, false);
    CHECK(forge::recon::toeplitz_rhs_by_nufft(big, 0, S, true));
    S.toeplitz_rhs = ToeplitzRhs::Exact;
    CHECK_FALSE(forge::recon::toeplitz_rhs_by_nufft(big, 0, S, true));
    S.toeplitz_rhs = ToeplitzRhs::Auto;
    CHECK_THROWS_AS(forge::recon::toeplitz_rhs_by_nufft(big, 1, S, true), forge::invalid_argument);
}

TEST_CASE("every solve records its set-up, right-hand side and iterations, adding up to the reconstruction's",
          "[recon][timing]") {
    FORGE_INFO_SEED();
    ReconProblem P = radial(24, 3, 24, true);
    ReconProblem Q = P;  // without maps: coil by coil, one solve per coil
    Q.smaps.clear();
    for (EncodingOperator op : {EncodingOperator::Dft, EncodingOperator::TimeSeg, EncodingOperator::Toeplitz}) {
        for (const ReconProblem* p : {&P, &Q}) {
            ReconSettings S;
            S.op = op;
            S.iterations = 4;
            const auto R = forge::recon::reconstruct(*p, true, S);
            INFO(forge::recon::operator_name(op) << (p->smaps.empty() ? ", coil by coil" : ", SENSE"));
            REQUIRE(R.solves.size() == (p->smaps.empty() ? p->nc : 1));
            double setup = 0, solve = 0;
            for (std::size_t i = 0; i < R.solves.size(); ++i) {
                const auto& s = R.solves[i];
                CHECK(s.rhs_seconds >= 0);
                CHECK(s.iteration_seconds > 0);
                CHECK(s.iteration_seconds == Approx(s.report.elapsed_s).margin(1e-12));
                CHECK(s.rhs_seconds + s.iteration_seconds == Approx(s.seconds).epsilon(1e-12));
                CHECK(s.setup_seconds >= 0);
                if (i > 0) CHECK(s.setup_seconds == 0);  // the frame's set-up is carried by its first solve
                setup += s.setup_seconds;
                solve += s.seconds;
            }
            CHECK(setup == Approx(R.setup_seconds).epsilon(1e-12));
            CHECK(solve == Approx(R.solve_seconds).epsilon(1e-12));
            CHECK(R.setup_seconds + R.solve_seconds <= R.seconds * (1 + 1e-9));
        }
    }
}

TEST_CASE("segment_count is the L each operator builds for the frame; none reaching the error prices it out",
          "[recon][operator][segments]") {
    FORGE_INFO_SEED();
    const ReconProblem P = radial(32, 4, 48, true);
    ReconSettings S;
    S.iterations = 2;
    S.tolerance = 0;
    for (EncodingOperator op : {EncodingOperator::TimeSeg, EncodingOperator::Toeplitz}) {
        S.op = op;
        for (int given : {0, 3}) {
            S.segments = given;
            const auto res = forge::recon::reconstruct(P, true, S);
            REQUIRE_FALSE(res.solves.empty());
            const double segs = forge::recon::segment_count(P, 0, S, op, true);
            INFO(forge::recon::operator_name(op) << ", S.segments " << given << ": built L = " << res.solves[0].segments
                                                 << ", segment_count " << segs);
            CHECK(segs == double(res.solves[0].segments + 1));
            if (given > 0) CHECK(segs == given + 1.0);
        }
    }
    S.segments = 0;
    // the Toeplitz kernels' error (1e-3) asks for more segments than time segmentation's 1%
    CHECK(forge::recon::segment_count(P, 0, S, EncodingOperator::Toeplitz, true) >
          forge::recon::segment_count(P, 0, S, EncodingOperator::TimeSeg, true));
    // no field map to correct, or an operator without segments: one
    CHECK(forge::recon::segment_count(P, 0, S, EncodingOperator::TimeSeg, false) == 1);
    CHECK(forge::recon::segment_count(P, 0, S, EncodingOperator::Dft, true) == 1);
    CHECK_THROWS_AS(forge::recon::segment_count(P, 1, S, EncodingOperator::TimeSeg, true), forge::invalid_argument);

    // 100 times the field: no L up to kMaxSegments reaches 1%, the operators refuse to build, and auto prices
    // them out instead of choosing one that throws
    ReconProblem Q = P;
    Q.field_map[0] *= 100.0f;
    for (EncodingOperator op : {EncodingOperator::TimeSeg, EncodingOperator::Toeplitz}) {
        CHECK(std::isinf(forge::recon::segment_count(Q, 0, S, op, true)));
        CHECK(std::isinf(forge::recon::estimate_seconds(Q, S, op, true, forge::recon::fixed_cost_rates(false))));
        S.op = op;
        CHECK_THROWS_AS(forge::recon::reconstruct(Q, true, S), forge::invalid_argument);
    }
    for (bool gpu : {false, true})
        CHECK(forge::recon::choose_operator(Q, 50, gpu, true, forge::recon::fixed_cost_rates(gpu)).op ==
              EncodingOperator::Dft);
}

TEST_CASE("with the rates an H200 measured, auto's choice is within 1.2x of the fastest operator timed there",
          "[recon][operator][calibration]") {
    // benchmarks/bench_operator_choice --device gpu --sizes 64,128,256 --coils 16 on an NVIDIA H200, 2026-12-01
    // (docs/benchmarks.md, "Operator choice"): the calibration it printed and each operator's wall time (s) there.
    forge::recon::CostRates h200;
    h200.dft = 8.26e12, h200.dft_field = 8.25e12, h200.fft = 5.35e11, h200.taps = 1.28e11, h200.plan = 1.16e7;
    h200.kernels = 8.01, h200.vector = 8.76e7, h200.apply = 3.62e-5, h200.source = "measured";
    struct Row {
        const char* name;
        ReconProblem P;
        double dft, nufft, toeplitz;  // nufft: timeseg with a field map
    };
    const forge::sim::Trajectory2D k = forge::sim::radial_spokes(101, 256, 128.0);
    ReconProblem radialGeometry = sized(128, 8, k.kx.n_elem, false);
    radialGeometry.frames[0].kx = arma::conv_to<arma::fvec>::from(k.kx);
    radialGeometry.frames[0].ky = arma::conv_to<arma::fvec>::from(k.ky);
    const Row rows[] = {
        {"radial 128x128, 101 spokes, 8 coils", radialGeometry, 0.029, 0.015, 0.017},
        {"spiral 64x64, 16 coils, field map", demo_spiral_geometry(64, 16, true), 0.010, 0.058, 0.055},
        {"spiral 64x64, 16 coils, no field map", demo_spiral_geometry(64, 16, false), 0.012, 0.014, 0.010},
        {"spiral 128x128, 16 coils, field map", demo_spiral_geometry(128, 16, true), 0.033, 0.103, 0.122},
        {"spiral 128x128, 16 coils, no field map", demo_spiral_geometry(128, 16, false), 0.032, 0.021, 0.017},
        {"spiral 256x256, 16 coils, field map", demo_spiral_geometry(256, 16, true), 0.344, 0.154, 0.436},
        {"spiral 256x256, 16 coils, no field map", demo_spiral_geometry(256, 16, false), 0.328, 0.048, 0.059}};
    for (const Row& row : rows) {
        const auto c = forge::recon::choose_operator(row.P, 50, true, true, h200);
        const double t = c.op == EncodingOperator::Dft ? row.dft : c.op == EncodingOperator::Toeplitz ? row.toeplitz
                                                                                                      : row.nufft;
        const double fastest = std::min({row.dft, row.nufft, row.toeplitz});
        INFO(row.name << ": auto " << forge::recon::operator_name(c.op) << " (" << c.reason << "), " << t
                      << " s against the fastest's " << fastest << " s");
        CHECK(t <= forge::recon::kExactPreference * fastest);
    }
}
