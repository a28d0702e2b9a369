// Geometry values (forge/Core/Geometry.h) and their use: each check names the bad vector; PixelGeometry::on_grid
// is Gfft's own pixel grid; domain_shape() passes through every composite; penalties built from a grid are the
// positional penalties bit for bit and name the vector of a wrong length.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "TestHelpers.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Operators/pcSenseTimeSeg.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"

using Catch::Matchers::Contains;
using forge::ImageGrid;
using forge::uword;
using forge_test::complex_normal;
using forge_test::uniform;

namespace {

// A pixel-wise scaling on an image grid that reports the grid (as an operator on a grid does).
class ShapedScale : public forge::LinearOperator<float> {
public:
    ShapedScale(uword n, const ImageGrid& shape) : forge::LinearOperator<float>("ShapedScale", n, n) {
        set_domain_shape(shape);
    }
    explicit ShapedScale(const ImageGrid& shape) : ShapedScale(shape.n_pixels(), shape) {}

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool) const override {
        for (uword i = 0; i < nbatch * domain_size(); ++i) out[i] = in[i] * 3.0f;
    }
};

// The same without a grid: scattered pixels.
class Scale : public forge::LinearOperator<float> {
public:
    explicit Scale(uword n) : forge::LinearOperator<float>("Scale", n, n) {}

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool) const override {
        for (uword i = 0; i < nbatch * domain_size(); ++i) out[i] = in[i] * 0.5f;
    }
};

template <typename T1>
forge::Trajectory<T1> random_trajectory(uword n) {
    return forge::Trajectory<T1>(uniform<T1>(n, -4, 4), uniform<T1>(n, -4, 4), uniform<T1>(n, -4, 4),
                                 uniform<T1>(n, 0, 0.01));
}
template <typename T1>
forge::PixelGeometry<T1> random_pixels(uword n) {
    return forge::PixelGeometry<T1>(uniform<T1>(n, -0.5, 0.5), uniform<T1>(n, -0.5, 0.5), uniform<T1>(n, -0.5, 0.5),
                                    uniform<T1>(n, -100, 100));
}

}  // namespace

TEST_CASE("ImageGrid: sizes, comparison, and checks that name the grid", "[geometry]") {
    const ImageGrid g(4, 3, 2);
    CHECK(g.n_pixels() == 24);
    CHECK(g.n_dims() == 3);
    CHECK(ImageGrid(64, 64).n_dims() == 2);
    CHECK(ImageGrid(64, 64) == ImageGrid(64, 64, 1));
    CHECK(ImageGrid(64, 64) != ImageGrid(64, 1, 64));
    CHECK(ImageGrid{}.n_pixels() == 1);
    // One number is a grid only when said so: QuadPenalty<float>(n, beta) must not compile.
    static_assert(!std::is_convertible<uword, ImageGrid>::value, "a uword must not convert to an ImageGrid");
    static_assert(std::is_constructible<ImageGrid, uword>::value, "ImageGrid(n) is a 1D grid");
    CHECK(ImageGrid(7).n_pixels() == 7);
    CHECK_NOTHROW(g.check("here"));
    CHECK_THROWS_AS(ImageGrid(4, 0, 2).check("here"), forge::invalid_argument);
    CHECK_THROWS_WITH(ImageGrid(4, 0, 2).check("here"), Contains("here") && Contains("4 x 0 x 2"));
    const uword big = uword(1) << 40;
    CHECK_THROWS_WITH(ImageGrid(big, big, 1).check("here"), Contains("here") && Contains("nx"));
}

TEST_CASE("Trajectory::check names the vector of a wrong length or with NaN/Inf", "[geometry]") {
    FORGE_INFO_SEED();
    const uword n = 20;
    const forge::Trajectory<float> good = random_trajectory<float>(n);
    CHECK(good.n_samples() == n);
    CHECK(good.has_times());
    CHECK_NOTHROW(good.check("Op"));
    CHECK_NOTHROW(forge::Trajectory<float>(good.kx, good.ky, good.kz).check("Op"));
    CHECK_THROWS_WITH(forge::Trajectory<float>(good.kx, good.ky, good.kz).check("Op", true),
                      Contains("Op") && Contains("trajectory t (readout times) has 0 entries; expected 20"));
    CHECK_THROWS_WITH(forge::Trajectory<float>().check("Op"), Contains("Op") && Contains("kx is empty"));
    CHECK(arma::all(forge::Trajectory<float>(good.kx, good.ky, good.kz).times_or_zeros() == 0));
    CHECK(arma::all(good.times_or_zeros() == good.t));

    struct Case {
        const char* name;  // as the message names it
        arma::fvec forge::Trajectory<float>::*member;
    };
    const std::vector<Case> cases = {{"ky", &forge::Trajectory<float>::ky},
                                     {"kz", &forge::Trajectory<float>::kz},
                                     {"t (readout times)", &forge::Trajectory<float>::t}};
    for (const Case& c : cases) {
        INFO(c.name);
        forge::Trajectory<float> shorter = good;
        (shorter.*c.member).resize(n - 1);
        CHECK_THROWS_AS(shorter.check("Op"), forge::invalid_argument);
        CHECK_THROWS_WITH(shorter.check("Op"),
                          Contains(std::string("Op: trajectory ") + c.name + " has 19 entries; expected 20"));
        for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
            forge::Trajectory<float> nonfinite = good;
            (nonfinite.*c.member)[7] = bad;
            CHECK_THROWS_WITH(nonfinite.check("Op"),
                              Contains(std::string("Op: trajectory ") + c.name + " contains NaN or Inf"));
        }
    }
    forge::Trajectory<double> nanKx = random_trajectory<double>(n);
    nanKx.kx[0] = std::nan("");
    CHECK_THROWS_WITH(nanKx.check("Op"), Contains("trajectory kx contains NaN or Inf"));
}

TEST_CASE("PixelGeometry::check names the vector of a wrong length or with NaN/Inf", "[geometry]") {
    FORGE_INFO_SEED();
    const uword n = 16;
    const forge::PixelGeometry<double> good = random_pixels<double>(n);
    CHECK(good.n_pixels() == n);
    CHECK(good.has_field_map());
    CHECK_NOTHROW(good.check("Op"));
    const forge::PixelGeometry<double> noField(good.x, good.y, good.z);
    CHECK_NOTHROW(noField.check("Op"));
    CHECK_FALSE(noField.has_field_map());
    CHECK(arma::all(noField.field_map_or_zeros() == 0));
    CHECK(noField.field_map_or_zeros().n_elem == n);
    CHECK_THROWS_WITH(forge::PixelGeometry<double>().check("Op"), Contains("Op") && Contains("x is empty"));

    struct Case {
        const char* name;
        arma::vec forge::PixelGeometry<double>::*member;
    };
    const std::vector<Case> cases = {{"y", &forge::PixelGeometry<double>::y},
                                     {"z", &forge::PixelGeometry<double>::z},
                                     {"field_map", &forge::PixelGeometry<double>::field_map}};
    for (const Case& c : cases) {
        INFO(c.name);
        forge::PixelGeometry<double> longer = good;
        (longer.*c.member).resize(n + 3);
        CHECK_THROWS_AS(longer.check("Op"), forge::invalid_argument);
        CHECK_THROWS_WITH(longer.check("Op"), Contains(std::string("Op: pixel ") + c.name +
                                                       " has 19 entries; expected 16 (the length of x)"));
        forge::PixelGeometry<double> nonfinite = good;
        (nonfinite.*c.member)[3] = -std::numeric_limits<double>::infinity();
        CHECK_THROWS_WITH(nonfinite.check("Op"), Contains(std::string("Op: pixel ") + c.name + " contains NaN or Inf"));
    }
    forge::PixelGeometry<double> nanX = good;
    nanX.x[n - 1] = std::nan("");
    CHECK_THROWS_WITH(nanX.check("Op"), Contains("pixel x contains NaN or Inf"));
}

TEST_CASE("PixelGeometry::on_grid is Gfft's pixel grid, and checks its field map", "[geometry]") {
    for (const ImageGrid& g :
         {ImageGrid(8, 8), ImageGrid(6, 4, 2), ImageGrid(8), ImageGrid(1, 4), ImageGrid(4, 1, 6)}) {
        INFO(g.to_string());
        const arma::fmat c = forge::Gfft<float>(g.nx, g.ny, g.nz).image_coords();
        const forge::PixelGeometry<float> p = forge::PixelGeometry<float>::on_grid(g);
        REQUIRE(p.n_pixels() == g.n_pixels());
        CHECK(arma::all(p.x == c.col(0)));
        CHECK(arma::all(p.y == c.col(1)));
        CHECK(arma::all(p.z == c.col(2)));
        CHECK_FALSE(p.has_field_map());
        const arma::dmat cd = forge::Gfft<double>(g.nx, g.ny, g.nz).image_coords();
        const forge::PixelGeometry<double> pd = forge::PixelGeometry<double>::on_grid(g);
        CHECK(arma::all(pd.x == cd.col(0)));
        CHECK(arma::all(pd.y == cd.col(1)));
        CHECK(arma::all(pd.z == cd.col(2)));
    }
    // Odd axes (Gfft takes even ones only): pixel i at (i - floor(n/2)) / n, the centre pixel at 0.
    const forge::PixelGeometry<double> odd = forge::PixelGeometry<double>::on_grid(ImageGrid(5, 3, 1));
    for (uword j = 0; j < 3; ++j)
        for (uword i = 0; i < 5; ++i) {
            CHECK(odd.x[i + 5 * j] == (double(i) - 2.0) / 5.0);
            CHECK(odd.y[i + 5 * j] == (double(j) - 1.0) / 3.0);
            CHECK(odd.z[i + 5 * j] == 0.0);
        }
    const ImageGrid g(4, 4);
    const arma::fvec fm = arma::regspace<arma::fvec>(0, 15);
    CHECK(arma::all(forge::PixelGeometry<float>::on_grid(g, fm).field_map == fm));
    CHECK_THROWS_WITH(forge::PixelGeometry<float>::on_grid(g, arma::fvec(15, arma::fill::zeros)),
                      Contains("PixelGeometry::on_grid: pixel field_map has 15 entries; expected 16"));
    CHECK_THROWS_WITH(forge::PixelGeometry<float>::on_grid(ImageGrid(4, 0)), Contains("PixelGeometry::on_grid"));
}

TEST_CASE("domain_shape() passes through SENSE, TimeSegmentation, pcSENSE, pcSenseTimeSeg and the composition "
          "operators",
          "[geometry][operators][composition]") {
    FORGE_INFO_SEED();
    const ImageGrid grid(4, 3, 2);
    const uword n = grid.n_pixels();
    const auto A = std::make_shared<const ShapedScale>(grid);
    const auto U = std::make_shared<const Scale>(n);
    CHECK(A->domain_shape() == grid);
    CHECK(U->domain_shape() == ImageGrid(n));  // scattered pixels: n x 1 x 1
    CHECK_THROWS_WITH(ShapedScale(n + 1, grid), Contains("ShapedScale") && Contains("4 x 3 x 2"));

    CHECK(forge::chain<float>(A, U)->domain_shape() == grid);
    CHECK(forge::chain<float>(A, U, U)->domain_shape() == grid);
    CHECK(forge::chain<float>(U, A)->domain_shape() == ImageGrid(n));  // the chain's image is first's
    CHECK(forge::Batched<float>(A, 1).domain_shape() == grid);
    CHECK(forge::Batched<float>(A, 2).domain_shape() == ImageGrid(2 * n));  // two images back to back
    CHECK(forge::VerticalStack<float>({U, A, U}).domain_shape() == grid);
    CHECK(forge::VerticalStack<float>({U, U}).domain_shape() == ImageGrid(n));
    CHECK(forge::WithNormal<float>(A, U).domain_shape() == grid);
    CHECK(forge::with_normal<float>(A, U)->domain_shape() == grid);
    CHECK(forge::NormalOf<float>(A).domain_shape() == grid);
    CHECK(forge::AdjointOf<float>(A).domain_shape() == ImageGrid(n));  // its domain is A's codomain
    CHECK(forge::StackedDiagonal<float>(complex_normal<float>(2 * n), 2).domain_shape() == ImageGrid(n));

    const uword nc = 3;
    const arma::cx_fvec maps = complex_normal<float>(n * nc);
    const forge::SENSE<float, ShapedScale> S(*A, maps, nc);
    CHECK(S.domain_shape() == grid);
    CHECK(forge::SENSE<float>(forge::OperatorPtr<float>(A), maps, nc).domain_shape() == grid);
    CHECK(forge::SENSE<float>(forge::OperatorPtr<float>(U), maps, nc).domain_shape() == ImageGrid(n));
    const arma::fvec fm = uniform<float>(n, -50, 50), t = arma::regspace<arma::fvec>(0, float(n - 1)) * 1e-4f;
    const forge::TimeSegmentation<float, ShapedScale> T(A, fm, t, 3);
    CHECK(T.domain_shape() == grid);
    // Composites of composites: SENSE around TimeSegmentation around the grid operator.
    const auto TS = std::make_shared<const forge::TimeSegmentation<float, ShapedScale>>(T);
    CHECK(forge::SENSE<float>(forge::OperatorPtr<float>(TS), maps, nc).domain_shape() == grid);

    // forge's grid operators inside the composites, and the penalty built from the composite's shape.
    const ImageGrid g2(8, 6);
    const arma::cx_fvec maps2 = complex_normal<float>(g2.n_pixels() * nc);
    const forge::SENSE<float, forge::Gfft<float>> SF(forge::Gfft<float>(g2), maps2, nc);
    CHECK(SF.domain_shape() == g2);
    const forge::Trajectory<float> k2(uniform<float>(40, -3.9, 3.9), uniform<float>(40, -2.9, 2.9),
                                      arma::fvec(40, arma::fill::zeros));
    const forge::Gnufft<float> N2(g2, k2);
    const forge::TimeSegmentation<float, forge::Gnufft<float>> TN(N2, uniform<float>(g2.n_pixels(), -50, 50),
                                                                  arma::regspace<arma::fvec>(0, 39) * 1e-4f, 2);
    CHECK(TN.domain_shape() == g2);
    CHECK(forge::SENSE<float>(forge::OperatorPtr<float>(forge::share(TN)), maps2, nc).domain_shape() == g2);
    const arma::cx_fvec v = complex_normal<float>(g2.n_pixels());
    const forge::QuadPenalty<float> RS(SF.domain_shape(), 0.2f), RP(8, 6, 1, 0.2f);
    CHECK(RS.penalty(v) == RP.penalty(v));
    CHECK(arma::all(RS.gradient(v) == RP.gradient(v)));

    // Multi-shot operators: a 6 x 4 x 4 image (Gnufft's oversampled axes at least its kernel width), 2 shots of 12
    // samples.
    const ImageGrid g3(6, 4, 4);
    const uword n2 = g3.n_pixels(), ns = 12, nshots = 2;
    const forge::PixelGeometry<float> px = forge::PixelGeometry<float>::on_grid(g3);
    // k within Gnufft's band of each axis ([-N/2, N/2]), shot s in column s
    const arma::fmat kx = arma::reshape(uniform<float>(ns * nshots, -1.9, 1.9), ns, nshots);
    const arma::fmat ky = arma::reshape(uniform<float>(ns * nshots, -1.9, 1.9), ns, nshots);
    const arma::fmat kz = arma::reshape(uniform<float>(ns * nshots, -1.9, 1.9), ns, nshots);
    const arma::fmat tt = arma::reshape(uniform<float>(ns * nshots, 0, 5e-3), ns, nshots);
    const arma::fvec FM = uniform<float>(n2, -30, 30);
    const arma::cx_fvec maps3 = complex_normal<float>(n2 * nc);
    const arma::fmat phases(n2, nshots, arma::fill::zeros);
    const forge::pcSENSE<float> P(kx, ky, kz, tt, px.x, px.y, px.z, FM, maps3, phases, nc);
    CHECK(P.domain_shape() == P.shot_operator(0).domain_shape());
    CHECK(P.domain_shape().n_pixels() == n2);
    const forge::pcSenseTimeSeg<float> PT(kx, ky, kz, tt, g3.nx, g3.ny, g3.nz, FM, maps3, phases, nc, 2);
    CHECK(PT.domain_shape() == g3);
    CHECK(PT.shot_operator(1).domain_shape() == g3);  // TimeSegmentation over the shot's Gnufft
}

TEST_CASE("QuadPenalty and TVPenalty from an ImageGrid equal the positional ones bit for bit and report the grid",
          "[geometry][penalty]") {
    FORGE_INFO_SEED();
    for (const ImageGrid& g : {ImageGrid(6, 5, 4), ImageGrid(9, 7), ImageGrid(11)}) {
        INFO(g.to_string());
        const arma::cx_fvec x = complex_normal<float>(g.n_pixels()), d = complex_normal<float>(g.n_pixels());
        const forge::QuadPenalty<float> Rg(g, 0.03f), Rp(g.nx, g.ny, g.nz, 0.03f);
        CHECK(Rg.grid() == g);
        CHECK(Rp.grid() == g);
        CHECK(Rg.penalty(x) == Rp.penalty(x));
        CHECK(arma::all(Rg.gradient(x) == Rp.gradient(x)));
        CHECK(Rg.denom(d, x) == Rp.denom(d, x));
        const forge::TVPenalty<double> Tg(g, 0.02, 0.1), Tp(g.nx, g.ny, g.nz, 0.02, 0.1);
        const arma::cx_vec xd = complex_normal<double>(g.n_pixels()), dd = complex_normal<double>(g.n_pixels());
        CHECK(Tg.grid() == g);
        CHECK(Tg.penalty(xd) == Tp.penalty(xd));
        CHECK(arma::all(Tg.gradient(xd) == Tp.gradient(xd)));
        CHECK(Tg.denom(dd, xd) == Tp.denom(dd, xd));
    }
    // From an operator's domain: QuadPenalty(A.domain_shape(), beta).
    const ShapedScale A(ImageGrid(5, 4, 3));
    const forge::QuadPenalty<float> R(A.domain_shape(), 0.1f);
    CHECK(R.grid() == ImageGrid(5, 4, 3));
    CHECK(R.n_pixels() == A.domain_size());
}

TEST_CASE("Penalties from an ImageGrid refuse a bad grid and name the vector of a wrong length",
          "[geometry][penalty]") {
    const ImageGrid g(4, 4, 2);
    const forge::QuadPenalty<float> R(g, 0.1f);
    const arma::cx_fvec shortX(31, arma::fill::zeros), x(32, arma::fill::zeros);
    CHECK_THROWS_AS(R.penalty(shortX), forge::invalid_argument);
    CHECK_THROWS_WITH(R.penalty(shortX), Contains("QuadPenalty::penalty: x has 31 entries, expected Nx*Ny*Nz = "
                                                  "4*4*2 = 32"));
    CHECK_THROWS_WITH(R.gradient(shortX), Contains("QuadPenalty::gradient: x has 31 entries"));
    CHECK_THROWS_WITH(R.denom(shortX, x), Contains("QuadPenalty::denom: ddir has 31 entries"));
    CHECK_THROWS_WITH(R.denom(x, shortX), Contains("QuadPenalty::denom: x has 31 entries"));
    const forge::TVPenalty<double> T(g, 0.1, 0.5);
    CHECK_THROWS_WITH(T.penalty(arma::cx_vec(33, arma::fill::zeros)), Contains("TVPenalty::penalty: x has 33 entries"));

    CHECK_THROWS_WITH(forge::QuadPenalty<float>(ImageGrid(4, 0, 2), 0.1f),
                      Contains("QuadPenalty") && Contains("4 x 0 x 2"));
    CHECK_THROWS_WITH(forge::TVPenalty<float>(ImageGrid(0, 4), 0.1f, 0.5f),
                      Contains("TVPenalty") && Contains("0 x 4 x 1"));
    CHECK_THROWS_WITH(forge::QuadPenalty<float>(g, -1.0f), Contains("QuadPenalty: beta must be finite and >= 0"));
    CHECK_THROWS_WITH(forge::TVPenalty<float>(g, 0.1f, 0.0f), Contains("TVPenalty: delta must be finite and > 0"));
    // The positional constructors keep naming the argument.
    CHECK_THROWS_WITH(forge::QuadPenalty<float>(4, 0, 2, 0.1f), Contains("QuadPenalty: Ny must be at least 1, got 0"));
}

TEST_CASE("pcSENSE and pcSenseTimeSeg from the geometry types are the positional operators, bit for bit, and name "
          "bad shots",
          "[geometry][operators]") {
    FORGE_INFO_SEED();
    const ImageGrid grid(6, 4, 4);
    const uword n2 = grid.n_pixels(), ns = 12, nshots = 3, nc = 2;
    const arma::fvec fm = uniform<float>(n2, -80, 80);
    const forge::PixelGeometry<float> px = forge::PixelGeometry<float>::on_grid(grid, fm);
    std::vector<forge::Trajectory<float>> shots;
    arma::fmat kx(ns, nshots), ky(ns, nshots), kz(ns, nshots), t(ns, nshots);
    for (uword s = 0; s < nshots; ++s) {
        shots.emplace_back(uniform<float>(ns, -1.9, 1.9), uniform<float>(ns, -1.9, 1.9), uniform<float>(ns, -1.9, 1.9),
                           uniform<float>(ns, 0, 0.005));
        kx.col(s) = shots[s].kx, ky.col(s) = shots[s].ky, kz.col(s) = shots[s].kz, t.col(s) = shots[s].t;
    }
    const arma::cx_fvec maps = complex_normal<float>(n2 * nc), x = complex_normal<float>(n2);
    const arma::fmat phases = arma::reshape(uniform<float>(n2 * nshots, -3, 3), n2, nshots);
    const arma::cx_fvec y = complex_normal<float>(ns * nshots * nc);

    const forge::pcSENSE<float> P(kx, ky, kz, t, px.x, px.y, px.z, fm, maps, phases, nc);
    const forge::pcSENSE<float> G(shots, px, maps, phases, nc);
    CHECK(arma::all(arma::cx_fvec(G * x) == arma::cx_fvec(P * x)));
    CHECK(arma::all(arma::cx_fvec(G / y) == arma::cx_fvec(P / y)));

    const forge::pcSenseTimeSeg<float> PT(kx, ky, kz, t, grid.nx, grid.ny, grid.nz, fm, maps, phases, nc, 3);
    const forge::pcSenseTimeSeg<float> GT(shots, grid, fm, maps, phases, nc, 3);
    CHECK(arma::all(arma::cx_fvec(GT * x) == arma::cx_fvec(PT * x)));
    CHECK(arma::all(arma::cx_fvec(GT / y) == arma::cx_fvec(PT / y)));
    CHECK(GT.domain_shape() == grid);

    // a field-free pixel geometry: the exact DFT without field correction
    const forge::pcSENSE<float> Z(shots, forge::PixelGeometry<float>::on_grid(grid), maps, phases, nc);
    const forge::pcSENSE<float> PZ(kx, ky, kz, t, px.x, px.y, px.z, arma::fvec(n2, arma::fill::zeros), maps, phases,
                                   nc);
    CHECK(arma::all(arma::cx_fvec(Z * x) == arma::cx_fvec(PZ * x)));

    std::vector<forge::Trajectory<float>> bad = shots;
    bad[1].kx = uniform<float>(ns + 1, -1, 1);
    CHECK_THROWS_WITH(forge::pcSENSE<float>(bad, px, maps, phases, nc), Contains("pcSENSE") && Contains("kx"));
    bad = shots;
    bad[2] = forge::Trajectory<float>(uniform<float>(ns - 2, -1, 1), uniform<float>(ns - 2, -1, 1),
                                      uniform<float>(ns - 2, -1, 1), uniform<float>(ns - 2, 0, 0.005));
    CHECK_THROWS_WITH(forge::pcSenseTimeSeg<float>(bad, grid, fm, maps, phases, nc, 3),
                      Contains("pcSenseTimeSeg") && Contains("shot 2") && Contains("shot 0"));
    bad = shots;
    bad[1].t.reset();
    CHECK_THROWS_WITH(forge::pcSENSE<float>(bad, px, maps, phases, nc), Contains("shot 1") && Contains("times"));
    CHECK_THROWS_WITH(forge::pcSENSE<float>(std::vector<forge::Trajectory<float>>{}, px, maps, phases, nc),
                      Contains("no shots"));
}
