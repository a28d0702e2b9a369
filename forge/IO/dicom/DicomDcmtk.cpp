// DICOM MR images with DCMTK's dcmdata (DcmFileFormat, putAndInsert*, saveFile): the attributes of the MR Image
// Storage IOD's mandatory modules (patient, study, series, frame of reference, equipment, image plane, image
// pixel, MR image, SOP common), Type 2 ones present and empty where forge knows no value.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <dcmtk/dcmdata/dctk.h>

#include "forge/Core/Exceptions.h"
#include "forge/IO/Dicom.h"
#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

namespace {

std::string uid(const char* root) {
    char b[100];
    dcmGenerateUniqueIdentifier(b, root);
    return b;
}

// Decimal strings (DS) hold at most 16 characters.
std::string ds(double v) {
    char b[32];
    for (int digits = 10; digits > 1; --digits) {
        std::snprintf(b, sizeof b, "%.*g", digits, std::fabs(v) < 1e-9 ? 0.0 : v);
        if (std::string(b).size() <= 16) break;
    }
    return b;
}

std::string ds_list(std::initializer_list<double> v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : "\\") + ds(x);
    return s;
}

void put(DcmDataset& d, const DcmTagKey& tag, const std::string& value, const std::string& file) {
    const OFCondition c = d.putAndInsertString(tag, value.c_str());
    if (c.bad())
        throw std::runtime_error("DICOM '" + file + "': cannot set " + DcmTag(tag).getTagName() + ": " + c.text());
}

}  // namespace

bool dicom_available() { return true; }

std::vector<std::string> write_dicom_series(const std::string& dir, const ImageGeometry& g,
                                            const std::vector<MrdOutputImage>& images, const DicomOptions& opt,
                                            const std::function<std::string(const std::string&)>& stage) {
    const std::size_t nx = g.matrix[0], ny = g.matrix[1], nz = g.matrix[2], plane = nx * ny;
    for (std::size_t i = 0; i < images.size(); ++i) {
        if (images[i].values.size() != plane * nz)
            throw forge::invalid_argument("write_dicom_series: image " + std::to_string(i) + " has " +
                                          std::to_string(images[i].values.size()) + " values but the matrix " +
                                          std::to_string(plane * nz));
        if (images[i].slice >= g.slices.size())
            throw forge::invalid_argument("write_dicom_series: image " + std::to_string(i) + " is of slice " +
                                          std::to_string(images[i].slice) + " but the geometry has " +
                                          std::to_string(g.slices.size()));
    }
    if (nx > 65535 || ny > 65535)
        throw forge::invalid_argument("write_dicom_series: DICOM rows and columns are 16 bits");
    // one scale for the series, so that pixel values compare across images
    double peak = 0;
    for (const auto& im : images)
        for (const auto& v : im.values) peak = std::max(peak, double(std::abs(v)));
    const double slope = peak > 0 ? peak / 32767.0 : 1.0;
    const std::string study = uid(SITE_STUDY_UID_ROOT), series = uid(SITE_SERIES_UID_ROOT),
                      frameOfReference = uid(SITE_UID_ROOT ".1.5");
    const std::array<double, 3> v = g.voxel_mm();
    const double thickness = v[2];
    std::vector<std::string> written;
    unsigned instance = 0;
    for (const auto& im : images) {
        const SliceGeometry& s = g.slices[im.slice];
        for (std::size_t z = 0; z < nz; ++z) {
            ++instance;
            char name[32];
            std::snprintf(name, sizeof name, "IM_%05u.dcm", instance);
            const std::string path = dir + "/" + name;
            DcmFileFormat file;
            DcmDataset& d = *file.getDataset();
            put(d, DCM_SpecificCharacterSet, "ISO_IR 192", path);
            put(d, DCM_SOPClassUID, UID_MRImageStorage, path);
            put(d, DCM_SOPInstanceUID, uid(SITE_INSTANCE_UID_ROOT), path);
            put(d, DCM_StudyInstanceUID, study, path);
            put(d, DCM_SeriesInstanceUID, series, path);
            put(d, DCM_FrameOfReferenceUID, frameOfReference, path);
            put(d, DCM_PositionReferenceIndicator, "", path);
            put(d, DCM_Modality, "MR", path);
            put(d, DCM_PatientName, opt.patient_name, path);
            put(d, DCM_PatientID, opt.patient_id, path);
            put(d, DCM_PatientBirthDate, "", path);
            put(d, DCM_PatientSex, "", path);
            for (const DcmTagKey& t : {DCM_StudyDate, DCM_StudyTime, DCM_ReferringPhysicianName, DCM_StudyID,
                                       DCM_AccessionNumber, DCM_Manufacturer, DCM_ScanOptions})
                put(d, t, "", path);
            put(d, DCM_SeriesDescription, opt.series_description, path);
            put(d, DCM_SoftwareVersions, opt.software, path);
            put(d, DCM_SeriesNumber, std::to_string(opt.series_number), path);
            put(d, DCM_InstanceNumber, std::to_string(instance), path);
            put(d, DCM_AcquisitionNumber, std::to_string(unsigned(im.repetition) + 1), path);
            put(d, DCM_ImageType, "DERIVED\\PRIMARY\\M", path);
            // MR image module: research-mode sequence, what forge knows of the echo
            put(d, DCM_ScanningSequence, "RM", path);
            put(d, DCM_SequenceVariant, "NONE", path);
            put(d, DCM_MRAcquisitionType, nz > 1 ? "3D" : "2D", path);
            put(d, DCM_RepetitionTime, "", path);
            put(d, DCM_EchoTrainLength, "", path);
            put(d, DCM_EchoTime, im.contrast < opt.echo_times_ms.size() ? ds(opt.echo_times_ms[im.contrast]) : "",
                path);
            put(d, DCM_EchoNumbers, std::to_string(unsigned(im.contrast) + 1), path);
            // image plane: pixel (0, 0) of this plane, rows along read_dir, columns along phase_dir
            const std::array<double, 3> p = g.pixel_position(im.slice, 0, 0, double(z));
            put(d, DCM_ImagePositionPatient, ds_list({p[0], p[1], p[2]}), path);
            put(d, DCM_ImageOrientationPatient,
                ds_list({s.read_dir[0], s.read_dir[1], s.read_dir[2], s.phase_dir[0], s.phase_dir[1], s.phase_dir[2]}),
                path);
            put(d, DCM_PixelSpacing, ds_list({v[1], v[0]}), path);
            put(d, DCM_SliceThickness, ds(thickness), path);
            double location = 0;  // the plane's centre along the slice normal
            const std::array<double, 3> c = g.pixel_position(im.slice, double(nx / 2), double(ny / 2), double(z));
            for (int k = 0; k < 3; ++k) location += c[k] * s.slice_dir[k];
            put(d, DCM_SliceLocation, ds(location), path);
            // image pixel: 16-bit unsigned magnitudes, value = pixel x RescaleSlope
            d.putAndInsertUint16(DCM_SamplesPerPixel, 1);
            put(d, DCM_PhotometricInterpretation, "MONOCHROME2", path);
            d.putAndInsertUint16(DCM_Rows, uint16_t(ny));
            d.putAndInsertUint16(DCM_Columns, uint16_t(nx));
            d.putAndInsertUint16(DCM_BitsAllocated, 16);
            d.putAndInsertUint16(DCM_BitsStored, 16);
            d.putAndInsertUint16(DCM_HighBit, 15);
            d.putAndInsertUint16(DCM_PixelRepresentation, 0);
            put(d, DCM_RescaleIntercept, "0", path);
            put(d, DCM_RescaleSlope, ds(slope), path);
            put(d, DCM_RescaleType, "US", path);
            put(d, DCM_WindowCenter, ds(peak / 2), path);
            put(d, DCM_WindowWidth, ds(std::max(peak, 1e-30)), path);
            std::vector<Uint16> pixels(plane);
            for (std::size_t k = 0; k < plane; ++k)
                pixels[k] = Uint16(std::lround(std::abs(im.values[z * plane + k]) / slope));
            const OFCondition pc =
                d.putAndInsertUint16Array(DCM_PixelData, pixels.data(), static_cast<unsigned long>(plane));
            if (pc.bad()) throw std::runtime_error("DICOM '" + path + "': cannot set the pixels: " + pc.text());
            const std::string tmp = stage(path);
            errno = 0;
            const OFCondition sc = file.saveFile(tmp.c_str(), EXS_LittleEndianExplicit);
            if (sc.bad())
                throw std::runtime_error("cannot write DICOM file '" + path +
                                         "': " + library_write_error(sc.text(), errno));
            written.push_back(path);
        }
    }
    return written;
}

}  // namespace io
}  // namespace forge
