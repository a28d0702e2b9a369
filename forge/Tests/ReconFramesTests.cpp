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
        P.fieldmap.push_back(forge_test::uniform<float>(P.n2(), -100, 100));
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
    REQUIRE(part.complexImage.size() == 3);
    for (std::size_t i : {std::size_t(0), std::size_t(2)}) {
        CHECK(arma::norm(all.complexImage[i]) > 0);
        CHECK(arma::approx_equal(part.complexImage[i], all.complexImage[i], "absdiff", 0.0f));  // the same bits
    }
    CHECK(arma::norm(part.complexImage[1]) == 0);
    CHECK(arma::norm(part.magnitude[1]) == 0);

    S.frames = {0, 3};
    CHECK_THROWS_AS(forge::recon::reconstruct(P, true, S), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, true, S),
                      Catch::Matchers::Contains("settings.frames names frame 3") &&
                          Catch::Matchers::Contains("expected indices < 3"));
    S.frames = {1, 1};
    CHECK_THROWS_WITH(forge::recon::reconstruct(P, true, S), Catch::Matchers::Contains("names frame 1 twice"));
}
