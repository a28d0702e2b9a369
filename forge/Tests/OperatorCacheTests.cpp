// forge::recon::OperatorCache: slices reconstructed one call at a time (as a stream sends them) take the encoding
// operator of an earlier slice with the same trajectory, and the images are bit for bit those of a reconstruction
// that builds every operator; an operator that holds the field map is reused only where the map is the same.
#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Recon/Reconstruct.h"

using forge::recon::EncodingOperator;
using forge::recon::OperatorCache;
using forge::recon::ReconProblem;
using forge::recon::ReconSettings;

namespace {
// Four slices of a 12x10 grid, 2 coils, one trajectory (random samples within the grid's k-space); slices 0, 1 and 3
// share a field map, slice 2 has its own; random maps and data per slice.
ReconProblem four_slices() {
    ReconProblem P;
    P.Nx = 12;
    P.Ny = 10;
    P.nslices = 4;
    P.nc = 2;
    forge::recon::set_pixel_grid(P);
    const std::size_t n1 = 150;
    const arma::fvec kx = forge_test::uniform<float>(n1, -6, 6), ky = forge_test::uniform<float>(n1, -5, 5);
    const arma::fvec t = forge_test::uniform<float>(n1, 0, 0.005);
    const arma::fvec shared = forge_test::uniform<float>(P.n2(), -100, 100);
    for (std::size_t s = 0; s < P.nslices; ++s) {
        forge::recon::ReconFrame fr;
        fr.slice = s;
        fr.kx = kx;
        fr.ky = ky;
        fr.kz = arma::fvec(n1, arma::fill::zeros);
        fr.t = t;
        fr.y = forge_test::complex_normal<float>(n1 * P.nc);
        P.frames.push_back(fr);
        P.smaps.push_back(forge_test::complex_normal<float>(P.n2() * P.nc));
        P.field_map.push_back(s == 2 ? arma::fvec(forge_test::uniform<float>(P.n2(), -100, 100)) : shared);
    }
    P.n1total = n1 * P.nslices;
    P.n1max = n1;
    return P;
}
}  // namespace

TEST_CASE("OperatorCache: slices one call at a time reuse the operator, images unchanged", "[recon][cache]") {
    FORGE_INFO_SEED();
    const ReconProblem P = four_slices();
    struct Case {
        EncodingOperator op;
        bool fieldCorrection;
        std::size_t reused;  // of slices 1, 2, 3 after slice 0 built its operator
    };
    // Operators without the field map serve every slice; those holding it (field-corrected DFT, time segmentation,
    // Toeplitz) serve slices 1 and 3, slice 2 builds its own and slice 3 finds slice 0's still cached.
    for (const Case c : {Case{EncodingOperator::Nufft, true, 3}, Case{EncodingOperator::Dft, false, 3},
                         Case{EncodingOperator::Dft, true, 2}, Case{EncodingOperator::TimeSeg, true, 2},
                         Case{EncodingOperator::Toeplitz, false, 3}, Case{EncodingOperator::Toeplitz, true, 2}}) {
        INFO("operator " << forge::recon::operator_name(c.op) << ", field correction " << c.fieldCorrection);
        ReconSettings S;
        S.op = c.op;
        S.iterations = 3;
        S.toeplitz_rhs = forge::recon::ToeplitzRhs::Exact;
        const forge::recon::ReconResult whole = forge::recon::reconstruct(P, c.fieldCorrection, S);
        OperatorCache cache;
        std::size_t reused = 0, built = 0;
        for (std::size_t s = 0; s < P.nslices; ++s) {
            S.frames = {s};
            const forge::recon::ReconResult one = forge::recon::reconstruct(P, c.fieldCorrection, S, "recon", &cache);
            reused += one.operators_reused;
            built += one.operators_built;
            REQUIRE(arma::norm(one.complex_image[s]) > 0);
            CHECK(arma::approx_equal(one.complex_image[s], whole.complex_image[s], "absdiff", 0.0f));  // the same bits
        }
        CHECK(reused == c.reused);
        CHECK(built == P.nslices - c.reused);
        CHECK(cache.reused() == reused);
        CHECK(cache.built() == built);
        CHECK(cache.size() == built);
    }
}

TEST_CASE("OperatorCache: another trajectory builds its own; the least recently used is dropped", "[recon][cache]") {
    FORGE_INFO_SEED();
    ReconProblem P = four_slices();
    P.frames[1].kx = forge_test::uniform<float>(P.frames[1].kx.n_elem, -6, 6);  // slice 1: another trajectory
    ReconSettings S;
    S.op = EncodingOperator::Nufft;
    S.iterations = 2;
    // one call, no cache of the caller's: consecutive frames of one trajectory share it (0 builds, 1 builds, 2
    // builds again: only the last one is kept, 3 reuses 2's)
    const forge::recon::ReconResult whole = forge::recon::reconstruct(P, false, S);
    CHECK(whole.operators_built == 3);
    CHECK(whole.operators_reused == 1);

    OperatorCache one(1);  // slices 0, 1, 2, 3: each trajectory change evicts the other
    OperatorCache two(2);  // both trajectories held: only slices 0 and 1 build
    for (std::size_t s = 0; s < P.nslices; ++s) {
        S.frames = {s};
        for (OperatorCache* c : {&one, &two}) {
            const forge::recon::ReconResult r = forge::recon::reconstruct(P, false, S, "recon", c);
            CHECK(arma::approx_equal(r.complex_image[s], whole.complex_image[s], "absdiff", 0.0f));
        }
    }
    CHECK(one.built() == 3);
    CHECK(one.reused() == 1);
    CHECK(one.size() == 1);
    CHECK(two.built() == 2);
    CHECK(two.reused() == 2);
    CHECK(two.size() == 2);
    two.clear();
    CHECK(two.size() == 0);
}
