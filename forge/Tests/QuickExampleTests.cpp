// The quick example of docs/reconstruction.md, verbatim, in a translation unit with both
// `using namespace forge;` and `using namespace arma;` at file scope, as the page shows it (forge::uword
// is arma::uword, so `uword` is not ambiguous). The text between the BEGIN/END markers is compared with
// the page's code block by forge/Tests/docs/check_quick_example.sh (ctest: docs_quick_example).
#include <catch2/catch.hpp>
#include <type_traits>

// BEGIN quick example: head
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"
using namespace forge;
using namespace arma;
// END quick example: head

static_assert(std::is_same<forge::uword, arma::uword>::value, "forge::uword must be arma::uword");

TEST_CASE("Quick example of docs/reconstruction.md compiles with both using-directives and recovers the image",
          "[example][docs]") {
    // BEGIN quick example: body
    // 8x8 image, 64 Cartesian k-space samples, no field map: n1 samples, n2 pixels.
    uword Nx = 8, Ny = 8, n1 = Nx * Ny, n2 = Nx * Ny;
    Col<float> kx(n1), ky(n1), kz(n1, fill::zeros), t(n1, fill::zeros);   // cycles/FOV, seconds
    Col<float> ix(n2), iy(n2), iz(n2, fill::zeros), field_map(n2, fill::zeros);  // FOV units, rad/s
    for (uword j = 0; j < Ny; ++j)
        for (uword i = 0; i < Nx; ++i) {
            kx(i + Nx * j) = float(i) - Nx / 2.0f;
            ky(i + Nx * j) = float(j) - Ny / 2.0f;
            ix(i + Nx * j) = (float(i) - Nx / 2.0f) / Nx;
            iy(i + Nx * j) = (float(j) - Ny / 2.0f) / Ny;
        }
    Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, field_map, t);

    Col<cx_float> image(n2, fill::ones);
    Col<cx_float> kspace = G * image;  // forward: image -> k-space
    Col<cx_float> back = G / kspace;   // adjoint: k-space -> image

    // Iterative reconstruction: PCG on ||W^(1/2) (y - G x)||^2 + R(x)
    Col<float> W(n1, fill::ones);
    QuadPenalty<float> R(Nx, Ny, 1, 0.01f);
    Col<cx_float> x0(n2, fill::zeros);
    Col<cx_float> xhat = solve_pwls_pcg<float>(x0, G, W, kspace, R, 50);
    // END quick example: body

    // On this full Cartesian grid G is an unnormalised DFT, so G^H G = n1 I: the adjoint returns n1 * image.
    CHECK(arma::norm(back - cx_float(float(n1)) * image) / arma::norm(float(n1) * image) < 1e-5);
    // A constant image has zero roughness, so it is the exact minimiser of the penalised cost.
    CHECK(arma::norm(xhat - image) / arma::norm(image) < 1e-4);
}
