// forge::io::problem_from_mrd against an MRD file written here with the ISMRMRD C++ API: the trajectory
// in cycles per FOV, the sample times, the data's coil-major order and the sizes must be those the file
// holds; malformed input must be refused by name.
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

// Writes a 2D spiral-like MRD file: kShots acquisitions of kSamples samples, kCoils coils, trajDims
// trajectory dimensions, encoded FOV kEncFov mm, recon FOV reconFov mm.
std::string write_mrd_file(const std::string& name, double reconFov, unsigned trajDims) {
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
        ISMRMRD::Acquisition a(kSamples, kCoils, trajDims);
        a.center_sample() = kCentre;
        a.sample_time_us() = kDwell_us;
        a.idx().kspace_encode_step_1 = s;
        a.read_dir()[0] = 1;
        a.phase_dir()[1] = 1;
        a.slice_dir()[2] = 1;
        for (unsigned j = 0; j < kSamples; ++j) {
            for (unsigned dd = 0; dd < trajDims; ++dd) a.traj(dd, j) = traj_value(dd, j, s);
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
