// Gdft and GdftR2 made from geometry values (Trajectory, PixelGeometry, ImageGrid, FieldMapGradients) and with
// DftOptions, on the CPU. The geometry constructors are checked bit for bit against the positional ones on the
// same random arrays (they must be the same operator); bad lengths and bad options against the messages they
// must give. Fresh random inputs every run (FORGE_TEST_SEED replays).
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/dft/DftOptions.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

namespace {

using Catch::Matchers::Contains;
using forge::uword;

template <typename T1>
using Col = arma::Col<T1>;
template <typename T1>
using CxCol = arma::Col<std::complex<T1>>;

// A random problem on an nx x ny x nz grid: samples inside its k-space extent, times up to 20 ms, a field map up
// to +-100 Hz (rad/s).
template <typename T1>
struct Problem {
    forge::ImageGrid grid;
    forge::Trajectory<T1> k;
    forge::PixelGeometry<T1> pixels;
};

template <typename T1>
Problem<T1> make_problem(uword nx, uword ny, uword nz, uword n1) {
    Problem<T1> p;
    p.grid = forge::ImageGrid(nx, ny, nz);
    p.k = forge::Trajectory<T1>(forge_test::uniform<T1>(n1, -double(nx) / 2, double(nx) / 2),
                                forge_test::uniform<T1>(n1, -double(ny) / 2, double(ny) / 2),
                                forge_test::uniform<T1>(n1, -double(nz) / 2, double(nz) / 2),
                                forge_test::uniform<T1>(n1, 0.0, 0.02));
    p.pixels = forge::PixelGeometry<T1>::on_grid(p.grid, forge_test::uniform<T1>(p.grid.n_pixels(), -628.0, 628.0));
    return p;
}

// Exactly equal, bit for bit (the two operators must run the same arithmetic on the same arrays).
template <typename T1>
bool same_bits(const CxCol<T1>& a, const CxCol<T1>& b) {
    return a.n_elem == b.n_elem && std::memcmp(a.memptr(), b.memptr(), a.n_elem * sizeof(std::complex<T1>)) == 0;
}

// Forward and adjoint of A and B on the same random single vectors and batches of 3: the same bits.
template <typename T1, typename OpA, typename OpB>
void check_same_operator(const OpA& A, const OpB& B) {
    REQUIRE(A.n1() == B.n1());
    REQUIRE(A.n2() == B.n2());
    for (uword nb : {uword(1), uword(3)}) {
        const forge::forgeCol<forge::forgeComplex<T1>> x(forge_test::complex_normal<T1>(A.n2() * nb)),
            y(forge_test::complex_normal<T1>(A.n1() * nb));
        INFO("batch " << nb);
        CHECK(same_bits<T1>(A.forward(x, nb).to_arma(), B.forward(x, nb).to_arma()));
        CHECK(same_bits<T1>(A.adjoint(y, nb).to_arma(), B.adjoint(y, nb).to_arma()));
    }
}

template <typename T1>
Col<T1> cut(const Col<T1>& v) {
    return v.head(v.n_elem - 1);
}

}  // namespace

TEMPLATE_TEST_CASE("Gdft from a Trajectory and a PixelGeometry equals the positional Gdft bit for bit",
                   "[gdft][geometry]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const Problem<T1> p = make_problem<T1>(9, 8, 3, 700);
    const auto& k = p.k;
    const auto& px = p.pixels;
    const uword n1 = k.n_samples(), n2 = px.n_pixels();
    SECTION("with a field map") {
        const forge::Gdft<T1> G(k, px);
        const forge::Gdft<T1> P(n1, n2, k.kx, k.ky, k.kz, px.x, px.y, px.z, px.field_map, k.t);
        check_same_operator<T1>(G, P);
    }
    SECTION("without a field map and without readout times: both zero") {
        const forge::Trajectory<T1> k0(k.kx, k.ky, k.kz);
        const forge::PixelGeometry<T1> px0(px.x, px.y, px.z);
        const forge::Gdft<T1> G(k0, px0);
        const forge::Gdft<T1> P(n1, n2, k.kx, k.ky, k.kz, px.x, px.y, px.z, Col<T1>(n2, arma::fill::zeros),
                                Col<T1>(n1, arma::fill::zeros));
        check_same_operator<T1>(G, P);
    }
    SECTION("another sample set on the same pixels") {
        const forge::Gdft<T1> G(k, px);
        const Problem<T1> q = make_problem<T1>(9, 8, 3, 450);
        const forge::Gdft<T1> H(G, q.k);
        const forge::Gdft<T1> Hp(G, q.k.n_samples(), q.k.kx, q.k.ky, q.k.kz, q.k.t);
        const forge::Gdft<T1> fresh(q.k, px);
        CHECK(H.n1() == q.k.n_samples());
        check_same_operator<T1>(H, Hp);
        check_same_operator<T1>(H, fresh);
    }
}

TEMPLATE_TEST_CASE("GdftR2 from geometry values equals the positional GdftR2 bit for bit", "[gdft][geometry]", float,
                   double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const Problem<T1> p = make_problem<T1>(7, 6, 4, 600);
    const auto& k = p.k;
    const auto& px = p.pixels;
    const auto& g = p.grid;
    const uword n1 = k.n_samples(), n2 = px.n_pixels();
    SECTION("gradients from the field map") {
        const forge::GdftR2<T1> G(k, px, g);
        const forge::GdftR2<T1> P(n1, n2, k.kx, k.ky, k.kz, px.x, px.y, px.z, px.field_map, k.t, g.nx, g.ny, g.nz);
        check_same_operator<T1>(G, P);
    }
    SECTION("the caller's gradients") {
        forge::FieldMapGradients<T1> grads;
        grads.gx = forge_test::uniform<T1>(n2, -20.0, 20.0);
        grads.gy = forge_test::uniform<T1>(n2, -20.0, 20.0);
        grads.gz = forge_test::uniform<T1>(n2, -20.0, 20.0);
        const forge::GdftR2<T1> G(k, px, g, grads);
        const forge::GdftR2<T1> P(n1, n2, k.kx, k.ky, k.kz, px.x, px.y, px.z, px.field_map, k.t, grads.gx, grads.gy,
                                  grads.gz, g.nx, g.ny, g.nz);
        check_same_operator<T1>(G, P);
    }
    SECTION("field_map_gradients on an ImageGrid equals the positional form") {
        const forge::FieldMapGradients<T1> a = forge::GdftR2<T1>::field_map_gradients(px.field_map, g);
        Col<T1> gx, gy, gz;
        forge::GdftR2<T1>::field_map_gradients(px.field_map, g.nx, g.ny, g.nz, gx, gy, gz);
        CHECK(arma::approx_equal(a.gx, gx, "absdiff", T1(0)));
        CHECK(arma::approx_equal(a.gy, gy, "absdiff", T1(0)));
        CHECK(arma::approx_equal(a.gz, gz, "absdiff", T1(0)));
    }
    SECTION("another sample set on the same pixels and gradients") {
        const forge::GdftR2<T1> G(k, px, g);
        const Problem<T1> q = make_problem<T1>(7, 6, 4, 333);
        const forge::GdftR2<T1> H(G, q.k);
        const forge::GdftR2<T1> fresh(q.k.n_samples(), n2, q.k.kx, q.k.ky, q.k.kz, px.x, px.y, px.z, px.field_map,
                                      q.k.t, g.nx, g.ny, g.nz);
        CHECK(H.has_gradients());
        check_same_operator<T1>(H, fresh);
    }
}

TEST_CASE("Gdft and GdftR2 geometry constructors name the vector of the wrong length", "[gdft][geometry]") {
    using T1 = float;
    FORGE_INFO_SEED();
    const Problem<T1> p = make_problem<T1>(6, 5, 2, 120);
    const auto& k = p.k;
    const auto& px = p.pixels;
    auto traj = [&](Col<T1> kx, Col<T1> ky, Col<T1> kz, Col<T1> t) { return forge::Trajectory<T1>(kx, ky, kz, t); };
    auto pix = [&](Col<T1> x, Col<T1> y, Col<T1> z, Col<T1> fm) { return forge::PixelGeometry<T1>(x, y, z, fm); };
    using forge::Gdft;
    using forge::GdftR2;
    using forge::invalid_argument;

    CHECK_THROWS_AS(Gdft<T1>(traj(k.kx, cut(k.ky), k.kz, k.t), px), invalid_argument);
    CHECK_THROWS_WITH(Gdft<T1>(traj(k.kx, cut(k.ky), k.kz, k.t), px), Contains("Gdft") && Contains("trajectory ky"));
    CHECK_THROWS_WITH(Gdft<T1>(traj(k.kx, k.ky, cut(k.kz), k.t), px), Contains("trajectory kz"));
    CHECK_THROWS_WITH(Gdft<T1>(traj(k.kx, k.ky, k.kz, cut(k.t)), px), Contains("trajectory t (readout times)"));
    CHECK_THROWS_WITH(Gdft<T1>(traj(Col<T1>(), Col<T1>(), Col<T1>(), Col<T1>()), px), Contains("kx is empty"));
    // A field map needs the readout times.
    CHECK_THROWS_WITH(Gdft<T1>(traj(k.kx, k.ky, k.kz, Col<T1>()), px),
                      Contains("trajectory t (readout times) has 0 entries"));
    CHECK_THROWS_WITH(Gdft<T1>(k, pix(px.x, cut(px.y), px.z, px.field_map)), Contains("Gdft") && Contains("pixel y"));
    CHECK_THROWS_WITH(Gdft<T1>(k, pix(px.x, px.y, cut(px.z), px.field_map)), Contains("pixel z"));
    CHECK_THROWS_WITH(Gdft<T1>(k, pix(px.x, px.y, px.z, cut(px.field_map))), Contains("pixel field_map"));
    Col<T1> bad = k.kx;
    bad[3] = std::numeric_limits<T1>::quiet_NaN();
    CHECK_THROWS_WITH(Gdft<T1>(traj(bad, k.ky, k.kz, k.t), px), Contains("trajectory kx contains NaN"));

    // Another sample set on G's pixels: times are needed as G has a field map; a field-free G needs none.
    const Gdft<T1> G(k, px);
    CHECK_THROWS_WITH(Gdft<T1>(G, traj(k.kx, k.ky, k.kz, Col<T1>())), Contains("trajectory t (readout times)"));
    CHECK_THROWS_WITH(Gdft<T1>(G, traj(k.kx, cut(k.ky), k.kz, k.t)), Contains("trajectory ky"));
    const Gdft<T1> F(traj(k.kx, k.ky, k.kz, Col<T1>()), pix(px.x, px.y, px.z, Col<T1>()));
    CHECK_NOTHROW(Gdft<T1>(F, traj(k.kx, k.ky, k.kz, Col<T1>())));

    // GdftR2: the grid against the pixel geometry, and the caller's gradients.
    CHECK_THROWS_WITH(GdftR2<T1>(k, px, forge::ImageGrid(6, 5, 3)),
                      Contains("GdftR2") && Contains("grid 6 x 5 x 3") && Contains("pixel geometry has 60"));
    CHECK_THROWS_WITH(GdftR2<T1>(k, px, forge::ImageGrid(6, 0, 2)), Contains("axis of length 0"));
    CHECK_THROWS_WITH(GdftR2<T1>(traj(k.kx, k.ky, k.kz, k.t), pix(px.x, cut(px.y), px.z, px.field_map), p.grid),
                      Contains("pixel y"));
    forge::FieldMapGradients<T1> grads = forge::GdftR2<T1>::field_map_gradients(px.field_map, p.grid);
    grads.gy = cut(grads.gy);
    CHECK_THROWS_AS(GdftR2<T1>(k, px, p.grid, grads), invalid_argument);
    CHECK_THROWS_WITH(GdftR2<T1>(k, px, p.grid, grads), Contains("gradients.gy"));
    // Gradients that are not zero need the readout times, with or without a field map.
    grads = forge::GdftR2<T1>::field_map_gradients(px.field_map, p.grid);
    CHECK_THROWS_WITH(GdftR2<T1>(traj(k.kx, k.ky, k.kz, Col<T1>()), pix(px.x, px.y, px.z, Col<T1>()), p.grid, grads),
                      Contains("trajectory t (readout times)"));
}

TEMPLATE_TEST_CASE("DftOptions: the operator keeps them, and bad ones are refused naming the option", "[gdft][options]",
                   float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const Problem<T1> p = make_problem<T1>(6, 4, 1, 80);
    using forge::DftKernel;
    using forge::DftOptions;
    using forge::Gdft;
    using forge::GdftR2;

    SECTION("defaults, and a kernel choice kept by the operator and by operators made from its pixels") {
        const Gdft<T1> D(p.k, p.pixels);
        CHECK(D.options().kernel == DftKernel::automatic);
        CHECK(D.options().stream == nullptr);
        CHECK(D.options().devices.empty());
        CHECK(D.devices().empty());
        for (DftKernel kernel : {DftKernel::wgmma, DftKernel::mma_sync, DftKernel::fp32}) {
            INFO("kernel " << forge::dft_kernel_name(kernel));
            DftOptions o;
            o.kernel = kernel;
            // Without a GPU no plan is made, and nothing to refuse; with one, the device may lack the kernel.
            try {
                const Gdft<T1> G(p.k, p.pixels, o);
                CHECK(G.options().kernel == kernel);
                const Gdft<T1> H(G, p.k);
                CHECK(H.options().kernel == kernel);
                const Gdft<T1> copy = G;
                CHECK(copy.options().kernel == kernel);
                check_same_operator<T1>(G, D);  // the CPU path has no kernel choice
            } catch (const forge::invalid_argument& e) {
                REQUIRE(forge::device::available());
                CHECK_THAT(e.what(), Contains("DftOptions::kernel"));
            }
        }
    }
    SECTION("a value outside DftKernel") {
        DftOptions o;
        o.kernel = DftKernel(7);
        CHECK_THROWS_AS(Gdft<T1>(p.k, p.pixels, o), forge::invalid_argument);
        CHECK_THROWS_WITH(Gdft<T1>(p.k, p.pixels, o), Contains("DftOptions::kernel") && Contains("DftKernel(7)"));
        CHECK_THROWS_WITH(GdftR2<T1>(p.k, p.pixels, p.grid, o), Contains("GdftR2") && Contains("DftKernel(7)"));
    }
    SECTION("a negative device number") {
        const DftOptions o{nullptr, {0, -2}};
        CHECK_THROWS_AS(Gdft<T1>(p.k, p.pixels, o), forge::invalid_argument);
        if (std::is_same<T1, float>::value) {
            CHECK_THROWS_WITH(Gdft<T1>(p.k, p.pixels, o), Contains("options.devices[1] = -2"));
        }
    }
    SECTION("devices on a double operator, a stream with devices") {
        const DftOptions o{nullptr, {0}};
        if (std::is_same<T1, double>::value) {
            CHECK_THROWS_AS(Gdft<T1>(p.k, p.pixels, o), forge::invalid_argument);
            CHECK_THROWS_WITH(Gdft<T1>(p.k, p.pixels, o),
                              Contains("options.devices") && Contains("only for float operators"));
            CHECK_THROWS_WITH(GdftR2<T1>(p.k, p.pixels, p.grid, o), Contains("only for float operators"));
        } else if (!forge::device::available()) {
            // A float operator with devices needs a GPU.
            CHECK_THROWS_AS(Gdft<T1>(p.k, p.pixels, o), forge::cuda_error);
            CHECK_THROWS_WITH(Gdft<T1>(p.k, p.pixels, o),
                              Contains("options.devices") &&
                                  (Contains("built without CUDA") || Contains("no CUDA device")));
        }
    }
}

TEST_CASE("DftOptions: a stream together with devices is refused", "[gdft][options]") {
    const Problem<float> p = make_problem<float>(4, 4, 1, 20);
    int standIn = 0;  // never used as a stream: the combination is refused first
    const forge::DftOptions both{reinterpret_cast<CUstream_st*>(&standIn), {0}};
    CHECK_THROWS_AS(forge::Gdft<float>(p.k, p.pixels, both), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::Gdft<float>(p.k, p.pixels, both), Contains("options.stream and options.devices"));
}

TEST_CASE("dft_kernel_name names every DftKernel and nothing else", "[gdft][options]") {
    using forge::DftKernel;
    CHECK(std::string(forge::dft_kernel_name(DftKernel::automatic)) == "automatic");
    CHECK(std::string(forge::dft_kernel_name(DftKernel::wgmma)) == "wgmma");
    CHECK(std::string(forge::dft_kernel_name(DftKernel::mma_sync)) == "mma_sync");
    CHECK(std::string(forge::dft_kernel_name(DftKernel::fp32)) == "fp32");
    CHECK(forge::dft_kernel_name(DftKernel(4)) == nullptr);
    CHECK(forge::dft_kernel_name(DftKernel(-1)) == nullptr);
    CHECK(forge::DftOptions{}.kernel == DftKernel::automatic);
}

// set_devices is kept one release as a deprecated alias of DftOptions::devices; it still does what it did.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("Gdft::set_devices (deprecated) keeps options().devices in step", "[gdft][options]") {
    const Problem<float> p = make_problem<float>(4, 4, 1, 30);
    forge::Gdft<float> G(p.k, p.pixels);
    G.set_devices({});
    CHECK(G.options().devices.empty());
    if (!forge::device::available()) {
        CHECK_THROWS_AS(G.set_devices({0}), forge::cuda_error);
        CHECK_THROWS_WITH(G.set_devices({0}), Contains("Gdft::set_devices"));
        CHECK(G.options().devices.empty());
    }
}
#pragma GCC diagnostic pop
