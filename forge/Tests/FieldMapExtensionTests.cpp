// Field maps extended beyond the object (forge/Recon/FieldMapExtension.h): the support's values are kept bit for
// bit, the fill stays within their range and continues them without a jump at the object's edge, values outside
// the support (zeros, noise, NaN) do not matter, and bad arguments are refused by name.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <armadillo>
#include <catch2/catch.hpp>

#include "forge/Core/Exceptions.h"
#include "forge/Recon/FieldMapExtension.h"

using namespace forge::recon;

namespace {

// The largest |difference| between face neighbours, over pairs whose both pixels 'use' (all pairs when empty).
double max_step(const arma::fvec& f, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                const std::vector<unsigned char>& use = {}) {
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    double m = 0;
    for (std::size_t j = 0; j < f.n_elem; ++j)
        for (int d = 0; d < 3; ++d)
            if ((j / stride[d]) % N[d] + 1 < N[d]) {
                const std::size_t k = j + stride[d];
                if (!use.empty() && !(use[j] && use[k])) continue;
                m = std::max(m, std::fabs(double(f[j]) - double(f[k])));
            }
    return m;
}

// Sum of the squared 5-point Laplacian over the interior pixels outside the support (a roughness measure).
double roughness_outside(const arma::fvec& f, std::size_t Nx, std::size_t Ny, const std::vector<unsigned char>& s) {
    double r = 0;
    for (std::size_t y = 1; y + 1 < Ny; ++y)
        for (std::size_t x = 1; x + 1 < Nx; ++x) {
            const std::size_t j = x + Nx * y;
            if (s[j]) continue;
            const double l = double(f[j - 1]) + f[j + 1] + f[j - Nx] + f[j + Nx] - 4.0 * f[j];
            r += l * l;
        }
    return r;
}

// A 2D test map (rad/s): an offset, a ramp and a bump, inside an off-centre ellipse with a hole; 0 outside.
struct DiskMap {
    std::size_t Nx = 48, Ny = 40;
    arma::fvec truth, zeroed;
    std::vector<unsigned char> support;
    DiskMap() : truth(Nx * Ny), zeroed(Nx * Ny, arma::fill::zeros), support(Nx * Ny, 0) {
        for (std::size_t y = 0; y < Ny; ++y)
            for (std::size_t x = 0; x < Nx; ++x) {
                const std::size_t j = x + Nx * y;
                const double u = (double(x) - 22) / 16, v = (double(y) - 19) / 13;
                const double hole = (double(x) - 25) * (double(x) - 25) + (double(y) - 17) * (double(y) - 17);
                truth[j] = float(2 * M_PI * (120 + 40 * u - 25 * v + 150 * std::exp(-(u * u + v * v) * 3)));
                if (u * u + v * v < 1 && hole > 9) {
                    support[j] = 1;
                    zeroed[j] = truth[j];
                }
            }
    }
};

}  // namespace

TEST_CASE("extend_field_map keeps the support and continues it smoothly within its range",
          "[maps][fieldmap-extension]") {
    DiskMap m;
    const arma::fvec e = extend_field_map(m.zeroed, m.support, m.Nx, m.Ny, 1);
    REQUIRE(e.n_elem == m.zeroed.n_elem);
    float lo = 1e30f, hi = -1e30f;
    for (std::size_t j = 0; j < e.n_elem; ++j)
        if (m.support[j]) {
            REQUIRE(e[j] == m.zeroed[j]);  // bit for bit
            lo = std::min(lo, m.zeroed[j]);
            hi = std::max(hi, m.zeroed[j]);
        }
    for (std::size_t j = 0; j < e.n_elem; ++j) {
        REQUIRE(std::isfinite(e[j]));
        REQUIRE(e[j] >= lo);  // maximum principle: means of known values
        REQUIRE(e[j] <= hi);
    }
    // no jump at the object's edge: the steepest step anywhere is no steeper than inside the object, where the
    // zero-filled map jumps by the whole field at the edge
    const double inside = max_step(m.zeroed, m.Nx, m.Ny, 1, m.support);
    const double everywhere = max_step(e, m.Nx, m.Ny, 1);
    const double zeroFilled = max_step(m.zeroed, m.Nx, m.Ny, 1);
    INFO("max step inside " << inside << ", extended " << everywhere << ", zero-filled " << zeroFilled << " rad/s");
    CHECK(everywhere <= 1.05 * inside);
    CHECK(zeroFilled > 10 * inside);
    // the relaxation smooths the onion peel's creases
    FieldMapExtensionOptions peel;
    peel.iterations = 0;
    const arma::fvec p = extend_field_map(m.zeroed, m.support, m.Nx, m.Ny, 1, peel);
    const double rPeel = roughness_outside(p, m.Nx, m.Ny, m.support),
                 rExt = roughness_outside(e, m.Nx, m.Ny, m.support);
    INFO("roughness outside: onion peel " << rPeel << ", relaxed " << rExt);
    CHECK(rExt < 0.5 * rPeel);
    // the map's range does not grow, so a time-segmented operator needs no more segments than for the object
    CHECK(e.max() - e.min() <= hi - lo);
}

TEST_CASE("extend_field_map ignores what lies outside the support: zeros, noise, NaN", "[maps][fieldmap-extension]") {
    DiskMap m;
    arma::fvec noisy = m.zeroed;
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0, 2000);
    for (std::size_t j = 0; j < noisy.n_elem; ++j)
        if (!m.support[j]) noisy[j] = j % 97 == 0 ? NAN : n(rng);
    const arma::fvec a = extend_field_map(m.zeroed, m.support, m.Nx, m.Ny, 1);
    const arma::fvec b = extend_field_map(noisy, m.support, m.Nx, m.Ny, 1);
    REQUIRE(arma::all(a == b));
    // the nonzero support of the zero-filled map is the same support
    const arma::fvec c = extend_field_map(m.zeroed, m.Nx, m.Ny, 1);
    REQUIRE(arma::all(a == c));
    REQUIRE(field_map_support(m.zeroed) == m.support);
}

TEST_CASE("extend_field_map in 3D: a constant map stays constant everywhere", "[maps][fieldmap-extension][3d]") {
    const std::size_t Nx = 12, Ny = 10, Nz = 6;
    arma::fvec f(Nx * Ny * Nz, arma::fill::zeros);
    std::vector<unsigned char> s(f.n_elem, 0);
    for (std::size_t z = 0; z < Nz; ++z)
        for (std::size_t y = 0; y < Ny; ++y)
            for (std::size_t x = 0; x < Nx; ++x) {
                const double u = (double(x) - 6) / 4, v = (double(y) - 5) / 3, w = (double(z) - 3) / 2;
                if (u * u + v * v + w * w < 1) {
                    s[x + Nx * (y + Ny * z)] = 1;
                    f[x + Nx * (y + Ny * z)] = -314.0f;
                }
            }
    const arma::fvec e = extend_field_map(f, s, Nx, Ny, Nz);
    for (std::size_t j = 0; j < e.n_elem; ++j) REQUIRE(e[j] == Approx(-314.0).epsilon(1e-6));
}

TEST_CASE("extend_field_map: full and empty supports, and bad arguments", "[maps][fieldmap-extension][errors]") {
    const std::size_t Nx = 8, Ny = 6;
    arma::fvec f(Nx * Ny, arma::fill::randn);
    f += 5.0f;                                                // no zero
    REQUIRE(arma::all(extend_field_map(f, Nx, Ny, 1) == f));  // nothing to fill
    const arma::fvec z(Nx * Ny, arma::fill::zeros);
    REQUIRE(arma::all(extend_field_map(z, Nx, Ny, 1) == z));  // all zero: returned as is
    std::vector<unsigned char> s(Nx * Ny, 1), none(Nx * Ny, 0);
    using forge::invalid_argument;
    REQUIRE_THROWS_WITH(extend_field_map(f, s, Nx + 1, Ny, 1), Catch::Contains("fieldmap has 48 entries"));
    REQUIRE_THROWS_WITH(extend_field_map(f, std::vector<unsigned char>(5, 1), Nx, Ny, 1),
                        Catch::Contains("support has 5 entries"));
    REQUIRE_THROWS_WITH(extend_field_map(f, none, Nx, Ny, 1), Catch::Contains("the support is empty"));
    REQUIRE_THROWS_WITH(extend_field_map(f, s, 0, Ny, 1), Catch::Contains("holds no pixel"));
    FieldMapExtensionOptions bad;
    bad.iterations = -1;
    REQUIRE_THROWS_WITH(extend_field_map(f, s, Nx, Ny, 1, bad), Catch::Contains("iterations = -1"));
    arma::fvec g = f;
    g[3] = NAN;
    REQUIRE_THROWS_AS(extend_field_map(g, s, Nx, Ny, 1), invalid_argument);
    s[3] = 0;  // NaN outside the support: ignored
    REQUIRE(std::isfinite(extend_field_map(g, s, Nx, Ny, 1)[3]));
}
