// forge::io::problem_from_mrd against an MRD file written here with the ISMRMRD C++ API: the trajectory
// in cycles per FOV, the sample times, the data's coil-major order and the sizes must be those the file
// holds; malformed input must be refused by name. forge::sim::demo_acquisition (forge-recon --demo's
// simulation): its frames against problem_from_mrd of its readouts, its data against the forward model summed
// out in double precision.
#include <cmath>
#include <complex>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/MrdStream.h"
#include "forge/Sim/DemoAcquisition.h"

namespace {

constexpr unsigned kMatrix = 32, kSamples = 40, kCoils = 3, kShots = 2, kCentre = 5;
constexpr double kEncFov = 240, kTE_ms = 2.0;
constexpr float kDwell_us = 4.0f;

// Trajectory value of dimension d, sample j, shot s (ISMRMRD's normalised units, inside [-0.45, 0.45]).
float traj_value(unsigned d, unsigned j, unsigned s) {
    const double phase = 0.17 * j + 1.3 * s + (d ? 0.5 : 0.0);
    return float(0.45 * (d ? std::sin(phase) : std::cos(phase)) * double(j) / kSamples);
}
std::complex<float> data_value(unsigned j, unsigned c, unsigned s) {
    return {float(j + 100 * c + 1000 * s), float(-(int(j) + 7 * int(c)) - 13 * int(s))};
}

// Writes a 2D spiral-like MRD file: kShots acquisitions of kSamples samples, kCoils coils, traj_dims
// trajectory dimensions, encoded FOV kEncFov mm, recon FOV reconFov mm.
std::string write_mrd_file(const std::string& name, double reconFov, unsigned traj_dims) {
    const std::string path = "forge_recon_problem_test_" + std::to_string(::getpid()) + "_" + name + ".h5";
    std::remove(path.c_str());
    ISMRMRD::IsmrmrdHeader h;
    ISMRMRD::Encoding e;
    e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(kMatrix, kMatrix, 1);
    e.encodedSpace.fieldOfView_mm = ISMRMRD::FieldOfView_mm{float(kEncFov), float(kEncFov), 5.0f};
    e.reconSpace.matrixSize = ISMRMRD::MatrixSize(kMatrix, kMatrix, 1);
    e.reconSpace.fieldOfView_mm = ISMRMRD::FieldOfView_mm{float(reconFov), float(reconFov), 5.0f};
    e.trajectory = ISMRMRD::TrajectoryType::SPIRAL;
    h.encoding.push_back(e);
    ISMRMRD::SequenceParameters sp;
    sp.TE = std::vector<float>{float(kTE_ms)};
    h.sequenceParameters = sp;
    std::stringstream xml;
    ISMRMRD::serialize(h, xml);
    ISMRMRD::Dataset d(path.c_str(), "dataset", true);
    d.writeHeader(xml.str());
    for (unsigned s = 0; s < kShots; ++s) {
        ISMRMRD::Acquisition a(kSamples, kCoils, traj_dims);
        a.center_sample() = kCentre;
        a.sample_time_us() = kDwell_us;
        a.idx().kspace_encode_step_1 = s;
        a.read_dir()[0] = 1;
        a.phase_dir()[1] = 1;
        a.slice_dir()[2] = 1;
        for (unsigned j = 0; j < kSamples; ++j) {
            for (unsigned dd = 0; dd < traj_dims; ++dd) a.traj(dd, j) = traj_value(dd, j, s);
            for (unsigned c = 0; c < kCoils; ++c) a.data(j, c) = data_value(j, c, s);
        }
        d.appendAcquisition(a);
    }
    return path;
}

}  // namespace

TEST_CASE("problem_from_mrd: trajectory in cycles/FOV, sample times, coil-major data", "[recon][io][mrd]") {
    for (const double reconFov : {kEncFov, kEncFov / 2}) {
        const std::string path = write_mrd_file("good", reconFov, 2);
        const forge::io::MrdFile file = forge::io::read_mrd(path);
        std::remove(path.c_str());
        const forge::recon::ReconProblem P = forge::io::problem_from_mrd(file, path);
        INFO("recon FOV " << reconFov << " mm");
        CHECK(P.Nx == kMatrix);
        CHECK(P.Ny == kMatrix);
        CHECK(P.Nz == 1);
        CHECK(P.nc == kCoils);
        CHECK(P.nslices == 1);
        CHECK(P.nframes == 1);
        CHECK(P.n2() == kMatrix * kMatrix);
        CHECK(P.voxel_mm[0] == Approx(reconFov / kMatrix));
        REQUIRE(P.frames.size() == 1);
        const forge::recon::ReconFrame& fr = P.frames[0];
        const unsigned n1 = kShots * kSamples;
        REQUIRE(fr.kx.n_elem == n1);
        REQUIRE(fr.ky.n_elem == n1);
        REQUIRE(fr.kz.n_elem == n1);
        REQUIRE(fr.t.n_elem == n1);
        REQUIRE(fr.y.n_elem == n1 * kCoils);
        // k [cycles / recon FOV] = normalised value * encoded matrix * reconFOV / encodedFOV
        const double ratio = reconFov / kEncFov;
        for (unsigned s = 0; s < kShots; ++s)
            for (unsigned j = 0; j < kSamples; ++j) {
                const unsigned i = s * kSamples + j;
                CHECK(fr.kx[i] == Approx(double(traj_value(0, j, s)) * kMatrix * ratio).margin(1e-6));
                CHECK(fr.ky[i] == Approx(double(traj_value(1, j, s)) * kMatrix * ratio).margin(1e-6));
                CHECK(fr.kz[i] == 0.0f);
                // t = TE + (sample - centre sample) * dwell, in seconds
                CHECK(fr.t[i] == Approx(kTE_ms * 1e-3 + (double(j) - kCentre) * kDwell_us * 1e-6).margin(1e-9));
                for (unsigned c = 0; c < kCoils; ++c) CHECK(fr.y[c * n1 + i] == data_value(j, c, s));
            }
        // pixel grid in FOV units, x fastest
        CHECK(P.ix[1] - P.ix[0] == Approx(1.0 / kMatrix));
        CHECK(P.iy[kMatrix] - P.iy[0] == Approx(1.0 / kMatrix));
        CHECK(P.ix[kMatrix / 2] == 0.0f);
    }
}

TEST_CASE("problem_from_mrd fills a sample array the caller hands it, of the frame's length only", "[recon][io][mrd]") {
    const std::string path = write_mrd_file("arrays", kEncFov, 2);
    const forge::io::MrdFile file = forge::io::read_mrd(path);
    std::remove(path.c_str());
    const forge::recon::ReconProblem plain = forge::io::problem_from_mrd(file, path);
    const std::size_t n = plain.frames[0].y.n_elem;
    arma::cx_fvec given(n, arma::fill::randn);  // an earlier frame's values: all overwritten
    const std::complex<float>* memory = given.memptr();
    std::size_t asked = 0;
    forge::io::MrdProblemOptions o;
    o.sample_array = [&](std::size_t length) {
        asked = length;
        return std::move(given);
    };
    const forge::recon::ReconProblem P = forge::io::problem_from_mrd(file, path, o);
    CHECK(asked == n);
    CHECK(P.frames[0].y.memptr() == memory);
    CHECK(arma::approx_equal(P.frames[0].y, plain.frames[0].y, "absdiff", 0.0f));
    // an array of another length, or none, is not used
    for (const std::size_t length : {n - 1, std::size_t(0)}) {
        forge::io::MrdProblemOptions other;
        other.sample_array = [length](std::size_t) { return arma::cx_fvec(length, arma::fill::zeros); };
        const forge::recon::ReconProblem Q = forge::io::problem_from_mrd(file, path, other);
        CHECK(arma::approx_equal(Q.frames[0].y, plain.frames[0].y, "absdiff", 0.0f));
    }
}

TEST_CASE("problem_from_mrd refuses malformed input by name", "[recon][io][mrd]") {
    SECTION("3D trajectories for a 2D encoded matrix") {
        const std::string path = write_mrd_file("traj3", kEncFov, 3);
        const forge::io::MrdFile file = forge::io::read_mrd(path);
        std::remove(path.c_str());
        REQUIRE_THROWS_AS(forge::io::problem_from_mrd(file, path), forge::invalid_argument);
        REQUIRE_THROWS_WITH(forge::io::problem_from_mrd(file, path),
                            Catch::Contains("trajectories have 3 dimensions") && Catch::Contains("needs 2"));
    }
    SECTION("a trajectory value outside [-0.5, 0.5] and a channel count mismatch") {
        const std::string path = write_mrd_file("range", kEncFov, 2);
        forge::io::MrdFile file = forge::io::read_mrd(path);
        std::remove(path.c_str());
        forge::io::MrdFile outside = file;
        outside.acquisitions[1].traj[7] = 0.8f;
        REQUIRE_THROWS_AS(forge::io::problem_from_mrd(outside, path), forge::invalid_argument);
        REQUIRE_THROWS_WITH(forge::io::problem_from_mrd(outside, path),
                            Catch::Contains("outside ISMRMRD's normalised range"));
        forge::io::MrdFile channels = file;
        channels.acquisitions[1].channels = kCoils + 1;
        REQUIRE_THROWS_WITH(forge::io::problem_from_mrd(channels, path),
                            Catch::Contains("acquisition 1 has 4 channels but acquisition 0 has 3"));
    }
}

// ---------------------------------------------------------------- forge::sim::demo_acquisition

namespace {

// The ISMRMRD file of one simulated scan, as forge-recon --demo writes it: a 2D multi-slice header on the demo's
// grid (encoded = recon FOV), one acquisition per readout.
forge::io::MrdFile demo_mrd(const forge::sim::DemoAcquisition& d, const forge::sim::SimulatedScan& scan) {
    forge::io::MrdFile F;
    F.header.encoded_matrix = F.header.recon_matrix = {d.N, d.N, 1};
    F.header.encoded_fov_mm = F.header.recon_fov_mm = {d.fov_mm, d.fov_mm, d.thickness_mm};
    F.header.trajectory = scan.cartesian ? "cartesian" : "spiral";
    F.header.has_te = true;
    F.header.te_ms = scan.echo_times_ms.front();
    F.header.echo_times_ms = scan.echo_times_ms;
    F.header.has_center_e1 = scan.cartesian;
    F.header.center_e1 = scan.centre_line;
    for (const forge::sim::Readout& r : scan.readouts) {
        forge::io::MrdAcquisition a;
        a.samples = uint16_t(r.samples);
        a.channels = uint16_t(d.coils);
        a.traj_dims = r.traj.empty() ? 0 : 2;
        a.center_sample = uint16_t(r.center_sample);
        a.dwell_us = r.dwell_us;
        a.e1 = uint16_t(r.line);
        a.slice = uint16_t(r.slice);
        a.contrast = uint16_t(r.contrast);
        a.read_dir = {1, 0, 0};
        a.phase_dir = {0, 1, 0};
        a.slice_dir = {0, 0, 1};
        a.position = {0, 0, d.slice_offset_mm[r.slice]};
        a.traj = r.traj;
        a.data = r.data;
        F.acquisitions.push_back(a);
    }
    return F;
}

// y = S_c x exp(-i (2 pi k.r + field map t)) summed over the pixels in double precision: the forward model of
// docs/conventions.md written out, independently of Gdft.
arma::cx_vec explicit_sense_dft(const forge::sim::DemoAcquisition& d, const forge::sim::SimulatedFrame& fr) {
    const std::size_t N = d.N, n2 = N * N, n1 = fr.k.kx.n_elem;
    arma::cx_vec y(n1 * d.coils, arma::fill::zeros);
    for (std::size_t j = 0; j < n1; ++j)
        for (std::size_t py = 0; py < N; ++py)
            for (std::size_t px = 0; px < N; ++px) {
                const std::size_t p = px + N * py;
                const double x = (double(px) - double(N / 2)) / double(N),
                             yy = (double(py) - double(N / 2)) / double(N);
                const double phase = 2 * M_PI * (double(fr.k.kx[j]) * x + double(fr.k.ky[j]) * yy) +
                                     double(d.field_map[fr.slice][p]) * double(fr.k.t[j]);
                const std::complex<double> e = double(d.truth[fr.slice][p]) * std::polar(1.0, -phase);
                for (std::size_t c = 0; c < d.coils; ++c)
                    y[c * n1 + j] += std::complex<double>(d.smaps[fr.slice][c * n2 + p]) * e;
            }
    return y;
}

}  // namespace

TEST_CASE("demo_acquisition: its frames are what problem_from_mrd makes of its readouts, bit for bit",
          "[sim][demo][io][mrd]") {
    forge::sim::DemoOptions o;
    o.size = 16;
    o.slices = 2;
    o.coils = 3;
    const forge::sim::DemoAcquisition d = forge::sim::demo_acquisition(o);
    REQUIRE(d.truth.size() == 2);
    REQUIRE(d.smaps.size() == 2);
    REQUIRE(d.field_map.size() == 2);
    CHECK(d.spiral.readouts.size() == 2 * d.shots);
    CHECK(d.spiral.frames.size() == 2);                     // one per slice
    CHECK(d.field_map_scan.frames.size() == 2 * 2);         // two echoes x two slices
    CHECK(d.field_map_scan.readouts.size() == 2 * 2 * 16);  // every line of every echo and slice
    for (const forge::sim::SimulatedScan* scan : {&d.spiral, &d.field_map_scan}) {
        INFO((scan->cartesian ? "field-map scan" : "spiral"));
        const forge::recon::ReconProblem P = forge::io::problem_from_mrd(demo_mrd(d, *scan), "demo");
        CHECK(P.Nx == 16);
        CHECK(P.nc == 3);
        CHECK(P.nslices == 2);
        const forge::PixelGeometry<float> px = forge::PixelGeometry<float>::on_grid(forge::ImageGrid(16, 16));
        CHECK(arma::all(P.ix == px.x));
        CHECK(arma::all(P.iy == px.y));
        CHECK(arma::all(P.iz == px.z));
        REQUIRE(P.frames.size() == scan->frames.size());
        for (std::size_t i = 0; i < P.frames.size(); ++i) {
            const forge::recon::ReconFrame& a = P.frames[i];
            const forge::sim::SimulatedFrame& b = scan->frames[i];
            INFO("frame " << i);
            CHECK(a.slice == b.slice);
            CHECK(a.contrast == b.contrast);
            CHECK(a.echo_time == b.echo_time);
            REQUIRE(a.kx.n_elem == b.k.kx.n_elem);
            CHECK(arma::all(a.kx == b.k.kx));
            CHECK(arma::all(a.ky == b.k.ky));
            CHECK(arma::all(a.kz == b.k.kz));
            CHECK(arma::all(a.t == b.k.t));
            REQUIRE(a.y.n_elem == b.y.n_elem);
            CHECK(arma::all(a.y == b.y));
        }
    }
}

TEST_CASE("demo_acquisition simulates the exact field-corrected SENSE model plus the noise asked for", "[sim][demo]") {
    forge::sim::DemoOptions o;
    o.size = 16;
    o.slices = 1;
    o.coils = 2;
    o.noise = 0;
    const forge::sim::DemoAcquisition clean = forge::sim::demo_acquisition(o);
    // the maps are normalised (sum_c |S_c|^2 = 1 wherever they are not all zero)
    arma::vec rss(16 * 16, arma::fill::zeros);
    for (std::size_t c = 0; c < 2; ++c)
        rss +=
            arma::square(arma::abs(arma::conv_to<arma::cx_vec>::from(clean.smaps[0].subvec(c * 256, c * 256 + 255))));
    CHECK(arma::abs(rss - 1).max() < 1e-5);
    for (const forge::sim::SimulatedFrame* fr : {&clean.spiral.frames[0], &clean.field_map_scan.frames[1]}) {
        INFO("echo time " << fr->echo_time);
        const arma::cx_vec ref = explicit_sense_dft(clean, *fr);
        CHECK(forge_test::rel_error(arma::cx_vec(arma::conv_to<arma::cx_vec>::from(fr->y)), ref) < 1e-4);
    }
    // k inside [-N/2, N/2), times from the echo: the spiral starts at TE 1 ms and lasts 16 ms
    const forge::sim::SimulatedFrame& s = clean.spiral.frames[0];
    CHECK(arma::abs(s.k.kx).max() < 8.0f);
    CHECK(s.k.t.min() == Approx(1e-3));
    CHECK(s.k.t.max() < 17e-3f);
    CHECK(s.k.t.max() > 16.9e-3f);
    CHECK(clean.field_map_scan.frames[1].echo_time == Approx(4.5e-3));

    o.noise = 0.01;
    const forge::sim::DemoAcquisition noisy = forge::sim::demo_acquisition(o);
    for (std::size_t i = 0; i < noisy.field_map_scan.frames.size(); ++i) {
        const arma::cx_fvec& y0 = clean.field_map_scan.frames[i].y;
        const double e = double(arma::norm(noisy.field_map_scan.frames[i].y - y0)) / double(arma::norm(y0));
        INFO("field-map frame " << i << ": noise " << e << " of the data's RMS");
        CHECK(e > 0.009);  // 2 x 16 x 16 complex samples: the estimate's spread is about 1%
        CHECK(e < 0.011);
    }

    forge::sim::DemoOptions bad;
    bad.size = 15;
    CHECK_THROWS_WITH(forge::sim::demo_acquisition(bad), Catch::Matchers::Contains("size is 15"));
    bad = {};
    bad.coils = 0;
    CHECK_THROWS_WITH(forge::sim::demo_acquisition(bad), Catch::Matchers::Contains("coils is 0"));
    bad = {};
    bad.slices = 17;
    CHECK_THROWS_WITH(forge::sim::demo_acquisition(bad), Catch::Matchers::Contains("slices is 17"));
    bad = {};
    bad.noise = -1;
    CHECK_THROWS_AS(forge::sim::demo_acquisition(bad), forge::invalid_argument);
}

// What this case tests is the deprecated names (forge/Core/DeprecatedFields.h).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("MRD structs' renamed fields: the old names alias the new fields, in copies and vectors too",
          "[deprecated]") {
    forge::io::MrdFile f;
    f.header.encoded_matrix = {{64, 48, 1}};
    f.header.has_te = true;
    f.header.te_ms = 2.5;
    f.noise_scans = 3;
    forge::io::MrdAcquisition a;
    a.traj_dims = 2;
    a.read_dir = {{1, 0, 0}};
    f.acquisitions.assign(5, a);
    const forge::io::MrdFile copy = f;
    f.header.encodedMatrix[0] = 32;  // the original's, not the copy's
    CHECK(f.header.encoded_matrix[0] == 32);
    CHECK(copy.header.encodedMatrix[0] == 64);
    CHECK(&copy.header.hasTE == &copy.header.has_te);
    CHECK(copy.header.TE_ms == 2.5);
    CHECK(copy.noiseScans == 3);
    for (const auto& c : copy.acquisitions) {
        CHECK(&c.trajDims == &c.traj_dims);
        CHECK(c.readDir[0] == 1);
    }
    forge::io::MrdStreamOptions o;
    o.timeoutName = "the scanner";
    CHECK(o.timeout_name == "the scanner");
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
