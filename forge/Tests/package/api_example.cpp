// Built against an installed forge by run_package_test.sh: the geometry types (ImageGrid, Trajectory,
// PixelGeometry, the operators built from them, domain_shape, QuadPenalty(grid)) and the deprecated names, which must still compile, warn
// (the script greps the build output for each warning) and give the same results as their new names. forge::
// names only (no FORGE_GLOBAL_NAMES). Exits 1 on the first mismatch.
#include <cstdio>
#include <memory>

#include "forge/Core/Geometry.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/DensityCompensation.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Solvers/recon_solve.h"
#include "forge/Solvers/solve_pwls_pcg.hpp"  // deprecated header: a message, then solve_pwls_pcg.h

// Without FORGE_GLOBAL_NAMES forge declares nothing at global scope: a program may use these names for its own
// types (with forge's using-declarations there, this would not compile).
struct Gdft {};
struct SENSE {};
struct QuadPenalty {};
struct forgeCol {};

namespace {

int failures = 0;
void expect(bool ok, const char* what) {
    std::printf("%-72s %s\n", what, ok ? "ok" : "MISMATCH");
    if (!ok) ++failures;
}

// An operator written outside forge on an image grid (a pixel-wise scaling) that reports its grid, as
// LinearOperator's contract lets any operator do.
class GridScale : public forge::LinearOperator<float> {
public:
    GridScale(const forge::ImageGrid& grid, float s)
        : forge::LinearOperator<float>("GridScale", grid.n_pixels(), grid.n_pixels()), s_(s) {
        set_domain_shape(grid);
    }

protected:
    void apply_host(const Elem* in, Elem* out, forge::uword nbatch, bool) const override {
        for (forge::uword i = 0; i < nbatch * domain_size(); ++i) out[i] = in[i] * s_;
    }

private:
    float s_;
};

}  // namespace

int main() {
    using cx = std::complex<float>;
    const forge::ImageGrid grid{8, 8};
    const forge::uword n = grid.n_pixels();

    // Pixel positions on the grid are those of Gfft (the Cartesian transform's own coordinates).
    arma::fvec fm(n, arma::fill::zeros);
    const forge::PixelGeometry<float> pixels = forge::PixelGeometry<float>::on_grid(grid, fm);
    const arma::fmat coords = forge::Gfft<float>(grid.nx, grid.ny, grid.nz).image_coords();
    expect(arma::all(pixels.x == coords.col(0)) && arma::all(pixels.y == coords.col(1)) &&
               arma::all(pixels.z == coords.col(2)),
           "PixelGeometry::on_grid equals Gfft::image_coords");

    // A Cartesian trajectory over the grid, k in cycles/FOV.
    arma::fvec kx(n), ky(n), kz(n, arma::fill::zeros), t(n, arma::fill::zeros);
    for (forge::uword j = 0; j < n; ++j) {
        kx[j] = float(j % grid.nx) - float(grid.nx / 2);
        ky[j] = float(j / grid.nx) - float(grid.ny / 2);
    }
    const forge::Trajectory<float> k(kx, ky, kz, t);
    k.check("api_example");
    pixels.check("api_example");
    forge::Gdft<float> G(k.n_samples(), pixels.n_pixels(), k.kx, k.ky, k.kz, pixels.x, pixels.y, pixels.z,
                         pixels.field_map_or_zeros(), k.times_or_zeros());

    // The operators' geometry constructors equal their positional forms, and the grid operators report their grid.
    {
        const forge::Gdft<float> Gg(k, pixels);
        const forge::Gfft<float> F(grid), Fpos(grid.nx, grid.ny, grid.nz);
        const arma::fvec kxi = 0.45f * kx, kyi = 0.45f * ky;  // inside the band
        const forge::Trajectory<float> ki(kxi, kyi, kz);
        const forge::Gnufft<float> N(grid, ki), Npos(n, grid.nx, grid.ny, grid.nz, kxi, kyi, kz);
        arma::cx_fvec v(n, arma::fill::randn);
        expect(arma::all(arma::cx_fvec(Gg * v) == arma::cx_fvec(G * v)),
               "Gdft(Trajectory, PixelGeometry) equals Gdft(n1, n2, ...)");
        expect(arma::all(arma::cx_fvec(F * v) == arma::cx_fvec(Fpos * v)), "Gfft(ImageGrid) equals Gfft(nx, ny, nz)");
        expect(arma::all(arma::cx_fvec(N * v) == arma::cx_fvec(Npos * v)) &&
                   arma::all(arma::cx_fvec(N / v) == arma::cx_fvec(Npos / v)),
               "Gnufft(ImageGrid, Trajectory) equals Gnufft(n1, nx, ny, nz, ...)");
        expect(F.domain_shape() == grid && N.domain_shape() == grid, "Gfft and Gnufft report their grid");
    }

    // domain_shape through composites, and the penalty built from it.
    auto A = std::make_shared<const GridScale>(grid, 2.0f);
    const arma::cx_fvec maps(2 * n, arma::fill::ones);
    const forge::SENSE<float, GridScale> S(A, maps, 2);
    const forge::TimeSegmentation<float, GridScale> T(A, fm, arma::fvec(n, arma::fill::zeros), 1);
    const forge::OperatorPtr<float> C = forge::chain<float>(A, A);
    expect(A->domain_shape() == grid && S.domain_shape() == grid && T.domain_shape() == grid &&
               C->domain_shape() == grid,
           "domain_shape() of SENSE, TimeSegmentation, chain() is the operator's grid");
    const forge::QuadPenalty<float> R(S.domain_shape(), 0.01f), Rpos(grid.nx, grid.ny, grid.nz, 0.01f);
    expect(R.grid() == grid, "QuadPenalty(grid).grid() is the grid");
    arma::cx_fvec x(n, arma::fill::randn);
    expect(R.penalty(x) == Rpos.penalty(x) && arma::all(R.gradient(x) == Rpos.gradient(x)) &&
               R.denom(x, x) == Rpos.denom(x, x),
           "QuadPenalty(grid) equals QuadPenalty(nx, ny, nz)");
    const forge::TVPenalty<float> TV(grid, 0.01f, 0.1f), TVpos(grid.nx, grid.ny, grid.nz, 0.01f, 0.1f);
    expect(TV.penalty(x) == TVpos.penalty(x), "TVPenalty(grid) equals TVPenalty(nx, ny, nz)");

    // Deprecated names (each warns at compile time) against their new names.
    const forge::forgeCol<forge::forgeComplex<float>> fx(x);
    expect(arma::all(fx.getArma() == fx.to_arma()), "forgeCol::getArma() equals to_arma()");
    expect(R.Penalty(x) == R.penalty(x) && arma::all(R.Gradient(x) == R.gradient(x)) && R.Denom(x, x) == R.denom(x, x),
           "Robject::Penalty/Gradient/Denom equal penalty/gradient/denom");
    const arma::cx_fvec y = G * x;
    forge::ReconOptions<float> host;
    host.device = forge::ReconDevice::Host;  // the same path for both calls
    expect(arma::all(forge::reconSolve(y, G, R, 5, host) == forge::recon_solve(y, G, R, 5, host)),
           "reconSolve equals recon_solve");
    const arma::cx_fvec x0(n, arma::fill::zeros);
    const arma::fvec W(n, arma::fill::ones);
    const arma::cx_fvec viaHpp = forge::solve_pwls_pcg<float>(x0, G, W, y, R, 5);
    expect(arma::all(viaHpp == forge::recon_solve(y, G, R, 5, host)),
           "solve_pwls_pcg (through solve_pwls_pcg.hpp) equals recon_solve");
    const arma::fvec kxs = 0.45f * kx, kys = 0.45f * ky;  // a denser trajectory inside the band
    expect(arma::all(forge::calc3DDensityCompensation<float>(n, grid.nx, grid.ny, 1, kxs, kys, kz, 5) ==
                     forge::density_compensation<float>(n, grid.nx, grid.ny, 1, kxs, kys, kz, 5)),
           "calc3DDensityCompensation equals density_compensation");

    std::printf("%s\n", failures == 0 ? "api_example: all checks passed" : "api_example: FAILED");
    return failures == 0 ? 0 : 1;
}
