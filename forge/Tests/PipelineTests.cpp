// forge::recon::ReconSession: a problem's slices and frames fed one group at a time give the images of the whole
// problem in one group, bit for bit (maps estimated by a slice's first frame and kept for its later ones, operators
// reused, warm starts carried per slice); the maps policies; refusals that name the place.
#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Recon/Pipeline.h"

using forge::recon::GroupPlace;
using forge::recon::GroupResult;
using forge::recon::MapsPolicy;
using forge::recon::MapsReport;
using forge::recon::ReconFrame;
using forge::recon::ReconProblem;
using forge::recon::ReconRequest;
using forge::recon::ReconSession;

namespace {
// 'slices' x 'frames' of a 16x16 grid, 4 coils, one radial-like trajectory whose centre is dense enough for
// map estimation; smooth coil maps times a disc give the data (with noise), so estimated maps are well defined.
ReconProblem series(std::size_t slices, std::size_t frames) {
    ReconProblem P;
    P.Nx = P.Ny = 16;
    P.nslices = slices;
    P.nframes = frames;
    P.nc = 4;
    forge::recon::set_pixel_grid(P);
    const std::size_t n1 = 700;
    const arma::fvec r = forge_test::uniform<float>(n1, -8, 8), a = forge_test::uniform<float>(n1, 0, 3.14159f);
    const arma::fvec kx = r % arma::cos(a), ky = r % arma::sin(a);
    arma::cx_fmat E(n1, P.n2());  // exact DFT, forward exp(-i 2 pi k.x)
    for (std::size_t j = 0; j < P.n2(); ++j)
        E.col(j) = arma::exp(std::complex<float>(0, -2 * 3.14159265f) *
                             arma::conv_to<arma::cx_fvec>::from(kx * P.ix[j] + ky * P.iy[j]));
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t s = 0; s < slices; ++s) {
            arma::cx_fvec y(n1 * P.nc);
            for (std::size_t c = 0; c < P.nc; ++c) {
                arma::cx_fvec img(P.n2());
                for (std::size_t j = 0; j < P.n2(); ++j) {
                    const float x = P.ix[j], yy = P.iy[j];
                    const float disc = (x * x + yy * yy < 0.14f) ? 1.0f + 0.1f * float(s + f) : 0.0f;
                    img[j] = disc * std::polar(1.0f + 0.5f * float(c) * x, 0.8f * float(c) * yy);
                }
                y.subvec(c * n1, (c + 1) * n1 - 1) = E * img + 0.01f * forge_test::complex_normal<float>(n1);
            }
            ReconFrame fr;
            fr.slice = s, fr.frame = f;
            fr.kx = kx, fr.ky = ky, fr.kz = arma::fvec(n1, arma::fill::zeros), fr.t = arma::fvec(n1, arma::fill::zeros);
            fr.y = y;
            P.frames.push_back(fr);
        }
    P.n1total = n1 * slices * frames;
    P.n1max = n1;
    return P;
}

// The group of frame 'i' of P: a problem of its one slice and frame.
ReconProblem group_of(const ReconProblem& P, std::size_t i) {
    ReconProblem G = P;
    G.nslices = G.nframes = 1;
    G.frames = {P.frames[i]};
    G.frames[0].slice = G.frames[0].frame = 0;
    G.n1total = G.frames[0].kx.n_elem;
    G.smaps.clear();
    if (!P.smaps.empty()) G.smaps = {P.smaps[P.frames[i].slice]};
    return G;
}

ReconRequest quick_request() {
    ReconRequest r;
    r.device = forge::Device::Host;
    r.auto_operator = false;
    r.settings.op = forge::recon::EncodingOperator::Dft;
    r.settings.iterations = 4;
    return r;
}
}  // namespace

TEST_CASE("ReconSession: groups of one slice and frame give the whole problem's images, bit for bit",
          "[recon][pipeline]") {
    FORGE_INFO_SEED();
    const ReconProblem P = series(2, 3);
    for (const bool warm : {false, true}) {
        INFO("warm starts " << warm);
        ReconRequest r = quick_request();
        r.maps = MapsPolicy::Estimate;
        r.warm_start = warm;
        ReconProblem whole = P;
        ReconSession one(r);
        const GroupResult W = one.reconstruct(whole);
        REQUIRE(W.maps.source == MapsReport::Source::Estimated);
        ReconSession session(r);
        for (std::size_t i = 0; i < P.frames.size(); ++i) {  // frame-major, as a stream completes them
            const std::size_t s = P.frames[i].slice, f = P.frames[i].frame;
            ReconProblem G = group_of(P, i);
            GroupPlace place;
            place.first_slice = s, place.first_frame = f, place.name_frames = true;
            const GroupResult g = session.reconstruct(G, place);
            CHECK(g.maps.source == (f == 0 ? MapsReport::Source::Estimated : MapsReport::Source::Kept));
            CHECK(arma::approx_equal(G.smaps[0], whole.smaps[s], "absdiff", 0.0f));
            CHECK(arma::approx_equal(g.images.complex_image[0], W.images.complex_image[f * P.nslices + s], "absdiff",
                                     0.0f));
            CHECK(g.images.operators_reused == (i > 0 ? 1u : 0u));  // one trajectory: built once
        }
    }
}

TEST_CASE("ReconSession: a slice's kept maps stay in place, unchanged, as later slices are added",
          "[recon][pipeline]") {
    FORGE_INFO_SEED();
    const ReconProblem P = series(1, 1);
    ReconRequest r = quick_request();
    r.maps = MapsPolicy::Estimate;
    ReconSession session(r);
    const float* first = nullptr;
    arma::cx_fvec maps0;
    for (std::size_t s = 0; s < 40; ++s) {  // past the growths at 16 and 32 slices
        ReconProblem G = P;
        GroupPlace place;
        place.first_slice = s;
        REQUIRE(session.prepare_maps(G, place).source == MapsReport::Source::Estimated);
        if (s == 0) {
            first = reinterpret_cast<const float*>(session.kept_maps(0).memptr());
            maps0 = session.kept_maps(0);
        }
    }
    CHECK(reinterpret_cast<const float*>(session.kept_maps(0).memptr()) == first);  // not copied
    CHECK(arma::approx_equal(session.kept_maps(0), maps0, "absdiff", 0.0f));
    CHECK(session.kept_maps(39).n_elem == maps0.n_elem);
    CHECK(session.kept_maps(40).is_empty());
}

TEST_CASE("ReconSession: keep_maps false estimates each group's maps and keeps none", "[recon][pipeline]") {
    FORGE_INFO_SEED();
    const ReconProblem P = series(1, 2);
    ReconRequest r = quick_request();
    r.maps = MapsPolicy::Auto;
    ReconSession kept(r);
    r.keep_maps = false;
    ReconSession unkept(r);
    for (std::size_t f = 0; f < 2; ++f) {
        GroupPlace place;
        place.first_frame = f;
        ReconProblem a = P, b = P;
        const MapsReport ra = kept.prepare_maps(a, place), rb = unkept.prepare_maps(b, place);
        CHECK(ra.source == (f == 0 ? MapsReport::Source::Estimated : MapsReport::Source::Kept));
        CHECK(rb.source == MapsReport::Source::Estimated);
        CHECK(arma::approx_equal(a.smaps[0], b.smaps[0], "absdiff", 0.0f));  // the same maps, estimated again
        CHECK(unkept.kept_maps(0).is_empty());
    }
}

TEST_CASE("ReconSession: maps policies", "[recon][pipeline]") {
    FORGE_INFO_SEED();
    ReconProblem P = series(2, 1);
    ReconRequest r = quick_request();
    SECTION("Auto uses the problem's maps, Estimate replaces them, None drops them, Given needs them") {
        ReconProblem Q = P;
        for (std::size_t s = 0; s < Q.nslices; ++s) Q.smaps.push_back(forge_test::complex_normal<float>(Q.n2() * Q.nc));
        const std::vector<arma::cx_fvec> given = Q.smaps;
        {
            ReconProblem A = Q;
            ReconSession session(r);
            CHECK(session.prepare_maps(A, forge::recon::whole_problem(A), "").source == MapsReport::Source::Given);
            CHECK(arma::approx_equal(A.smaps[1], given[1], "absdiff", 0.0f));
        }
        {
            ReconProblem A = Q;
            r.maps = MapsPolicy::Estimate;
            ReconSession session(r);
            CHECK(session.will_estimate(A, forge::recon::whole_problem(A)));
            CHECK(session.prepare_maps(A, forge::recon::whole_problem(A)).source == MapsReport::Source::Estimated);
            CHECK_FALSE(arma::approx_equal(A.smaps[1], given[1], "absdiff", 1e-3f));
            CHECK(arma::approx_equal(session.kept_maps(1), A.smaps[1], "absdiff", 0.0f));
        }
        {
            ReconProblem A = Q;
            r.maps = MapsPolicy::None;
            ReconSession session(r);
            const GroupResult g = session.reconstruct(A);
            CHECK(A.smaps.empty());
            CHECK(g.images.solves.size() == A.nc * A.nslices);  // coil by coil
        }
        {
            ReconProblem A = P;  // no maps
            r.maps = MapsPolicy::Given;
            ReconSession session(r);
            CHECK_THROWS_AS(session.reconstruct(A), forge::invalid_argument);
        }
    }
    SECTION("refusals name the place: non-finite or zero maps, all-zero data") {
        ReconProblem A = P;
        for (std::size_t s = 0; s < A.nslices; ++s) A.smaps.push_back(forge_test::complex_normal<float>(A.n2() * A.nc));
        A.smaps[1][5] = std::complex<float>(NAN, 0);
        ReconSession session(r);
        GroupPlace place;
        place.first_slice = 7;
        CHECK_THROWS_WITH(session.prepare_maps(A, place, "--smaps m.nii"),
                          Catch::Contains("slice 8") && Catch::Contains("non-finite") && Catch::Contains("m.nii"));
        // an infinity in the last value's imaginary part, a NaN of another sign: found too
        for (const std::complex<float> bad : {std::complex<float>(0, INFINITY), std::complex<float>(-NAN, 1)}) {
            A.smaps[1] = forge_test::complex_normal<float>(A.n2() * A.nc);
            A.smaps[1][A.smaps[1].n_elem - 1] = bad;
            CHECK_THROWS_WITH(session.prepare_maps(A, place, "--smaps m.nii"), Catch::Contains("non-finite"));
        }
        A.smaps[1].zeros();
        CHECK_THROWS_WITH(session.prepare_maps(A, place, "--smaps m.nii"), Catch::Contains("zero on every pixel"));
        A.smaps[1].fill(std::complex<float>(-0.0f, -0.0f));  // negative zeros are zeros
        CHECK_THROWS_WITH(session.prepare_maps(A, place, "--smaps m.nii"), Catch::Contains("zero on every pixel"));
        A.smaps[1][3] = std::complex<float>(0, 1e-45f);  // the smallest subnormal is not (nor does it cover the object)
        CHECK_THROWS_WITH(session.prepare_maps(A, place, "--smaps m.nii"),
                          !Catch::Contains("zero on every pixel") && Catch::Contains("do not cover the object"));
        ReconProblem Z = P;
        Z.frames[1].y.zeros();
        CHECK_THROWS_WITH(session.check_data(Z, forge::recon::whole_problem(Z)),
                          Catch::Contains("slice 1") && Catch::Contains("all zero"));
    }
    SECTION("a GPU asked for without one is refused at once") {
        if (forge::device::available()) return;
        r.device = forge::Device::GPU;
        CHECK_THROWS_AS(ReconSession(r), forge::cuda_error);
    }
}

TEST_CASE("ReconSession: auto_operator chooses by the cost model, an fft off the grid is refused",
          "[recon][pipeline]") {
    FORGE_INFO_SEED();
    ReconProblem P = series(1, 1);
    ReconRequest r = quick_request();
    r.auto_operator = true;
    ReconSession session(r);
    const forge::recon::OperatorChoice c = session.choose(P);
    const forge::recon::OperatorChoice expected = forge::recon::choose_operator(P, r.settings.iterations, false);
    CHECK(c.op == expected.op);
    CHECK(c.reason == expected.reason);
    r.auto_operator = false;
    r.settings.op = forge::recon::EncodingOperator::Fft;
    ReconSession fft(r);
    CHECK_THROWS_WITH(fft.choose(P), Catch::Contains("not on the k-space grid"));
}
