#pragma once
// DICOM output through DCMTK (Debian: libdcmtk-dev): one MR Image Storage file per 2D image (each slice, each
// plane of a 3D volume, each frame), its geometry from ImageGeometry: ImagePositionPatient (the centre of pixel
// (0, 0), LPS mm: DICOM's patient frame is ISMRMRD's), ImageOrientationPatient (read_dir, then phase_dir: along a
// row, then down a column), PixelSpacing (between rows, then between columns: dy, dx), SliceThickness. Pixels are
// 16-bit unsigned magnitudes with one RescaleSlope for the series (value = pixel x slope): MR Image Storage holds
// no floats. DCMTK is optional at configure time (FORGE_DICOM=AUTO|ON|OFF); without it dicom_available() is false
// and write_dicom_series() throws.
#include <functional>
#include <string>
#include <vector>

#include "forge/IO/ImageGeometry.h"
#include "forge/IO/MrdImages.h"

namespace forge {
namespace io {

// True when this Forge::IO was built with DCMTK.
bool dicom_available();

struct DicomOptions {
    std::string series_description = "forge-recon";
    std::string software = "forge";  // SoftwareVersions
    std::string patient_name, patient_id;
    std::vector<double> echo_times_ms;  // EchoTime of contrast c (idx.contrast); empty: none
    unsigned series_number = 1;
};

// Writes one file per 2D image of 'images' (MrdOutputImage: slice, repetition, contrast, values; magnitudes are
// written) to 'dir' as IM_00001.dcm, IM_00002.dcm, ... (InstanceNumber order: image by image, planes z within),
// each under the name 'stage' returns for it (OutputSet::stage: renamed into place with the run's other
// outputs). One Study, Series and FrameOfReference UID for all. Returns the final paths. Throws
// forge::invalid_argument when an image's size is not the geometry's, std::runtime_error naming the file when
// DCMTK cannot write it or when built without DCMTK.
std::vector<std::string> write_dicom_series(const std::string& dir, const ImageGeometry& geometry,
                                            const std::vector<MrdOutputImage>& images, const DicomOptions& options,
                                            const std::function<std::string(const std::string&)>& stage);

}  // namespace io
}  // namespace forge
