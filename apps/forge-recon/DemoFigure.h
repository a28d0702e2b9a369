#pragma once
// The demo's comparison figure: a title line, then blocks of image tiles, each block under a header row that
// labels its columns. Small tiles are upscaled (nearest neighbour) to at least kMinTile pixels so that the
// figure is readable on its own; text comes from a built-in 5x7 bitmap font (descenders in an eighth row)
// drawn at twice its size.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace forge_recon {

// Layout, in output pixels (the CLI test checks the figure's size from these).
struct FigureLayout {
    static constexpr std::size_t kMinTile = 256;          // tiles are upscaled by ceil(kMinTile / max(nx, ny))
    static constexpr std::size_t kMargin = 12;            // around the figure
    static constexpr std::size_t kGap = 8;                // between tiles, and between a header and its tiles
    static constexpr std::size_t kTextScale = 2;          // font pixels per glyph pixel
    static constexpr std::size_t kLine = 9 * kTextScale;  // one text line: 8 glyph rows and 1 of spacing
    static constexpr std::uint8_t kBackground = 40, kInk = 255;
};

// One tile: nx x ny grey values in [0, 255], x fastest, row 0 at the bottom (as the montage draws images:
// y upwards).
using GreyTile = std::vector<std::uint8_t>;

struct FigureBlock {
    std::vector<std::string> labels;          // one per column; '\n' separates the lines of a label
    std::vector<std::vector<GreyTile>> rows;  // rows of tiles, one tile per column (an empty tile: left blank)
};

struct Figure {
    std::string title;
    std::size_t nx = 0, ny = 0, columns = 0;
    std::vector<FigureBlock> blocks;
};

// Magnitudes scaled to [0, 255] by 'scale' (values at or above it are white), rounded.
GreyTile grey_tile(const std::vector<float>& v, float scale);
// Signed values about mid-grey: -scale black, 0 grey, +scale white.
GreyTile signed_grey_tile(const std::vector<float>& v, float scale);

// Pixels of the figure (row-major, top row first) and its size. Throws forge::invalid_argument for
// tiles of the wrong size or rows longer than 'columns'.
std::vector<std::uint8_t> render_figure(const Figure& f, std::size_t& width, std::size_t& height);

// Width in output pixels of a line of text at the figure's scale, and the text drawn with its top-left
// corner at (x, y) (clipped to the image). Characters outside printable ASCII are drawn as '?'.
std::size_t text_width(const std::string& line);
void draw_text(std::vector<std::uint8_t>& px, std::size_t width, std::size_t height, std::size_t x, std::size_t y,
               const std::string& line, std::uint8_t ink);

}  // namespace forge_recon
