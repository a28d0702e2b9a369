// The quick example of forge's operators page from before the headers moved into subject folders, verbatim
// between the markers (old include paths, unqualified names, only `using namespace arma;`), its `...` line
// followed by the fill it asks for. Built against an installed forge by run_legacy_paths_test.sh. Then a phantom
// with a field map and sample times goes through the same names. Exits 1 when a reconstruction misses its bound.
// --- operators page: begin
#include "forge/Operators/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.hpp"
using namespace arma;
// --- operators page: end
#include <cstdio>

static double nrmse(const Col<cx_float>& x, const Col<cx_float>& ref) { return norm(x - ref) / norm(ref); }

int main() {
    // --- operators page: begin
    // Build a Cartesian Gdft operator (8x8 image, 64 k-space samples)
    uword Nx = 8, Ny = 8, n1 = Nx*Ny, n2 = Nx*Ny;
    Col<float> kx(n2), ky(n2), kz(n2, fill::zeros);
    Col<float> ix(n1), iy(n1), iz(n1, fill::zeros);
    // ... fill kx/ky with Cartesian grid, ix/iy with pixel positions ...
    // --- operators page: end
    for (uword j = 0; j < Ny; ++j)  // k in cycles/FOV, pixel positions in FOV units
        for (uword i = 0; i < Nx; ++i) {
            kx(i + Nx * j) = float(i) - Nx / 2.0f;
            ky(i + Nx * j) = float(j) - Ny / 2.0f;
            ix(i + Nx * j) = (float(i) - Nx / 2.0f) / Nx;
            iy(i + Nx * j) = (float(j) - Ny / 2.0f) / Ny;
        }
    // --- operators page: begin
    Col<float> FM(n1, fill::zeros), t(n2, fill::zeros);
    Gdft<float> G(n1, n2, kx, ky, kz, ix, iy, iz, FM, t);

    // Forward transform
    Col<cx_float> image(n1, fill::ones);
    Col<cx_float> kspace = G * image;

    // Adjoint transform
    Col<cx_float> back = G / kspace;

    // Iterative reconstruction via PCG
    Col<float> W(n2, fill::ones);
    QuadPenalty<float> R(Nx, Ny, 1, 0.01f);
    Col<cx_float> x0(n1, fill::zeros);
    Col<cx_float> xhat = solve_pwls_pcg<float>(x0, G, W, kspace, R, 50);
    // --- operators page: end

    int failures = 0;
    auto check = [&](const char* what, double value, bool ok) {
        std::printf("%-58s %.3g %s\n", what, value, ok ? "ok" : "FAIL");
        failures += ok ? 0 : 1;
    };
    // On the Cartesian grid G^H G = n I: the adjoint returns n times the image.
    const double adjoint = nrmse(back, float(n1) * image);
    check("adjoint of the forward, NRMSE against n * image", adjoint, adjoint < 1e-5);
    // The constant image has no roughness, so the penalised solution is the image itself.
    const double constant = nrmse(xhat, image);
    check("PCG, constant image, NRMSE", constant, constant < 1e-4);

    // A phantom (a disc of 1 around a square of 0.5) on the same grid, a field map of up to 2 pi 30 rad/s,
    // the samples read line by line over 16 ms.
    Col<cx_float> phantom(n1, fill::zeros);
    for (uword p = 0; p < n1; ++p) {
        const float x = ix(p), y = iy(p);
        if (x * x + y * y < 0.16f) phantom(p) = (std::abs(x) < 0.15f && std::abs(y) < 0.15f) ? 0.5f : 1.0f;
        FM(p) = float(2 * datum::pi * 30) * (x + y);
    }
    for (uword s = 0; s < n2; ++s) t(s) = 2.5e-4f * float(s);
    Gdft<float> Gfm(n1, n2, kx, ky, kz, ix, iy, iz, FM, t);
    Col<cx_float> data = Gfm * phantom;
    const double corrected = nrmse(solve_pwls_pcg<float>(x0, Gfm, W, data, R, 50), phantom);
    const double uncorrected = nrmse(solve_pwls_pcg<float>(x0, G, W, data, R, 50), phantom);
    check("PCG, phantom with its field map, NRMSE", corrected, corrected < 2e-3);
    // The field map matters: without it the same data reconstruct far worse.
    check("PCG, phantom without its field map, NRMSE", uncorrected, uncorrected > 0.2);
    return failures == 0 ? 0 : 1;
}
