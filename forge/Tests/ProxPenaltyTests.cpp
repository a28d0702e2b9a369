// Proximal penalties: L1Penalty's prox against the complex soft threshold in float64, ExactTVPenalty's prox against
// the closed form on two pixels and against a dense float64 dual solve on small 2D/3D grids (and against random
// perturbations of its objective), WaveletL1Penalty against the dense transform (with and without random shifts),
// the values against direct sums, and the errors.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"

using namespace forge_test;
using forge::ImageGrid;

namespace {
template <typename T>
using CVec = forgeCol<forgeComplex<T>>;
using cd = std::complex<double>;

cd soft_ref(cd v, double tau) {
    const double a = std::abs(v);
    return a <= tau ? cd(0) : v * ((a - tau) / a);
}

// The forward-difference matrix of the grid (rows: axis by axis, one per pixel with a forward neighbour), as
// ExactTVPenalty's documentation defines it.
arma::mat diff_matrix(const ImageGrid& g, std::vector<arma::uword>& pixel_of_row, std::vector<int>& axis_of_row) {
    const arma::uword n = g.n_pixels(), dims[3] = {g.nx, g.ny, g.nz}, strides[3] = {1, g.nx, g.nx * g.ny};
    std::vector<std::pair<arma::uword, arma::uword>> rows;
    for (int a = 0; a < 3; ++a) {
        if (dims[a] < 2) continue;
        for (arma::uword i = 0; i < n; ++i)
            if ((i / strides[a]) % dims[a] != dims[a] - 1) {
                rows.emplace_back(i, i + strides[a]);
                pixel_of_row.push_back(i);
                axis_of_row.push_back(a);
            }
    }
    arma::mat D(rows.size(), n, arma::fill::zeros);
    for (arma::uword r = 0; r < rows.size(); ++r) {
        D(r, rows[r].first) = -1;
        D(r, rows[r].second) = 1;
    }
    return D;
}

double tv_ref(const arma::cx_vec& u, const ImageGrid& g, bool iso) {
    std::vector<arma::uword> pix;
    std::vector<int> ax;
    const arma::cx_vec d = diff_matrix(g, pix, ax) * u;
    arma::vec per_pixel(g.n_pixels(), arma::fill::zeros);
    double s = 0;
    for (arma::uword r = 0; r < d.n_elem; ++r) {
        if (iso)
            per_pixel(pix[r]) += std::norm(d(r));
        else
            s += std::abs(d(r));
    }
    return iso ? arma::accu(arma::sqrt(per_pixel)) : s;
}

// prox of tau TV at v in float64, by projected gradient on the dual with the dense difference matrix (many steps).
arma::cx_vec tv_prox_ref(const arma::cx_vec& v, double tau, const ImageGrid& g, bool iso) {
    std::vector<arma::uword> pix;
    std::vector<int> ax;
    const arma::mat D = diff_matrix(g, pix, ax);
    const double L = std::pow(arma::norm(D, 2), 2);
    arma::cx_vec p(D.n_rows, arma::fill::zeros), pold = p, r = p;
    double t = 1;
    for (int k = 0; k < 40000; ++k) {
        const arma::cx_vec u = v - tau * D.t() * r;
        arma::cx_vec q = r + D * u / (tau * L);
        if (iso) {
            arma::vec nrm(g.n_pixels(), arma::fill::zeros);
            for (arma::uword j = 0; j < q.n_elem; ++j) nrm(pix[j]) += std::norm(q(j));
            for (arma::uword j = 0; j < q.n_elem; ++j) q(j) /= std::max(1.0, std::sqrt(nrm(pix[j])));
        } else {
            for (arma::uword j = 0; j < q.n_elem; ++j) q(j) /= std::max(1.0, std::abs(q(j)));
        }
        const double tn = 0.5 * (1 + std::sqrt(1 + 4 * t * t));
        r = q + ((t - 1) / tn) * (q - pold);
        pold = q;
        t = tn;
    }
    return v - tau * D.t() * pold;
}

arma::cx_vec to_double(const arma::cx_fvec& v) { return arma::conv_to<arma::cx_vec>::from(v); }
}  // namespace

TEMPLATE_TEST_CASE("L1Penalty's prox is the complex soft threshold", "[prox][penalty]", float, double) {
    FORGE_INFO_SEED();
    const ImageGrid g(12, 10);
    const TestType lambda = TestType(0.7), t = TestType(1.3);
    forge::L1Penalty<TestType> R(g, lambda);
    const arma::Col<std::complex<TestType>> v = complex_normal<TestType>(g.n_pixels());
    const arma::Col<std::complex<TestType>> u = R.prox(v, t);
    arma::cx_vec ref(v.n_elem);
    double l1 = 0;
    for (arma::uword i = 0; i < v.n_elem; ++i) {
        ref(i) = soft_ref(cd(v(i)), double(lambda) * double(t));
        l1 += std::abs(cd(v(i)));
    }
    const double tol = std::is_same<TestType, float>::value ? 1e-6 : 1e-14;
    CHECK(rel_error(arma::conv_to<arma::cx_vec>::from(u), ref) < tol);
    CHECK(arma::accu(ref == cd(0)) > 0);  // the threshold zeroes some entries at this t * lambda
    CHECK(std::abs(R.value(v) - double(lambda) * l1) < tol * l1);
    CHECK(rel_error(R.prox(v, TestType(0)), v) == 0);
}

TEST_CASE("L1Penalty's prox minimises its objective (random perturbations)", "[prox][penalty]") {
    FORGE_INFO_SEED();
    const ImageGrid g(5);
    forge::L1Penalty<double> R(g, 0.4);
    const arma::cx_vec v = complex_normal<double>(5);
    const arma::cx_vec u = R.prox(v, 1.0);
    auto obj = [&](const arma::cx_vec& w) { return R.value(w) + 0.5 * std::pow(arma::norm(w - v), 2); };
    const double f0 = obj(u);
    for (int k = 0; k < 2000; ++k) {
        const double s = std::pow(10.0, -1 - 4 * uniform<double>(1, 0, 1)(0));
        CHECK(obj(u + s * complex_normal<double>(5)) >= f0 - 1e-14);
    }
}

TEST_CASE("ExactTVPenalty's prox on two pixels has the closed form", "[prox][penalty][tv]") {
    FORGE_INFO_SEED();
    for (forge::TVNorm norm : {forge::TVNorm::Isotropic, forge::TVNorm::Anisotropic}) {
        forge::ExactTVPenalty<double> R(ImageGrid(2), 1.0, {norm, 3000, false});
        for (double tau : {0.1, 5.0}) {  // |b - a| > 2 tau: both move by tau; else both go to the mean
            const arma::cx_vec v = complex_normal<double>(2);
            const cd d = v(1) - v(0);
            arma::cx_vec ref(2);
            if (std::abs(d) <= 2 * tau) {
                ref.fill((v(0) + v(1)) / 2.0);
            } else {
                ref(0) = v(0) + tau * d / std::abs(d);
                ref(1) = v(1) - tau * d / std::abs(d);
            }
            CHECK(rel_error(R.prox(v, tau), ref) < 1e-9);
        }
    }
}

TEST_CASE("ExactTVPenalty's prox matches a dense float64 dual solve on 2D and 3D grids", "[prox][penalty][tv]") {
    FORGE_INFO_SEED();
    const ImageGrid grids[] = {ImageGrid(4, 3), ImageGrid(3, 3, 2)};
    for (const ImageGrid& g : grids)
        for (forge::TVNorm norm : {forge::TVNorm::Isotropic, forge::TVNorm::Anisotropic}) {
            const bool iso = norm == forge::TVNorm::Isotropic;
            INFO(g.to_string() << (iso ? " isotropic" : " anisotropic"));
            const double lambda = 0.5, t = 0.8;
            forge::ExactTVPenalty<double> R(g, lambda, {norm, 20000, false});
            const arma::cx_vec v = complex_normal<double>(g.n_pixels());
            const arma::cx_vec u = R.prox(v, t);
            const arma::cx_vec ref = tv_prox_ref(v, lambda * t, g, iso);
            CHECK(rel_error(u, ref) < 1e-6);
            CHECK(std::abs(R.value(v) - lambda * tv_ref(v, g, iso)) < 1e-12 * R.value(v));
            auto obj = [&](const arma::cx_vec& w) { return t * R.value(w) + 0.5 * std::pow(arma::norm(w - v), 2); };
            const double f0 = obj(u);
            for (int k = 0; k < 500; ++k) CHECK(obj(u + 1e-3 * complex_normal<double>(g.n_pixels())) >= f0 - 1e-10);
            // Float runs the same iteration.
            forge::ExactTVPenalty<float> Rf(g, float(lambda), {norm, 20000, false});
            CHECK(rel_error(to_double(Rf.prox(arma::conv_to<arma::cx_fvec>::from(v), float(t))), ref) < 1e-4);
        }
}

TEST_CASE("ExactTVPenalty's warm start converges to the same prox", "[prox][penalty][tv]") {
    FORGE_INFO_SEED();
    const ImageGrid g(6, 5);
    forge::ExactTVPenalty<double> R(g, 0.3, {forge::TVNorm::Isotropic, 20, true});
    const arma::cx_vec v = complex_normal<double>(g.n_pixels());
    arma::cx_vec u;
    for (int k = 0; k < 500; ++k) u = R.prox(v, 1.0);  // 20 dual steps per call, continued across calls
    CHECK(rel_error(u, tv_prox_ref(v, 0.3, g, true)) < 1e-6);
}

TEST_CASE("WaveletL1Penalty's prox is Psi^H soft(Psi v) on the detail bands", "[prox][penalty][wavelet]") {
    FORGE_INFO_SEED();
    const ImageGrid g(16, 8);
    for (bool coarse : {false, true}) {
        forge::WaveletL1Options o;
        o.family = forge::WaveletFamily::Db2;
        o.levels = 2;
        o.random_shift = false;
        o.penalize_coarse = coarse;
        forge::WaveletL1Penalty<double> R(g, 0.6, o);
        const arma::cx_vec v = complex_normal<double>(g.n_pixels());
        const arma::cx_vec c = R.transform().forward(CVec<double>(v)).to_arma();
        arma::cx_vec cs = c;
        double l1 = 0;
        for (arma::uword i = 0; i < c.n_elem; ++i) {
            const bool in_coarse = (i % 16) < 4 && (i / 16) < 2;
            if (in_coarse && !coarse) continue;
            cs(i) = soft_ref(c(i), 0.6 * 0.9);
            l1 += std::abs(c(i));
        }
        const arma::cx_vec ref = R.transform().inverse(CVec<double>(cs)).to_arma();
        CHECK(rel_error(R.prox(v, 0.9), ref) < 1e-13);
        CHECK(std::abs(R.value(v) - 0.6 * l1) < 1e-12 * l1);
    }
}

TEST_CASE("WaveletL1Penalty with random shifts is the prox of a shifted transform, reproducibly",
          "[prox][penalty][wavelet]") {
    FORGE_INFO_SEED();
    const ImageGrid g(8, 8);
    forge::WaveletL1Options o;
    o.family = forge::WaveletFamily::Haar;
    o.levels = 2;
    o.seed = 7;
    forge::WaveletL1Penalty<double> R(g, 0.5, o), R2(g, 0.5, o);
    o.random_shift = false;
    forge::WaveletL1Penalty<double> R0(g, 0.5, o);
    // The candidates: the unshifted prox of the image shifted by (sx, sy) in [0, 4)^2, shifted back.
    auto shift = [&](const arma::cx_vec& x, int sx, int sy) {
        arma::cx_vec y(x.n_elem);
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 8; ++i) y(((i + sx) % 8) + 8 * ((j + sy) % 8)) = x(i + 8 * j);
        return y;
    };
    int shifted_calls = 0;
    for (int call = 0; call < 6; ++call) {
        const arma::cx_vec v = complex_normal<double>(64);
        const arma::cx_vec u = R.prox(v, 1.0);
        CHECK(rel_error(R2.prox(v, 1.0), u) == 0);  // same seed, same shifts
        double best = 1e300;
        int best_s = -1;
        for (int s = 0; s < 16; ++s) {
            const arma::cx_vec cand = shift(R0.prox(shift(v, s % 4, s / 4), 1.0), (8 - s % 4) % 8, (8 - s / 4) % 8);
            const double e = rel_error(u, cand);
            if (e < best) best = e, best_s = s;
        }
        CHECK(best < 1e-13);
        shifted_calls += best_s != 0;
    }
    CHECK(shifted_calls > 0);
}

TEST_CASE("Proximal penalties reject bad arguments with clear messages", "[prox][penalty]") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(forge::L1Penalty<float>(ImageGrid(4, 4), -1.0f), Contains("lambda must be finite and >= 0"));
    forge::L1Penalty<float> R(ImageGrid(4, 4), 1.0f);
    CVec<float> v(15);
    CHECK_THROWS_WITH(R.prox(v, 1.0f), Contains("v has 15 entries, expected nx*ny*nz = 4*4*1 = 16"));
    CVec<float> w(16);
    CHECK_THROWS_WITH(R.prox(w, -1.0f), Contains("the step t must be finite and >= 0"));
    CHECK_THROWS_WITH(forge::WaveletL1Penalty<float>(ImageGrid(9, 8), 1.0f), Contains("nx = 9 is odd"));
    CHECK_THROWS_AS(forge::ExactTVPenalty<float>(ImageGrid(4, 4), 1.0f, {forge::TVNorm::Isotropic, 0, true}),
                    forge::invalid_argument);
}
