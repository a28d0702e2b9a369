// docs/operators.md's "Writing an operator" example, verbatim: the text between the BEGIN/END markers is compared
// with the page's code block by forge/Tests/docs/check_doc_example.sh (ctest: docs_operator_example). The
// operator is written as a user would, with forge:: names only and no casts between complex types, and is checked
// against forge's own Gdft: forward, adjoint, batches, and SENSE, TimeSegmentation and PCG around it.
#include <cmath>
#include <complex>
#include <memory>

#include "TestHelpers.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"

// BEGIN operators.md example: head
#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Solvers/solve_pwls_pcg.h"

class MatrixOperator : public forge::LinearOperator<double> {  // a dense matrix, host only
public:
    explicit MatrixOperator(arma::cx_mat A) : LinearOperator("MatrixOperator", A.n_rows, A.n_cols), A_(std::move(A)) {}

protected:
    // nbatch vectors back to back at in; arma_view sees one of them as an arma::cx_vec without copying.
    void apply_host(const Elem* in, Elem* out, forge::uword nbatch, bool forward) const override {
        const forge::uword nin = forward ? A_.n_cols : A_.n_rows, nout = forward ? A_.n_rows : A_.n_cols;
        for (forge::uword b = 0; b < nbatch; ++b) {
            const ArmaVec x = arma_view(in + b * nin, nin);
            ArmaVec y = arma_view(out + b * nout, nout);  // assigning to y writes out
            if (forward) {
                y = A_ * x;
            } else {
                y = A_.t() * x;
            }
        }
    }

private:
    arma::cx_mat A_;
};
// END operators.md example: head

using forge_test::complex_normal;
using forge_test::rel_error;
using forge_test::uniform;

TEST_CASE("docs/operators.md: an operator written as the page shows matches Gdft, alone and inside SENSE, "
          "TimeSegmentation and PCG",
          "[docs][operators]") {
    FORGE_INFO_SEED();
    const arma::uword N = 8, n2 = N * N, n1 = 90, nc = 3;
    const arma::vec kx = uniform<double>(n1, -4, 4), ky = uniform<double>(n1, -4, 4), kz(n1, arma::fill::zeros);
    arma::vec ix(n2), iy(n2), iz(n2, arma::fill::zeros);
    for (arma::uword j = 0; j < n2; ++j) {
        ix[j] = (double(j % N) - double(N) / 2) / double(N);
        iy[j] = (double(j / N) - double(N) / 2) / double(N);
    }
    const arma::vec field_map = uniform<double>(n2, -150, 150), t = arma::regspace(0, double(n1 - 1)) * 20e-6;
    arma::cx_mat dft_matrix(n1, n2);  // the field-free DFT of forge's conventions, written out
    for (arma::uword j = 0; j < n1; ++j)
        for (arma::uword k = 0; k < n2; ++k)
            dft_matrix(j, k) = std::polar(1.0, -2 * M_PI * (kx[j] * ix[k] + ky[j] * iy[k]));
    const arma::cx_vec maps = complex_normal<double>(n2 * nc), x0(n2, arma::fill::zeros);
    const forge::Gdft<double> G(n1, n2, kx, ky, kz, ix, iy, iz, arma::vec(n2, arma::fill::zeros), t);
    const arma::cx_vec truth = complex_normal<double>(n2), data = G * truth;
    const arma::vec W(n1, arma::fill::ones);
    const forge::QuadPenalty<double> R(N, N, 1, 1.0);  // strong enough to keep the problem well conditioned

    // BEGIN operators.md example: body
    MatrixOperator E(dft_matrix);
    forge::SENSE<double, MatrixOperator> S(E, maps, nc);                    // coil stack around it
    forge::TimeSegmentation<double, MatrixOperator> A(E, field_map, t, 5);         // field correction around it
    arma::cx_vec x = forge::solve_pwls_pcg<double>(x0, E, W, data, R, 20);  // and solved
    // END operators.md example: body

    const arma::cx_vec v = complex_normal<double>(n2), y = complex_normal<double>(n1);
    CHECK(rel_error(E * v, G * v) < 1e-12);
    CHECK(rel_error(E / y, G / y) < 1e-12);
    // A batch of two through apply_host's views equals the vectors one by one.
    const arma::cx_vec v2 = arma::join_cols(v, arma::cx_vec(2.0 * v));
    const arma::cx_vec both = E.forward(forge::forgeCol<forge::forgeComplex<double>>(v2), 2).to_arma();
    CHECK(rel_error(arma::cx_vec(both.head(n1)), E * v) < 1e-15);
    CHECK(rel_error(arma::cx_vec(both.tail(n1)), arma::cx_vec(2.0 * (E * v))) < 1e-15);

    const forge::SENSE<double, forge::Gdft<double>> SG(G, maps, nc);
    CHECK(rel_error(S * v, SG * v) < 1e-12);
    const arma::cx_vec yc = complex_normal<double>(n1 * nc);
    CHECK(rel_error(S / yc, SG / yc) < 1e-12);
    const forge::TimeSegmentation<double, forge::Gdft<double>> AG(G, field_map, t, 5);
    CHECK(rel_error(A * v, AG * v) < 1e-12);
    CHECK(rel_error(A / y, AG / y) < 1e-12);
    // The same solve through Gdft. The operators agree to ~1e-13, and 20 PCG steps amplify that: on some draws they
    // run past convergence, where the step sizes are ratios of rounding errors and the iterate wanders along the
    // cost's flat directions; on others (condition numbers up to ~900) they stop short of it, and the two runs'
    // rounding grows along the iterations. The images differed by up to 2.5e-6 over 150 random seeds; the costs by
    // up to 3.4e-11 relative over 300 more, and 5.6e-10 for seed 1894148348182424805. A wrong operator gives O(1)
    // for both, so the bounds sit far from either.
    const arma::cx_vec xG = forge::solve_pwls_pcg<double>(x0, G, W, data, R, 20);
    auto cost = [&](const arma::cx_vec& v) { return std::pow(arma::norm(data - G * v), 2) + R.penalty(v); };
    CHECK(std::abs(cost(x) - cost(xG)) <= 1e-6 * cost(xG));
    CHECK(rel_error(x, xG) < 1e-4);
}
