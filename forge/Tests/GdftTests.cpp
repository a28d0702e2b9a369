// Tests of Gdft and GdftR2 on the CPU against references written here, independently of forge:
// float64 brute-force sums, FFTW on Cartesian grids, an analytic constant-field case, an independent
// finite-difference gradient, and adjointness. Fresh random inputs every run (FORGE_TEST_SEED replays).
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include <fftw3.h>
#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

namespace {

using forge::uword;
using cxd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

template <typename T1>
double tol() {
    return std::is_same<T1, float>::value ? 1e-5 : 1e-12;
}

// Sample/pixel geometry in T1 (what the operator sees). The references read the very same values,
// converted to double, so only the operator's arithmetic is under test.
template <typename T1>
struct Geometry {
    uword nx = 1, ny = 1, nz = 1;
    arma::Col<T1> kx, ky, kz, t;   // n1 entries
    arma::Col<T1> ix, iy, iz, FM;  // n2 entries
    uword n1() const { return kx.n_elem; }
    uword n2() const { return ix.n_elem; }
};

// Pixel positions of an nx x ny x nz grid, x fastest, in FOV units: (x - N/2) / N.
template <typename T1>
void set_grid(Geometry<T1>& g, uword nx, uword ny, uword nz) {
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    const uword n2 = nx * ny * nz;
    g.ix.set_size(n2);
    g.iy.set_size(n2);
    g.iz.set_size(n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                g.ix[i] = T1((double(x) - double(nx / 2)) / double(nx));
                g.iy[i] = T1((double(y) - double(ny / 2)) / double(ny));
                g.iz[i] = T1((double(z) - double(nz / 2)) / double(nz));
            }
}

// Random 3D trajectory over the grid's k-space extent, readout times in [0, 10 ms], and a random
// field map of up to +-60 Hz (rad/s) so that FM t reaches a few radians.
template <typename T1>
Geometry<T1> random_geometry(uword nx, uword ny, uword nz, uword n1) {
    Geometry<T1> g;
    set_grid(g, nx, ny, nz);
    g.kx = forge_test::uniform<T1>(n1, -0.5 * nx, 0.5 * nx);
    g.ky = forge_test::uniform<T1>(n1, -0.5 * ny, 0.5 * ny);
    g.kz = forge_test::uniform<T1>(n1, -0.5 * nz, 0.5 * nz);
    g.t = forge_test::uniform<T1>(n1, 0.0, 10e-3);
    g.FM = forge_test::uniform<T1>(nx * ny * nz, -2 * kPi * 60, 2 * kPi * 60);
    return g;
}

template <typename T1>
arma::vec d(const arma::Col<T1>& v) {
    return arma::conv_to<arma::vec>::from(v);
}
template <typename T1>
arma::cx_vec d(const arma::Col<std::complex<T1>>& v) {
    return arma::conv_to<arma::cx_vec>::from(v);
}

double sinc_ref(double x) { return x == 0.0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

// Gradient maps for the float64 brute force (may be empty: plain Gdft).
struct RefGrads {
    arma::vec gx, gy, gz;
    double nx = 1, ny = 1, nz = 1;
    bool on() const { return gx.n_elem > 0; }
};

// Float64 brute force: E(j,k) = exp(-i(2 pi k_j.r_k + FM_k t_j)) [* B(j,k)];
// forward s = E m, adjoint m = E^H s.
template <typename T1>
cxd entry(const Geometry<T1>& g, const RefGrads& r, uword j, uword k) {
    const double ph = 2 * kPi *
                          (double(g.kx[j]) * double(g.ix[k]) + double(g.ky[j]) * double(g.iy[k]) +
                           double(g.kz[j]) * double(g.iz[k])) +
                      double(g.FM[k]) * double(g.t[j]);
    cxd e(std::cos(ph), -std::sin(ph));
    if (r.on()) {
        const double tj = g.t[j];
        e *= sinc_ref(double(g.kx[j]) / r.nx + r.gx[k] * tj) * sinc_ref(double(g.ky[j]) / r.ny + r.gy[k] * tj) *
             sinc_ref(double(g.kz[j]) / r.nz + r.gz[k] * tj);
    }
    return e;
}
template <typename T1>
arma::cx_vec brute_forward(const Geometry<T1>& g, const RefGrads& r, const arma::cx_vec& m) {
    arma::cx_vec s(g.n1(), arma::fill::zeros);
    for (uword j = 0; j < g.n1(); ++j)
        for (uword k = 0; k < g.n2(); ++k) s[j] += entry(g, r, j, k) * m[k];
    return s;
}
template <typename T1>
arma::cx_vec brute_adjoint(const Geometry<T1>& g, const RefGrads& r, const arma::cx_vec& s) {
    arma::cx_vec m(g.n2(), arma::fill::zeros);
    for (uword k = 0; k < g.n2(); ++k)
        for (uword j = 0; j < g.n1(); ++j) m[k] += std::conj(entry(g, r, j, k)) * s[j];
    return m;
}

// Independent finite differences of FM on the nx x ny x nz grid (x fastest), in cycles/s per voxel:
// interior central differences, one-sided at the faces, 0 along an axis of length 1, no wrapping.
RefGrads ref_gradients(const arma::vec& fm, uword nx, uword ny, uword nz) {
    RefGrads r;
    r.nx = double(nx);
    r.ny = double(ny);
    r.nz = double(nz);
    const arma::cube c(const_cast<double*>(fm.memptr()), nx, ny, nz, /*copy_aux_mem=*/true);
    arma::cube gx(nx, ny, nz, arma::fill::zeros), gy(nx, ny, nz, arma::fill::zeros), gz(nx, ny, nz, arma::fill::zeros);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                if (nx > 1) {
                    const uword lo = x == 0 ? 0 : x - 1, hi = x == nx - 1 ? x : x + 1;
                    gx(x, y, z) = (c(hi, y, z) - c(lo, y, z)) / double(hi - lo);
                }
                if (ny > 1) {
                    const uword lo = y == 0 ? 0 : y - 1, hi = y == ny - 1 ? y : y + 1;
                    gy(x, y, z) = (c(x, hi, z) - c(x, lo, z)) / double(hi - lo);
                }
                if (nz > 1) {
                    const uword lo = z == 0 ? 0 : z - 1, hi = z == nz - 1 ? z : z + 1;
                    gz(x, y, z) = (c(x, y, hi) - c(x, y, lo)) / double(hi - lo);
                }
            }
    r.gx = arma::vectorise(gx) / (2 * kPi);
    r.gy = arma::vectorise(gy) / (2 * kPi);
    r.gz = arma::vectorise(gz) / (2 * kPi);
    return r;
}

// Centred DFT of an nx x ny x nz array (x fastest) with FFTW in double:
// fftshift(fft(ifftshift(a))) for sign = FFTW_FORWARD (unnormalised), likewise with FFTW_BACKWARD.
arma::cx_vec centred_fftw(const arma::cx_vec& a, uword nx, uword ny, uword nz, int sign) {
    const uword n = nx * ny * nz;
    auto shifted = [&](uword i, bool inverse_shift) {
        // Even sizes: ifftshift == fftshift == a circular shift by N/2 along each axis.
        (void)inverse_shift;
        const uword x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        return ((x + nx / 2) % nx) + nx * (((y + ny / 2) % ny) + ny * ((z + nz / 2) % nz));
    };
    arma::cx_vec in(n), out(n), res(n);
    for (uword i = 0; i < n; ++i) in[i] = a[shifted(i, true)];
    fftw_plan p = fftw_plan_dft_3d(int(nz), int(ny), int(nx), reinterpret_cast<fftw_complex*>(in.memptr()),
                                   reinterpret_cast<fftw_complex*>(out.memptr()), sign, FFTW_ESTIMATE);
    REQUIRE(p != nullptr);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (uword i = 0; i < n; ++i) res[i] = out[shifted(i, false)];
    return res;
}

template <typename T1>
using CxVec = arma::Col<std::complex<T1>>;

template <typename T1>
std::unique_ptr<forge::Gdft<T1>> make_gdft(const Geometry<T1>& g) {
    return std::make_unique<forge::Gdft<T1>>(g.n1(), g.n2(), g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t);
}
template <typename T1>
std::unique_ptr<forge::GdftR2<T1>> make_gdftr2(const Geometry<T1>& g) {
    return std::make_unique<forge::GdftR2<T1>>(g.n1(), g.n2(), g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t, g.nx,
                                               g.ny, g.nz);
}

// Message matcher: the argument's name appears as a word in the exception text.
Catch::Matchers::StdString::RegexMatcher names(const std::string& arg) {
    return Catch::Matches(".*\\b" + arg + "\\b.*");
}

}  // namespace

#define CHECK_BAD_ARG(expr, matcher)                    \
    do {                                                \
        CHECK_THROWS_AS(expr, forge::invalid_argument); \
        CHECK_THROWS_WITH(expr, matcher);               \
    } while (0)

// ============================================================================ brute force
TEMPLATE_TEST_CASE("Gdft: forward and adjoint match a float64 brute-force sum", "[gdft][operators]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const auto G = make_gdft(g);
    REQUIRE(G->n1() == 300);
    REQUIRE(G->n2() == 256);
    CHECK_FALSE(G->has_gradients());
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());

    const CxVec<T1> Gx = *G * x;
    const CxVec<T1> Gty = *G / y;
    REQUIRE(Gx.n_elem == g.n1());
    REQUIRE(Gty.n_elem == g.n2());
    const double ef = forge_test::rel_error(Gx, brute_forward(g, RefGrads{}, d(x)));
    const double ea = forge_test::rel_error(Gty, brute_adjoint(g, RefGrads{}, d(y)));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());

    // The forgeCol overloads compute the same thing.
    const forgeCol<forgeComplex<T1>> fx(x), fy(y);
    CHECK(forge_test::rel_error((*G * fx).to_arma(), Gx) == 0.0);
    CHECK(forge_test::rel_error((*G / fy).to_arma(), Gty) == 0.0);

    // Two vectors back to back through the batch entry points give the two single results.
    const CxVec<T1> x2 = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> xb = arma::join_cols(x, x2);
    const CxVec<T1> yb = arma::join_cols(y, y);
    const CxVec<T1> fb = G->forward_batch(forgeCol<forgeComplex<T1>>(xb), 2).to_arma();
    const CxVec<T1> ab = G->adjoint_batch(forgeCol<forgeComplex<T1>>(yb), 2).to_arma();
    REQUIRE(fb.n_elem == 2 * g.n1());
    REQUIRE(ab.n_elem == 2 * g.n2());
    CHECK(forge_test::rel_error(CxVec<T1>(fb.head(g.n1())), Gx) < tol<T1>());
    CHECK(forge_test::rel_error(CxVec<T1>(fb.tail(g.n1())), brute_forward(g, RefGrads{}, d(x2))) < tol<T1>());
    CHECK(forge_test::rel_error(CxVec<T1>(ab.tail(g.n2())), Gty) < tol<T1>());
}

TEMPLATE_TEST_CASE("GdftR2: forward and adjoint match a float64 brute-force sum with the sinc factor",
                   "[gdftr2][operators]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());

    SECTION("gradients computed from the field map") {
        const auto G = make_gdftr2(g);
        CHECK(G->has_gradients());
        const RefGrads r = ref_gradients(d(g.FM), g.nx, g.ny, g.nz);
        // The random field map makes the sinc factor matter: it is far from 1 for many pairs.
        REQUIRE(arma::max(arma::abs(r.gx)) * 10e-3 > 0.2);
        const double ef = forge_test::rel_error(CxVec<T1>(*G * x), brute_forward(g, r, d(x)));
        const double ea = forge_test::rel_error(CxVec<T1>(*G / y), brute_adjoint(g, r, d(y)));
        INFO("forward rel error " << ef << ", adjoint rel error " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        // ... and differs clearly from plain Gdft on the same geometry.
        CHECK(forge_test::rel_error(CxVec<T1>(*G * x), CxVec<T1>(*make_gdft(g) * x)) > 1e-2);
    }
    SECTION("gradients given by the caller") {
        RefGrads r;
        r.nx = double(g.nx);
        r.ny = double(g.ny);
        r.nz = double(g.nz);
        const arma::Col<T1> gx = forge_test::uniform<T1>(g.n2(), -40, 40);
        const arma::Col<T1> gy = forge_test::uniform<T1>(g.n2(), -40, 40);
        const arma::Col<T1> gz = forge_test::uniform<T1>(g.n2(), -40, 40);
        r.gx = d(gx);
        r.gy = d(gy);
        r.gz = d(gz);
        const forge::GdftR2<T1> G(g.n1(), g.n2(), g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t, gx, gy, gz, g.nx, g.ny,
                                  g.nz);
        const double ef = forge_test::rel_error(CxVec<T1>(G * x), brute_forward(g, r, d(x)));
        const double ea = forge_test::rel_error(CxVec<T1>(G / y), brute_adjoint(g, r, d(y)));
        INFO("forward rel error " << ef << ", adjoint rel error " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        const forgeCol<forgeComplex<T1>> fx(x);
        CHECK(forge_test::rel_error((G * fx).to_arma(), CxVec<T1>(G * x)) == 0.0);
    }
}

// ============================================================================ adjointness
TEMPLATE_TEST_CASE("Gdft and GdftR2: adjoint is the conjugate transpose of forward", "[gdft][gdftr2][operators]", float,
                   double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const auto g = random_geometry<T1>(8, 8, 4, 300);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());
    auto check_adjoint = [&](const forge::DftOperator<T1>& G, const char* name) {
        const arma::cx_vec Gx = d(CxVec<T1>(G * x));
        const arma::cx_vec Gty = d(CxVec<T1>(G / y));
        const cxd lhs = arma::cdot(Gx, d(y));   // <Gx, y>
        const cxd rhs = arma::cdot(d(x), Gty);  // <x, G^H y>
        const double err = std::abs(lhs - rhs) / (arma::norm(Gx) * arma::norm(d(y)));
        INFO(name << ": |<Gx,y> - <x,G^H y>| / (|Gx||y|) = " << err);
        CHECK(err < tol<T1>());
        CHECK(arma::norm(Gx) > 0.0);
    };
    check_adjoint(*make_gdft(g), "Gdft");
    check_adjoint(*make_gdftr2(g), "GdftR2");
}

// ============================================================================ conventions
TEMPLATE_TEST_CASE("Gdft: Cartesian grid with zero field map equals the centred FFTW transform",
                   "[gdft][operators][conventions]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    struct Dims {
        uword nx, ny, nz;
    };
    for (const Dims dims : {Dims{16, 12, 1}, Dims{8, 6, 4}}) {
        INFO("grid " << dims.nx << " x " << dims.ny << " x " << dims.nz);
        Geometry<T1> g;
        set_grid(g, dims.nx, dims.ny, dims.nz);
        const uword n = dims.nx * dims.ny * dims.nz;
        // Sample j sits on the Cartesian grid point (u, v, w) with j = u + nx (v + ny w), k = index - N/2.
        g.kx.set_size(n);
        g.ky.set_size(n);
        g.kz.set_size(n);
        for (uword w = 0; w < dims.nz; ++w)
            for (uword v = 0; v < dims.ny; ++v)
                for (uword u = 0; u < dims.nx; ++u) {
                    const uword j = u + dims.nx * (v + dims.ny * w);
                    g.kx[j] = T1(double(u) - double(dims.nx / 2));
                    g.ky[j] = T1(double(v) - double(dims.ny / 2));
                    g.kz[j] = T1(double(w) - double(dims.nz / 2));
                }
        g.FM.zeros(n);
        g.t = forge_test::uniform<T1>(n, 0.0, 10e-3);  // times do not matter without a field map
        const auto G = make_gdft(g);
        const CxVec<T1> x = forge_test::complex_normal<T1>(n);
        const CxVec<T1> y = forge_test::complex_normal<T1>(n);
        const double ef =
            forge_test::rel_error(CxVec<T1>(*G * x), centred_fftw(d(x), dims.nx, dims.ny, dims.nz, FFTW_FORWARD));
        const double ea =
            forge_test::rel_error(CxVec<T1>(*G / y), centred_fftw(d(y), dims.nx, dims.ny, dims.nz, FFTW_BACKWARD));
        INFO("forward vs FFTW_FORWARD " << ef << ", adjoint vs FFTW_BACKWARD " << ea);
        CHECK(ef < tol<T1>());
        CHECK(ea < tol<T1>());
        // The opposite sign convention is far off (the test pins the sign, not just magnitudes).
        CHECK(forge_test::rel_error(CxVec<T1>(*G * x), centred_fftw(d(x), dims.nx, dims.ny, dims.nz, FFTW_BACKWARD)) >
              0.1);
    }
}

TEMPLATE_TEST_CASE("Gdft: a constant field map f0 multiplies the data by exp(-i f0 t)",
                   "[gdft][operators][conventions]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    auto g = random_geometry<T1>(8, 8, 4, 300);
    const double f0 = double(T1(forge_test::uniform<double>(1, 2 * kPi * 20, 2 * kPi * 80)[0]));  // rad/s
    INFO("f0 = " << f0 << " rad/s");
    g.FM.zeros();
    const auto G0 = make_gdft(g);
    g.FM.fill(T1(f0));
    const auto Gf = make_gdft(g);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());
    arma::cx_vec ph(g.n1());
    for (uword j = 0; j < g.n1(); ++j) ph[j] = std::polar(1.0, -f0 * double(g.t[j]));
    REQUIRE(arma::max(d(g.t)) * f0 > 1.0);  // the phase ramp spans more than a radian

    // Forward: data of the shifted map = data of the zero map times exp(-i f0 t_j).
    const arma::cx_vec ref_f = d(CxVec<T1>(*G0 * x)) % ph;
    const double ef = forge_test::rel_error(CxVec<T1>(*Gf * x), ref_f);
    // Adjoint: G_f0^H y = G_0^H (y exp(+i f0 t)).
    const arma::cx_vec yd = d(y) % arma::conj(ph);
    const double ea = forge_test::rel_error(CxVec<T1>(*Gf / y), d(CxVec<T1>(*G0 / arma::conv_to<CxVec<T1>>::from(yd))));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());
    // Also against the brute force directly (guards against both operators sharing one error).
    CHECK(forge_test::rel_error(CxVec<T1>(*Gf * x), brute_forward(g, RefGrads{}, d(x))) < tol<T1>());
}

TEMPLATE_TEST_CASE("GdftR2: zero field map equals Gdft times the per-sample voxel sinc", "[gdftr2][operators]", float,
                   double) {
    // With FM = 0 the gradient maps vanish and B(j,k) = sincPG(kx_j/numX) sincPG(ky_j/numY) sincPG(kz_j/numZ)
    // no longer depends on the pixel: GdftR2 = diag(B_j) Gdft. For k = 0 samples (B = 1) they agree exactly.
    using T1 = TestType;
    FORGE_INFO_SEED();
    auto g = random_geometry<T1>(8, 8, 4, 300);
    g.FM.zeros();
    g.kx[0] = g.ky[0] = g.kz[0] = T1(0);  // the k-space centre: B = 1
    const auto G = make_gdft(g);
    const auto R = make_gdftr2(g);
    arma::Col<T1> gx, gy, gz;
    forge::GdftR2<T1>::field_map_gradients(g.FM, g.nx, g.ny, g.nz, gx, gy, gz);
    CHECK(arma::norm(d(gx)) + arma::norm(d(gy)) + arma::norm(d(gz)) == 0.0);

    arma::vec b(g.n1());
    for (uword j = 0; j < g.n1(); ++j)
        b[j] = sinc_ref(double(g.kx[j]) / g.nx) * sinc_ref(double(g.ky[j]) / g.ny) * sinc_ref(double(g.kz[j]) / g.nz);
    const CxVec<T1> x = forge_test::complex_normal<T1>(g.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(g.n1());
    const CxVec<T1> Rx = *R * x, Gx = *G * x;
    const double ef = forge_test::rel_error(Rx, arma::cx_vec(d(Gx) % b));
    const double ea =
        forge_test::rel_error(CxVec<T1>(*R / y), d(CxVec<T1>(*G / arma::conv_to<CxVec<T1>>::from(d(y) % b))));
    INFO("forward rel error " << ef << ", adjoint rel error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());
    CHECK(std::abs(cxd(Rx[0]) - cxd(Gx[0])) <= tol<T1>() * std::abs(cxd(Gx[0])));
}

// ============================================================================ gradient maps
TEMPLATE_TEST_CASE("GdftR2: field-map gradients match an independent finite difference", "[gdftr2][operators]", float,
                   double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const double rtol = std::is_same<T1, float>::value ? 1e-6 : 1e-14;
    struct Dims {
        uword nx, ny, nz;
    };
    for (const Dims dm : {Dims{5, 4, 3}, Dims{6, 5, 1}, Dims{1, 7, 2}, Dims{2, 1, 1}, Dims{1, 1, 1}}) {
        INFO("grid " << dm.nx << " x " << dm.ny << " x " << dm.nz);
        const uword n = dm.nx * dm.ny * dm.nz;
        // Random map: compare with the independent differences.
        const arma::Col<T1> fm = forge_test::uniform<T1>(n, -400, 400);
        arma::Col<T1> gx, gy, gz;
        forge::GdftR2<T1>::field_map_gradients(fm, dm.nx, dm.ny, dm.nz, gx, gy, gz);
        REQUIRE(gx.n_elem == n);
        REQUIRE(gy.n_elem == n);
        REQUIRE(gz.n_elem == n);
        const RefGrads r = ref_gradients(d(fm), dm.nx, dm.ny, dm.nz);
        const double scale = 800 / (2 * kPi);
        CHECK(arma::max(arma::abs(d(gx) - r.gx)) <= rtol * scale);
        CHECK(arma::max(arma::abs(d(gy) - r.gy)) <= rtol * scale);
        CHECK(arma::max(arma::abs(d(gz) - r.gz)) <= rtol * scale);
        if (dm.nx == 1) CHECK(arma::norm(d(gx)) == 0.0);
        if (dm.ny == 1) CHECK(arma::norm(d(gy)) == 0.0);
        if (dm.nz == 1) CHECK(arma::norm(d(gz)) == 0.0);

        // A linear ramp a x + b y + c z: every difference, faces included, is exactly (a, b, c)/(2 pi).
        // Any wrap into the next row or slice would break this at the faces.
        const double a = 13.0, bb = -7.0, c = 29.0;
        arma::Col<T1> ramp(n);
        for (uword z = 0; z < dm.nz; ++z)
            for (uword y = 0; y < dm.ny; ++y)
                for (uword x = 0; x < dm.nx; ++x) ramp[x + dm.nx * (y + dm.ny * z)] = T1(a * x + bb * y + c * z);
        forge::GdftR2<T1>::field_map_gradients(ramp, dm.nx, dm.ny, dm.nz, gx, gy, gz);
        const double ex = dm.nx > 1 ? a / (2 * kPi) : 0.0, ey = dm.ny > 1 ? bb / (2 * kPi) : 0.0,
                     ez = dm.nz > 1 ? c / (2 * kPi) : 0.0;
        CHECK(arma::max(arma::abs(d(gx) - ex)) <= rtol * 10);
        CHECK(arma::max(arma::abs(d(gy) - ey)) <= rtol * 10);
        CHECK(arma::max(arma::abs(d(gz) - ez)) <= rtol * 10);
    }
    // Wrong FM length for the grid.
    arma::Col<T1> gx, gy, gz;
    CHECK_BAD_ARG(forge::GdftR2<T1>::field_map_gradients(arma::Col<T1>(11), 3, 2, 2, gx, gy, gz), names("FM"));
}

// ============================================================================ bad input
TEMPLATE_TEST_CASE("Gdft and GdftR2: bad input throws forge::invalid_argument naming the argument",
                   "[gdft][gdftr2][operators][errors]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const uword nx = 4, ny = 3, nz = 2, n1 = 10, n2 = nx * ny * nz;
    const auto g = random_geometry<T1>(nx, ny, nz, n1);
    const arma::Col<T1> gxyz(n2, arma::fill::zeros);
    using Col = arma::Col<T1>;
    struct Args {
        uword n1, n2;
        Col kx, ky, kz, ix, iy, iz, FM, t;
    };
    const Args good{n1, n2, g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t};
    auto gdft = [](const Args& a) { forge::Gdft<T1>(a.n1, a.n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t); };
    auto gdftr2 = [&](const Args& a) {
        forge::GdftR2<T1>(a.n1, a.n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, nx, ny, nz);
    };
    auto gdftr2g = [&](const Args& a) {
        forge::GdftR2<T1>(a.n1, a.n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, gxyz, gxyz, gxyz, nx, ny, nz);
    };
    REQUIRE_NOTHROW(gdft(good));
    REQUIRE_NOTHROW(gdftr2(good));
    REQUIRE_NOTHROW(gdftr2g(good));

    struct Field {
        const char* name;
        Col Args::*member;
        bool per_sample;
    };
    const Field fields[] = {{"kx", &Args::kx, true},  {"ky", &Args::ky, true},  {"kz", &Args::kz, true},
                            {"t", &Args::t, true},    {"ix", &Args::ix, false}, {"iy", &Args::iy, false},
                            {"iz", &Args::iz, false}, {"FM", &Args::FM, false}};
    const std::function<void(const Args&)> ctors[] = {gdft, gdftr2, gdftr2g};
    for (const auto& ctor : ctors) {
        for (const Field& f : fields) {
            INFO("argument " << f.name);
            // Wrong length: names the argument and the size it must match.
            Args a = good;
            a.*f.member = Col((a.*f.member).n_elem + 1, arma::fill::zeros);
            CHECK_BAD_ARG(ctor(a), names(f.name) && names(f.per_sample ? "n1" : "n2"));
            // NaN and Inf values.
            for (T1 bad : {std::numeric_limits<T1>::quiet_NaN(), std::numeric_limits<T1>::infinity(),
                           -std::numeric_limits<T1>::infinity()}) {
                Args b = good;
                (b.*f.member)[b.n1 > 3 ? 3 : 0] = bad;
                CHECK_BAD_ARG(ctor(b), names(f.name));
            }
        }
        // n1 = 0 and n2 = 0 (with matching empty arrays, so that the count itself is the complaint).
        Args z1 = good;
        z1.n1 = 0;
        z1.kx.reset();
        z1.ky.reset();
        z1.kz.reset();
        z1.t.reset();
        CHECK_BAD_ARG(ctor(z1), names("n1"));
        Args z2 = good;
        z2.n2 = 0;
        z2.ix.reset();
        z2.iy.reset();
        z2.iz.reset();
        z2.FM.reset();
        CHECK_BAD_ARG(ctor(z2), names("n2"));
    }

    // GdftR2: the grid must hold n2 pixels; grid sizes of 0; gradient maps of the wrong length or not finite.
    const Args& a = good;
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, nx, ny, nz + 1),
                  names("n2") && names("numZ"));
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, 0, ny, nz), names("numX"));
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, gxyz, gxyz, gxyz, nx + 1, ny,
                                    nz),
                  names("n2"));
    const Col shortG(n2 - 1, arma::fill::zeros);
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, shortG, gxyz, gxyz, nx, ny,
                                    nz),
                  names("Gx") && names("n2"));
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, gxyz, shortG, gxyz, nx, ny,
                                    nz),
                  names("Gy"));
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, gxyz, gxyz, shortG, nx, ny,
                                    nz),
                  names("Gz"));
    Col nanG = gxyz;
    nanG[1] = std::numeric_limits<T1>::quiet_NaN();
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, a.kx, a.ky, a.kz, a.ix, a.iy, a.iz, a.FM, a.t, gxyz, nanG, gxyz, nx, ny,
                                    nz),
                  names("Gy"));

    // Operators: input of the wrong length names the size it must have.
    const auto G = make_gdft(g);
    const auto R = make_gdftr2(g);
    for (const forge::DftOperator<T1>* op :
         {static_cast<const forge::DftOperator<T1>*>(G.get()), static_cast<const forge::DftOperator<T1>*>(R.get())}) {
        CHECK_BAD_ARG(*op * CxVec<T1>(n1), names("n2"));  // an image has n2 entries
        CHECK_BAD_ARG(*op / CxVec<T1>(n2), names("n1"));  // k-space data has n1 entries
        CHECK_BAD_ARG(*op * forgeCol<forgeComplex<T1>>(n2 + 1), names("n2"));
        CHECK_BAD_ARG(*op / forgeCol<forgeComplex<T1>>(n1 - 1), names("n1"));
        CHECK_BAD_ARG(op->forward_batch(forgeCol<forgeComplex<T1>>(2 * n2 + 1), 2), names("n2"));
        CHECK_BAD_ARG(op->adjoint_batch(forgeCol<forgeComplex<T1>>(n1), 2), names("n1"));
        CHECK_NOTHROW(*op * CxVec<T1>(n2, arma::fill::zeros));
    }
}

// ============================================================================ size arithmetic
#include "forge/Operators/dft/CudaDftPipeline.h"

TEMPLATE_TEST_CASE("Gdft and GdftR2: batch and grid sizes whose product wraps throw instead of crashing",
                   "[gdft][gdftr2][operators][errors][sizes]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const uword nx = 4, ny = 4, nz = 2, n1 = 12;
    const auto g = random_geometry<T1>(nx, ny, nz, n1);
    const auto G = make_gdft(g);
    // n2 * nbatch = 32 * 2^59 wraps to 0, which an empty input would match.
    const uword nb = uword(1) << 59;
    CHECK_BAD_ARG(G->forward_batch(forgeCol<forgeComplex<T1>>(), nb), names("nbatch") && names("n2"));
    CHECK_BAD_ARG(G->adjoint_batch(forgeCol<forgeComplex<T1>>(), uword(1) << 62), names("nbatch") && names("n1"));
    CHECK_BAD_ARG(make_gdftr2(g)->forward_batch(forgeCol<forgeComplex<T1>>(), nb), names("nbatch"));
    // 32 * (2^63 + 2) wraps to exactly 64, the input's length.
    CHECK_BAD_ARG(G->forward_batch(forgeCol<forgeComplex<T1>>(64), (uword(1) << 63) + 2), names("nbatch"));

    // A grid of 64 x (2^58 + 1) x 1 "holds" 64 pixels in wrapped arithmetic.
    const uword wy = (uword(1) << 58) + 1, n2 = 64;
    const auto w = random_geometry<T1>(64, 1, 1, n1);
    REQUIRE(w.n2() == n2);
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, w.kx, w.ky, w.kz, w.ix, w.iy, w.iz, w.FM, w.t, 64, wy, 1),
                  names("numY") && Catch::Contains("288230376151711745"));
    const arma::Col<T1> z(n2, arma::fill::zeros);
    CHECK_BAD_ARG(forge::GdftR2<T1>(n1, n2, w.kx, w.ky, w.kz, w.ix, w.iy, w.iz, w.FM, w.t, z, z, z, 64, wy, 1),
                  names("numY"));
    arma::Col<T1> gx, gy, gz;
    CHECK_BAD_ARG(forge::GdftR2<T1>::field_map_gradients(w.FM, 64, wy, 1, gx, gy, gz), names("numY"));
}

TEST_CASE("CudaDftPipeline refuses sample and pixel counts its 32-bit kernel indices cannot hold",
          "[gdft][gpu-limits][errors][sizes]") {
    using forge::cuda::CudaDftPipeline;
    const uword max = CudaDftPipeline::kMaxLength;
    // Padded to whole pairs of 256-thread tiles, the largest allowed length still fits an int.
    CHECK(max + 511 <= uword(std::numeric_limits<int>::max()));
    CHECK((max + 511) / 512 * 512 <= uword(std::numeric_limits<int>::max()));
    CHECK_NOTHROW(CudaDftPipeline::check_sizes("Gdft", max, max));
    CHECK_THROWS_AS(CudaDftPipeline::check_sizes("Gdft", max + 1, 1), forge::invalid_argument);
    CHECK_THROWS_WITH(CudaDftPipeline::check_sizes("Gdft", max + 1, 1),
                      Catch::Contains("Gdft: n1 (k-space samples) = 2147483137 exceeds 2147483136"));
    CHECK_THROWS_WITH(CudaDftPipeline::check_sizes("GdftR2", 1, uword(1) << 31),
                      Catch::Contains("n2 (pixels) = 2147483648 exceeds 2147483136"));
}

// ============================================================================ phase range
TEMPLATE_TEST_CASE("Gdft and GdftR2: phases beyond what the precision evaluates accurately are refused",
                   "[gdft][gdftr2][operators][errors][precision]", float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    const double limit = forge::DftOperator<T1>::kMaxPhaseTurns;
    const std::string lim = std::is_same<T1, float>::value ? "4096 (2^12) turns" : "2199023255552 (2^41) turns";
    auto g = random_geometry<T1>(8, 8, 2, 40);
    REQUIRE_NOTHROW(make_gdft(g));
    // k far outside cycles/FOV (e.g. in rad/m, or a scaling error): 1e8 cycles/FOV in float, 1e13 in double.
    auto bad = g;
    bad.kx[5] = T1(std::is_same<T1, float>::value ? 1e8 : 1e13);
    CHECK_BAD_ARG(make_gdft(bad), Catch::Contains(lim) && Catch::Contains("k.r"));
    CHECK_BAD_ARG(make_gdftr2(bad), Catch::Contains(lim));
    // Products that overflow (3e38 * 0.5 stays finite in double, the bound is refused all the same).
    bad.kx[5] = T1(3e38);
    CHECK_BAD_ARG(make_gdft(bad), Catch::Contains(lim));
    // A field map times the readout time in the millions of radians (or beyond 2^41 turns in double).
    bad = g;
    bad.FM[3] = T1(std::is_same<T1, float>::value ? 1e6 : 1e15);
    bad.t[2] = T1(10);
    CHECK_BAD_ARG(make_gdft(bad), Catch::Contains("FM"));
    // GdftR2: gradient maps whose sinc phase leaves the range.
    const arma::Col<T1> z(g.n2(), arma::fill::zeros);
    arma::Col<T1> gy = z;
    gy[1] = T1(4 * limit / 10e-3);
    CHECK_BAD_ARG(forge::GdftR2<T1>(g.n1(), g.n2(), g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, g.FM, g.t, z, gy, z, g.nx, g.ny,
                                    g.nz),
                  Catch::Contains("ky/numY + Gy t"));

    // Close to the bound the operator is still used, with the error the documentation states (a few 1e-4:
    // measured 2-3e-4 for float at 4000 turns): here ~3500 turns over two axes against a float64 brute force.
    if (std::is_same<T1, float>::value) {
        auto near = g;
        near.kx = forge_test::uniform<T1>(g.n1(), -3500, 3500);
        near.ky = forge_test::uniform<T1>(g.n1(), -3500, 3500);
        near.kx[0] = T1(3500);  // the extremes themselves, so that the bound does not depend on the draw
        near.ky[0] = T1(-3500);
        const double bound = double(arma::max(arma::abs(near.kx))) * double(arma::max(arma::abs(near.ix))) +
                             double(arma::max(arma::abs(near.ky))) * double(arma::max(arma::abs(near.iy))) +
                             double(arma::max(arma::abs(near.FM))) * double(arma::max(arma::abs(near.t))) / (2 * kPi);
        REQUIRE(bound < limit);
        REQUIRE(bound > 0.8 * limit);
        const auto G = make_gdft(near);
        const CxVec<T1> x = forge_test::complex_normal<T1>(near.n2());
        const double e = forge_test::rel_error(CxVec<T1>(*G * x), brute_forward(near, RefGrads{}, d(x)));
        INFO("phase bound " << bound << " turns, relative error " << e);
        CHECK(e < 1e-3);
    }
}

#include "forge/Core/DeviceMemory.h"

// set_devices is deprecated (DftOptions::devices replaces it); its checks stay until it goes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("Gdft::set_devices refuses double operators, empty device sets nothing, and needs a GPU",
          "[gdft][multigpu]") {
    const uword n1 = 50, n2 = 64;
    const arma::fvec k = forge_test::uniform<float>(n1, -4, 4), t = forge_test::uniform<float>(n1, 0, 0.01);
    const arma::fvec r = forge_test::uniform<float>(n2, -0.5, 0.5), fm(n2, arma::fill::zeros);
    forge::Gdft<float> G(n1, n2, k, k, k, r, r, r, fm, t);
    G.set_devices({});  // one GPU (the default): nothing to check
    CHECK(G.devices().empty());
    forge::Gdft<double> D(n1, n2, arma::conv_to<arma::vec>::from(k), arma::conv_to<arma::vec>::from(k),
                          arma::conv_to<arma::vec>::from(k), arma::conv_to<arma::vec>::from(r),
                          arma::conv_to<arma::vec>::from(r), arma::conv_to<arma::vec>::from(r),
                          arma::vec(n2, arma::fill::zeros), arma::conv_to<arma::vec>::from(t));
    CHECK_THROWS_WITH(D.set_devices({0}), Catch::Matchers::Contains("only for float operators"));
    if (!forge::device::available()) {
        CHECK_THROWS_AS(G.set_devices({0, 0}), forge::cuda_error);
        CHECK_THROWS_WITH(G.set_devices({0, 0}), Catch::Matchers::Contains("built without CUDA") ||
                                                     Catch::Matchers::Contains("no CUDA device"));
        CHECK(G.devices().empty());
    }
}
#pragma GCC diagnostic pop
