// ISMRMRD images with libismrmrd's C++ API (Dataset::appendImage, Image<T>'s setters, MetaContainer).
#include "forge/IO/MrdImages.h"

#include <algorithm>
#include <cerrno>
#include <sstream>

#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/meta.h>

#include "forge/Core/Exceptions.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/detail/MrdImageHeader.h"

namespace forge {
namespace io {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string image_stream(uint16_t series) { return "image_" + std::to_string(series); }

template <typename T>
void copy_record(ISMRMRD::Image<T>& im, MrdImageRecord& r) {
    r.matrix = {{im.getMatrixSizeX(), im.getMatrixSizeY(), im.getMatrixSizeZ()}};
    r.fov = {{im.getFieldOfViewX(), im.getFieldOfViewY(), im.getFieldOfViewZ()}};
    r.position = {{im.getPositionX(), im.getPositionY(), im.getPositionZ()}};
    r.read_dir = {{im.getReadDirectionX(), im.getReadDirectionY(), im.getReadDirectionZ()}};
    r.phase_dir = {{im.getPhaseDirectionX(), im.getPhaseDirectionY(), im.getPhaseDirectionZ()}};
    r.slice_dir = {{im.getSliceDirectionX(), im.getSliceDirectionY(), im.getSliceDirectionZ()}};
    r.slice = im.getSlice();
    r.repetition = im.getRepetition();
    r.contrast = im.getContrast();
    r.image_type = im.getImageType();
    r.image_index = im.getImageIndex();
    r.image_series_index = im.getImageSeriesIndex();
    im.getAttributeString(r.attributes);
    r.values.assign(im.getDataPtr(), im.getDataPtr() + im.getNumberOfDataElements());
}

}  // namespace

void write_mrd_images(const std::string& path, const std::string& xmlHeader, const ImageGeometry& g,
                      const std::vector<MrdOutputImage>& images, const MrdImageOptions& opt) {
    detail::check_output_images(g, images, "write_mrd_images");
    quiet_hdf5_errors();
    TemporaryFile tmp(path);
    errno = 0;  // the reason HDF5 leaves when a write fails (library_write_error)
    try {
        ISMRMRD::Dataset d(tmp.name().c_str(), opt.group.c_str(), true);
        if (!xmlHeader.empty()) d.writeHeader(xmlHeader);
        const uint16_t nx = uint16_t(g.matrix[0]), ny = uint16_t(g.matrix[1]), nz = uint16_t(g.matrix[2]);
        for (std::size_t i = 0; i < images.size(); ++i) {
            const MrdOutputImage& o = images[i];
            if (opt.complex) {
                ISMRMRD::Image<std::complex<float>> im(nx, ny, nz, 1);
                detail::fill_image_header(im, g, o, uint16_t(i + 1), opt);
                std::copy(o.values.begin(), o.values.end(), im.getDataPtr());
                d.appendImage(image_stream(opt.series_index), im);
            } else {
                ISMRMRD::Image<float> im(nx, ny, nz, 1);
                detail::fill_image_header(im, g, o, uint16_t(i + 1), opt);
                std::transform(o.values.begin(), o.values.end(), im.getDataPtr(),
                               [](const std::complex<float>& v) { return std::abs(v); });
                d.appendImage(image_stream(opt.series_index), im);
            }
        }
    } catch (const std::exception& e) {
        throw std::runtime_error("writing ISMRMRD images '" + final_name(path) +
                                 "' failed: " + library_write_error(e.what(), errno));
    }
    tmp.commit();
}

std::vector<MrdImageRecord> read_mrd_images(const std::string& path, uint16_t series, const std::string& group) {
    quiet_hdf5_errors();
    const std::string object = "/" + group + "/" + image_stream(series);
    if (!hdf5_has_object(path, object)) throw input_error("'" + path + "' has no " + object);
    std::vector<MrdImageRecord> out;
    try {
        ISMRMRD::Dataset d(path.c_str(), group.c_str(), false);
        const uint32_t n = d.getNumberOfImages(image_stream(series));
        for (uint32_t i = 0; i < n; ++i) {
            MrdImageRecord r;
            // libismrmrd allocates the values by the stored data type, whatever T is: read as float, then look
            ISMRMRD::Image<float> im;
            d.readImage(image_stream(series), i, im);
            copy_record(im, r);
            if (im.getDataType() == ISMRMRD::ISMRMRD_CXFLOAT) {
                const auto* c = reinterpret_cast<const std::complex<float>*>(im.getDataPtr());
                r.values.assign(c, c + im.getNumberOfDataElements());
            } else if (im.getDataType() != ISMRMRD::ISMRMRD_FLOAT) {
                throw input_error("image " + std::to_string(i) + " of '" + path + "' has ISMRMRD data type " +
                                  std::to_string(im.getDataType()) + " (expected float or complex float)");
            }
            out.push_back(std::move(r));
        }
    } catch (const input_error&) {
        throw;
    } catch (const std::exception& e) {
        throw input_error("reading ISMRMRD images of '" + path + "' failed: " + first_line(e.what()));
    }
    return out;
}

}  // namespace io
}  // namespace forge
