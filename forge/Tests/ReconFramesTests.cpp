// forge::recon::reconstruct with ReconSettings::frames (the share of one process of a distributed run):
// the chosen frames' images are bit for bit those of the whole reconstruction, the others stay zero, and
// indices that do not exist (or repeat) are refused by name.
#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Recon/Reconstruct.h"

using forge::recon::ReconProblem;

namespace {
// Three slices of a 12x10 grid, 2 coils with random maps, random samples within the grid's k-space, random data.
ReconProblem small_problem() {
    ReconProblem P;
    P.Nx = 12;
    P.Ny = 10;
    P.nslices = 3;
    P.nc = 2;
    forge::recon::set_pixel_grid(P);
    const std::size_t n1 = 150;
    for (std::size_t s = 0; s < P.nslices; ++s) {
        forge::recon::ReconFrame fr;
        fr.slice = s;
        fr.kx = forge_test::uniform<float>(n1, -6, 6);
        fr.ky = forge_test::uniform<float>(n1, -5, 5);
        fr.kz = arma::fvec(n1, arma::fill::zeros);
        fr.t = forge_test::uniform<float>(n1, 0, 0.005);
        fr.y = forge_test::complex_normal<float>(n1 * P.nc);
        P.frames.push_back(fr);
        P.smaps.push_back(forge_test::complex_normal<float>(P.n2() * P.nc));
        P.field_map.push_back(forge_test::uniform<float>(P.n2(), -100, 100));
    }
    P.n1total = n1 * P.nslices;
    P.n1max = n1;
    return P;
}
}  // namespace

TEST_CASE("reconstruct of a subset of frames equals the whole reconstruction on them", "[recon][frames]") {
    FORGE_INFO_SEED();
    const ReconProblem P = small_problem();
    forge::recon::ReconSettings S;
    S.iterations = 4;
    const forge::recon::ReconResult all = forge::recon::reconstruct(P, true, S);
    S.frames = {2, 0};
    CHECK(forge::recon::solves_per_reconstruction(P, S) == 2 * 4);
    const forge::recon::ReconResult part = forge::recon::reconstruct(P, true, S);
    REQUIRE(part.complex_image.size() == 3);
    for (std::size_t i : {std::size_t(0), std::size_t(2)}) {
        CHECK(arma::norm(all.complex_image[i]) > 0);
        CHECK(arma::approx_equal(part.complex_image[i], all.complex_image[i], "absdiff", 0.0f));  // the same bits
    }
    CHECK(arma::norm(part.complex_image[1]) == 0);
    CHECK(arma::norm(part.magnitude[1]) == 0);

    S.frames = {0, 3};
    CHECK_THROWS_AS(forge::recon::reconstruct(P, true, S), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, true, S),
                      Catch::Matchers::Contains("settings.frames names frame 3") &&
                          Catch::Matchers::Contains("expected indices < 3"));
    S.frames = {1, 1};
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, true, S), Catch::Matchers::Contains("names frame 1 twice"));
}

TEST_CASE("ReconProblem and ReconFrame from and to the geometry types", "[recon]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid g : {forge::ImageGrid(12, 10), forge::ImageGrid(9, 7, 5), forge::ImageGrid(1, 8, 6)}) {
        INFO("grid " << g.to_string());
        ReconProblem P;
        P.nslices = 2;
        P.set_grid(g);
        CHECK(P.grid() == g);
        CHECK(P.n2() == g.n_pixels());
        const forge::PixelGeometry<float> on = forge::PixelGeometry<float>::on_grid(g);
        CHECK(arma::all(P.ix == on.x));
        CHECK(arma::all(P.iy == on.y));
        CHECK(arma::all(P.iz == on.z));
        // set_pixel_grid of the same sizes: the same positions, bit for bit.
        ReconProblem Q;
        Q.Nx = g.nx, Q.Ny = g.ny, Q.Nz = g.nz;
        forge::recon::set_pixel_grid(Q);
        CHECK(arma::all(Q.ix == P.ix));
        CHECK(arma::all(Q.iz == P.iz));
        CHECK_FALSE(P.pixels(1).has_field_map());
        P.field_map = {forge_test::uniform<float>(P.n2(), -300, 300), forge_test::uniform<float>(P.n2(), -300, 300)};
        const forge::PixelGeometry<float> px = P.pixels(1);
        CHECK(arma::all(px.field_map == P.field_map[1]));
        CHECK(arma::all(px.x == P.ix));
        CHECK_THROWS_WITH(P.pixels(2), Catch::Contains("ReconProblem::pixels: slice 2 of 2"));
        P.field_map.pop_back();
        CHECK_THROWS_WITH(P.pixels(0), Catch::Contains("1 field maps, expected none or one per slice (2)"));
    }
    CHECK_THROWS_WITH(ReconProblem().set_grid(forge::ImageGrid(8, 0)), Catch::Contains("axis of length 0"));

    const forge::Trajectory<float> k(forge_test::uniform<float>(50, -32, 32), forge_test::uniform<float>(50, -32, 32),
                                     arma::fvec(50, arma::fill::zeros), forge_test::uniform<float>(50, 0, 8e-3));
    forge::recon::ReconFrame f;
    f.set_trajectory(k);
    const forge::Trajectory<float> back = f.trajectory();
    CHECK(arma::all(back.kx == k.kx));
    CHECK(arma::all(back.ky == k.ky));
    CHECK(arma::all(back.t == k.t));
    CHECK_THROWS_WITH(f.set_trajectory(forge::Trajectory<float>(k.kx, k.ky, k.kz)),
                      Catch::Contains("ReconFrame::set_trajectory: trajectory t (readout times) has 0 entries"));
    CHECK(f.kx.n_elem == 50);  // a refused trajectory leaves the frame as it was
}
