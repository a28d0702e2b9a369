// ToeplitzNormal as the normal of other operators: SENSE (coils batched through the FFTs), pcSENSE (one per shot),
// and solve_pwls_pcg_normal against solve_pwls_pcg.
#include <complex>
#include <memory>
#include <vector>

#include "OperatorChecks.h"
#include "ToeplitzTestProblem.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace toeplitz_test;

TEST_CASE("ToeplitzNormal as the normal of SENSE: sum_c S_c^H N S_c with the coils batched", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{16, 12, 1};
    const uword nc = 4;
    const Trajectory tr = random_trajectory(g, 800, 6e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 60);
    auto G = std::make_shared<forge::Gdft<double>>(tr.kx.n_elem, g.n2(), tr.kx, tr.ky, tr.kz, g.axis(0), g.axis(1),
                                                   g.axis(2), fm, tr.t);
    const arma::cx_vec maps = complex_normal<double>(g.n2() * nc);
    // Unit weights: SENSE's exact normal is then G^H G per coil.
    auto T = std::make_shared<forge::ToeplitzNormal<double>>(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, arma::vec(), fm,
                                                             tr.t, 12);
    const forge::SENSE<double> exact(G, maps, nc);
    const forge::SENSE<double> fast(forge::with_normal<double>(G, T), maps, nc);
    const arma::cx_vec x = complex_normal<double>(g.n2());
    CHECK(rel_error(fast * x, exact * x) == 0.0);  // forward and adjoint stay exact
    const arma::cx_vec y = complex_normal<double>(exact.n_data());
    CHECK(rel_error(fast / y, exact / y) == 0.0);
    const double e = check_normal(fast, exact, 1e-4).error;
    CHECK(e > 0);  // the Toeplitz path was taken
    // Batched normals: each vector as alone (the former bound, now for both vectors); and SENSE's own checks with the
    // Toeplitz normal inside (the dot test to Gdft<double>'s bound).
    check_batch(forge::NormalOf<double>(forge::share(fast)), 2, 1e-14);
    check_adjoint(fast, 1e-12);
    check_batch(fast, 2, 1e-14);

    CHECK_THROWS_WITH(forge::with_normal<double>(G, std::make_shared<forge::ToeplitzNormal<double>>(g.Nx + 1, g.Ny,
                                                                                                    g.Nz, tr.kx, tr.ky,
                                                                                                    tr.kz, tr.W)),
                      Catch::Contains("WithNormal: N (ToeplitzNormal) maps 204 to 204 entries"));
}

TEST_CASE("solve_pwls_pcg_normal: the exact normal reproduces solve_pwls_pcg; the Toeplitz normal its image",
          "[Toeplitz][solver]") {
    FORGE_INFO_SEED();
    const Grid g{20, 20, 1};
    const uword nc = 3;
    const Trajectory tr = random_trajectory(g, 1600, 10e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 100));
    const arma::fvec kx = as<float>(tr.kx), ky = as<float>(tr.ky), kz = as<float>(tr.kz), t = as<float>(tr.t),
                     W = as<float>(tr.W);
    auto G = std::make_shared<forge::Gdft<float>>(kx.n_elem, g.n2(), kx, ky, kz, as<float>(g.axis(0)),
                                                  as<float>(g.axis(1)), as<float>(g.axis(2)), fm, t);
    // Smooth coil maps and a smooth object, data from the exact operator plus noise.
    arma::cx_fvec maps(g.n2() * nc);
    const arma::vec px = g.axis(0), py = g.axis(1);
    for (uword c = 0; c < nc; ++c)
        for (uword i = 0; i < g.n2(); ++i)
            maps[c * g.n2() + i] = std::polar(float(std::exp(-std::pow(px[i] - 0.4 * std::cos(2.1 * c), 2) -
                                                             std::pow(py[i] - 0.4 * std::sin(2.1 * c), 2))),
                                              float(c + px[i]));
    const forge::SENSE<float> S(G, maps, nc);
    arma::cx_fvec object(g.n2(), arma::fill::zeros);
    for (uword i = 0; i < g.n2(); ++i)
        if (px[i] * px[i] + py[i] * py[i] < 0.16) object[i] = std::complex<float>(1.0f + float(px[i]), 0.3f);
    arma::cx_fvec y = S * object;
    y += complex_normal<float>(y.n_elem) * float(0.01 * arma::norm(y) / std::sqrt(double(y.n_elem)));
    const arma::fvec Wc = arma::repmat(W, nc, 1);
    const forge::QuadPenalty<float> R(g.Nx, g.Ny, 1, 1.0f);
    const arma::cx_fvec x0(g.n2(), arma::fill::zeros);
    const uword niter = 10;
    const arma::cx_fvec exact = forge::solve_pwls_pcg<float>(x0, S, Wc, y, R, niter);
    const arma::cx_fvec b = S / arma::cx_fvec(y % arma::conv_to<arma::cx_fvec>::from(Wc));

    // The exact weighted normal S^H W S as an operator: the same iterates.
    auto weights = std::make_shared<forge::StackedDiagonal<float>>(arma::conv_to<arma::cx_fvec>::from(Wc), 1, "W");
    const auto Sp = forge::share(S);
    const forge::Chain<float> exactNormal(forge::chain<float>(Sp, weights),
                                          std::make_shared<forge::AdjointOf<float>>(Sp));
    const arma::cx_fvec viaNormal = forge::solve_pwls_pcg_normal<float>(x0, exactNormal, b, R, niter);
    CHECK(rel_error(viaNormal, exact) <= 1e-4);

    // Toeplitz for 1e-3, with SENSE's normal through with_normal.
    const uword L = forge::ToeplitzNormal<float>::choose_segments(fm, t, 1e-3);
    auto T = std::make_shared<forge::ToeplitzNormal<float>>(g.Nx, g.Ny, g.Nz, kx, ky, kz, W, fm, t, L);
    const forge::SENSE<float> St(forge::with_normal<float>(G, T), maps, nc);
    double lastCost = 1e300;
    bool monotone = true;
    forge::PcgOptions<float> opts;
    opts.callback = [&](const forge::PcgIterationInfo& info) {
        monotone = monotone && info.cost <= lastCost;
        lastCost = info.cost;
    };
    const arma::cx_fvec fast =
        forge::solve_pwls_pcg_normal<float>(x0, forge::NormalOf<float>(forge::share(St)), b, R, niter, opts);
    const double e = rel_error(fast, exact);
    INFO("L = " << L << ", NRMSE Toeplitz vs exact solution " << e);
    CHECK(e <= 1e-2);
    CHECK(monotone);

    CHECK_THROWS_WITH(forge::solve_pwls_pcg_normal<float>(x0, *T, arma::cx_fvec(g.n2() + 1), R, niter),
                      Catch::Contains("solve_pwls_pcg_normal: b has 401 entries"));
}

TEST_CASE("pcSENSE with per-shot Toeplitz normals: sum_c S_c^H sum_s D_s^H N_s D_s S_c", "[Toeplitz][pcSENSE]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 1};
    const uword nc = 3, nshots = 3, per = 300;
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 50);
    arma::mat kx(per, nshots), ky(per, nshots), kz(per, nshots, arma::fill::zeros), t(per, nshots),
        phases(g.n2(), nshots);
    for (uword s = 0; s < nshots; ++s) {
        const Trajectory tr = random_trajectory(g, per, 5e-3);
        kx.col(s) = tr.kx;
        ky.col(s) = tr.ky;
        t.col(s) = tr.t + 1e-4 * double(s);
        phases.col(s) = uniform<double>(g.n2(), -kPi, kPi);
    }
    const arma::cx_vec maps = complex_normal<double>(g.n2() * nc);
    forge::pcSENSE<double> exact(kx, ky, kz, t, g.axis(0), g.axis(1), g.axis(2), fm, maps, phases, nc);
    forge::pcSENSE<double> fast(kx, ky, kz, t, g.axis(0), g.axis(1), g.axis(2), fm, maps, phases, nc);
    std::vector<forge::OperatorPtr<double>> normals;
    for (uword s = 0; s < nshots; ++s)
        normals.push_back(std::make_shared<forge::ToeplitzNormal<double>>(g.Nx, g.Ny, g.Nz, arma::vec(kx.col(s)),
                                                                          arma::vec(ky.col(s)), arma::vec(kz.col(s)),
                                                                          arma::vec(), fm, arma::vec(t.col(s)), 10));
    fast.set_shot_normals(normals);
    const arma::cx_vec x = complex_normal<double>(g.n2());
    CHECK(rel_error(fast * x, exact * x) == 0.0);
    const double e = check_normal(fast, exact, 1e-5).error;
    CHECK(e > 0);
    fast.set_shot_normals({});
    check_normal(fast, exact, 1e-14);
    CHECK_THROWS_WITH(fast.set_shot_normals({normals[0]}),
                      Catch::Contains("pcSENSE::set_shot_normals: 1 normal operators, expected one per shot (3)"));
}
