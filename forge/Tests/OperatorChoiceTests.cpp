// forge::recon's operator choice and the Toeplitz path's set-up: choose_operator() against its own cost model
// (estimate_seconds() at given rates: the least estimated time, Toeplitz kernels and right-hand side counted against
// the iterations asked for; the exact DFT within 1.2x of the fastest approximation), the calibration (fixed rates
// when off, the rates file, the micro-runs), the Toeplitz right-hand side by the NUFFT against the exact Gdft's
// (the image and its solve), and the stage times every solve records (set-up, right-hand side, iterations).
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

// The sizes alone (what the cost model reads): N x N pixels, nc coils, one frame of n1 samples, no data.
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
        CHECK(c.iteration == f.iteration);
        CHECK(c.kernel_fixed == f.kernel_fixed);
        CHECK(c.segmentation == f.segmentation);
        CHECK(c.pairs == f.pairs);
        const ReconProblem P = sized(128, 2, 512000, true);
        ReconSettings S;
        S.gpu = gpu;
        CHECK(forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true) ==
              forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true, f));
        CHECK(forge::recon::choose_operator(P, 50, gpu).op == forge::recon::choose_operator(P, 50, gpu, true, f).op);
    }
    forge::recon::CostRates r{2e9, 3e8, 4e10, 5e8, 6e6, 0.7, 4e8, 2e-5, "measured"};
    r.iteration = 3e-4;
    r.kernel_fixed = 0;  // a fixed cost of zero is a measurement, read back as such
    r.segmentation = 2e6;
    r.pairs = 5e7;
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
    CHECK(back.iteration == Approx(r.iteration).epsilon(1e-5));
    CHECK(back.kernel_fixed == 0);
    CHECK(back.segmentation == Approx(r.segmentation).epsilon(1e-5));
    CHECK(back.pairs == Approx(r.pairs).epsilon(1e-5));
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
    for (double v : {r.dft, r.dft_field, r.fft, r.taps, r.plan, r.kernels, r.vector, r.segmentation, r.pairs})
        CHECK((std::isfinite(v) && v > 0));
    for (double v : {r.apply, r.iteration, r.kernel_fixed})  // fixed costs: zero where the fit finds none
        CHECK((std::isfinite(v) && v >= 0));
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

TEST_CASE("estimate_seconds prices the set-up once per operator the frames share", "[recon][operator][cost]") {
    // F frames of one trajectory (a series, or the slices of a stack with one field map): the plan or kernels once
    const auto frames = [](std::size_t F, bool fieldmap) {
        ReconProblem P = sized(64, 8, 6144, fieldmap);
        P.nframes = F;
        for (std::size_t f = 1; f < F; ++f) {
            P.frames.push_back(P.frames.front());
            P.frames.back().frame = f;
        }
        P.n1total = 6144 * F;
        return P;
    };
    for (bool gpu : {false, true})
        for (bool fieldmap : {false, true})
            for (EncodingOperator op :
                 {EncodingOperator::Toeplitz, fieldmap ? EncodingOperator::TimeSeg : EncodingOperator::Nufft}) {
                INFO("gpu " << gpu << ", field map " << fieldmap << ", " << forge::recon::operator_name(op));
                ReconSettings S;
                S.gpu = gpu;
                S.iterations = 30;
                const forge::recon::CostRates r = forge::recon::fixed_cost_rates(gpu);
                const double e1 = forge::recon::estimate_seconds(frames(1, fieldmap), S, op, true, r);
                const double e2 = forge::recon::estimate_seconds(frames(2, fieldmap), S, op, true, r);
                const double e3 = forge::recon::estimate_seconds(frames(3, fieldmap), S, op, true, r);
                CHECK(e3 - e2 == Approx(e2 - e1).epsilon(1e-9));  // each further frame: its solve alone
                CHECK(e2 - e1 < e1);                              // the first frame also paid the set-up
            }
    // two slices whose field maps share a band (toeplitz_band) share the Toeplitz kernels; maps of other widths do not
    ReconProblem P = sized(64, 8, 6144, true);
    P.frames.front().t = arma::linspace<arma::fvec>(0, 0.01f, 6144);
    P.field_map.front() = arma::linspace<arma::fvec>(-300, 300, P.n2());
    P.nslices = 2;
    P.frames.push_back(P.frames.front());
    P.frames.back().slice = 1;
    P.n1total = 2 * 6144;
    ReconProblem wider = P;
    P.field_map.push_back(P.field_map.front() + 100.0f);  // another centre, the same band
    wider.field_map.push_back(4.0f * P.field_map.front());
    ReconSettings S;
    S.iterations = 30;
    const forge::recon::CostRates r = forge::recon::fixed_cost_rates(false);
    CHECK(forge::recon::estimate_seconds(P, S, EncodingOperator::Toeplitz, true, r) <
          forge::recon::estimate_seconds(wider, S, EncodingOperator::Toeplitz, true, r));
    // a frame that lost a sample as a spike (remove_spikes) is priced as its trajectory's, one that lost 2% is not
    ReconProblem series = sized(64, 8, 6144, false);
    series.frames.front().kx = arma::linspace<arma::fvec>(-32, 31, 6144);
    series.frames.push_back(series.frames.front());
    series.frames.back().frame = 1;
    series.nframes = 2;
    ReconProblem spiked = series, thinned = series;
    spiked.frames.back().kx.shed_row(1000);
    spiked.frames.back().ky.shed_row(1000);
    spiked.frames.back().kz.shed_row(1000);
    spiked.frames.back().t.shed_row(1000);
    thinned.frames.back().kx.shed_rows(0, 122);
    thinned.frames.back().ky.shed_rows(0, 122);
    thinned.frames.back().kz.shed_rows(0, 122);
    thinned.frames.back().t.shed_rows(0, 122);
    const auto est = [&](const ReconProblem& Q) {
        return forge::recon::estimate_seconds(Q, S, EncodingOperator::Toeplitz, true, r);
    };
    CHECK(est(spiked) < est(thinned));
    CHECK(est(spiked) == Approx(est(series)).epsilon(1e-3));
    // frames that view one memory (a stream's whole-stream proxy) are priced as copies of it are; other samples
    // are not
    ReconProblem views = series;
    const forge::recon::ReconFrame& first = views.frames.front();
    const auto view = [](const arma::fvec& v) {
        return arma::fvec(const_cast<float*>(v.memptr()), v.n_elem, false, true);
    };
    views.frames.back().kx = view(first.kx);
    views.frames.back().ky = view(first.ky);
    views.frames.back().kz = view(first.kz);
    views.frames.back().t = view(first.t);
    REQUIRE(views.frames.back().kx.memptr() == first.kx.memptr());  // moved in: a view still
    CHECK(est(views) == est(series));
    ReconProblem other = views;
    other.frames.back().kx = arma::fvec(other.frames.back().kx) + 0.5f;  // a copy, shifted
    CHECK(est(other) > est(views));
}
