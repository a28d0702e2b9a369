// Writes an ISMRMRD file with forge::io::write_mrd from random header values, then reads it back twice:
// with forge::io::read_mrd and, independently, with libismrmrd's C API (ismrmrd_read_acquisition into
// the packed ISMRMRD_AcquisitionHeader). Every field forge-recon uses must come back exactly.
//   usage: forge_mrd_header_roundtrip OUTDIR        (exit 0: all fields equal; 1: a mismatch, printed)
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>

#include "forge/IO/Mrd.h"

using namespace forge::io;
using namespace ISMRMRD;  // its C API (ismrmrd_*, ISMRMRD_*) is declared in this namespace for C++

namespace {

int failures = 0;

template <typename T>
void expect_eq(const T& got, const T& want, const std::string& what) {
    if (!(got == want)) {
        ++failures;
        std::fprintf(stderr, "FAIL: %s differs after the round trip\n", what.c_str());
    }
}

// A field of the packed acquisition header, copied out by its offset (no misaligned pointer).
template <typename T>
T field(const ISMRMRD_AcquisitionHeader& h, std::size_t offset, std::size_t index = 0) {
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(&h) + offset + index * sizeof(T), sizeof(T));
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: forge_mrd_header_roundtrip OUTDIR\n");
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    const std::string path = std::string(argv[1]) + "/roundtrip.h5";
    const unsigned seed = std::random_device{}();
    std::printf("seed %u\n", seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u16(0, 65535), small(1, 40);
    std::uniform_real_distribution<float> uf(-300.0f, 300.0f);
    std::uniform_int_distribution<uint64_t> u64;

    MrdHeader H;
    H.encoded_matrix = {std::size_t(2 * small(rng)), std::size_t(2 * small(rng)), std::size_t(small(rng))};
    H.recon_matrix = {std::size_t(2 * small(rng)), std::size_t(2 * small(rng)), std::size_t(small(rng))};
    H.encoded_fov_mm = {100.0 + small(rng), 120.0 + small(rng), 5.0 + small(rng)};
    H.recon_fov_mm = {200.0 + small(rng), 220.0 + small(rng), 6.0 + small(rng)};
    H.trajectory = "spiral";
    H.has_te = true;
    H.te_ms = 0.5 * small(rng);
    H.has_center_e1 = true;
    H.center_e1 = std::size_t(small(rng));
    H.receiver_channels = 3;
    H.accel_e1 = 2;
    const std::string xml = make_mrd_header_xml(H, "roundtrip");

    std::vector<MrdAcquisition> acqs(3);
    for (auto& a : acqs) {
        a.samples = static_cast<uint16_t>(small(rng));
        a.channels = 3;
        a.traj_dims = 2;
        a.center_sample = static_cast<uint16_t>(small(rng));
        a.dwell_us = std::fabs(uf(rng)) + 0.5f;
        a.e1 = static_cast<uint16_t>(u16(rng));
        a.e2 = static_cast<uint16_t>(u16(rng));
        a.slice = static_cast<uint16_t>(u16(rng));
        a.repetition = static_cast<uint16_t>(u16(rng));
        a.contrast = static_cast<uint16_t>(u16(rng));
        // any flags but ACQ_IS_NOISE_MEASUREMENT (flag 19, bit 18): read_mrd drops noise scans
        a.flags = u64(rng) & ~(uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1));
        for (int k = 0; k < 3; ++k) {
            a.position[k] = uf(rng);
            a.read_dir[k] = uf(rng);
            a.phase_dir[k] = uf(rng);
            a.slice_dir[k] = uf(rng);
        }
        a.data.resize(std::size_t(a.samples) * a.channels);
        for (auto& v : a.data) v = {uf(rng), uf(rng)};
        a.traj.resize(std::size_t(a.samples) * a.traj_dims);
        for (auto& v : a.traj) v = uf(rng);
    }
    write_mrd(path, xml, acqs, {});

    // 1. forge's reader
    const MrdFile F = read_mrd(path);
    expect_eq(F.header.encoded_matrix, H.encoded_matrix, "encodedSpace/matrixSize");
    expect_eq(F.header.recon_matrix, H.recon_matrix, "reconSpace/matrixSize");
    for (int k = 0; k < 3; ++k) {
        expect_eq(float(F.header.encoded_fov_mm[k]), float(H.encoded_fov_mm[k]), "encodedSpace/fieldOfView_mm");
        expect_eq(float(F.header.recon_fov_mm[k]), float(H.recon_fov_mm[k]), "reconSpace/fieldOfView_mm");
    }
    expect_eq(F.header.trajectory, H.trajectory, "trajectory");
    expect_eq(F.header.has_te, true, "sequenceParameters/TE present");
    expect_eq(float(F.header.te_ms), float(H.te_ms), "sequenceParameters/TE");
    expect_eq(F.header.center_e1, H.center_e1, "encodingLimits/kspace_encoding_step_1/center");
    expect_eq(F.header.receiver_channels, H.receiver_channels, "receiver_channels");
    expect_eq(F.header.accel_e1, H.accel_e1, "accelerationFactor/kspace_encoding_step_1");
    expect_eq(F.acquisitions.size(), acqs.size(), "acquisition count");
    for (std::size_t i = 0; i < acqs.size() && i < F.acquisitions.size(); ++i) {
        const auto &a = acqs[i], &b = F.acquisitions[i];
        const std::string n = "acquisition " + std::to_string(i) + " ";
        expect_eq(b.samples, a.samples, n + "number_of_samples");
        expect_eq(b.channels, a.channels, n + "active_channels");
        expect_eq(b.traj_dims, a.traj_dims, n + "trajectory_dimensions");
        expect_eq(b.center_sample, a.center_sample, n + "center_sample");
        expect_eq(b.dwell_us, a.dwell_us, n + "sample_time_us");
        expect_eq(b.e1, a.e1, n + "idx.kspace_encode_step_1");
        expect_eq(b.e2, a.e2, n + "idx.kspace_encode_step_2");
        expect_eq(b.slice, a.slice, n + "idx.slice");
        expect_eq(b.repetition, a.repetition, n + "idx.repetition");
        expect_eq(b.contrast, a.contrast, n + "idx.contrast");
        expect_eq(b.flags, a.flags, n + "flags");
        expect_eq(b.position, a.position, n + "position");
        expect_eq(b.read_dir, a.read_dir, n + "read_dir");
        expect_eq(b.phase_dir, a.phase_dir, n + "phase_dir");
        expect_eq(b.slice_dir, a.slice_dir, n + "slice_dir");
        expect_eq(b.data, a.data, n + "data");
        expect_eq(b.traj, a.traj, n + "traj");
    }

    // 2. libismrmrd's C API, field by field from the packed header
    ISMRMRD_Dataset d;
    ismrmrd_init_dataset(&d, path.c_str(), "dataset");
    if (ismrmrd_open_dataset(&d, false) != ISMRMRD_NOERROR) {
        std::fprintf(stderr, "FAIL: libismrmrd cannot open %s\n", path.c_str());
        return 1;
    }
    expect_eq(ismrmrd_get_number_of_acquisitions(&d), uint32_t(acqs.size()), "acquisition count (C API)");
    using AH = ISMRMRD_AcquisitionHeader;
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        ISMRMRD_Acquisition c;
        ismrmrd_init_acquisition(&c);
        if (ismrmrd_read_acquisition(&d, uint32_t(i), &c) != ISMRMRD_NOERROR) {
            std::fprintf(stderr, "FAIL: libismrmrd cannot read acquisition %zu\n", i);
            return 1;
        }
        const auto& a = acqs[i];
        const std::string n = "acquisition " + std::to_string(i) + " (C API) ";
        const AH& h = c.head;
        expect_eq(field<uint16_t>(h, offsetof(AH, number_of_samples)), a.samples, n + "number_of_samples");
        expect_eq(field<uint16_t>(h, offsetof(AH, active_channels)), a.channels, n + "active_channels");
        expect_eq(field<uint16_t>(h, offsetof(AH, available_channels)), a.channels, n + "available_channels");
        expect_eq(field<uint16_t>(h, offsetof(AH, trajectory_dimensions)), a.traj_dims, n + "trajectory_dimensions");
        expect_eq(field<uint16_t>(h, offsetof(AH, center_sample)), a.center_sample, n + "center_sample");
        expect_eq(field<float>(h, offsetof(AH, sample_time_us)), a.dwell_us, n + "sample_time_us");
        expect_eq(field<uint64_t>(h, offsetof(AH, flags)), a.flags, n + "flags");
        const std::size_t idx = offsetof(AH, idx);
        expect_eq(field<uint16_t>(h, idx + offsetof(ISMRMRD_EncodingCounters, kspace_encode_step_1)), a.e1, n + "e1");
        expect_eq(field<uint16_t>(h, idx + offsetof(ISMRMRD_EncodingCounters, kspace_encode_step_2)), a.e2, n + "e2");
        expect_eq(field<uint16_t>(h, idx + offsetof(ISMRMRD_EncodingCounters, slice)), a.slice, n + "slice");
        expect_eq(field<uint16_t>(h, idx + offsetof(ISMRMRD_EncodingCounters, repetition)), a.repetition,
                  n + "repetition");
        expect_eq(field<uint16_t>(h, idx + offsetof(ISMRMRD_EncodingCounters, contrast)), a.contrast, n + "contrast");
        for (std::size_t k = 0; k < 3; ++k) {
            expect_eq(field<float>(h, offsetof(AH, position), k), a.position[k], n + "position");
            expect_eq(field<float>(h, offsetof(AH, read_dir), k), a.read_dir[k], n + "read_dir");
            expect_eq(field<float>(h, offsetof(AH, phase_dir), k), a.phase_dir[k], n + "phase_dir");
            expect_eq(field<float>(h, offsetof(AH, slice_dir), k), a.slice_dir[k], n + "slice_dir");
        }
        const std::size_t nd = std::size_t(a.samples) * a.channels;
        bool same = true;
        for (std::size_t j = 0; j < nd; ++j) same = same && c.data[j] == a.data[j];
        expect_eq(same, true, n + "data");
        expect_eq(std::vector<float>(c.traj, c.traj + std::size_t(a.samples) * a.traj_dims), a.traj, n + "traj");
        ismrmrd_cleanup_acquisition(&c);
    }
    ismrmrd_close_dataset(&d);
    if (failures) return 1;
    std::printf("ok  %zu acquisitions: every header field, the data and the trajectories read back exactly\n",
                acqs.size());
    return 0;
}
