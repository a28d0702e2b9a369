// ISMRMRD (MRD) files: read_mrd (the XML header's fields; the structure checks and the acquisitions are
// MrdStructure.cpp's), HDF5 map datasets, and the writer of forge-recon --demo's files.
#include "forge/IO/Mrd.h"

#include <algorithm>
#include <cerrno>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <hdf5.h>
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>
#include <sys/stat.h>

#include "forge/IO/FileUtil.h"
#include "forge/IO/detail/MrdHdf5.h"

namespace forge {
namespace io {

using detail::H5Id;
using detail::hdf5_reason;
using detail::PackedHeader;
using detail::set_field;

namespace {

void silent_ismrmrd_handler(const char*, int, const char*, int, const char*) {}

bool file_exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// True when every link along 'object' exists (H5Lexists needs the parents to exist).
bool object_exists(hid_t file, const std::string& object) {
    std::string partial;
    std::size_t pos = 0;
    while (pos < object.size()) {
        std::size_t next = object.find('/', pos + 1);
        partial = object.substr(0, next);
        if (partial != "/" && !partial.empty()) {
            htri_t e = H5Lexists(file, partial.c_str(), H5P_DEFAULT);
            if (e <= 0) return false;
        }
        if (next == std::string::npos) break;
        pos = next;
    }
    return true;
}

std::string normalise(const std::string& object) { return object.empty() || object[0] != '/' ? "/" + object : object; }

// libismrmrd's exceptions carry its whole error stack, one frame a line: forge-recon prints one line.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

void quiet_hdf5_errors() {
    // No HDF5 exit-time cleanup: after a write failed (disk full, file-size limit) the file libismrmrd
    // could not close stays half-open and that cleanup crashes on it (SIGSEGV in H5F__close_cb after
    // the error was reported). Every file here is closed by its owner. Only the first HDF5 call of the
    // process can switch it off; later calls are refused harmlessly.
    static const bool noAtexit = H5dont_atexit() >= 0;
    (void)noAtexit;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    ISMRMRD::ismrmrd_set_error_handler(silent_ismrmrd_handler);
}

bool hdf5_has_object(const std::string& path, const std::string& object) {
    quiet_hdf5_errors();
    if (!file_exists(path) || H5Fis_hdf5(path.c_str()) <= 0) return false;
    H5Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    return f.ok() && object_exists(f.id, normalise(object));
}

Array read_hdf5_array(const std::string& path, const std::string& objectIn, const DimsCheck& check) {
    quiet_hdf5_errors();
    const std::string object = normalise(objectIn);
    const std::string where = "'" + path + ":" + object + "'";
    if (!file_exists(path)) throw input_error("map file '" + path + "' does not exist");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw input_error("'" + path + "' is not an HDF5 file");
    H5Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!f.ok()) throw input_error("cannot open HDF5 file '" + path + "'");
    if (!object_exists(f.id, object)) throw input_error("HDF5 dataset " + where + " does not exist");
    H5Id d(H5Dopen2(f.id, object.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) throw input_error(where + " is not an HDF5 dataset");
    H5Id space(H5Dget_space(d.id), H5Sclose);
    int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank < 0) throw input_error(where + ": cannot read its dataspace");
    std::vector<hsize_t> cdims(static_cast<std::size_t>(rank));
    if (rank > 0) H5Sget_simple_extent_dims(space.id, cdims.data(), nullptr);
    Array a;
    std::size_t n = 1;
    bool overflow = false;
    for (int k = rank - 1; k >= 0; --k) {
        a.dims.push_back(static_cast<std::size_t>(cdims[static_cast<std::size_t>(k)]));
        overflow = overflow || __builtin_mul_overflow(n, a.dims.back(), &n);
    }
    if (a.dims.empty()) a.dims.push_back(1);
    std::string shape;
    for (std::size_t k = 0; k < a.dims.size(); ++k) shape += (k ? "x" : "") + std::to_string(a.dims[k]);
    if (overflow || n > std::size_t(1) << 58)
        throw input_error(where + " claims " + shape + " values, more than any memory holds");
    if (n == 0) throw input_error(where + " is empty");
    H5Id ftype(H5Dget_type(d.id), H5Tclose);
    const H5T_class_t cls = H5Tget_class(ftype.id);
    const bool isComplex = cls == H5T_COMPOUND && H5Tget_nmembers(ftype.id) == 2 &&
                           H5Tget_member_class(ftype.id, 0) == H5T_FLOAT &&
                           H5Tget_member_class(ftype.id, 1) == H5T_FLOAT;
    if (cls != H5T_FLOAT && cls != H5T_INTEGER && !isComplex)
        throw input_error(where + " is not numeric (expected a real array or a complex compound {re, im})");
    if (check) check(a.dims);
    a.data.resize(n);
    if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
        std::vector<double> buf(n);
        if (H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
            throw input_error(where + ": HDF5 read failed" + hdf5_reason());
        for (std::size_t i = 0; i < n; ++i) a.data[i] = {buf[i], 0.0};
    } else {
        // Members stored as 32-bit floats (ISMRMRD's complex_float, what forge-recon --demo writes) are read as
        // such and widened here: HDF5 converts a compound of floats to one of doubles element by element, at
        // about 30 MB/s (a second for a 256x256x4x16 csm), while the same layout reads as a copy.
        H5Id m0(H5Tget_member_type(ftype.id, 0), H5Tclose), m1(H5Tget_member_type(ftype.id, 1), H5Tclose);
        const bool singles = H5Tget_size(m0.id) == sizeof(float) && H5Tget_size(m1.id) == sizeof(float);
        const std::size_t member = singles ? sizeof(float) : sizeof(double);
        const hid_t native = singles ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
        char* n0 = H5Tget_member_name(ftype.id, 0);
        char* n1 = H5Tget_member_name(ftype.id, 1);
        H5Id mtype(H5Tcreate(H5T_COMPOUND, 2 * member), H5Tclose);
        H5Tinsert(mtype.id, n0, 0, native);
        H5Tinsert(mtype.id, n1, member, native);
        H5free_memory(n0);
        H5free_memory(n1);
        if (singles) {
            std::vector<std::complex<float>> buf(n);
            if (H5Dread(d.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
                throw input_error(where + ": HDF5 read failed" + hdf5_reason());
            for (std::size_t i = 0; i < n; ++i) a.data[i] = {double(buf[i].real()), double(buf[i].imag())};
        } else if (H5Dread(d.id, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data.data()) < 0) {
            throw input_error(where + ": HDF5 read failed" + hdf5_reason());
        }
        a.is_complex = true;
    }
    return a;
}

MrdHeader parse_mrd_header(const std::string& xml, const std::string& source) {
    detail::check_header_numbers(xml, source);
    ISMRMRD::IsmrmrdHeader h;
    try {
        ISMRMRD::deserialize(xml.c_str(), h);
    } catch (const std::exception& e) {
        throw input_error("the ISMRMRD XML header of '" + source + "' is invalid: " + first_line(e.what()));
    }
    if (h.encoding.empty()) throw input_error("the ISMRMRD header of '" + source + "' has no encoding section");
    const auto& e = h.encoding[0];
    MrdHeader H;
    H.encoded_matrix = {e.encodedSpace.matrixSize.x, e.encodedSpace.matrixSize.y, e.encodedSpace.matrixSize.z};
    H.encoded_fov_mm = {e.encodedSpace.fieldOfView_mm.x, e.encodedSpace.fieldOfView_mm.y,
                        e.encodedSpace.fieldOfView_mm.z};
    H.recon_matrix = {e.reconSpace.matrixSize.x, e.reconSpace.matrixSize.y, e.reconSpace.matrixSize.z};
    H.recon_fov_mm = {e.reconSpace.fieldOfView_mm.x, e.reconSpace.fieldOfView_mm.y, e.reconSpace.fieldOfView_mm.z};
    switch (e.trajectory) {
        case ISMRMRD::TrajectoryType::CARTESIAN: H.trajectory = "cartesian"; break;
        case ISMRMRD::TrajectoryType::EPI: H.trajectory = "epi"; break;
        case ISMRMRD::TrajectoryType::RADIAL: H.trajectory = "radial"; break;
        case ISMRMRD::TrajectoryType::GOLDENANGLE: H.trajectory = "goldenangle"; break;
        case ISMRMRD::TrajectoryType::SPIRAL: H.trajectory = "spiral"; break;
        default: H.trajectory = "other"; break;
    }
    if (e.parallelImaging) {
        H.accel_e1 = std::max<std::size_t>(1, e.parallelImaging->accelerationFactor.kspace_encoding_step_1);
        H.accel_e2 = std::max<std::size_t>(1, e.parallelImaging->accelerationFactor.kspace_encoding_step_2);
    }
    if (h.sequenceParameters && h.sequenceParameters->TE && !h.sequenceParameters->TE->empty()) {
        H.has_te = true;
        H.te_ms = h.sequenceParameters->TE->front();
        H.echo_times_ms.assign(h.sequenceParameters->TE->begin(), h.sequenceParameters->TE->end());
    }
    if (e.encodingLimits.kspace_encoding_step_1) {
        H.has_center_e1 = true;
        H.center_e1 = e.encodingLimits.kspace_encoding_step_1->center;
    }
    if (e.encodingLimits.kspace_encoding_step_2) {
        H.has_center_e2 = true;
        H.center_e2 = e.encodingLimits.kspace_encoding_step_2->center;
    }
    if (h.acquisitionSystemInformation && h.acquisitionSystemInformation->receiverChannels)
        H.receiver_channels = *h.acquisitionSystemInformation->receiverChannels;
    return H;
}

MrdFile read_mrd(const std::string& path, const std::string& group) {
    quiet_hdf5_errors();
    if (!file_exists(path)) throw input_error("input file '" + path + "' does not exist");
    if (H5Fis_hdf5(path.c_str()) <= 0)
        throw input_error("'" + path + "' is not an HDF5 file (forge-recon reads ISMRMRD/MRD .h5 files)");
    H5Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!f.ok()) throw input_error("cannot open HDF5 file '" + path + "'" + hdf5_reason());
    const std::string xmlObject = "/" + group + "/xml", dataObject = "/" + group + "/data";
    if (!object_exists(f.id, xmlObject))
        throw input_error("'" + path + "' is an HDF5 file but not an ISMRMRD dataset (no " + xmlObject + " header)");
    if (!object_exists(f.id, dataObject))
        throw input_error("ISMRMRD file '" + path + "' has no acquisitions (no " + dataObject + ")");
    MrdFile out;
    out.xml = detail::read_xml_header(f.id, xmlObject, path);
    out.header = parse_mrd_header(out.xml, path);
    detail::read_acquisitions(f.id, dataObject, path, out);
    if (out.acquisitions.empty())
        throw input_error("ISMRMRD file '" + path + "' has no acquisitions" +
                          (out.noise_scans ? std::string(" (only noise scans)") : std::string()));
    return out;
}

std::string make_mrd_header_xml(const MrdHeader& H, const std::string& patientID) {
    ISMRMRD::IsmrmrdHeader h;
    h.experimentalConditions.H1resonanceFrequency_Hz = 127740000;  // ~3T
    ISMRMRD::AcquisitionSystemInformation sys;
    sys.institutionName = std::string("forge");
    sys.receiverChannels = static_cast<unsigned short>(H.receiver_channels);
    h.acquisitionSystemInformation = sys;
    ISMRMRD::SubjectInformation subject;
    subject.patientID = patientID;
    h.subjectInformation = subject;
    ISMRMRD::Encoding e;
    e.encodedSpace.matrixSize.x = static_cast<unsigned short>(H.encoded_matrix[0]);
    e.encodedSpace.matrixSize.y = static_cast<unsigned short>(H.encoded_matrix[1]);
    e.encodedSpace.matrixSize.z = static_cast<unsigned short>(H.encoded_matrix[2]);
    e.encodedSpace.fieldOfView_mm.x = static_cast<float>(H.encoded_fov_mm[0]);
    e.encodedSpace.fieldOfView_mm.y = static_cast<float>(H.encoded_fov_mm[1]);
    e.encodedSpace.fieldOfView_mm.z = static_cast<float>(H.encoded_fov_mm[2]);
    e.reconSpace.matrixSize.x = static_cast<unsigned short>(H.recon_matrix[0]);
    e.reconSpace.matrixSize.y = static_cast<unsigned short>(H.recon_matrix[1]);
    e.reconSpace.matrixSize.z = static_cast<unsigned short>(H.recon_matrix[2]);
    e.reconSpace.fieldOfView_mm.x = static_cast<float>(H.recon_fov_mm[0]);
    e.reconSpace.fieldOfView_mm.y = static_cast<float>(H.recon_fov_mm[1]);
    e.reconSpace.fieldOfView_mm.z = static_cast<float>(H.recon_fov_mm[2]);
    if (H.trajectory == "spiral")
        e.trajectory = ISMRMRD::TrajectoryType::SPIRAL;
    else if (H.trajectory == "radial")
        e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
    else if (H.trajectory == "epi")
        e.trajectory = ISMRMRD::TrajectoryType::EPI;
    else if (H.trajectory == "cartesian")
        e.trajectory = ISMRMRD::TrajectoryType::CARTESIAN;
    else
        e.trajectory = ISMRMRD::TrajectoryType::OTHER;
    if (H.accel_e1 > 1 || H.accel_e2 > 1) {
        ISMRMRD::ParallelImaging p;
        p.accelerationFactor.kspace_encoding_step_1 = static_cast<unsigned short>(H.accel_e1);
        p.accelerationFactor.kspace_encoding_step_2 = static_cast<unsigned short>(H.accel_e2);
        e.parallelImaging = p;
    }
    if (H.has_center_e1)
        e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, 0, static_cast<unsigned short>(H.center_e1));
    h.encoding.push_back(e);
    if (H.has_te) {
        ISMRMRD::SequenceParameters sp;
        sp.TE = std::vector<float>{static_cast<float>(H.te_ms)};
        if (!H.echo_times_ms.empty()) sp.TE = std::vector<float>(H.echo_times_ms.begin(), H.echo_times_ms.end());
        h.sequenceParameters = sp;
    }
    std::stringstream s;
    ISMRMRD::serialize(h, s);
    return s.str();
}

void write_mrd(const std::string& path, const std::string& xmlHeader, const std::vector<MrdAcquisition>& acqs,
               const std::vector<MrdNamedArray>& arrays, const std::string& group) {
    quiet_hdf5_errors();
    TemporaryFile tmp(path);
    errno = 0;  // the reason HDF5 leaves when a write fails (library_write_error)
    try {
        ISMRMRD::Dataset d(tmp.name().c_str(), group.c_str(), true);
        d.writeHeader(xmlHeader);
        ISMRMRD::Acquisition acq;
        for (const auto& a : acqs) {
            acq.resize(a.samples, a.channels, a.traj_dims);
            ISMRMRD::AcquisitionHeader h = acq.getHead();
            set_field<uint64_t>(h, offsetof(PackedHeader, flags), a.flags);
            h.center_sample = a.center_sample;
            set_field<float>(h, offsetof(PackedHeader, sample_time_us), a.dwell_us);
            h.available_channels = a.channels;
            h.idx.kspace_encode_step_1 = a.e1;
            h.idx.kspace_encode_step_2 = a.e2;
            h.idx.slice = a.slice;
            h.idx.repetition = a.repetition;
            h.idx.contrast = a.contrast;
            for (std::size_t k = 0; k < 3; ++k) {
                set_field<float>(h, offsetof(PackedHeader, position), a.position[k], k);
                set_field<float>(h, offsetof(PackedHeader, read_dir), a.read_dir[k], k);
                set_field<float>(h, offsetof(PackedHeader, phase_dir), a.phase_dir[k], k);
                set_field<float>(h, offsetof(PackedHeader, slice_dir), a.slice_dir[k], k);
            }
            acq.setHead(h);
            std::copy(a.data.begin(), a.data.end(), acq.getDataPtr());
            if (a.traj_dims) std::copy(a.traj.begin(), a.traj.end(), acq.getTrajPtr());
            d.appendAcquisition(acq);
        }
        for (const auto& arr : arrays) {
            ISMRMRD::NDArray<std::complex<float>> nd(arr.dims);
            std::copy(arr.data.begin(), arr.data.end(), nd.getDataPtr());
            d.appendNDArray(arr.name, nd);
        }
    } catch (const std::exception& e) {
        throw std::runtime_error("writing ISMRMRD file '" + final_name(path) +
                                 "' failed: " + library_write_error(e.what(), errno));
    }
    tmp.commit();
}

}  // namespace io
}  // namespace forge
