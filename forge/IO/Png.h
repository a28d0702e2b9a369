#pragma once
// PNG previews through libpng: 8-bit greyscale magnitude images.
#include <cstdint>
#include <string>
#include <vector>

namespace forge {
namespace io {

// Writes a width x height 8-bit greyscale PNG; pixels are row-major, top row first.
// Written under a temporary name and renamed when complete. Throws std::runtime_error on failure.
void write_png_gray8(const std::string& path, std::size_t width, std::size_t height,
                     const std::vector<uint8_t>& pixels);

// A grid of tiles. Each tile is an nx x ny magnitude image stored x fastest (forge/NIfTI order);
// it is drawn with x to the right and y upwards (row ny-1 at the top), scaled to [0, 255] by
// 'scale' (values at or above scale are white; scale <= 0 means each tile's own maximum).
struct Montage {
    std::size_t nx = 0, ny = 0, columns = 1;
    std::vector<std::vector<float>> tiles;
};
void write_png_montage(const std::string& path, const Montage& m, float scale);

}  // namespace io
}  // namespace forge
