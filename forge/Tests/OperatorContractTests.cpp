// The LinearOperator contract: every operator's normal() equals adjoint(forward()), its adjoint is the adjoint,
// a batch equals the vectors one by one (the checks of OperatorChecks.h, which must reject a broken operator);
// composites are right by construction; an operator written outside the library works with SENSE, TimeSegmentation and
// solve_pwls_pcg; a PCG iteration converts no vectors.
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "UserOperator.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Operators/pcSenseTimeSeg.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using forge_test::check_adjoint;
using forge_test::check_batch;
using forge_test::check_normal;
using forge_test::complex_normal;
using forge_test::DotScale;
using forge_test::MatrixOperator;
using forge_test::rel_error;
using forge_test::uniform;
using Op = forge::LinearOperator<double>;
using FVec = forge::forgeCol<forge::forgeComplex<double>>;

namespace {

constexpr arma::uword N = 8, n2 = N * N, n1 = 90, nc = 3, nshots = 2;

struct Problem {
    arma::vec kx = uniform<double>(n1, -double(N) / 2, double(N) / 2 - 1e-9);
    arma::vec ky = uniform<double>(n1, -double(N) / 2, double(N) / 2 - 1e-9);
    arma::vec kz = arma::vec(n1, arma::fill::zeros);
    arma::vec t = arma::regspace(0, double(n1 - 1)) * 20e-6;
    arma::vec ix, iy, iz = arma::vec(n2, arma::fill::zeros);
    arma::vec fm = uniform<double>(n2, -150, 150);
    arma::cx_vec maps = complex_normal<double>(n2 * nc);
    Problem() : ix(n2), iy(n2) {
        for (arma::uword j = 0; j < n2; ++j) {
            ix[j] = (double(j % N) - double(N) / 2) / double(N);
            iy[j] = (double(j / N) - double(N) / 2) / double(N);
        }
    }
    forge::Gdft<double> gdft(bool field) const {
        const arma::vec f = field ? fm : arma::vec(n2, arma::fill::zeros);
        return forge::Gdft<double>(n1, n2, kx, ky, kz, ix, iy, iz, f, t);
    }
    // The field-free DFT as a dense matrix: what a user might hand in as an operator of their own.
    arma::cx_mat dft_matrix() const {
        arma::cx_mat E(n1, n2);
        for (arma::uword j = 0; j < n1; ++j)
            for (arma::uword k = 0; k < n2; ++k) E(j, k) = std::polar(1.0, -2 * M_PI * (kx[j] * ix[k] + ky[j] * iy[k]));
        return E;
    }
};

// The contract's bounds (double operators of a few dozen pixels: rounding is 1e-15 or so).
constexpr double kAdjointTol = 1e-10;  // of |<A x, y>| + |<x, A^H y>|
constexpr double kNormalTol = 1e-12;
constexpr double kBatchTol = 1e-13;

// normal == adjoint(forward) for one vector and a batch of two, <A x, y> == <x, A^H y>, and a batch of two equals
// the vectors one by one (forward, adjoint and normal).
void check_contract(const Op& A) {
    INFO(A.name());
    check_adjoint(A, kAdjointTol, DotScale::Sum);
    check_normal(A, kNormalTol);
    check_normal(A, kNormalTol, 2);
    check_batch(A, 2, kBatchTol);
}

// An operator written outside the library with one deliberate defect of relative size 1e-6.
enum class Defect { None, Adjoint, Normal, Batch };
const char* defect_name(Defect d) {
    return d == Defect::None      ? "none"
           : d == Defect::Adjoint ? "adjoint scaled by 1 + 1e-6"
           : d == Defect::Normal  ? "normal scaled by 1 + 1e-6"
                                  : "vectors after the first of a batch scaled by 1 + 1e-6";
}
class BrokenOperator : public forge::LinearOperator<double> {
public:
    BrokenOperator(arma::cx_mat A, Defect d)
        : forge::LinearOperator<double>("BrokenOperator", A.n_rows, A.n_cols), A_(std::move(A)), defect_(d) {}

protected:
    static constexpr double kScale = 1 + 1e-6;
    void apply_host(const Elem* in, Elem* out, forge::uword nbatch, bool forward) const override {
        const forge::uword nin = forward ? A_.n_cols : A_.n_rows, nout = forward ? A_.n_rows : A_.n_cols;
        for (forge::uword b = 0; b < nbatch; ++b) {
            const arma::cx_vec x(const_cast<std::complex<double>*>(
                                     reinterpret_cast<const std::complex<double>*>(in + b * nin)),
                                 nin, false, true);
            arma::cx_vec y = forward ? arma::cx_vec(A_ * x) : arma::cx_vec(A_.t() * x);
            if ((defect_ == Defect::Adjoint && !forward) || (defect_ == Defect::Batch && b > 0)) y *= kScale;
            std::memcpy(static_cast<void*>(out + b * nout), y.memptr(), nout * sizeof(std::complex<double>));
        }
    }
    void normal_impl(const Elem* in, Elem* out, forge::uword nbatch, forge::Residency where) const override {
        forge::LinearOperator<double>::normal_impl(in, out, nbatch, where);
        if (defect_ == Defect::Normal)
            for (forge::uword i = 0; i < nbatch * domain_size(); ++i) out[i] = out[i] * kScale;
    }

private:
    arma::cx_mat A_;
    Defect defect_;
};

}  // namespace

TEST_CASE("normal() equals adjoint(forward()) for every operator, batched too", "[operators][contract]") {
    FORGE_INFO_SEED();
    const Problem p;
    std::vector<std::shared_ptr<const Op>> ops;
    ops.push_back(std::make_shared<forge::Gdft<double>>(p.gdft(true)));
    ops.push_back(std::make_shared<forge::GdftR2<double>>(n1, n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.fm, p.t, N, N,
                                                          arma::uword(1)));
    const forge::Gnufft<double> nufft(n1, N, N, 1, p.kx, p.ky, p.kz);
    ops.push_back(std::make_shared<forge::Gnufft<double>>(nufft));
    ops.push_back(std::make_shared<forge::Gfft<double>>(N, N, 1));
    const arma::vec gx = arma::round(p.kx), gy = arma::round(p.ky);
    ops.push_back(std::make_shared<forge::GfftSampled<double>>(N, N, 1, N, N, 1, arma::clamp(gx, -4.0, 3.0),
                                                               arma::clamp(gy, -4.0, 3.0), p.kz));
    ops.push_back(std::make_shared<forge::TimeSegmentation<double, forge::Gnufft<double>>>(nufft, p.fm, p.t, 4));
    ops.push_back(std::make_shared<forge::SENSE<double, forge::Gdft<double>>>(p.gdft(true), p.maps, nc));
    const arma::mat K = arma::reshape(p.kx.head(nshots * 40), 40, nshots),
                    L = arma::reshape(p.ky.head(nshots * 40), 40, nshots);
    const arma::mat Kz(40, nshots, arma::fill::zeros), T = arma::reshape(p.t.head(nshots * 40), 40, nshots);
    const arma::mat phases = arma::reshape(uniform<double>(n2 * nshots, -3, 3), n2, nshots);
    ops.push_back(std::make_shared<forge::pcSENSE<double>>(K, L, Kz, T, p.ix, p.iy, p.iz, p.fm, p.maps, phases, nc));
    ops.push_back(std::make_shared<forge::pcSenseTimeSeg<double>>(K, L, Kz, T, N, N, 1, p.fm, p.maps, phases, nc, 3));
    const auto user = std::make_shared<MatrixOperator<double>>(p.dft_matrix());
    ops.push_back(user);
    ops.push_back(
        forge::chain<double>(std::make_shared<forge::StackedDiagonal<double>>(complex_normal<double>(n2), 1), user));
    ops.push_back(std::make_shared<forge::Batched<double>>(user, 2));
    ops.push_back(std::make_shared<forge::StackedDiagonal<double>>(complex_normal<double>(3 * n2), 3));
    ops.push_back(std::make_shared<forge::AdjointOf<double>>(user));
    ops.push_back(
        std::make_shared<forge::VerticalStack<double>>(std::vector<forge::OperatorPtr<double>>{user, ops[0]}));
    // An operator and its normal as operators of their own: NormalOf(A) is Hermitian, WithNormal(A, NormalOf(A))
    // has the normal A^H A computed once more.
    const auto normalOfUser = std::make_shared<forge::NormalOf<double>>(user);
    ops.push_back(normalOfUser);
    ops.push_back(forge::with_normal<double>(user, normalOfUser));
    for (const auto& A : ops) check_contract(*A);
}

TEST_CASE("Each operator check rejects an operator broken in what it checks, and only that",
          "[operators][contract][checks]") {
    FORGE_INFO_SEED();
    const Problem p;
    const MatrixOperator<double> exact(p.dft_matrix());
    for (Defect d : {Defect::None, Defect::Adjoint, Defect::Normal, Defect::Batch}) {
        INFO("defect: " << defect_name(d));
        const BrokenOperator A(p.dft_matrix(), d);
        CHECK(forge_test::adjoint_test(A, DotScale::Sum).passes(kAdjointTol) == (d != Defect::Adjoint));
        // the operator tests' bound, relative to ||A x|| ||y||, sees an adjoint 1e-6 off too
        CHECK(forge_test::adjoint_test(A, DotScale::Norms).passes(forge_test::adjoint_tolerance<double>()) ==
              (d != Defect::Adjoint));
        CHECK(forge_test::normal_test(A).passes(kNormalTol) == (d != Defect::Normal));
        CHECK(forge_test::normal_test(A, 2).passes(kNormalTol) == (d != Defect::Normal));
        CHECK(forge_test::batch_test(A, 2).passes(kBatchTol) == (d != Defect::Batch));
        // Against the exact operator's normal, a wrong adjoint shows too.
        CHECK(forge_test::normal_test(A, exact).passes(kNormalTol) == (d == Defect::None || d == Defect::Batch));
    }
}

TEST_CASE("Composite operators equal their dense matrices", "[operators][composition]") {
    FORGE_INFO_SEED();
    const arma::cx_mat A = arma::cx_mat(arma::randn(7, 5), arma::randn(7, 5));
    const arma::cx_mat B = arma::cx_mat(arma::randn(4, 7), arma::randn(4, 7));
    const auto a = std::make_shared<MatrixOperator<double>>(A), b = std::make_shared<MatrixOperator<double>>(B);
    const arma::cx_vec w = complex_normal<double>(10);  // two diagonals of 5
    const arma::cx_vec x = complex_normal<double>(5), y4 = complex_normal<double>(4);

    const auto ab = forge::chain<double>(a, b);
    CHECK(rel_error(*ab * x, arma::cx_vec(B * A * x)) < 1e-13);
    CHECK(rel_error(*ab / y4, arma::cx_vec(A.t() * B.t() * y4)) < 1e-13);

    forge::StackedDiagonal<double> D(w, 2);
    const arma::cx_mat Dm =
        arma::join_cols(arma::cx_mat(arma::diagmat(w.head(5))), arma::cx_mat(arma::diagmat(w.tail(5))));
    CHECK(rel_error(D * x, arma::cx_vec(Dm * x)) < 1e-14);
    const arma::cx_vec y10 = complex_normal<double>(10);
    CHECK(rel_error(D / y10, arma::cx_vec(Dm.t() * y10)) < 1e-14);

    forge::VerticalStack<double> S({a, std::make_shared<MatrixOperator<double>>(arma::cx_mat(B * A))});
    const arma::cx_mat Sm = arma::join_cols(A, arma::cx_mat(B * A));
    const arma::cx_vec y11 = complex_normal<double>(11);
    CHECK(rel_error(S * x, arma::cx_vec(Sm * x)) < 1e-13);
    CHECK(rel_error(S / y11, arma::cx_vec(Sm.t() * y11)) < 1e-13);

    CHECK_THROWS_AS(forge::chain<double>(b, a), forge::invalid_argument);  // 4 entries into a 5-pixel domain
    CHECK_THROWS_WITH(forge::StackedDiagonal<double>(w, 3), Catch::Contains("not a multiple of copies"));
    CHECK_THROWS_WITH(a->forward(FVec(6)), Catch::Contains("MatrixOperator forward") && Catch::Contains("n2 = 5"));
    CHECK_THROWS_WITH(a->forward(FVec(5), 0), Catch::Contains("nbatch must be at least 1"));
}

TEST_CASE("An operator written outside the library: SENSE, TimeSegmentation and solve_pwls_pcg take it",
          "[operators][user]") {
    FORGE_INFO_SEED();
    const Problem p;
    const MatrixOperator<double> E(p.dft_matrix());
    const forge::Gdft<double> G = p.gdft(false);
    const arma::cx_vec x = complex_normal<double>(n2);

    // TimeSegmentation around it equals TimeSegmentation around the library's field-free Gdft.
    const forge::TimeSegmentation<double, MatrixOperator<double>> TSu(E, p.fm, p.t, 5, forge::TSInterp::MinMax);
    const forge::TimeSegmentation<double, forge::Gdft<double>> TSg(G, p.fm, p.t, 5, forge::TSInterp::MinMax);
    CHECK(rel_error(TSu * x, TSg * x) < 1e-12);
    const arma::cx_vec y = complex_normal<double>(n1);
    CHECK(rel_error(TSu / y, TSg / y) < 1e-12);

    // SENSE around it equals SENSE around Gdft.
    const forge::SENSE<double, MatrixOperator<double>> Su(E, p.maps, nc);
    const forge::SENSE<double, forge::Gdft<double>> Sg(G, p.maps, nc);
    CHECK(rel_error(Su * x, Sg * x) < 1e-12);

    // solve_pwls_pcg on it reaches the least-squares solution of the normal equations.
    const arma::cx_mat A = E.matrix();
    const arma::cx_vec data = complex_normal<double>(n1);
    const arma::cx_vec ref = arma::solve(arma::cx_mat(A.t() * A), arma::cx_vec(A.t() * data));
    const forge::QuadPenalty<double> R(N, N, 1, 0.0);
    const arma::cx_vec xs = forge::solve_pwls_pcg<double>(arma::cx_vec(n2, arma::fill::zeros), E,
                                                          arma::vec(n1, arma::fill::ones), data, R, 3 * n2);
    CHECK(rel_error(xs, ref) < 1e-6);
}

TEST_CASE("A PCG iteration converts no vector between arma::Col and forgeCol", "[solver][conversions]") {
    FORGE_INFO_SEED();
    const Problem p;
    const forge::Gdft<double> G = p.gdft(true);
    const forge::SENSE<double, forge::Gdft<double>> S(G, p.maps, nc);
    const forge::TimeSegmentation<double, forge::Gdft<double>> TS(p.gdft(false), p.fm, p.t, 3);
    const forge::QuadPenalty<double> R(N, N, 1, 0.5);
    auto conversions = [&](const Op& A, arma::uword niter) {
        const arma::cx_vec y = complex_normal<double>(A.codomain_size());
        const arma::vec W(A.codomain_size(), arma::fill::ones);
        const arma::cx_vec x0(A.domain_size(), arma::fill::zeros);
        forge::reset_arma_conversion_stats();
        (void)forge::solve_pwls_pcg<double>(x0, A, W, y, R, niter);
        const auto s = forge::arma_conversion_stats();
        return s.to_forge + s.to_arma;
    };
    for (const Op* A : {static_cast<const Op*>(&G), static_cast<const Op*>(&S), static_cast<const Op*>(&TS)}) {
        INFO(A->name());
        const auto few = conversions(*A, 2), many = conversions(*A, 9);
        CHECK(few == many);
        CHECK(many == 4);  // x0, W and y in; the image out
    }
}
