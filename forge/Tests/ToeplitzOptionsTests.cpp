// ToeplitzOptions: the build choices (where, axis grouping, progress) as one value give the operators and progress
// calls of the positional arguments they replace (kept one release, deprecated); the device options are checked.
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

using namespace forge_test;
using arma::uword;

namespace {
struct Call {
    uword done, total;
    bool operator==(const Call& o) const { return done == o.done && total == o.total; }
};

template <typename A, typename B>
void check_same_operator(const A& a, const B& b) {
    REQUIRE(a.domain_size() == b.domain_size());
    const arma::cx_fvec x = complex_normal<float>(a.domain_size());
    CHECK(arma::all(arma::cx_fvec(a * x) == arma::cx_fvec(b * x)));
}

// A stack along z: kz on the Nz integer positions (a Cartesian axis the build can group), kx, ky random.
forge::Trajectory<float> stack_along_z(const forge::ImageGrid& g, uword n1) {
    forge::Trajectory<float> k(uniform<float>(n1, -double(g.nx) / 2, double(g.nx) / 2),
                               uniform<float>(n1, -double(g.ny) / 2, double(g.ny) / 2), arma::fvec(n1),
                               arma::linspace<arma::fvec>(0, 4e-3, n1));
    const arma::fvec u = uniform<float>(n1, 0, double(g.nz));
    for (uword j = 0; j < n1; ++j) k.kz[j] = std::min(std::floor(u[j]), float(g.nz - 1)) - float(g.nz / 2);
    return k;
}
}  // namespace

TEST_CASE("ToeplitzOptions defaults: kernels where they are fastest, grouping on, legacy stream, current device",
          "[Toeplitz][options]") {
    const forge::ToeplitzOptions o;
    CHECK(o.build == forge::KernelBuild::Auto);
    CHECK(o.grouping == forge::AxisGrouping::Auto);
    CHECK_FALSE(o.progress);
    CHECK(o.stream == nullptr);
    CHECK(o.device == -1);
}

// The deprecated positional constructors are what this test compares against.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("ToeplitzOptions equal the deprecated positional (where, grouping, progress) arguments bit for bit",
          "[Toeplitz][options]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid g(10, 8, 6);
    const forge::Trajectory<float> k = stack_along_z(g, 900);
    const arma::fvec W = uniform<float>(900, 0.5, 1.5), fm = uniform<float>(g.n_pixels(), -200, 200);
    std::vector<Call> withOptions, positional;
    forge::ToeplitzOptions o;
    o.build = forge::KernelBuild::Host;
    for (const forge::AxisGrouping grouping : {forge::AxisGrouping::Auto, forge::AxisGrouping::Off}) {
        INFO("grouping " << (grouping == forge::AxisGrouping::Auto ? "Auto" : "Off"));
        o.grouping = grouping;
        withOptions.clear();
        positional.clear();
        o.progress = [&](uword d, uword n, double) { withOptions.push_back({d, n}); };
        const forge::ToeplitzBuildProgress record = [&](uword d, uword n, double) { positional.push_back({d, n}); };

        const forge::ToeplitzNormal<float> a(g.nx, g.ny, g.nz, k.kx, k.ky, k.kz, W, o);
        const forge::ToeplitzNormal<float> b(g.nx, g.ny, g.nz, k.kx, k.ky, k.kz, W, forge::KernelBuild::Host, grouping,
                                             record);
        check_same_operator(a, b);
        CHECK(a.grouped_axis() == (grouping == forge::AxisGrouping::Auto ? 2u : 3u));
        CHECK(b.grouped_axis() == a.grouped_axis());
        CHECK_FALSE(a.kernels_built_on_gpu());
        REQUIRE(withOptions.size() >= 3);
        CHECK(withOptions == positional);

        withOptions.clear();
        positional.clear();
        const forge::ToeplitzNormal<float> c(g.nx, g.ny, g.nz, k.kx, k.ky, k.kz, W, fm, k.t, 2,
                                             forge::TSInterp::Hanning, o);
        const forge::ToeplitzNormal<float> d(g.nx, g.ny, g.nz, k.kx, k.ky, k.kz, W, fm, k.t, 2,
                                             forge::TSInterp::Hanning, forge::KernelBuild::Host, grouping, record);
        check_same_operator(c, d);
        CHECK(c.kernel_count() == d.kernel_count());
        REQUIRE(withOptions.size() >= 3);
        CHECK(withOptions == positional);
    }
    // The deprecated forms' defaults (grouping Auto, no progress) are the options' defaults.
    o = forge::ToeplitzOptions();
    o.build = forge::KernelBuild::Host;
    check_same_operator(forge::ToeplitzNormal<float>(g, k, W, o),
                        forge::ToeplitzNormal<float>(g.nx, g.ny, g.nz, k.kx, k.ky, k.kz, W, forge::KernelBuild::Host));
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

TEST_CASE("ToeplitzOptions::device and stream are checked; without a device they are not used",
          "[Toeplitz][options][errors]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid g(8, 8);
    const forge::Trajectory<float> k(uniform<float>(100, -4, 4), uniform<float>(100, -4, 4), arma::fvec(100));
    const arma::fvec W;  // ones
    forge::ToeplitzOptions o;
    o.device = -2;
    CHECK_THROWS_WITH(forge::ToeplitzNormal<float>(g, k, W, o), Catch::Contains("options.device = -2"));
    if (!forge::device::available()) {
        // The operator runs on the host: a device number and a stream have nothing to do (the stream is not read).
        o.device = 3;
        o.stream = reinterpret_cast<CUstream_st*>(0x1);
        const forge::ToeplitzNormal<float> N(g, k, W, o);
        forge::ToeplitzOptions host;
        check_same_operator(N, forge::ToeplitzNormal<float>(g, k, W, host));
        CHECK_NOTHROW(N.prepare_device());  // nothing to upload without a device
    } else {
        o.device = forge::device::device_count();
        CHECK_THROWS_WITH(forge::ToeplitzNormal<float>(g, k, W, o), Catch::Contains("options.device = "));
    }
}
