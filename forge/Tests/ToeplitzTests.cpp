// ToeplitzNormal: the normal operator G^H W G by FFTs on a 2x grid against the exact Gdft (float64 reference sums)
// and the time-segmented normal; its host apply (pruned FFTs, threads, batches); Hermitian and positive semidefinite,
// and the operator checks (OperatorChecks.h).
#include <atomic>
#include <cmath>
#include <complex>
#include <thread>

#include "OperatorChecks.h"
#include "ToeplitzTestProblem.h"

using namespace toeplitz_test;

TEST_CASE("ToeplitzNormal without a field map equals Gdft^H W Gdft", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid grids[] = {{16, 16, 1}, {15, 13, 1}, {8, 6, 4}, {7, 5, 3}};
    for (const Grid& g : grids) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 3 * g.n2(), 0);
        const ExactNormal ref(g, tr, arma::zeros(g.n2()));
        const forge::ToeplitzNormal<float> Nf(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                              as<float>(tr.W));
        const forge::ToeplitzNormal<double> Nd(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
        CHECK(Nf.kernel_count() == 1);
        CHECK(Nf.grouped_axis() == 3);  // random k: no Cartesian axis
        CHECK(Nf.padded_size(0) == 2 * g.Nx);
        CHECK(Nf.padded_size(2) == (g.Nz > 1 ? 2 * g.Nz : 1));
        CHECK(normal_error(Nf, ref) <= toeplitz_tolerance(Nf, tr.kx.n_elem));
        CHECK(normal_error(Nd, ref) <= 1e-11);
        // The operator's own normal() is N N (the adjoint is the forward).
        check_normal(Nd, 1e-12);
    }
}

TEST_CASE("ToeplitzNormal groups a Cartesian axis: equal to Gdft^H W Gdft and to the full build", "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        int axis;
    };
    // z: stacks (even and odd Nz); y: EPI in 2D and a 3D case with slabs on both sides; x: lines along x.
    const Case cases[] = {{{10, 8, 6}, 2}, {{9, 7, 5}, 2},  {{16, 12, 1}, 1}, {{15, 11, 1}, 1},
                          {{6, 8, 5}, 1},  {{12, 9, 1}, 0}, {{7, 6, 4}, 0}};
    for (const Case& c : cases) {
        const Grid& g = c.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", Cartesian along axis " << c.axis);
        const Trajectory tr = cartesian_along(g, c.axis, 3 * g.n2(), 8e-3);
        const ExactNormal ref(g, tr, arma::zeros(g.n2()));
        const forge::ToeplitzNormal<float> Nf(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                              as<float>(tr.W), host_build());
        const forge::ToeplitzNormal<double> Nd(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
        CHECK(Nf.grouped_axis() == uword(c.axis));
        CHECK(Nd.grouped_axis() == uword(c.axis));
        CHECK(normal_error(Nf, ref) <= toeplitz_tolerance(Nf, tr.kx.n_elem));
        CHECK(normal_error(Nd, ref) <= 1e-11);

        // With a field map: the grouped build equals the full DFT's (same segmentation, so only rounding differs).
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), 1e-3);
        const forge::ToeplitzNormal<float> grouped(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky),
                                                   as<float>(tr.kz), as<float>(tr.W), as<float>(fm), as<float>(tr.t), L,
                                                   forge::TSInterp::MinMax, host_build());
        const forge::ToeplitzNormal<float> full(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                as<float>(tr.W), as<float>(fm), as<float>(tr.t), L,
                                                forge::TSInterp::MinMax, host_build(forge::AxisGrouping::Off));
        CHECK(grouped.grouped_axis() == uword(c.axis));
        CHECK(full.grouped_axis() == 3);
        CHECK(grouped.dft_count() == full.dft_count());
        const arma::cx_fvec x = complex_normal<float>(g.n2());
        const double e = rel_error(arma::cx_fvec(grouped * x), arma::cx_fvec(full * x));
        INFO("L = " << L << ": grouped vs full " << e);
        CHECK(e <= toeplitz_tolerance(full, tr.kx.n_elem));
        const forge::ToeplitzNormal<double> groupedD(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L);
        const forge::ToeplitzNormal<double> fullD(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L,
                                                  forge::TSInterp::MinMax, host_build(forge::AxisGrouping::Off));
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
        CHECK(rel_error(arma::cx_vec(groupedD * xd), arma::cx_vec(fullD * xd)) <= 1e-12);
    }

    // Too many distinct values (more than half the padded axis) or a single-cell axis: the full DFT.
    const Grid g{8, 6, 1};
    Trajectory tr = cartesian_along(g, 1, 300, 0);
    tr.ky = arma::regspace<arma::vec>(0, 299) / 300.0 * 6 - 3;  // 300 distinct values on 12 cells
    tr.kz.fill(2);                                              // z has a single cell whatever k says
    const forge::ToeplitzNormal<double> N(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
    CHECK(N.grouped_axis() == 3);
    tr = cartesian_along(g, 1, 300, 0);
    tr.ky(arma::span(0, 6)) += 0.5;  // a seventh value or more on 12 cells
    CHECK(forge::ToeplitzNormal<double>(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W).grouped_axis() == 3);
}

TEST_CASE("ToeplitzNormal with a field map: error falls with L and meets the requested bound", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{24, 20, 1};
    const Trajectory tr = random_trajectory(g, 1500, 10e-3);  // 10 ms readout
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 100);  // +-100 Hz
    const ExactNormal ref(g, tr, fm);
    for (forge::TSInterp type : {forge::TSInterp::MinMax, forge::TSInterp::Hanning}) {
        INFO((type == forge::TSInterp::MinMax ? "min-max" : "Hanning"));
        double previous = 1e300;
        for (uword L : {2, 4, 8}) {
            const forge::ToeplitzNormal<double> N(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L, type);
            const double e = normal_error(N, ref, 2);
            INFO("L = " << L << ": error " << e);
            // Until the interpolators' own floor (their field binning, a few 1e-6) is reached.
            CHECK((e < previous || e < 1e-5));
            previous = e;
        }
        if (type == forge::TSInterp::Hanning) {
            // Hanning segments overlap only with their neighbours: 2L + 1 kernels. Their error falls slowly
            // with L (no L <= 64 reaches 1e-2 for some of these maps), so the bounds below are min-max's.
            const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                 as<float>(tr.W), as<float>(fm), as<float>(tr.t), 8, type);
            CHECK(N.kernel_count() == 17);
            continue;
        }
        for (double target : {1e-2, 1e-3}) {
            const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), target, type);
            const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                 as<float>(tr.W), as<float>(fm), as<float>(tr.t), L, type);
            const double e = normal_error(N, ref, 2);
            INFO("target " << target << ": L = " << L << ", " << N.kernel_count() << " kernels from " << N.dft_count()
                           << " DFTs, error " << e);
            CHECK(e <= target);
            CHECK(N.segments() == L);
            CHECK(N.dft_count() <= N.kernel_count());
            CHECK(N.kernel_bytes() <= forge::ToeplitzNormal<float>::kernel_bytes(g.Nx, g.Ny, g.Nz, L));
        }
    }
}

TEST_CASE("ToeplitzNormal's host apply (pruned FFTs, threaded, batched) equals the segmented normal in float64",
          "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        uword L, nv;
    };
    // 2D and 3D, even and odd sizes, field-free (L = 0) and segmented, several vectors (the first three take the
    // threaded path: at least 2^17 padded cells times segments and vectors); a 1D grid and one with a single column.
    const Case cases[] = {{{48, 40, 1}, 4, 4}, {{12, 10, 8}, 2, 6}, {{15, 11, 7}, 0, 15}, {{25, 19, 1}, 3, 5},
                          {{10, 9, 5}, 3, 1},  {{64, 1, 1}, 2, 3},  {{1, 20, 6}, 2, 2}};
    for (const Case& c : cases) {
        const Grid& g = c.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", L = " << c.L << ", " << c.nv << " vectors");
        const Trajectory tr = random_trajectory(g, g.n2() + 200, 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const SegmentedNormal refF(g, tr, fm, c.L, float()), refD(g, tr, fm, c.L, double());
        auto make = [&](auto T) {
            using TN = forge::ToeplitzNormal<decltype(T)>;
            using Col = arma::Col<decltype(T)>;
            if (c.L == 0)
                return TN(g.Nx, g.Ny, g.Nz, as<decltype(T)>(tr.kx), as<decltype(T)>(tr.ky), as<decltype(T)>(tr.kz),
                          as<decltype(T)>(tr.W), host_build());
            return TN(g.Nx, g.Ny, g.Nz, as<decltype(T)>(tr.kx), as<decltype(T)>(tr.ky), as<decltype(T)>(tr.kz),
                      as<decltype(T)>(tr.W), Col(as<decltype(T)>(fm)), as<decltype(T)>(tr.t), c.L,
                      forge::TSInterp::MinMax, host_build());
        };
        const forge::ToeplitzNormal<float> Nf = make(float());
        const forge::ToeplitzNormal<double> Nd = make(double());
        const double ef = batch_error(Nf, refF, c.nv), ed = batch_error(Nd, refD, c.nv);
        INFO("float " << ef << ", double " << ed);
        CHECK(ef <= toeplitz_tolerance(Nf, tr.kx.n_elem));
        CHECK(ed <= 1e-12);
    }
}

TEST_CASE("ToeplitzNormal: concurrent host applies on one operator give each its own result", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{48, 40, 1};
    const Trajectory tr = random_trajectory(g, 3000, 8e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 80));
    const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                         as<float>(tr.W), fm, as<float>(tr.t), 4, forge::TSInterp::MinMax,
                                         host_build());
    using FC = forgeCol<forgeComplex<float>>;
    const uword nv[2] = {4, 5};  // both on the threads (2^17 padded cells times segments and vectors, and more)
    const FC x[2] = {FC(complex_normal<float>(g.n2() * nv[0])), FC(complex_normal<float>(g.n2() * nv[1]))};
    const arma::cx_fvec expected[2] = {N.forward(x[0], nv[0]).to_arma(), N.forward(x[1], nv[1]).to_arma()};
    std::atomic<int> wrong{0}, runs{0};
    auto worker = [&](int i) {
        for (int r = 0; r < 12; ++r) {
            const arma::cx_fvec y = N.forward(x[i], nv[i]).to_arma();
            if (arma::any(y != expected[i])) ++wrong;
            ++runs;
        }
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join();
    b.join();
    CHECK(runs == 24);
    CHECK(wrong == 0);  // bit for bit: each apply's items are computed the same way whatever thread takes them
}

TEST_CASE("ToeplitzNormal is Hermitian and positive semidefinite", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 3};
    const Trajectory tr = random_trajectory(g, 900, 8e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 80));
    const forge::ToeplitzNormal<float> free(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                            as<float>(tr.W));
    const forge::ToeplitzNormal<float> field(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                             as<float>(tr.W), fm, as<float>(tr.t), 5);
    for (const auto* N : {&free, &field}) {
        INFO((N == &free ? "field-free" : "field map, L = 5"));
        for (int i = 0; i < 3; ++i) {
            // Hermitian: |<N x, y> - <x, N y>| / (||x|| ||N y||), N y = N^H y bit for bit (checked below).
            check_adjoint(*N, 1e-6, DotScale::AdjointNorms);
            const arma::cx_fvec x = complex_normal<float>(g.n2());
            const arma::cx_fvec Nx = *N * x;
            const std::complex<double> xNx =
                arma::cdot(arma::conv_to<arma::cx_vec>::from(x), arma::conv_to<arma::cx_vec>::from(Nx));
            const double xscale =
                arma::norm(arma::conv_to<arma::cx_vec>::from(x)) * arma::norm(arma::conv_to<arma::cx_vec>::from(Nx));
            CHECK(std::abs(xNx.imag()) <= 1e-6 * xscale);
            CHECK(xNx.real() >= -1e-6 * xscale);
            // The adjoint is the forward.
            CHECK(arma::norm(arma::conv_to<arma::cx_vec>::from(arma::cx_fvec(*N / x) - Nx)) == 0.0);
        }
        // normal() is N N by the default path; a batch of vectors equals the vectors one by one.
        check_normal(*N, 0.0);
        check_batch(*N, 3, 0.0);
    }
}

TEST_CASE("ToeplitzNormal for a field-map band: one kernel build serves maps of other centres and shapes",
          "[Toeplitz][band]") {
    FORGE_INFO_SEED();
    const Grid g{24, 20, 1};
    const Trajectory tr = random_trajectory(g, 1500, 10e-3);  // 10 ms readout
    const forge::ImageGrid grid(g.Nx, g.Ny, g.Nz);
    const forge::Trajectory<float> k = trajectory_of<float>(tr);
    // two maps of +-100 Hz shapes, the second moved 40 Hz off centre: the same band serves both after centring
    const arma::vec fm1 = smooth_field_map(g, 2 * kPi * 100);
    const arma::vec fm2 = smooth_field_map(g, 2 * kPi * 100) + 2 * kPi * 40;
    const forge::FieldBand b1 = forge::ToeplitzNormal<float>::field_band(as<float>(fm1));
    const forge::FieldBand b2 = forge::ToeplitzNormal<float>::field_band(as<float>(fm2));
    CHECK(b1.half_width == Approx(0.5 * (fm1.max() - fm1.min())).epsilon(1e-6));
    const forge::FieldBand band{std::max(b1.half_width, b2.half_width)};
    const double target = 1e-3;
    const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(tr.t), band, target);
    INFO("band half width " << band.half_width / (2 * kPi) << " Hz, L = " << L);
    const forge::ToeplitzNormal<float> N1(grid, k, as<float>(tr.W), as<float>(fm1), band, L, host_build());
    CHECK(N1.built_for_band());
    CHECK(N1.band_half_width() == band.half_width);
    CHECK(N1.segments() == L);
    const arma::cx_fvec x = complex_normal<float>(g.n2());
    const arma::cx_fvec before = N1 * x;
    const forge::ToeplitzNormal<float> N2 = N1.with_field_map(as<float>(fm2));
    // each within the requested error of its own exact G^H W G (the band's interpolators on each centred map)
    const double e1 = normal_error(N1, ExactNormal(g, tr, fm1), 2), e2 = normal_error(N2, ExactNormal(g, tr, fm2), 2);
    INFO("errors " << e1 << " (the map built with), " << e2 << " (the other map)");
    CHECK(e1 <= target);
    CHECK(e2 <= target);
    // the kernels taken equal those a build for the second map computes, and the first operator is unchanged
    const forge::ToeplitzNormal<float> direct(grid, k, as<float>(tr.W), as<float>(fm2), band, L, host_build());
    const arma::cx_fvec a = N2 * x, b = direct * x;
    CHECK(arma::norm(a - b) <= 1e-6 * arma::norm(b));
    CHECK(arma::approx_equal(arma::cx_fvec(N1 * x), before, "absdiff", 0.0f));
    // a map wider than the band, an operator of one map, and a build for a band the map exceeds are refused
    CHECK_THROWS_WITH(N1.with_field_map(as<float>(3.0 * fm1)), Catch::Matchers::Contains("band"));
    const forge::ToeplitzNormal<float> own = field_corrected<float>(g, tr, fm1, 4, host_build());
    CHECK_FALSE(own.built_for_band());
    CHECK_THROWS_WITH(own.with_field_map(as<float>(fm2)), Catch::Matchers::Contains("FieldBand"));
    CHECK_THROWS_WITH(forge::ToeplitzNormal<float>(grid, k, as<float>(tr.W), as<float>(fm1),
                                                   forge::FieldBand{0.5 * b1.half_width}, L, host_build()),
                      Catch::Matchers::Contains("wider band"));
    CHECK_THROWS_AS(N1.with_field_map(arma::fvec(g.n2() - 1, arma::fill::zeros)), forge::invalid_argument);
}
