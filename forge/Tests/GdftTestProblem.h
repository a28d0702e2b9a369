#pragma once
// What the Gdft and GdftR2 tests share (GdftTests.cpp, GdftR2Tests.cpp, GdftErrorTests.cpp): random geometries,
// references written here independently of forge (float64 brute-force sums, the sinc factor of the field map's
// gradients, finite differences, FFTW on Cartesian grids) and the argument-error matcher.
#include <cmath>
#include <complex>
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

namespace gdft_test {

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

inline double sinc_ref(double x) { return x == 0.0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

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
inline RefGrads ref_gradients(const arma::vec& fm, uword nx, uword ny, uword nz) {
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
inline arma::cx_vec centred_fftw(const arma::cx_vec& a, uword nx, uword ny, uword nz, int sign) {
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
inline Catch::Matchers::StdString::RegexMatcher names(const std::string& arg) {
    return Catch::Matches(".*\\b" + arg + "\\b.*");
}

}  // namespace gdft_test

#define CHECK_BAD_ARG(expr, matcher)                    \
    do {                                                \
        CHECK_THROWS_AS(expr, forge::invalid_argument); \
        CHECK_THROWS_WITH(expr, matcher);               \
    } while (0)
