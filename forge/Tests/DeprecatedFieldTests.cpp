// The old names of renamed struct fields (forge/Core/DeprecatedFields.h) and the functions renamed for the
// field_map spelling: each old name reads and writes its new field of the same object, in copies, moved objects
// and reallocated vectors too, and the old functions return what the new ones do.
#include <string>
#include <utility>
#include <vector>

#include "TestHelpers.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/FieldMapExtension.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/DemoAcquisition.h"
#include "forge/Sim/FieldMaps.h"

using namespace forge_test;

// What this file tests is the deprecated names.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

namespace {

template <typename T>
bool equal(const T& a, const T& b) {
    return a == b;
}
template <typename T>
bool equal(const std::vector<arma::Col<T>>& a, const std::vector<arma::Col<T>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].n_elem != b[i].n_elem || arma::any(a[i] != b[i])) return false;
    return true;
}

// 'old_of' gives an object's old-name reference: it must alias the new field of that very object.
// S: the struct; its fields are those of a base (forge/Core/DeprecatedFields.h), hence Base.
template <typename S, typename Base, typename New, typename Old>
void check_alias(New Base::*new_field, Old old_of, const New& a, const New& b) {
    S s;
    s.*new_field = a;
    CHECK(&old_of(s) == &(s.*new_field));
    CHECK(equal(old_of(s), a));
    old_of(s) = b;
    CHECK(equal(s.*new_field, b));
    S copy = s;  // a copy's old name refers to the copy
    CHECK(&old_of(copy) == &(copy.*new_field));
    old_of(copy) = a;
    CHECK(equal(s.*new_field, b));
    CHECK(equal(copy.*new_field, a));
    S assigned;
    assigned = copy;
    CHECK(&old_of(assigned) == &(assigned.*new_field));
    CHECK(equal(old_of(assigned), a));
    S moved(std::move(copy));
    CHECK(&old_of(moved) == &(moved.*new_field));
    CHECK(equal(old_of(moved), a));
    std::vector<S> v(2);
    v[1] = s;
    v.resize(100);  // reallocated: each element's old name follows it
    CHECK(&old_of(v[1]) == &(v[1].*new_field));
    CHECK(equal(old_of(v[1]), b));
}

}  // namespace

TEST_CASE("Renamed struct fields: the old names alias the new fields of the same object", "[deprecated]") {
    using forge::recon::ReconProblem;
    using forge::recon::ReconResult;
    using forge::recon::ReconSettings;
    check_alias<ReconProblem>(
        &ReconProblem::field_map, [](ReconProblem & p) -> auto& { return p.fieldmap; },
        std::vector<arma::fvec>{arma::fvec{1, 2}}, std::vector<arma::fvec>{});
    check_alias<ReconProblem>(
        &ReconProblem::fft_grid, [](ReconProblem & p) -> auto& { return p.fftGrid; },
        std::array<std::size_t, 3>{{4, 5, 6}}, std::array<std::size_t, 3>{{7, 8, 9}});
    check_alias<ReconProblem>(
        &ReconProblem::fov_ratio, [](ReconProblem & p) -> auto& { return p.fovRatio; },
        std::array<double, 3>{{1.5, 1, 1}}, std::array<double, 3>{{2, 2, 1}});
    check_alias<ReconSettings>(
        &ReconSettings::toeplitz_error, [](ReconSettings & s) -> auto& { return s.toeplitzError; }, 1e-4, 3e-2);
    check_alias<ReconSettings>(
        &ReconSettings::toeplitz_rhs, [](ReconSettings & s) -> auto& { return s.toeplitzRhs; },
        forge::recon::ToeplitzRhs::Exact, forge::recon::ToeplitzRhs::Nufft);
    check_alias<ReconResult>(
        &ReconResult::complex_image, [](ReconResult & r) -> auto& { return r.complexImage; },
        std::vector<arma::cx_fvec>{arma::cx_fvec(3, arma::fill::ones)}, std::vector<arma::cx_fvec>{});
    check_alias<forge::recon::FieldMapOptions>(
        &forge::recon::FieldMapOptions::init_kernel,
        [](forge::recon::FieldMapOptions & o) -> auto& { return o.initKernel; }, 5, 7);
    check_alias<forge::sim::DemoAcquisition>(
        &forge::sim::DemoAcquisition::field_map, [](forge::sim::DemoAcquisition & d) -> auto& { return d.fieldmap; },
        std::vector<arma::fvec>{arma::fvec{3}}, std::vector<arma::fvec>{});
    check_alias<forge::cuda::DftGeometry>(
        &forge::cuda::DftGeometry::nx, [](forge::cuda::DftGeometry & g) -> auto& { return g.numX; }, forge::uword(12),
        forge::uword(34));
    check_alias<forge::cuda::DftGeometry>(
        &forge::cuda::DftGeometry::nz, [](forge::cuda::DftGeometry & g) -> auto& { return g.numZ; }, forge::uword(2),
        forge::uword(3));
    // Default values are the fields' own.
    CHECK(ReconSettings().toeplitzError == ReconSettings().toeplitz_error);
    CHECK(forge::recon::FieldMapOptions().initKernel == 3);
}

TEST_CASE("Functions renamed for the field_map spelling: the old names return what the new ones do", "[deprecated]") {
    FORGE_INFO_SEED();
    const arma::fvec fm = forge::sim::two_blob_field_map(16, 1);
    CHECK(arma::approx_equal(forge::sim::two_blob_fieldmap(16, 1), fm, "absdiff", 0));
    const arma::vec ix = uniform<double>(40, -0.5, 0.5), iy = uniform<double>(40, -0.5, 0.5);
    CHECK(arma::approx_equal(forge::sim::bump_and_ramp_fieldmap(ix, iy, 80),
                             forge::sim::bump_and_ramp_field_map(ix, iy, 80), "absdiff", 0));
    arma::fvec holes = fm;
    holes(arma::span(0, 60)).zeros();
    CHECK(forge::recon::fieldmap_support(holes) == forge::recon::field_map_support(holes));
    CHECK(arma::approx_equal(forge::recon::extend_fieldmap(holes, 16, 16, 1),
                             forge::recon::extend_field_map(holes, 16, 16, 1), "absdiff", 0));
    const std::vector<arma::cx_fvec> echoes = {complex_normal<float>(256), complex_normal<float>(256)};
    const std::vector<double> times = {0, 2e-3};
    CHECK(arma::approx_equal(forge::recon::phase_difference_fieldmap(echoes, times),
                             forge::recon::phase_difference_field_map(echoes, times), "absdiff", 0));
    forge::recon::FieldMapOptions o;
    o.iterations = 4;
    o.device = forge::Device::Host;
    CHECK(arma::approx_equal(forge::recon::estimate_fieldmap(echoes, times, 16, 16, 1, o),
                             forge::recon::estimate_field_map(echoes, times, 16, 16, 1, o), "absdiff", 0));
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
