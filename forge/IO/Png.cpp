#include "forge/IO/Png.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <png.h>

#include "forge/Core/Exceptions.h"
#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

namespace {
struct FileCloser {
    void operator()(std::FILE* f) const {
        if (f) std::fclose(f);
    }
};
}  // namespace

void write_png_gray8(const std::string& path, std::size_t width, std::size_t height,
                     const std::vector<uint8_t>& pixels) {
    if (width == 0 || height == 0 || pixels.size() != width * height)
        throw forge::invalid_argument("write_png_gray8: pixels must hold width*height values");
    TemporaryFile tmp(path);
    const std::string name = final_name(path);  // for messages
    std::unique_ptr<std::FILE, FileCloser> fp(std::fopen(tmp.name().c_str(), "wb"));
    if (!fp) throw std::runtime_error("cannot write '" + name + "' (is the folder there and writable?)");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        throw std::runtime_error("libpng could not start writing '" + name + "'");
    }
    std::vector<png_bytep> rows(height);
    for (std::size_t r = 0; r < height; ++r) rows[r] = const_cast<png_bytep>(pixels.data() + r * width);
    errno = 0;  // libpng's write error (a failed fwrite) leaves the reason in errno
    if (setjmp(png_jmpbuf(png))) {
        const int err = errno;
        png_destroy_write_struct(&png, &info);
        throw std::runtime_error("libpng failed writing '" + name + "'" + (err ? ": " + write_error_text(err) : ""));
    }
    png_init_io(png, fp.get());
    png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fflush(fp.get()) != 0 || std::fclose(fp.release()) != 0)
        throw std::runtime_error("writing '" + name + "' failed: " + write_error_text(errno));
    tmp.commit();
}

void write_png_montage(const std::string& path, const Montage& m, float scale) {
    if (m.tiles.empty() || m.nx == 0 || m.ny == 0 || m.columns == 0)
        throw forge::invalid_argument("write_png_montage: no tiles");
    const std::size_t ntile = m.tiles.size();
    const std::size_t cols = std::min(m.columns, ntile);
    const std::size_t rowsOfTiles = (ntile + cols - 1) / cols;
    const std::size_t gap = 2;
    const std::size_t W = cols * m.nx + (cols - 1) * gap, H = rowsOfTiles * m.ny + (rowsOfTiles - 1) * gap;
    std::vector<uint8_t> px(W * H, 0);
    for (std::size_t t = 0; t < ntile; ++t) {
        const auto& tile = m.tiles[t];
        if (tile.size() != m.nx * m.ny) throw forge::invalid_argument("write_png_montage: tile size mismatch");
        float s = scale;
        if (s <= 0) {
            s = 0;
            for (float v : tile) s = std::max(s, std::fabs(v));
        }
        const float inv = s > 0 ? 255.0f / s : 0.0f;
        const std::size_t x0 = (t % cols) * (m.nx + gap), y0 = (t / cols) * (m.ny + gap);
        for (std::size_t y = 0; y < m.ny; ++y)
            for (std::size_t x = 0; x < m.nx; ++x) {
                float v = std::fabs(tile[x + y * m.nx]) * inv;
                v = std::min(255.0f, std::max(0.0f, v));
                px[(y0 + (m.ny - 1 - y)) * W + x0 + x] = static_cast<uint8_t>(std::lround(v));
            }
    }
    write_png_gray8(path, W, H, px);
}

}  // namespace io
}  // namespace forge
