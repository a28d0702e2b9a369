#pragma once
// Private to forge/IO's MRD reader, writer and stream (Mrd.cpp, MrdStructure.cpp, MrdStream.cpp): the HDF5 and
// libismrmrd pieces both use. Not installed: it needs HDF5's and libismrmrd's headers, which Forge::IO's users do not.
#include <cstddef>
#include <cstring>
#include <string>

#include <hdf5.h>
#include <ismrmrd/ismrmrd.h>

#include "forge/IO/Mrd.h"

namespace forge {
namespace io {
namespace detail {

// RAII for HDF5 identifiers.
struct H5Id {
    hid_t id = -1;
    herr_t (*close)(hid_t) = nullptr;
    H5Id(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
    ~H5Id() {
        if (id >= 0 && close) close(id);
    }
    H5Id(const H5Id&) = delete;
    H5Id& operator=(const H5Id&) = delete;
    bool ok() const { return id >= 0; }
};

// ISMRMRD's acquisition header is packed (2-byte alignment), so its float and uint64 fields sit at
// addresses their types do not allow: they are copied by offset, never used through a pointer or a
// reference of their own type (libismrmrd's accessors such as sample_time_us() hand out such references).
using PackedHeader = ISMRMRD::ISMRMRD_AcquisitionHeader;
template <typename T>
T get_field(const PackedHeader& h, std::size_t offset, std::size_t index = 0) {
    T v;
    std::memcpy(&v, reinterpret_cast<const char*>(&h) + offset + index * sizeof(T), sizeof(T));
    return v;
}
template <typename T>
void set_field(PackedHeader& h, std::size_t offset, const T& v, std::size_t index = 0) {
    std::memcpy(reinterpret_cast<char*>(&h) + offset + index * sizeof(T), &v, sizeof(T));
}

// The header fields of an acquisition as MrdAcquisition holds them (its values and trajectory are the caller's to
// read: from an HDF5 record or from a stream).
inline MrdAcquisition acquisition_header(const PackedHeader& h) {
    MrdAcquisition a;
    a.flags = get_field<uint64_t>(h, offsetof(PackedHeader, flags));
    a.samples = h.number_of_samples;
    a.channels = h.active_channels;
    a.traj_dims = h.trajectory_dimensions;
    a.center_sample = h.center_sample;
    a.dwell_us = get_field<float>(h, offsetof(PackedHeader, sample_time_us));
    a.e1 = h.idx.kspace_encode_step_1;
    a.e2 = h.idx.kspace_encode_step_2;
    a.slice = h.idx.slice;
    a.repetition = h.idx.repetition;
    a.contrast = h.idx.contrast;
    for (std::size_t k = 0; k < 3; ++k) {
        a.position[k] = get_field<float>(h, offsetof(PackedHeader, position), k);
        a.read_dir[k] = get_field<float>(h, offsetof(PackedHeader, read_dir), k);
        a.phase_dir[k] = get_field<float>(h, offsetof(PackedHeader, phase_dir), k);
        a.slice_dir[k] = get_field<float>(h, offsetof(PackedHeader, slice_dir), k);
    }
    return a;
}

// HDF5's innermost error message, the most specific one, as " (truncated file: eof = 1024, ...)", or
// nothing. The error stack is recorded even with its printing switched off.
inline std::string hdf5_reason() {
    std::string msg;
    const hid_t stack = H5Eget_current_stack();
    if (stack < 0) return msg;
    H5Ewalk2(
        stack, H5E_WALK_DOWNWARD,
        [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
            if (e->desc && *e->desc) *static_cast<std::string*>(data) = e->desc;  // the innermost frame is last
            return 0;
        },
        &msg);
    H5Eclose_stack(stack);
    return msg.empty() ? msg : " (" + msg + ")";
}

// ---- the structure checks of an MRD file (MrdStructure.cpp)

// libismrmrd parses the header's whole numbers with atoi into 16-bit fields, so "-16" becomes 65520
// and "100000" 34464 without a word. The fields forge-recon uses are read again from the XML text
// (with pugixml, the parser libismrmrd uses) and must be whole numbers from 0 to 65535.
void check_header_numbers(const std::string& xml, const std::string& path);

// The ISMRMRD XML header: one string, variable-length (what libismrmrd writes; ASCII or UTF-8) or of fixed
// length, in a dataset of one element. Read with HDF5 itself: libismrmrd 1.8 reads the whole dataset into
// a one-element array whatever its size.
// Throws input_error when it is not one.
std::string read_xml_header(hid_t file, const std::string& object, const std::string& path);

// Reads every acquisition of 'object' with the HDF5 C API into 'out', checking each one's samples and
// trajectory against the sizes its header claims before anything is copied.
// Throws input_error when 'object' is not a list of MRD acquisitions (MrdStructure.cpp's checks).
void read_acquisitions(hid_t file, const std::string& object, const std::string& path, MrdFile& out);

}  // namespace detail
}  // namespace io
}  // namespace forge
