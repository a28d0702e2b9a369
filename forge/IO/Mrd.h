#pragma once
// ISMRMRD (MRD) HDF5 input/output for forge-recon: read with HDF5's C API (the XML header, the
// acquisitions, map datasets), the XML parsed and written with Debian's libismrmrd, files written with it.
#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "forge/Core/DeprecatedFields.h"
#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

// An n-dimensional array read from HDF5 or NIfTI: dims fastest first (x, y, ...), values as complex
// double (real datasets have zero imaginary part).
struct Array {
    std::vector<std::size_t> dims;
    std::vector<std::complex<double>> data;
    bool is_complex = false;
    std::size_t size() const { return data.size(); }
};

// What forge-recon needs from the MRD XML header (first encoding).
struct MrdHeaderFields {
    std::array<std::size_t, 3> encoded_matrix{{0, 0, 1}};
    std::array<double, 3> encoded_fov_mm{{0, 0, 0}};
    std::array<std::size_t, 3> recon_matrix{{0, 0, 1}};
    std::array<double, 3> recon_fov_mm{{0, 0, 0}};
    std::string trajectory;  // "cartesian", "spiral", "radial", ...
    std::size_t accel_e1 = 1, accel_e2 = 1;
    bool has_te = false;
    double te_ms = 0.0;                 // the first echo time
    std::vector<double> echo_times_ms;  // every sequenceParameters/TE, echo (idx.contrast) order
    std::size_t center_e1 = 0, center_e2 = 0;
    bool has_center_e1 = false, has_center_e2 = false;
    std::size_t receiver_channels = 0;
};
// MrdHeader's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct MrdHeader : MrdHeaderFields {
    FORGE_FIELD_ALIAS(encodedMatrix, encoded_matrix)
    FORGE_FIELD_ALIAS(encodedFov_mm, encoded_fov_mm)
    FORGE_FIELD_ALIAS(reconMatrix, recon_matrix)
    FORGE_FIELD_ALIAS(reconFov_mm, recon_fov_mm)
    FORGE_FIELD_ALIAS(accelE1, accel_e1)
    FORGE_FIELD_ALIAS(accelE2, accel_e2)
    FORGE_FIELD_ALIAS(hasTE, has_te)
    FORGE_FIELD_ALIAS(TE_ms, te_ms)
    FORGE_FIELD_ALIAS(echoTimes_ms, echo_times_ms)
    FORGE_FIELD_ALIAS(centerE1, center_e1)
    FORGE_FIELD_ALIAS(centerE2, center_e2)
    FORGE_FIELD_ALIAS(hasCenterE1, has_center_e1)
    FORGE_FIELD_ALIAS(hasCenterE2, has_center_e2)
    FORGE_FIELD_ALIAS(receiverChannels, receiver_channels)
    FORGE_FIELD_ALIAS_COPIES(MrdHeader, MrdHeaderFields)
};
FORGE_FIELD_ALIASES_END

struct MrdAcquisitionFields {
    uint16_t samples = 0, channels = 0, traj_dims = 0, center_sample = 0;
    float dwell_us = 0.0f;
    uint16_t e1 = 0, e2 = 0, slice = 0, repetition = 0, contrast = 0;
    uint64_t flags = 0;
    std::array<float, 3> position{}, read_dir{}, phase_dir{}, slice_dir{};
    std::vector<std::complex<float>> data;  // samples fastest, then channels
    std::vector<float> traj;                // trajectory dimension fastest, then samples
};
// MrdAcquisition's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct MrdAcquisition : MrdAcquisitionFields {
    FORGE_FIELD_ALIAS(trajDims, traj_dims)
    FORGE_FIELD_ALIAS(centerSample, center_sample)
    FORGE_FIELD_ALIAS(readDir, read_dir)
    FORGE_FIELD_ALIAS(phaseDir, phase_dir)
    FORGE_FIELD_ALIAS(sliceDir, slice_dir)
    FORGE_FIELD_ALIAS_COPIES(MrdAcquisition, MrdAcquisitionFields)
};
FORGE_FIELD_ALIASES_END

struct MrdFileFields {
    MrdHeader header;
    std::string xml;                           // the XML header as stored (empty for content made in memory)
    std::vector<MrdAcquisition> acquisitions;  // imaging acquisitions (noise scans apart)
    std::vector<MrdAcquisition> noise;         // noise scans (ACQ_IS_NOISE_MEASUREMENT), in file order
    std::size_t noise_scans = 0;
};
// MrdFile's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct MrdFile : MrdFileFields {
    FORGE_FIELD_ALIAS(noiseScans, noise_scans)
    FORGE_FIELD_ALIAS_COPIES(MrdFile, MrdFileFields)
};
FORGE_FIELD_ALIASES_END

// Throws input_error with one line when 'path' is missing, not HDF5 (or damaged: HDF5's reason is
// quoted), not an ISMRMRD dataset (no <group>/xml header), has no acquisitions, or when its structure is
// not MRD's, checked before anything the file claims is allocated:
// - <group>/xml: one string (variable-length or fixed-length; ASCII or UTF-8), at most 16 MiB;
// - <group>/data: a 1-D dataset of compounds with head (the acquisition header: every field forge uses,
//   integers, floats and arrays of three where MRD has them), traj (variable-length floats) and data
//   (variable-length floats, two per sample, or {real, imag} float pairs); its stored chunks (or bytes)
//   must hold every acquisition it declares;
// - each acquisition's data and trajectory lengths equal to what its header claims (samples x channels,
//   samples x trajectory dimensions);
// or when a whole-number header field it uses (matrix sizes, k-space centres, acceleration factors,
// receiver channels) is not a number from 0 to 65535: libismrmrd would store such a value modulo 2^16.
// HDF5's own error printing is switched off.
MrdFile read_mrd(const std::string& path, const std::string& group = "dataset");

// The fields forge-recon uses from an MRD XML header (first encoding), with read_mrd()'s checks of the header
// (whole numbers from 0 to 65535, an encoding section). 'source' names it in messages (a file name).
MrdHeader parse_mrd_header(const std::string& xml, const std::string& source);

// True when 'path' is an HDF5 file holding an object (dataset or group) at 'object'.
bool hdf5_has_object(const std::string& path, const std::string& object);

// Reads a numeric HDF5 dataset: real (float/integer) or complex (a compound of two float members,
// e.g. h5py's {r, i} or ISMRMRD's complex_float). HDF5 stores C order (slowest first); the returned
// dims are reversed, fastest first, so an ISMRMRD NDArray (x, y, c) comes back as dims {x, y, c, 1}.
// 'check' sees the dims before anything is allocated. Throws input_error naming the dataset.
Array read_hdf5_array(const std::string& path, const std::string& object, const DimsCheck& check = {});

// Writes an ISMRMRD file: XML header, acquisitions and NDArrays (name -> complex float array, dims
// fastest first). Written under a temporary name, renamed when complete (FileUtil.h's TemporaryFile).
struct MrdNamedArray {
    std::string name;
    std::vector<std::size_t> dims;
    std::vector<std::complex<float>> data;
};
void write_mrd(const std::string& path, const std::string& xmlHeader, const std::vector<MrdAcquisition>& acqs,
               const std::vector<MrdNamedArray>& arrays, const std::string& group = "dataset");

// Switches off HDF5's and libismrmrd's printing of error stacks (forge-recon prints one line itself)
// and, when it is the process's first HDF5 call, HDF5's exit-time cleanup (which crashes on a file
// left half-open by a failed write).
void quiet_hdf5_errors();

}  // namespace io
}  // namespace forge

namespace forge {
namespace io {
// Serialises an MRD XML header (one encoding) with libismrmrd's xml.h.
std::string make_mrd_header_xml(const MrdHeader& h, const std::string& patientID = "forge-demo");
}  // namespace io
}  // namespace forge
