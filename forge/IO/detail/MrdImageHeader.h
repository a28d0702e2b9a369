#pragma once
// Private to forge/IO's MRD image writers (MrdImages.cpp: files, MrdStream.cpp: streams): one image's libismrmrd
// header and attributes, filled the same way for both. Not installed: it needs libismrmrd's headers.
#include <sstream>

#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/meta.h>

#include "forge/Core/Exceptions.h"
#include "forge/IO/MrdImages.h"

namespace forge {
namespace io {
namespace detail {

// Refuses images whose size is not the geometry's, of a slice it lacks, or more than an image index holds.
inline void check_output_images(const ImageGeometry& g, const std::vector<MrdOutputImage>& images,
                                const std::string& what) {
    const std::size_t n = g.matrix[0] * g.matrix[1] * g.matrix[2];
    for (std::size_t i = 0; i < images.size(); ++i) {
        if (images[i].values.size() != n)
            throw forge::invalid_argument(what + ": image " + std::to_string(i) + " has " +
                                          std::to_string(images[i].values.size()) + " values but the matrix " +
                                          std::to_string(n));
        if (images[i].slice >= g.slices.size())
            throw forge::invalid_argument(what + ": image " + std::to_string(i) + " is of slice " +
                                          std::to_string(images[i].slice) + " but the geometry has " +
                                          std::to_string(g.slices.size()));
    }
    for (std::size_t k : g.matrix)
        if (k > 65535) throw forge::invalid_argument(what + ": a matrix size exceeds ISMRMRD's 65535");
    if (images.size() > 65535)
        throw forge::invalid_argument(what + ": " + std::to_string(images.size()) +
                                      " images; an ISMRMRD image index holds at most 65535");
}

// Geometry of the image's slice, its indices, image index 'index', series, type, and 'o.meta' as attributes.
template <typename T>
inline void fill_image_header(ISMRMRD::Image<T>& im, const ImageGeometry& g, const MrdOutputImage& o, uint16_t index,
                              const MrdImageOptions& opt) {
    const SliceGeometry& s = g.slices.at(o.slice);
    im.setFieldOfView(float(g.fov_mm[0]), float(g.fov_mm[1]), float(g.fov_mm[2]));
    im.setPosition(float(s.position[0]), float(s.position[1]), float(s.position[2]));
    im.setReadDirection(float(s.read_dir[0]), float(s.read_dir[1]), float(s.read_dir[2]));
    im.setPhaseDirection(float(s.phase_dir[0]), float(s.phase_dir[1]), float(s.phase_dir[2]));
    im.setSliceDirection(float(s.slice_dir[0]), float(s.slice_dir[1]), float(s.slice_dir[2]));
    im.setSlice(s.index);
    im.setRepetition(o.repetition);
    im.setContrast(o.contrast);
    im.setImageIndex(index);
    im.setImageSeriesIndex(opt.series_index);
    im.setImageType(opt.complex ? ISMRMRD::ISMRMRD_IMTYPE_COMPLEX : ISMRMRD::ISMRMRD_IMTYPE_MAGNITUDE);
    if (!o.meta.empty()) {
        ISMRMRD::MetaContainer meta;
        for (const auto& kv : o.meta)
            for (const auto& v : kv.second) meta.append(kv.first.c_str(), v.c_str());
        std::ostringstream xml;
        ISMRMRD::serialize(meta, xml);
        im.setAttributeString(xml.str());
    }
}

}  // namespace detail
}  // namespace io
}  // namespace forge
