// Forge::IO built without DCMTK (FORGE_DICOM=OFF, or AUTO without libdcmtk-dev): no DICOM output.
#include <stdexcept>

#include "forge/IO/Dicom.h"

namespace forge {
namespace io {

bool dicom_available() { return false; }

std::vector<std::string> write_dicom_series(const std::string& dir, const ImageGeometry&,
                                            const std::vector<MrdOutputImage>&, const DicomOptions&,
                                            const std::function<std::string(const std::string&)>&) {
    throw std::runtime_error("cannot write DICOM to '" + dir +
                             "': this forge was built without DCMTK (Debian: apt-get install libdcmtk-dev, then "
                             "configure with -DFORGE_DICOM=AUTO or ON)");
}

}  // namespace io
}  // namespace forge
