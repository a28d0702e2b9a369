// Writes the malformed inputs that forge/Tests/cli/test_bad_inputs.sh feeds to forge-recon:
//   plain.h5            an HDF5 file that is not an ISMRMRD dataset
//   noacq.h5            an ISMRMRD header with no acquisitions
//   traj3d.h5           a 2D spiral header whose acquisitions carry 3D trajectories
//   notraj.h5           a spiral header whose acquisitions carry no trajectory
//   good.h5             a small valid 2D spiral file (16x16, 2 coils) for the map tests
//   fieldmap_10x12.nii  a field map of the wrong size for good.h5
//   smaps_wrong.h5      /maps: sensitivity maps of the wrong size for good.h5 (16x16x3 instead of 16x16x2)
//   smaps_right.h5      /maps: sensitivity maps of the right size (16x16x2), to show the map path works
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include <hdf5.h>

#include "Mrd.h"
#include "Nifti.h"

using namespace forge::io;

namespace {
MrdHeader spiral_header(std::size_t N) {
    MrdHeader h;
    h.encodedMatrix = {N, N, 1};
    h.reconMatrix = {N, N, 1};
    h.encodedFov_mm = {200, 200, 5};
    h.reconFov_mm = {200, 200, 5};
    h.trajectory = "spiral";
    h.hasTE = true;
    h.TE_ms = 1.0;
    h.receiverChannels = 2;
    return h;
}
std::vector<MrdAcquisition> spiral_acqs(std::size_t N, uint16_t trajDims) {
    std::vector<MrdAcquisition> v;
    const std::size_t ns = 8 * N * 4;
    MrdAcquisition a;
    a.samples = static_cast<uint16_t>(ns);
    a.channels = 2;
    a.trajDims = trajDims;
    a.dwell_us = 4;
    a.data.resize(ns * 2);
    a.traj.resize(ns * trajDims);
    for (std::size_t j = 0; j < ns; ++j) {
        const double tau = double(j) / double(ns), th = 2 * M_PI * double(N / 2) * tau;
        if (trajDims >= 2) {
            a.traj[j * trajDims] = float(0.5 * tau * std::cos(th));
            a.traj[j * trajDims + 1] = float(0.5 * tau * std::sin(th));
        }
        for (std::size_t c = 0; c < 2; ++c) a.data[c * ns + j] = std::complex<float>(float(std::cos(0.1 * j + c)), float(std::sin(0.07 * j)));
    }
    v.push_back(a);
    return v;
}
void write_h5_maps(const std::string& path, hsize_t nc, hsize_t ny, hsize_t nx) {
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[3] = {nc, ny, nx};  // C order: the fastest axis (x) last
    hid_t sp = H5Screate_simple(3, dims, nullptr);
    hid_t ct = H5Tcreate(H5T_COMPOUND, 2 * sizeof(float));
    H5Tinsert(ct, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(ct, "i", sizeof(float), H5T_NATIVE_FLOAT);
    hid_t d = H5Dcreate2(f, "/maps", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    std::vector<std::complex<float>> v(nc * ny * nx, std::complex<float>(1.0f, 0.0f));
    H5Dwrite(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(d);
    H5Tclose(ct);
    H5Sclose(sp);
    H5Fclose(f);
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: forge_cli_fixtures OUTDIR\n");
        return 2;
    }
    const std::string dir = std::string(argv[1]) + "/";
    quiet_hdf5_errors();
    {  // plain HDF5
        hid_t f = H5Fcreate((dir + "plain.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t n = 4;
        hid_t sp = H5Screate_simple(1, &n, nullptr);
        hid_t d = H5Dcreate2(f, "/numbers", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        float v[4] = {1, 2, 3, 4};
        H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        H5Dclose(d);
        H5Sclose(sp);
        H5Fclose(f);
    }
    const std::size_t N = 16;
    const std::string xml = make_mrd_header_xml(spiral_header(N), "fixture");
    write_mrd(dir + "noacq.h5", xml, {}, {});
    write_mrd(dir + "traj3d.h5", xml, spiral_acqs(N, 3), {});
    write_mrd(dir + "notraj.h5", xml, spiral_acqs(N, 0), {});
    write_mrd(dir + "good.h5", xml, spiral_acqs(N, 2), {});
    {
        std::vector<float> fm(10 * 12, 1.0f);
        write_nifti(dir + "fieldmap_10x12.nii", fm, {{10, 12, 1, 1}}, centred_affine({{10, 12, 1}}, {{1, 1, 1}}));
    }
    write_h5_maps(dir + "smaps_wrong.h5", 3, N, N);
    write_h5_maps(dir + "smaps_right.h5", 2, N, N);
    return 0;
}
