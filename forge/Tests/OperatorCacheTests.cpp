// forge::recon::OperatorCache: slices reconstructed one call at a time (as a stream sends them) take the encoding
// operator of an earlier slice with the same trajectory, and the images are bit for bit those of a reconstruction
// that builds every operator; an operator that holds the field map is reused only where the map is the same;
// prepare_operators() builds a slice's operator before its samples.
#include <armadillo>
#include <catch2/catch.hpp>

#include "ReconTestProblems.h"
#include "TestHelpers.h"
#include "forge/Recon/Reconstruct.h"

using forge::recon::EncodingOperator;
using forge::recon::OperatorCache;
using forge::recon::ReconProblem;
using forge::recon::ReconSettings;

namespace {
// Four slices of a 12x10 grid, 2 coils, one trajectory; slices 0, 1 and 3 share a field map, slice 2 has its own.
ReconProblem four_slices() {
    return forge_test::random_slices(12, 10, 4, 2, 150, 100, [](std::size_t s) { return s == 2; });
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

TEST_CASE("OperatorCache: a Toeplitz slice of another field map in the band takes the cached kernels",
          "[recon][cache][band]") {
    FORGE_INFO_SEED();
    ReconProblem P = four_slices();
    // slice 2: slice 0's map moved 30 Hz (the same range, another centre): its kernels are slice 0's; slice 3: a map
    // three times as wide, which needs kernels of its own
    P.field_map[2] = P.field_map[0] + float(2 * M_PI * 30);
    P.field_map[3] = 3.0f * P.field_map[0];
    CHECK(forge::recon::toeplitz_band(P.field_map[2]).half_width ==
          forge::recon::toeplitz_band(P.field_map[0]).half_width);
    CHECK(forge::recon::toeplitz_band(P.field_map[3]).half_width >
          forge::recon::toeplitz_band(P.field_map[0]).half_width);
    ReconSettings S;
    S.op = EncodingOperator::Toeplitz;
    S.iterations = 3;
    S.toeplitz_rhs = forge::recon::ToeplitzRhs::Exact;
    OperatorCache cache;
    std::vector<arma::cx_fvec> images(P.nslices);
    for (std::size_t s = 0; s < P.nslices; ++s) {
        S.frames = {s};
        images[s] = forge::recon::reconstruct(P, true, S, "recon", &cache).complex_image[s];
    }
    CHECK(cache.built() == 3);  // slice 1 reuses slice 0's operator
    CHECK(cache.reused() == 1);
    CHECK(cache.kernels_shared() == 1);
    // the images are those of slices reconstructed alone, each building its own kernels
    for (std::size_t s : {std::size_t(2), std::size_t(3)}) {
        OperatorCache own;
        S.frames = {s};
        const arma::cx_fvec alone = forge::recon::reconstruct(P, true, S, "recon", &own).complex_image[s];
        CHECK(own.kernels_shared() == 0);
        REQUIRE(arma::norm(alone) > 0);
        CHECK(arma::approx_equal(images[s], alone, "absdiff", 0.0f));  // the same bits
    }
}

TEST_CASE("prepare_operators: the operators built before a slice's samples are those its reconstruction takes",
          "[recon][cache][prepare]") {
    FORGE_INFO_SEED();
    const ReconProblem P = four_slices();
    for (const EncodingOperator op : {EncodingOperator::Toeplitz, EncodingOperator::Dft, EncodingOperator::TimeSeg}) {
        INFO("operator " << forge::recon::operator_name(op));
        ReconSettings S;
        S.op = op;
        S.iterations = 3;
        S.toeplitz_rhs = forge::recon::ToeplitzRhs::Exact;
        const forge::recon::ReconResult whole = forge::recon::reconstruct(P, true, S);
        // slice 2 (a field map of its own) prepared from a problem without samples: slice 1's trajectory, slice 2's
        // map, as a stream knows them before slice 2's samples arrive
        ReconProblem next = P;
        for (auto& fr : next.frames) fr.y.reset();
        next.frames[2].kx = P.frames[1].kx;
        OperatorCache cache;
        S.frames = {2};
        CHECK(forge::recon::prepare_operators(next, true, S, cache) == 1);
        CHECK(forge::recon::prepare_operators(next, true, S, cache) == 0);  // there already
        const forge::recon::ReconResult r = forge::recon::reconstruct(P, true, S, "recon", &cache);
        CHECK(r.operators_built == 0);
        CHECK(r.operators_reused == 1);
        CHECK(arma::approx_equal(r.complex_image[2], whole.complex_image[2], "absdiff", 0.0f));  // the same bits
        // a guess that does not fit (another trajectory) is not taken: the slice builds its own
        next.frames[3].kx = forge_test::uniform<float>(P.frames[3].kx.n_elem, -6, 6);
        S.frames = {3};
        CHECK(forge::recon::prepare_operators(next, true, S, cache) == 1);
        const forge::recon::ReconResult r3 = forge::recon::reconstruct(P, true, S, "recon", &cache);
        CHECK(r3.operators_built == 1);
        CHECK(arma::approx_equal(r3.complex_image[3], whole.complex_image[3], "absdiff", 0.0f));
    }
    ReconSettings S;
    S.frames = {4};
    OperatorCache cache;
    CHECK_THROWS_WITH(forge::recon::prepare_operators(P, true, S, cache),
                      Catch::Matchers::Contains("prepare_operators: settings.frames names frame 4"));
}
