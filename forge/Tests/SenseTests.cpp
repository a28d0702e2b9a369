// SENSE and pcSENSE tests on the host: forward against an independent float64 brute-force
// field-corrected DFT with coil maps (and shot phases), adjointness <A x, y> = <x, A^H y>, batched ==
// coil-by-coil, float vs double, SENSE over a generic (non-DFT) operator, and argument checks.
#include <cmath>
#include <complex>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "UserOperator.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/pcSENSE.h"

using namespace forge_test;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Geometry {
    arma::uword Nx = 8, Ny = 6, n2 = 48, n1 = 70;
    arma::vec kx, ky, kz, ix, iy, iz, FM, t;
};

Geometry make_geometry(arma::uword n1) {
    Geometry g;
    g.n1 = n1;
    g.kx = uniform<double>(n1, -double(g.Nx) / 2, double(g.Nx) / 2);
    g.ky = uniform<double>(n1, -double(g.Ny) / 2, double(g.Ny) / 2);
    g.kz = arma::vec(n1, arma::fill::zeros);
    g.t = arma::sort(uniform<double>(n1, 0.0, 10e-3));
    g.ix.set_size(g.n2);
    g.iy.set_size(g.n2);
    g.iz.zeros(g.n2);
    for (arma::uword y = 0; y < g.Ny; ++y)
        for (arma::uword x = 0; x < g.Nx; ++x) {
            g.ix(x + g.Nx * y) = (double(x) - g.Nx / 2.0) / g.Nx;
            g.iy(x + g.Nx * y) = (double(y) - g.Ny / 2.0) / g.Ny;
        }
    g.FM = uniform<double>(g.n2, -2 * kPi * 100, 2 * kPi * 100);
    return g;
}

// Brute-force float64 encoding matrix E(j,k) = exp(-i (2 pi k_j . r_k + FM_k t_j)).
arma::cx_mat encoding_matrix(const arma::vec& kx, const arma::vec& ky, const arma::vec& kz, const arma::vec& t,
                             const Geometry& g) {
    arma::cx_mat E(kx.n_elem, g.n2);
    for (arma::uword j = 0; j < kx.n_elem; ++j)
        for (arma::uword k = 0; k < g.n2; ++k) {
            const double ph = 2 * kPi * (kx(j) * g.ix(k) + ky(j) * g.iy(k) + kz(j) * g.iz(k)) + g.FM(k) * t(j);
            E(j, k) = std::polar(1.0, -ph);
        }
    return E;
}

template <typename T1>
arma::Col<T1> cv(const arma::vec& v) {
    return arma::conv_to<arma::Col<T1>>::from(v);
}

template <typename T1>
Gdft<T1> make_gdft(const Geometry& g) {
    return Gdft<T1>(g.n1, g.n2, cv<T1>(g.kx), cv<T1>(g.ky), cv<T1>(g.kz), cv<T1>(g.ix), cv<T1>(g.iy), cv<T1>(g.iz),
                    cv<T1>(g.FM), cv<T1>(g.t));
}

// Full stacked SENSE matrix [E diag(S_0); E diag(S_1); ...].
arma::cx_mat sense_matrix(const arma::cx_mat& E, const arma::cx_vec& maps, arma::uword nc) {
    const arma::uword n2 = E.n_cols;
    arma::cx_mat A(E.n_rows * nc, n2);
    for (arma::uword c = 0; c < nc; ++c)
        A.rows(c * E.n_rows, (c + 1) * E.n_rows - 1) = E * arma::diagmat(maps.subvec(c * n2, (c + 1) * n2 - 1));
    return A;
}

}  // namespace

TEST_CASE("SENSE forward and adjoint match a float64 brute-force reference", "[sense]") {
    FORGE_INFO_SEED();
    const Geometry g = make_geometry(70);
    const arma::uword nc = 3;
    const arma::cx_vec maps = complex_normal<double>(g.n2 * nc);
    const arma::cx_mat A = sense_matrix(encoding_matrix(g.kx, g.ky, g.kz, g.t, g), maps, nc);
    const arma::cx_vec x = complex_normal<double>(g.n2), y = complex_normal<double>(g.n1 * nc);

    SENSE<double, Gdft<double>> Sd(make_gdft<double>(g), maps, nc);
    CHECK(Sd.n1() == g.n1);
    CHECK(Sd.n2() == g.n2);
    CHECK(Sd.n_coils() == nc);
    CHECK(rel_error(arma::cx_vec(Sd * x), arma::cx_vec(A * x)) < 1e-10);
    CHECK(rel_error(arma::cx_vec(Sd / y), arma::cx_vec(A.t() * y)) < 1e-10);

    SENSE<float, Gdft<float>> Sf(make_gdft<float>(g), arma::conv_to<arma::cx_fvec>::from(maps), nc);
    const arma::cx_fvec xf = arma::conv_to<arma::cx_fvec>::from(x), yf = arma::conv_to<arma::cx_fvec>::from(y);
    CHECK(rel_error(arma::cx_fvec(Sf * xf), arma::cx_vec(A * x)) < 1e-4);
    CHECK(rel_error(arma::cx_fvec(Sf / yf), arma::cx_vec(A.t() * y)) < 1e-4);
}

TEST_CASE("SENSE is adjoint: <S x, y> = <x, S^H y>", "[sense][adjoint]") {
    FORGE_INFO_SEED();
    const Geometry g = make_geometry(90);
    const arma::uword nc = 4;
    const arma::cx_fvec maps = complex_normal<float>(g.n2 * nc);
    SENSE<float, Gdft<float>> S(make_gdft<float>(g), maps, nc);
    check_adjoint(S, adjoint_tolerance<float>(), DotScale::Norms);
    check_normal(S, 0.0);
    check_batch(S, 3, 0.0);
    S.set_coil_batching(false);
    check_adjoint(S, adjoint_tolerance<float>(), DotScale::Norms);
    check_batch(S, 3, 0.0);
    // double, with the bound of the float64 brute-force comparison above
    SENSE<double, Gdft<double>> Sd(make_gdft<double>(g), arma::conv_to<arma::cx_vec>::from(maps), nc);
    check_adjoint(Sd, adjoint_tolerance<double>(), DotScale::Norms);
    check_normal(Sd, 0.0);
    check_batch(Sd, 3, 0.0);
}

TEST_CASE("SENSE batched equals coil-by-coil on the host", "[sense][batch]") {
    FORGE_INFO_SEED();
    const Geometry g = make_geometry(64);
    const arma::uword nc = 5;
    const arma::cx_fvec maps = complex_normal<float>(g.n2 * nc);
    SENSE<float, Gdft<float>> S(make_gdft<float>(g), maps, nc);
    REQUIRE(S.coil_batching());
    forgeCol<forgeComplex<float>> x(complex_normal<float>(g.n2)), y(complex_normal<float>(g.n1 * nc));
    CHECK(rel_error(S.forward_batched(x).to_arma(), S.forward_coil_by_coil(x).to_arma()) < 1e-6);
    CHECK(rel_error(S.adjoint_batched(y).to_arma(), S.adjoint_coil_by_coil(y).to_arma()) < 1e-6);
    const arma::cx_fvec fb = (S * x).to_arma();
    S.set_coil_batching(false);
    CHECK_FALSE(S.coil_batching());
    CHECK(rel_error((S * x).to_arma(), fb) < 1e-6);
}

TEST_CASE("SENSE wraps an operator written outside the library", "[sense][generic]") {
    FORGE_INFO_SEED();
    const arma::uword n1 = 20, n2 = 12, nc = 3;
    arma::cx_mat E(n1, n2);
    const arma::cx_vec e = complex_normal<double>(n1 * n2);
    std::copy(e.begin(), e.end(), E.begin());
    const arma::cx_vec maps = complex_normal<double>(n2 * nc);
    SENSE<double, forge_test::MatrixOperator<double>> S(forge_test::MatrixOperator<double>(E), maps, nc);
    const arma::cx_mat A = sense_matrix(E, maps, nc);
    const arma::cx_vec x = complex_normal<double>(n2), y = complex_normal<double>(n1 * nc);
    for (bool batched : {true, false}) {
        S.set_coil_batching(batched);
        CHECK(rel_error(arma::cx_vec(S * x), arma::cx_vec(A * x)) < 1e-13);
        CHECK(rel_error(arma::cx_vec(S / y), arma::cx_vec(A.t() * y)) < 1e-13);
    }
}

TEST_CASE("SENSE takes its maps from a forgeCol without a copy, as from Armadillo", "[sense][maps]") {
    FORGE_INFO_SEED();
    const Geometry g = make_geometry(50);
    const arma::uword nc = 3;
    const arma::cx_vec maps = complex_normal<double>(g.n2 * nc);
    const auto G = std::make_shared<const Gdft<double>>(make_gdft<double>(g));
    forgeCol<forgeComplex<double>> m(maps);
    const forgeComplex<double>* storage = m.memptr();
    SENSE<double, Gdft<double>> A(G, maps, nc), B(G, std::move(m), nc);
    CHECK(B.maps().memptr() == storage);  // taken, not copied
    const arma::cx_mat ref = sense_matrix(encoding_matrix(g.kx, g.ky, g.kz, g.t, g), maps, nc);
    const arma::cx_vec x = complex_normal<double>(g.n2), y = complex_normal<double>(g.n1 * nc);
    CHECK(rel_error(arma::cx_vec(B * x), arma::cx_vec(ref * x)) < 1e-12);
    CHECK(arma::approx_equal(arma::cx_vec(B * x), arma::cx_vec(A * x), "absdiff", 0.0));
    CHECK(arma::approx_equal(arma::cx_vec(B / y), arma::cx_vec(A / y), "absdiff", 0.0));
    forgeCol<forgeComplex<double>> bad(arma::cx_vec(g.n2 * nc + 1, arma::fill::ones));
    CHECK_THROWS_WITH((SENSE<double, Gdft<double>>(G, std::move(bad), nc)), Catch::Contains("maps has"));
    arma::cx_vec nan = maps;
    nan[4] = NAN;
    CHECK_THROWS_AS((SENSE<double, Gdft<double>>(G, forgeCol<forgeComplex<double>>(nan), nc)),
                    forge::invalid_argument);
}

TEST_CASE("SENSE rejects bad sizes", "[sense][errors]") {
    const Geometry g = make_geometry(16);
    const arma::cx_fvec maps(g.n2 * 2 + 1, arma::fill::ones);
    CHECK_THROWS_WITH((SENSE<float, Gdft<float>>(make_gdft<float>(g), maps, 2)),
                      Catch::Contains("maps has") && Catch::Contains("expected G.n2() * nc"));
    CHECK_THROWS_AS((SENSE<float, Gdft<float>>(make_gdft<float>(g), arma::cx_fvec(arma::uword(0)), 0)),
                    forge::invalid_argument);
    SENSE<float, Gdft<float>> S(make_gdft<float>(g), arma::cx_fvec(g.n2 * 2, arma::fill::ones), 2);
    CHECK_THROWS_AS(S * arma::cx_fvec(g.n2 + 1, arma::fill::ones), forge::invalid_argument);
    CHECK_THROWS_WITH(S / arma::cx_fvec(g.n1, arma::fill::ones), Catch::Contains("expected n1 * nc"));
    // n2 * nc = 48 * (2^60 + 1) wraps to 48: one coil's maps must not pass for 2^60 + 1 coils.
    const arma::uword huge = (arma::uword(1) << 60) + 1;
    REQUIRE(g.n2 * huge == g.n2);
    CHECK_THROWS_WITH((SENSE<float, Gdft<float>>(make_gdft<float>(g), arma::cx_fvec(g.n2, arma::fill::ones), huge)),
                      Catch::Contains("G.n2() * nc = 48 * 1152921504606846977 exceeds"));
}

namespace {
struct PcSetup {
    Geometry g;
    arma::uword ns = 3, nsamp = 40, nc = 2;
    arma::mat kx, ky, kz, t, phases;
    arma::cx_vec maps;
};
PcSetup make_pc() {
    PcSetup p;
    p.g = make_geometry(1);
    p.kx.set_size(p.nsamp, p.ns);
    p.ky.set_size(p.nsamp, p.ns);
    p.kz.zeros(p.nsamp, p.ns);
    p.t.set_size(p.nsamp, p.ns);
    for (arma::uword s = 0; s < p.ns; ++s) {
        p.kx.col(s) = uniform<double>(p.nsamp, -4, 4);
        p.ky.col(s) = uniform<double>(p.nsamp, -3, 3);
        p.t.col(s) = arma::sort(uniform<double>(p.nsamp, 0, 8e-3));
    }
    p.phases.set_size(p.g.n2, p.ns);
    for (arma::uword s = 0; s < p.ns; ++s) p.phases.col(s) = uniform<double>(p.g.n2, -kPi, kPi);
    p.maps = complex_normal<double>(p.g.n2 * p.nc);
    return p;
}
template <typename T1>
pcSENSE<T1> make_pcsense(const PcSetup& p) {
    auto m = [](const arma::mat& a) { return arma::conv_to<arma::Mat<T1>>::from(a); };
    return pcSENSE<T1>(m(p.kx), m(p.ky), m(p.kz), m(p.t), cv<T1>(p.g.ix), cv<T1>(p.g.iy), cv<T1>(p.g.iz),
                       cv<T1>(p.g.FM), arma::conv_to<arma::Col<std::complex<T1>>>::from(p.maps), m(p.phases), p.nc);
}
}  // namespace

TEST_CASE("pcSENSE forward and adjoint match a float64 brute-force reference", "[pcsense]") {
    FORGE_INFO_SEED();
    const PcSetup p = make_pc();
    const arma::uword n2 = p.g.n2;
    // Reference matrix: row block (c*ns + s) = E_s diag(S_c .* exp(-i P_s)).
    arma::cx_mat A(p.nsamp * p.ns * p.nc, n2);
    for (arma::uword c = 0; c < p.nc; ++c)
        for (arma::uword s = 0; s < p.ns; ++s) {
            const arma::cx_mat E = encoding_matrix(p.kx.col(s), p.ky.col(s), p.kz.col(s), p.t.col(s), p.g);
            arma::cx_vec m(n2);
            for (arma::uword k = 0; k < n2; ++k) m(k) = p.maps(c * n2 + k) * std::polar(1.0, -p.phases(k, s));
            const arma::uword r0 = (c * p.ns + s) * p.nsamp;
            A.rows(r0, r0 + p.nsamp - 1) = E * arma::diagmat(m);
        }
    const arma::cx_vec x = complex_normal<double>(n2), y = complex_normal<double>(A.n_rows);
    pcSENSE<double> Pd = make_pcsense<double>(p);
    CHECK(Pd.n_data() == A.n_rows);
    CHECK(Pd.n1() == p.nsamp * p.ns);
    CHECK(rel_error(arma::cx_vec(Pd * x), arma::cx_vec(A * x)) < 1e-10);
    CHECK(rel_error(arma::cx_vec(Pd / y), arma::cx_vec(A.t() * y)) < 1e-10);
    pcSENSE<float> Pf = make_pcsense<float>(p);
    CHECK(rel_error(arma::cx_fvec(Pf * arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(x))), arma::cx_vec(A * x)) <
          1e-4);
    CHECK(rel_error(arma::cx_fvec(Pf / arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(y))), arma::cx_vec(A.t() * y)) <
          1e-4);
    // Coil-by-coil inside each shot gives the same result.
    Pf.set_coil_batching(false);
    CHECK(rel_error(arma::cx_fvec(Pf * arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(x))), arma::cx_vec(A * x)) <
          1e-4);
}

TEST_CASE("pcSENSE is adjoint and rejects bad shapes", "[pcsense][adjoint]") {
    FORGE_INFO_SEED();
    const PcSetup p = make_pc();
    pcSENSE<float> P = make_pcsense<float>(p);
    check_adjoint(P, adjoint_tolerance<float>(), DotScale::Norms);
    check_normal(P, 0.0);
    check_batch(P, 3, 0.0);
    const pcSENSE<double> Pd = make_pcsense<double>(p);
    check_adjoint(Pd, adjoint_tolerance<double>(), DotScale::Norms);
    check_normal(Pd, 0.0);
    check_batch(Pd, 3, 0.0);

    auto m = [](const arma::mat& a) { return arma::conv_to<arma::fmat>::from(a); };
    CHECK_THROWS_WITH(pcSENSE<float>(m(p.kx), m(p.ky), m(p.kz), m(arma::mat(p.t.rows(1, p.nsamp - 1))),
                                     cv<float>(p.g.ix), cv<float>(p.g.iy), cv<float>(p.g.iz), cv<float>(p.g.FM),
                                     arma::conv_to<arma::cx_fvec>::from(p.maps), m(p.phases), p.nc),
                      Catch::Contains("t is"));
    CHECK_THROWS_WITH(pcSENSE<float>(m(p.kx), m(p.ky), m(p.kz), m(p.t), cv<float>(p.g.ix), cv<float>(p.g.iy),
                                     cv<float>(p.g.iz), cv<float>(p.g.FM), arma::conv_to<arma::cx_fvec>::from(p.maps),
                                     m(arma::mat(p.phases.cols(0, 1))), p.nc),
                      Catch::Contains("shotPhases"));
    CHECK_THROWS_AS(P * arma::cx_fvec(p.g.n2 - 1, arma::fill::ones), forge::invalid_argument);
    // n2 * nc = 48 * (2^60 + 1) wraps to 48, the length of one coil's map.
    const arma::uword huge = (arma::uword(1) << 60) + 1;
    CHECK_THROWS_WITH(pcSENSE<float>(m(p.kx), m(p.ky), m(p.kz), m(p.t), cv<float>(p.g.ix), cv<float>(p.g.iy),
                                     cv<float>(p.g.iz), cv<float>(p.g.FM),
                                     arma::conv_to<arma::cx_fvec>::from(arma::cx_vec(p.maps.head(p.g.n2))), m(p.phases),
                                     huge),
                      Catch::Contains("nc"));
}
