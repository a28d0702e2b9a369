// ToeplitzNormal's NUFFT kernels by slabs across a Cartesian axis (2D NUFFTs of each group's samples, expanded
// along the axis) against the exact DFT's kernels and the float64 time-segmented normal; ToeplitzNormal built from
// a TimeSegmentation against the one from the field map; the segment phase maps against std::polar; the
// stacked diagonal that takes its weights without a copy; require_finite's vectorised check.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "ToeplitzTestProblem.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/Composition.h"

using namespace toeplitz_test;

namespace {

forge::ToeplitzOptions nufft_source() { return with_source(forge::KernelSource::Nufft); }
forge::ToeplitzOptions exact_source() { return with_source(forge::KernelSource::Exact); }

}  // namespace

TEST_CASE("ToeplitzNormal's NUFFT kernels by slabs equal the exact DFT's kernels: each axis, shared and per-group "
          "samples",
          "[Toeplitz][slabs]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 8};
    for (int axis = 0; axis < 3; ++axis)
        for (const bool shared : {true, false}) {
            INFO("axis " << axis << (shared ? ", one in-plane trajectory for all planes" : ", random per sample"));
            const Trajectory tr = shared ? shared_stack(g, axis, 60, 0) : cartesian_along(g, axis, 3 * g.n2(), 0);
            const auto Nf = field_free<float>(g, tr, nufft_source());
            const auto Nd = field_free<double>(g, tr, nufft_source());
            CHECK(Nf.kernel_source() == forge::KernelSource::Nufft);
            // By slabs in double (a plan per group included); in float a plan per group costs more than the whole
            // grid's NUFFT at this size, so only shared planes must go by slabs. Both equal the exact kernels.
            CHECK(Nd.grouped_axis() == uword(axis));
            if (shared) CHECK(Nf.grouped_axis() == uword(axis));
            const arma::cx_vec q = kernel_columns(field_free<double>(g, tr, exact_source()));
            const double scale = arma::abs(q).max();  // q(0) = sum_j W_j
            CHECK(arma::abs(kernel_columns(Nf) - q).max() <= 2e-6 * scale);
            CHECK(arma::abs(kernel_columns(Nd) - q).max() <= 1e-10 * scale);
        }
}

TEST_CASE("ToeplitzNormal's NUFFT kernels by slabs with a field map: the float64 segmented normal, the exact G^H W G",
          "[Toeplitz][slabs]") {
    FORGE_INFO_SEED();
    const Grid g{14, 12, 6};
    const Trajectory tr = shared_stack(g, 2, 90, 8e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
    const uword L = 3;
    const auto Nf = field_corrected<float>(g, tr, fm, L, nufft_source());
    const auto Nd = field_corrected<double>(g, tr, fm, L, nufft_source());
    CHECK(Nf.grouped_axis() == 2);
    CHECK(batch_error(Nf, SegmentedNormal(g, tr, fm, L, float()), 2) <= toeplitz_tolerance(Nf, tr.kx.n_elem, 1e-6));
    CHECK(batch_error(Nd, SegmentedNormal(g, tr, fm, L, double()), 2) <= 1e-9);
    const uword Lc = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), 1e-3);
    CHECK(normal_error(field_corrected<float>(g, tr, fm, Lc, nufft_source()), ExactNormal(g, tr, fm)) <= 1e-3);
}

TEMPLATE_TEST_CASE("ToeplitzNormal built from a TimeSegmentation equals the one from the field map",
                   "[Toeplitz][slabs]", float, double) {
    using T = TestType;
    FORGE_INFO_SEED();
    const Grid g{12, 10, 6};
    const Trajectory tr = shared_stack(g, 2, 70, 6e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 90);
    const uword L = 4;
    const forge::ImageGrid grid(g.Nx, g.Ny, g.Nz);
    const forge::Trajectory<T> k = trajectory_of<T>(tr);
    const auto S = segmented_nufft<T>(g, tr, fm, L);
    const forge::ToeplitzNormal<T> fromSegments(grid, k, as<T>(tr.W), S, host_build());
    const auto fromMap = field_corrected<T>(g, tr, fm, L, host_build());
    CHECK(fromSegments.segments() == L);
    // The same segmentation; the interpolators reach the kernels rounded to T from S.
    const double tol = std::is_same<T, float>::value ? toeplitz_tolerance(fromMap, tr.kx.n_elem) : 1e-12;
    for (int probe = 0; probe < 2; ++probe) {
        const arma::Col<std::complex<T>> x = complex_normal<T>(g.n2());
        CHECK(rel_error(arma::Col<std::complex<T>>(fromSegments * x), arma::Col<std::complex<T>>(fromMap * x)) <= tol);
    }
    // Sizes that do not match the operator's are refused, naming what differs.
    const forge::ImageGrid other(g.Nx, g.Ny, g.Nz + 2);
    CHECK_THROWS_WITH(forge::ToeplitzNormal<T>(other, k, as<T>(tr.W), S, host_build()),
                      Catch::Matchers::Contains("pixels"));
    const uword n1 = tr.kx.n_elem - 1;
    const forge::Trajectory<T> shorter(as<T>(tr.kx.head(n1)), as<T>(tr.ky.head(n1)), as<T>(tr.kz.head(n1)),
                                       as<T>(tr.t.head(n1)));
    CHECK_THROWS_WITH(forge::ToeplitzNormal<T>(grid, shorter, as<T>(tr.W.head(n1)), S, host_build()),
                      Catch::Matchers::Contains("samples"));
}

TEMPLATE_TEST_CASE(
    "segment_phases equals exp(-i field_map tau_l) by std::polar, uniform and other nodes, maps up to 1e5 rad/s",
    "[TimeSegmentation][phases]", float, double) {
    using T = TestType;
    FORGE_INFO_SEED();
    const arma::Col<T> fm = uniform<T>(5000, -1e5, 1e5);
    const arma::vec uniformTau = arma::linspace<arma::vec>(-2e-3, 4.8e-2, 9);
    arma::vec otherTau = uniformTau;
    otherTau(4) += 1.3e-4;
    for (const arma::vec& tau : {uniformTau, otherTau}) {
        const auto phases = forge::TimeSegmentationCore<T>::segment_phases(fm, tau);
        REQUIRE(phases.n_elem == fm.n_elem * tau.n_elem);
        const auto* p = reinterpret_cast<const std::complex<T>*>(phases.host_data());
        double worst = 0;
        for (uword l = 0; l < tau.n_elem; ++l)
            for (uword k = 0; k < fm.n_elem; ++k) {
                const std::complex<double> ref = std::polar(1.0, -double(fm[k]) * tau(l));
                worst = std::max(worst, std::abs(std::complex<double>(p[l * fm.n_elem + k]) - ref));
            }
        CHECK(worst <= (std::is_same<T, float>::value ? 2e-7 : 1e-10));
    }
}

TEMPLATE_TEST_CASE("StackedDiagonal from weights taken without a copy equals the one from an arma vector",
                   "[composition]", float, double) {
    using T = TestType;
    using FC = forgeCol<forgeComplex<T>>;
    FORGE_INFO_SEED();
    const arma::Col<std::complex<T>> w = complex_normal<T>(3 * 40);
    const forge::StackedDiagonal<T> byCopy(w, 3);
    const forge::StackedDiagonal<T> byMove(FC(w), 3);
    const arma::Col<std::complex<T>> x = complex_normal<T>(40), y = complex_normal<T>(120);
    CHECK(rel_error(arma::Col<std::complex<T>>(byMove * x), arma::Col<std::complex<T>>(byCopy * x)) == 0);
    CHECK(rel_error(arma::Col<std::complex<T>>(byMove / y), arma::Col<std::complex<T>>(byCopy / y)) == 0);
    arma::Col<std::complex<T>> bad = w;
    bad[77] = std::complex<T>(0, std::numeric_limits<T>::quiet_NaN());
    CHECK_THROWS_WITH(forge::StackedDiagonal<T>(FC(bad), 3), Catch::Matchers::Contains("weights[155]"));
    CHECK_THROWS_WITH(forge::StackedDiagonal<T>(FC(w), 7), Catch::Matchers::Contains("not a multiple of copies = 7"));
}

TEMPLATE_TEST_CASE("require_finite finds NaN and Inf anywhere and passes the largest finite values", "[validation]",
                   float, double) {
    using T = TestType;
    arma::Col<T> v = uniform<T>(1001, -1, 1);
    v[3] = std::numeric_limits<T>::max();
    v[4] = -std::numeric_limits<T>::max();
    v[5] = std::numeric_limits<T>::denorm_min();
    CHECK_NOTHROW(forge::require_finite("test", "v", v.memptr(), v.n_elem));
    for (const uword at : {uword(0), uword(517), uword(1000)})
        for (const T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity()}) {
            arma::Col<T> w = v;
            w[at] = bad;
            CHECK_THROWS_WITH(forge::require_finite("test", "v", w.memptr(), w.n_elem),
                              Catch::Matchers::Contains("v[" + std::to_string(at) + "]"));
        }
}
