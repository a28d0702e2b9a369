#pragma once
// Reconstructed images as ISMRMRD (MRD) images, written with Debian's libismrmrd: one image per slice (or 3D
// volume) and frame, its header filled from the image's geometry (ImageGeometry.h: matrix, FOV, position,
// read/phase/slice directions) and indices (slice, repetition, contrast, image index, image series index), its
// type magnitude (float) or complex (complex float), and ISMRMRD meta attributes (key -> values) saying how it
// was made.
#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "forge/IO/ImageGeometry.h"

namespace forge {
namespace io {

struct MrdOutputImage {
    std::size_t slice = 0;                    // index into the geometry's slices
    uint16_t repetition = 0, contrast = 0;    // the acquisitions' idx.repetition, idx.contrast
    std::vector<std::complex<float>> values;  // Nx * Ny * Nz, x fastest
    std::vector<std::pair<std::string, std::vector<std::string>>> meta;  // ISMRMRD meta attributes
};

struct MrdImageOptions {
    bool complex = false;           // ISMRMRD_IMTYPE_COMPLEX (complex float) instead of MAGNITUDE (float)
    uint16_t series_index = 1;      // image_series_index of every image
    std::string group = "dataset";  // HDF5 group; the images go to <group>/image_<series_index>
};

// Writes 'xmlHeader' (the acquisitions' XML header: the images' protocol) and the images to 'path', under a
// temporary name renamed into place when complete (or in place when 'path' is a name OutputSet::stage() gave).
// Image i gets image_index i + 1 and the idx.slice of its slice (ImageGeometry::slice_index). Throws
// forge::invalid_argument when an image's size is not the geometry's, std::runtime_error naming the file when
// writing fails.
void write_mrd_images(const std::string& path, const std::string& xmlHeader, const ImageGeometry& geometry,
                      const std::vector<MrdOutputImage>& images, const MrdImageOptions& options = {});

// What read_mrd_images() returns of an image (for tests and tools): the header fields write_mrd_images() fills.
struct MrdImageRecord {
    std::array<uint16_t, 3> matrix{};
    std::array<float, 3> fov{}, position{}, read_dir{}, phase_dir{}, slice_dir{};
    uint16_t slice = 0, repetition = 0, contrast = 0, image_type = 0, image_index = 0, image_series_index = 0;
    std::vector<std::complex<float>> values;  // magnitude images: zero imaginary parts
    std::string attributes;                   // the meta attributes as libismrmrd serialises them (XML)
};
// Reads <group>/image_<series_index> with libismrmrd. Throws input_error naming the file when it is missing.
std::vector<MrdImageRecord> read_mrd_images(const std::string& path, uint16_t series_index = 1,
                                            const std::string& group = "dataset");

}  // namespace io
}  // namespace forge
