// The structure checks of an MRD (ISMRMRD HDF5) file, before anything it claims is allocated: the XML header's
// dataset and its whole numbers, the acquisitions' compound type member by member, their stored size, and each
// acquisition's data and trajectory lengths against its header. read_mrd (Mrd.cpp) calls them.
#include <algorithm>
#include <cerrno>
#include <complex>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <hdf5.h>
#include <ismrmrd/ismrmrd.h>
#include <pugixml.hpp>

#include "forge/IO/detail/MrdHdf5.h"

namespace forge {
namespace io {
namespace detail {

namespace {

// Gives back the variable-length data HDF5 allocated in 'buf' (H5Dvlen_reclaim is deprecated from 1.12,
// which has H5Treclaim; Debian's 1.10 declares H5Treclaim without exporting it).
void reclaim_vlen(hid_t type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(type, space, H5P_DEFAULT, buf);
#else
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
#endif
}

bool is_dataset(hid_t file, const std::string& object) {
    H5Id o(H5Oopen(file, object.c_str(), H5P_DEFAULT), H5Oclose);
    return o.ok() && H5Iget_type(o.id) == H5I_DATASET;
}

// "32-bit integer", "variable-length sequence", ...: what an HDF5 type holds, for messages.
std::string type_name(hid_t t) {
    const std::string bits = std::to_string(8 * H5Tget_size(t)) + "-bit ";
    switch (H5Tget_class(t)) {
        case H5T_INTEGER: return bits + "integer";
        case H5T_FLOAT: return bits + "float";
        case H5T_STRING: return "string";
        case H5T_COMPOUND: return "compound";
        case H5T_ARRAY: return "array";
        case H5T_VLEN: return "variable-length sequence";
        case H5T_ENUM: return "enum";
        case H5T_REFERENCE: return "reference";
        default: return "non-numeric";
    }
}
// The same with its article: "a 32-bit float", "an 8-bit integer", "an array".
std::string a_type_name(hid_t t) {
    const std::string n = type_name(t);
    return (std::strchr("aeiou8", n[0]) ? "an " : "a ") + n;
}

// The acquisition as read: the header forge uses (libismrmrd's layout, so get_field applies), then the
// trajectory and the samples as HDF5 hands out variable-length data (length, pointer).
struct AcquisitionRecord {
    PackedHeader head;
    hvl_t traj;
    hvl_t data;
};

// One member of the acquisition header forge reads: its name, its place in ISMRMRD_AcquisitionHeader (or
// in its idx, ISMRMRD_EncodingCounters), its type and its length (1: a scalar, 3: an array of three).
struct HeadField {
    const char* name;
    std::size_t offset;
    enum Kind { U16, U64, F32 } kind;
    int count;
};
using Counters = ISMRMRD::ISMRMRD_EncodingCounters;
const HeadField kHeadFields[] = {
    {"flags", offsetof(PackedHeader, flags), HeadField::U64, 1},
    {"number_of_samples", offsetof(PackedHeader, number_of_samples), HeadField::U16, 1},
    {"active_channels", offsetof(PackedHeader, active_channels), HeadField::U16, 1},
    {"center_sample", offsetof(PackedHeader, center_sample), HeadField::U16, 1},
    {"trajectory_dimensions", offsetof(PackedHeader, trajectory_dimensions), HeadField::U16, 1},
    {"sample_time_us", offsetof(PackedHeader, sample_time_us), HeadField::F32, 1},
    {"position", offsetof(PackedHeader, position), HeadField::F32, 3},
    {"read_dir", offsetof(PackedHeader, read_dir), HeadField::F32, 3},
    {"phase_dir", offsetof(PackedHeader, phase_dir), HeadField::F32, 3},
    {"slice_dir", offsetof(PackedHeader, slice_dir), HeadField::F32, 3},
};
const HeadField kIdxFields[] = {
    {"kspace_encode_step_1", offsetof(Counters, kspace_encode_step_1), HeadField::U16, 1},
    {"kspace_encode_step_2", offsetof(Counters, kspace_encode_step_2), HeadField::U16, 1},
    {"slice", offsetof(Counters, slice), HeadField::U16, 1},
    {"contrast", offsetof(Counters, contrast), HeadField::U16, 1},
    {"repetition", offsetof(Counters, repetition), HeadField::U16, 1},
};

// The file's compound member 'name' (a new type id the caller closes), or -1.
hid_t member_type(hid_t compound, const char* name) {
    const int i = H5Tget_member_index(compound, name);
    return i < 0 ? -1 : H5Tget_member_type(compound, static_cast<unsigned>(i));
}

// A memory compound of 'fields' (offsets within a struct of 'size' bytes), after checking that the file's
// compound 'ftype' has each of them with the same class and length; HDF5 then converts the sizes and byte
// order. 'where' names the compound in messages.
hid_t header_fields_type(hid_t ftype, const HeadField* fields, std::size_t nfields, std::size_t size,
                         const std::string& where) {
    if (H5Tget_class(ftype) != H5T_COMPOUND)
        throw input_error(where + " is " + a_type_name(ftype) + " (expected a compound: the acquisition header)");
    H5Id mem(H5Tcreate(H5T_COMPOUND, size), H5Tclose);
    for (std::size_t k = 0; k < nfields; ++k) {
        const HeadField& f = fields[k];
        H5Id ft(member_type(ftype, f.name), H5Tclose);
        if (!ft.ok()) throw input_error(where + " has no field " + f.name);
        hid_t scalar = f.kind == HeadField::U16   ? H5T_NATIVE_UINT16
                       : f.kind == HeadField::U64 ? H5T_NATIVE_UINT64
                                                  : H5T_NATIVE_FLOAT;
        const H5T_class_t want = f.kind == HeadField::F32 ? H5T_FLOAT : H5T_INTEGER;
        const char* wantName = f.kind == HeadField::F32 ? "a float" : "an integer";
        hid_t base = ft.id;
        H5Id fbase(-1, H5Tclose);
        if (f.count > 1) {
            hsize_t dims[H5S_MAX_RANK];
            if (H5Tget_class(ft.id) != H5T_ARRAY || H5Tget_array_ndims(ft.id) != 1 ||
                H5Tget_array_dims2(ft.id, dims) != 1 || dims[0] != hsize_t(f.count))
                throw input_error(where + " field " + f.name + " is " + a_type_name(ft.id) + " (expected an array of " +
                                  std::to_string(f.count) + " floats)");
            fbase.id = H5Tget_super(ft.id);
            base = fbase.id;
        }
        if (H5Tget_class(base) != want)
            throw input_error(where + " field " + f.name + " is " + a_type_name(base) + " (expected " + wantName + ")");
        if (f.count > 1) {
            const hsize_t n = hsize_t(f.count);
            H5Id array(H5Tarray_create2(scalar, 1, &n), H5Tclose);
            H5Tinsert(mem.id, f.name, f.offset, array.id);
        } else {
            H5Tinsert(mem.id, f.name, f.offset, scalar);
        }
    }
    const hid_t out = mem.id;
    mem.id = -1;
    return out;
}

// The memory type of AcquisitionRecord for the file's acquisition type 'ftype', checked member by member.
// Sets 'complexSamples' when the samples are stored as {real, imag} pairs (one element per complex value)
// rather than as floats (two per complex value).
hid_t acquisition_type(hid_t ftype, const std::string& where, bool& complexSamples) {
    const std::string expected = " (expected ISMRMRD acquisitions: a compound of head, traj and data)";
    if (H5Tget_class(ftype) != H5T_COMPOUND)
        throw input_error(where + " holds " + type_name(ftype) + " values, not ISMRMRD acquisitions" + expected);
    H5Id fhead(member_type(ftype, "head"), H5Tclose), ftraj(member_type(ftype, "traj"), H5Tclose),
        fdata(member_type(ftype, "data"), H5Tclose);
    const std::pair<const H5Id*, const char*> members[] = {{&fhead, "head"}, {&ftraj, "traj"}, {&fdata, "data"}};
    for (const auto& m : members)
        if (!m.first->ok()) throw input_error(where + " has no member " + m.second + expected);
    // the header, with its encoding counters
    H5Id fidx(H5Tget_class(fhead.id) == H5T_COMPOUND ? member_type(fhead.id, "idx") : -1, H5Tclose);
    H5Id head(header_fields_type(fhead.id, kHeadFields, sizeof kHeadFields / sizeof kHeadFields[0],
                                 sizeof(PackedHeader), where + "'s acquisition header"),
              H5Tclose);
    if (!fidx.ok()) throw input_error(where + "'s acquisition header has no field idx");
    H5Id idx(header_fields_type(fidx.id, kIdxFields, sizeof kIdxFields / sizeof kIdxFields[0], sizeof(Counters),
                                where + "'s acquisition header field idx"),
             H5Tclose);
    H5Tinsert(head.id, "idx", offsetof(PackedHeader, idx), idx.id);
    // trajectory: floats; samples: floats (libismrmrd 1.x) or complex {real, imag} pairs
    auto is_float_sequence = [](hid_t t) {
        if (H5Tget_class(t) != H5T_VLEN) return false;
        H5Id base(H5Tget_super(t), H5Tclose);
        return H5Tget_class(base.id) == H5T_FLOAT;
    };
    if (!is_float_sequence(ftraj.id))
        throw input_error(where + " member traj is " + a_type_name(ftraj.id) +
                          " (expected a variable-length sequence of floats)");
    H5Id dataBase(H5Tget_class(fdata.id) == H5T_VLEN ? H5Tget_super(fdata.id) : -1, H5Tclose);
    complexSamples = dataBase.ok() && H5Tget_class(dataBase.id) == H5T_COMPOUND && H5Tget_nmembers(dataBase.id) == 2 &&
                     H5Tget_member_class(dataBase.id, 0) == H5T_FLOAT &&
                     H5Tget_member_class(dataBase.id, 1) == H5T_FLOAT;
    if (!complexSamples && !is_float_sequence(fdata.id))
        throw input_error(where + " member data is " +
                          (dataBase.ok() ? "a variable-length sequence of " + type_name(dataBase.id) + " values"
                                         : a_type_name(fdata.id)) +
                          " (expected a variable-length sequence of floats or of complex {real, imag} floats)");
    H5Id floatSeq(H5Tvlen_create(H5T_NATIVE_FLOAT), H5Tclose);
    H5Id cx(H5Tcreate(H5T_COMPOUND, 2 * sizeof(float)), H5Tclose);
    if (complexSamples) {  // named as in the file: HDF5 converts compound members by name
        char* re = H5Tget_member_name(dataBase.id, 0);
        char* im = H5Tget_member_name(dataBase.id, 1);
        H5Tinsert(cx.id, re, 0, H5T_NATIVE_FLOAT);
        H5Tinsert(cx.id, im, sizeof(float), H5T_NATIVE_FLOAT);
        H5free_memory(re);
        H5free_memory(im);
    }
    H5Id cxSeq(complexSamples ? H5Tvlen_create(cx.id) : -1, H5Tclose);
    const hid_t mem = H5Tcreate(H5T_COMPOUND, sizeof(AcquisitionRecord));
    H5Tinsert(mem, "head", offsetof(AcquisitionRecord, head), head.id);
    H5Tinsert(mem, "traj", offsetof(AcquisitionRecord, traj), floatSeq.id);
    H5Tinsert(mem, "data", offsetof(AcquisitionRecord, data), complexSamples ? cxSeq.id : floatSeq.id);
    return mem;
}

// The acquisitions the dataset declares must be stored: a chunked dataset's allocated chunks must cover
// them (unwritten chunks read as empty acquisitions, and a file of a few KB can declare 1e9 of them), a
// contiguous one must hold their bytes.
void check_acquisitions_stored(hid_t d, hid_t ftype, hsize_t n, const std::string& where) {
    H5Id dcpl(H5Dget_create_plist(d), H5Pclose);
    const H5D_layout_t layout = H5Pget_layout(dcpl.id);
    const std::string declared = where + " declares " + std::to_string(n) + " acquisitions";
    if (layout == H5D_CHUNKED) {
        hsize_t chunk = 0, chunks = 0;
        H5Id space(H5Dget_space(d), H5Sclose);  // HDF5 1.10 takes no H5S_ALL here
        if (H5Pget_chunk(dcpl.id, 1, &chunk) != 1 || H5Dget_num_chunks(d, space.id, &chunks) < 0)
            throw input_error("cannot read the chunk layout of " + where + hdf5_reason());
        if (chunks * chunk < n)
            throw input_error(declared + " but its stored chunks hold at most " + std::to_string(chunks * chunk) +
                              " (the file is truncated or was never completely written)");
    } else if (layout == H5D_CONTIGUOUS) {
        const hsize_t stored = H5Dget_storage_size(d), need = n * H5Tget_size(ftype);
        if (stored < need)
            throw input_error(declared + " (" + std::to_string(need) + " bytes) but the file holds " +
                              std::to_string(stored) + " bytes of them");
    }
}

}  // namespace

// libismrmrd parses the header's whole numbers with atoi into 16-bit fields, so "-16" becomes 65520
// and "100000" 34464 without a word. The fields forge-recon uses are read again from the XML text
// (with pugixml, the parser libismrmrd uses) and must be whole numbers from 0 to 65535.
void check_header_numbers(const std::string& xml, const std::string& path) {
    pugi::xml_document doc;
    if (!doc.load_string(xml.c_str())) return;  // malformed XML: ISMRMRD::deserialize reports it
    const pugi::xml_node root = doc.child("ismrmrdHeader");
    const pugi::xml_node enc = root.child("encoding");
    struct Field {
        pugi::xml_node base;
        const char* prefix;
        const char* path;
    };
    const Field fields[] = {
        {enc, "encoding/", "encodedSpace/matrixSize/x"},
        {enc, "encoding/", "encodedSpace/matrixSize/y"},
        {enc, "encoding/", "encodedSpace/matrixSize/z"},
        {enc, "encoding/", "reconSpace/matrixSize/x"},
        {enc, "encoding/", "reconSpace/matrixSize/y"},
        {enc, "encoding/", "reconSpace/matrixSize/z"},
        {enc, "encoding/", "encodingLimits/kspace_encoding_step_1/center"},
        {enc, "encoding/", "encodingLimits/kspace_encoding_step_2/center"},
        {enc, "encoding/", "parallelImaging/accelerationFactor/kspace_encoding_step_1"},
        {enc, "encoding/", "parallelImaging/accelerationFactor/kspace_encoding_step_2"},
        {root, "", "acquisitionSystemInformation/receiverChannels"},
    };
    for (const auto& f : fields) {
        if (!f.base) continue;
        const pugi::xml_node n = f.base.first_element_by_path(f.path);
        if (!n) continue;  // optional fields; required ones are libismrmrd's to report
        const std::string text = n.child_value();
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(begin, &end, 10);
        while (end && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) ++end;
        if (end == begin || *end != '\0' || errno == ERANGE || v < 0 || v > 65535)
            throw input_error("'" + path + "': the ISMRMRD header's " + f.prefix + f.path + " is '" + text +
                              "' (expected a whole number from 0 to 65535)");
    }
}

// The ISMRMRD XML header: one string, variable-length (what libismrmrd writes; ASCII or UTF-8) or of fixed
// length, in a dataset of one element. Read with HDF5 itself: libismrmrd 1.8 reads the whole dataset into
// a one-element array whatever its size.
std::string read_xml_header(hid_t file, const std::string& object, const std::string& path) {
    constexpr std::size_t kMaxHeaderBytes = std::size_t(16) << 20;  // real headers are kilobytes
    const std::string where = "'" + path + "': " + object;
    const std::string expected = " (expected one string: the ISMRMRD XML header)";
    if (!is_dataset(file, object)) throw input_error(where + " is not an HDF5 dataset" + expected);
    H5Id d(H5Dopen2(file, object.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) throw input_error("cannot open " + where + hdf5_reason());
    H5Id type(H5Dget_type(d.id), H5Tclose);
    if (H5Tget_class(type.id) != H5T_STRING)
        throw input_error(where + " holds " + type_name(type.id) + " values, not a string" + expected);
    H5Id space(H5Dget_space(d.id), H5Sclose);
    const hssize_t count = H5Sget_simple_extent_npoints(space.id);
    if (count != 1) throw input_error(where + " holds " + std::to_string(count) + " strings" + expected);
    std::string xml;
    if (H5Tis_variable_str(type.id) > 0) {
        H5Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(mem.id, H5T_VARIABLE);
        H5Tset_cset(mem.id, H5Tget_cset(type.id));
        char* text = nullptr;
        if (H5Dread(d.id, mem.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0)
            throw input_error("cannot read the ISMRMRD header " + where + hdf5_reason());
        if (text) xml = text;
        reclaim_vlen(mem.id, space.id, &text);
    } else {
        const std::size_t size = H5Tget_size(type.id);
        if (size > kMaxHeaderBytes)
            throw input_error(where + " is a string of " + std::to_string(size) +
                              " bytes (an ISMRMRD XML header of more than 16 MiB is not plausible)");
        std::vector<char> buf(size + 1, '\0');
        if (H5Dread(d.id, type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
            throw input_error("cannot read the ISMRMRD header " + where + hdf5_reason());
        xml.assign(buf.data());  // up to the first NUL (null-terminated or null-padded)
        if (H5Tget_strpad(type.id) == H5T_STR_SPACEPAD) xml.erase(xml.find_last_not_of(' ') + 1);
    }
    if (xml.empty()) throw input_error(where + " is empty (expected the ISMRMRD XML header)");
    return xml;
}

// Reads every acquisition of 'object' with the HDF5 C API into 'out', checking each one's samples and
// trajectory against the sizes its header claims before anything is copied.
void read_acquisitions(hid_t file, const std::string& object, const std::string& path, MrdFile& out) {
    const std::string where = "'" + path + "': " + object;
    if (!is_dataset(file, object))
        throw input_error(where + " is not an HDF5 dataset (expected the ISMRMRD acquisitions)");
    H5Id d(H5Dopen2(file, object.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) throw input_error("cannot open " + where + hdf5_reason());
    H5Id ftype(H5Dget_type(d.id), H5Tclose);
    bool complexSamples = false;
    H5Id mem(acquisition_type(ftype.id, where, complexSamples), H5Tclose);
    H5Id space(H5Dget_space(d.id), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank != 1)
        throw input_error(where + " has " + std::to_string(rank) + " dimensions (expected a 1-D list of acquisitions)");
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space.id, &n, nullptr);
    if (n == 0) return;
    check_acquisitions_stored(d.id, ftype.id, n, where);

    constexpr hsize_t kBlock = 256;  // acquisitions read at a time
    std::vector<AcquisitionRecord> buf(kBlock);
    for (hsize_t first = 0; first < n; first += kBlock) {
        const hsize_t count = std::min(kBlock, n - first);
        H5Id memSpace(H5Screate_simple(1, &count, nullptr), H5Sclose);
        H5Sselect_hyperslab(space.id, H5S_SELECT_SET, &first, nullptr, &count, nullptr);
        std::memset(static_cast<void*>(buf.data()), 0, buf.size() * sizeof(AcquisitionRecord));
        // HDF5 allocates the variable-length data; they are given back however this block ends (the
        // records it did not fill are zero: nothing to give back)
        struct Reclaim {
            hid_t type, space;
            void* buf;
            ~Reclaim() { reclaim_vlen(type, space, buf); }
        } reclaim{mem.id, memSpace.id, buf.data()};
        if (H5Dread(d.id, mem.id, memSpace.id, space.id, H5P_DEFAULT, buf.data()) < 0)
            throw input_error("cannot read acquisitions " + std::to_string(first) + " to " +
                              std::to_string(first + count - 1) + " of '" + path + "'" + hdf5_reason());
        for (hsize_t r = 0; r < count; ++r) {
            const AcquisitionRecord& rec = buf[r];
            const PackedHeader& h = rec.head;
            const std::string which = "'" + path + "': acquisition " + std::to_string(first + r);
            MrdAcquisition a = acquisition_header(h);
            const std::size_t values = std::size_t(a.samples) * a.channels;
            const std::size_t dataLen = complexSamples ? values : 2 * values;
            if (rec.data.len != dataLen || (dataLen && !rec.data.p))
                throw input_error(which + ": its header says " + std::to_string(a.samples) + " samples x " +
                                  std::to_string(a.channels) + " channels (" + std::to_string(dataLen) +
                                  (complexSamples ? " complex values" : " floats") + ") but its data holds " +
                                  std::to_string(rec.data.len));
            const std::size_t trajLen = std::size_t(a.samples) * a.traj_dims;
            if (rec.traj.len != trajLen || (trajLen && !rec.traj.p))
                throw input_error(which + ": its header says " + std::to_string(a.samples) + " samples x " +
                                  std::to_string(a.traj_dims) + " trajectory dimensions (" + std::to_string(trajLen) +
                                  " floats) but its trajectory holds " + std::to_string(rec.traj.len));
            a.data.resize(values);
            if (values)
                std::memcpy(static_cast<void*>(a.data.data()), rec.data.p, values * sizeof(std::complex<float>));
            a.traj.resize(trajLen);
            if (trajLen) std::memcpy(a.traj.data(), rec.traj.p, trajLen * sizeof(float));
            if (a.flags & (uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1))) {
                ++out.noise_scans;
                out.noise.push_back(std::move(a));
            } else {
                out.acquisitions.push_back(std::move(a));
            }
        }
    }
}

}  // namespace detail
}  // namespace io
}  // namespace forge
