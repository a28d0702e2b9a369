#pragma once
// BART's array files: NAME.hdr (text: a "# Dimensions" line, then the 16 dimension sizes, fastest first) and
// NAME.cfl (the values as complex float, little-endian, first dimension fastest, no header), as BART's
// src/misc/mmio.c and src/misc/io.c write and read them.
#include <array>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

// BART's arrays have 16 dimensions (src/misc/mri.h): 0-2 read/phase/phase2 (x, y, z), 3 coils, 4 maps (ESPIRiT
// sets), 5 echoes, 10 time, 13 slices, ...; unused ones are 1.
constexpr std::size_t kCflDims = 16;
using CflDims = std::array<std::size_t, kCflDims>;

struct CflArray {
    CflDims dims{};
    std::vector<std::complex<float>> data;  // first dimension fastest
    std::size_t size() const { return data.size(); }
};

// "NAME", "NAME.cfl" or "NAME.hdr" -> "NAME" (what BART's tools take on their command lines).
std::string cfl_base(const std::string& name);

// Reads NAME.hdr only. Throws input_error with one line naming the file when it is missing, is not a BART
// header (no "# Dimensions" line, or two), a size is not a whole number from 1 to 2^31, a 17th or later size is
// not 1, or the element count overflows; and when NAME.cfl is missing or does not hold exactly the bytes the
// sizes need (8 per element): a truncated or padded file is refused before anything is allocated.
CflDims read_cfl_dims(const std::string& name);

// Reads NAME.hdr and NAME.cfl: read_cfl_dims()'s checks, then 'check' sees the dims (all 16, fastest first)
// before the values are allocated, so a caller can refuse an array that will not fit.
CflArray read_cfl(const std::string& name, const DimsCheck& check = {});

// Writes NAME.hdr and NAME.cfl (dims fastest first, at most 16, the rest 1), each under a temporary name renamed
// into place when complete (FileUtil.h). Throws forge::invalid_argument when data.size() is not the product of
// dims, std::runtime_error naming the file on an I/O failure.
void write_cfl(const std::string& name, const std::vector<std::size_t>& dims,
               const std::vector<std::complex<float>>& data);

// "1x256x101x8": the sizes up to the last that is not 1.
std::string cfl_dims_string(const CflDims& dims);

}  // namespace io
}  // namespace forge
