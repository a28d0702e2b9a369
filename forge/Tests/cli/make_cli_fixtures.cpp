// Writes the malformed inputs that forge/Tests/cli/test_bad_inputs.sh feeds to forge-recon:
//   plain.h5            an HDF5 file that is not an ISMRMRD dataset
//   noacq.h5            an ISMRMRD header with no acquisitions
//   traj3d.h5           a 2D spiral header whose acquisitions carry 3D trajectories
//   notraj.h5           a spiral header whose acquisitions carry no trajectory
//   good.mrd            good.h5 (below) as an MRD stream, for forge-recon --stream
//   good.h5             a small valid 2D spiral file (16x16, 2 coils) for the map tests
//   fieldmap_10x12.nii  a field map of the wrong size for good.h5
//   smaps_wrong.h5      /maps: sensitivity maps of the wrong size for good.h5 (16x16x3 instead of 16x16x2)
//   smaps_right.h5      /maps: sensitivity maps of the right size (16x16x2), to show the map path works
// Inputs whose sizes lie (forge/Tests/cli/test_input_limits.sh): each is a few KB to 3 MB.
//   matrix_negative.h5  good.h5 with reconSpace/matrixSize/x = -16 (libismrmrd stores 65520)
//   matrix_100000.h5    good.h5 with reconSpace/matrixSize/x = 100000 (libismrmrd stores 34464)
//   matrix_65534.h5     good.h5 with a 65534x65534 matrix (valid 16-bit values, too big to write)
//   matrix_sparse.h5    good.h5 with an 8192x8192 matrix: 67M pixels from 1024 measured values
//   memory.h5           11584x11584, 2048 repetitions of 64 samples: ~5 TB of images from 3 MB
//   nan_data.h5         good.h5 with one NaN sample
//   fieldmap_nan.nii    a 16x16 field map (right size for good.h5) with one NaN
//   fieldmap_claims_16384.nii  416 bytes whose header claims 16384x16384 float64 (2 GiB)
//   fieldmap_overflow.nii      a header whose dim[1..5] = 16384: 2^70 voxels (wraps to 0 in 64 bits)
//   fieldmap_huge.h5    /fm: a chunked 16384x16384 float64 dataset with no chunks written (a few KB)
//   coils_1024.h5       Cartesian 32x32, 1024 coils, no maps (8 MB): estimating its coil maps needs ~4 GiB
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include "forge/IO/Mrd.h"
#include "forge/IO/MrdStream.h"
#include "forge/IO/Nifti.h"

using namespace forge::io;

namespace {
MrdHeader spiral_header(std::size_t N) {
    MrdHeader h;
    h.encoded_matrix = {N, N, 1};
    h.recon_matrix = {N, N, 1};
    h.encoded_fov_mm = {200, 200, 5};
    h.recon_fov_mm = {200, 200, 5};
    h.trajectory = "spiral";
    h.has_te = true;
    h.te_ms = 1.0;
    h.receiver_channels = 2;
    return h;
}
std::vector<MrdAcquisition> spiral_acqs(std::size_t N, uint16_t traj_dims) {
    std::vector<MrdAcquisition> v;
    const std::size_t ns = 8 * N * 4;
    MrdAcquisition a;
    a.samples = static_cast<uint16_t>(ns);
    a.channels = 2;
    a.traj_dims = traj_dims;
    a.dwell_us = 4;
    a.data.resize(ns * 2);
    a.traj.resize(ns * traj_dims);
    for (std::size_t j = 0; j < ns; ++j) {
        const double tau = double(j) / double(ns), th = 2 * M_PI * double(N / 2) * tau;
        if (traj_dims >= 2) {
            a.traj[j * traj_dims] = float(0.5 * tau * std::cos(th));
            a.traj[j * traj_dims + 1] = float(0.5 * tau * std::sin(th));
        }
        for (std::size_t c = 0; c < 2; ++c)
            a.data[c * ns + j] = std::complex<float>(float(std::cos(0.1 * j + c)), float(std::sin(0.07 * j)));
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
// Replaces the text of <space><matrixSize><axis> (the header as libismrmrd serialises it).
std::string set_matrix(std::string xml, const std::string& space, const std::string& axis, const std::string& value) {
    const std::size_t s = xml.find("<" + space + ">");
    const std::size_t m = xml.find("<matrixSize>", s);
    const std::size_t a = xml.find("<" + axis + ">", m);
    const std::size_t e = xml.find("</" + axis + ">", a);
    if (s == std::string::npos || m == std::string::npos || a == std::string::npos || e == std::string::npos)
        throw std::runtime_error("set_matrix: no " + space + "/matrixSize/" + axis + " in the header");
    const std::size_t b = a + axis.size() + 2;
    return xml.replace(b, e - b, value);
}
// Overwrites bytes of a file in place.
void patch(const std::string& path, std::size_t offset, const void* bytes, std::size_t n) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
    if (!f) throw std::runtime_error("patch: cannot write " + path);
}
// NIfTI-1 header fields (nifti1.h offsets): dim[8] at 40, datatype at 70, bitpix at 72.
void patch_nifti_dims(const std::string& path, const std::vector<int16_t>& dim, int16_t datatype, int16_t bitpix) {
    int16_t d[8] = {int16_t(dim.size()), 1, 1, 1, 1, 1, 1, 1};
    for (std::size_t k = 0; k < dim.size(); ++k) d[k + 1] = dim[k];
    patch(path, 40, d, sizeof d);
    patch(path, 70, &datatype, 2);
    patch(path, 72, &bitpix, 2);
}
// A chunked dataset of the given C-order shape with no chunk ever written: HDF5 stores only its
// metadata, so the file is a few KB whatever the shape says.
void write_h5_unwritten(const std::string& path, hsize_t d0, hsize_t d1) {
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {d0, d1}, chunk[2] = {64, 64};
    hid_t sp = H5Screate_simple(2, dims, nullptr);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 2, chunk);
    hid_t d = H5Dcreate2(f, "/fm", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    H5Dclose(d);
    H5Pclose(pl);
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
    {  // good.h5's header and acquisitions as an MRD stream (forge-recon --stream's input)
        const int fd = ::open((dir + "good.mrd").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) throw std::runtime_error("cannot write " + dir + "good.mrd");
        write_mrd_stream(fd, xml, spiral_acqs(N, 2));
        ::close(fd);
    }
    {
        std::vector<float> fm(10 * 12, 1.0f);
        write_nifti(dir + "fieldmap_10x12.nii", fm, {{10, 12, 1, 1}}, centred_affine({{10, 12, 1}}, {{1, 1, 1}}));
    }
    write_h5_maps(dir + "smaps_wrong.h5", 3, N, N);
    write_h5_maps(dir + "smaps_right.h5", 2, N, N);

    // sizes that lie
    const auto good = spiral_acqs(N, 2);
    write_mrd(dir + "matrix_negative.h5", set_matrix(xml, "reconSpace", "x", "-16"), good, {});
    write_mrd(dir + "matrix_100000.h5", set_matrix(xml, "reconSpace", "x", "100000"), good, {});
    {
        std::string x = xml;
        for (const char* space : {"encodedSpace", "reconSpace"})
            for (const char* axis : {"x", "y"}) x = set_matrix(x, space, axis, "65534");
        write_mrd(dir + "matrix_65534.h5", x, good, {});
        x = xml;
        for (const char* space : {"encodedSpace", "reconSpace"})
            for (const char* axis : {"x", "y"}) x = set_matrix(x, space, axis, "8192");
        write_mrd(dir + "matrix_sparse.h5", x, good, {});
    }
    {
        MrdHeader h = spiral_header(11584);
        h.receiver_channels = 1;
        std::vector<MrdAcquisition> acqs(2048);
        for (std::size_t r = 0; r < acqs.size(); ++r) {
            MrdAcquisition& a = acqs[r];
            a.samples = 64;
            a.channels = 1;
            a.traj_dims = 2;
            a.dwell_us = 4;
            a.repetition = static_cast<uint16_t>(r);
            a.data.assign(64, std::complex<float>(1.0f, 0.0f));
            a.traj.assign(128, 0.0f);
        }
        write_mrd(dir + "memory.h5", make_mrd_header_xml(h, "fixture"), acqs, {});
    }
    {
        auto acqs = good;
        acqs[0].data[5] = std::complex<float>(std::numeric_limits<float>::quiet_NaN(), 0.0f);
        write_mrd(dir + "nan_data.h5", xml, acqs, {});
    }
    {
        std::vector<float> fm(N * N, 10.0f);
        fm[37] = std::numeric_limits<float>::quiet_NaN();
        write_nifti(dir + "fieldmap_nan.nii", fm, {{N, N, 1, 1}}, centred_affine({{N, N, 1}}, {{1, 1, 1}}));
        // 352 header bytes + 16 float32 = 416 bytes, then the header is made to claim 16384x16384 float64
        std::vector<float> small(16, 1.0f);
        write_nifti(dir + "fieldmap_claims_16384.nii", small, {{4, 4, 1, 1}}, centred_affine({{4, 4, 1}}, {{1, 1, 1}}));
        patch_nifti_dims(dir + "fieldmap_claims_16384.nii", {16384, 16384}, 64, 64);
        write_nifti(dir + "fieldmap_overflow.nii", small, {{4, 4, 1, 1}}, centred_affine({{4, 4, 1}}, {{1, 1, 1}}));
        patch_nifti_dims(dir + "fieldmap_overflow.nii", {16384, 16384, 16384, 16384, 16384}, 16, 32);
    }
    write_h5_unwritten(dir + "fieldmap_huge.h5", 16384, 16384);
    {  // many coils, no maps: the coil maps are estimated, which needs a covariance per coil pair and pixel
        MrdHeader h;
        h.encoded_matrix = h.recon_matrix = {32, 32, 1};
        h.encoded_fov_mm = h.recon_fov_mm = {200, 200, 5};
        h.trajectory = "cartesian";
        h.has_center_e1 = true;
        h.center_e1 = 16;
        h.receiver_channels = 1024;
        std::vector<MrdAcquisition> acqs(32);
        for (std::size_t line = 0; line < acqs.size(); ++line) {
            MrdAcquisition& a = acqs[line];
            a.samples = 32;
            a.channels = 1024;
            a.center_sample = 16;
            a.dwell_us = 4;
            a.e1 = static_cast<uint16_t>(line);
            a.data.resize(std::size_t(32) * 1024);
            for (std::size_t i = 0; i < a.data.size(); ++i)
                a.data[i] =
                    std::complex<float>(float(std::cos(0.37 * double(i + line))), float(std::sin(0.11 * double(i))));
        }
        write_mrd(dir + "coils_1024.h5", make_mrd_header_xml(h, "fixture"), acqs, {});
    }
    return 0;
}
