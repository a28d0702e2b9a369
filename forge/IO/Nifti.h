#pragma once
// NIfTI-1 single-file (.nii) writer and reader for forge-recon.
//
// Layout: data are stored x fastest, then y, then z (slices), then t (frames), as NIfTI requires.
// The affine maps voxel indices (i, j, k) to RAS+ millimetres (NIfTI's world space); it is written
// both as the sform (code 1, scanner) and, when its 3x3 part is a rotation times a diagonal of voxel
// sizes, as the qform (code 1).
#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

// 4x4 affine, row major; the last row is (0, 0, 0, 1).
using Affine = std::array<std::array<double, 4>, 4>;

// Affine of an axis-aligned grid: voxel sizes (mm) on the diagonal and the grid centred on the
// origin (voxel (N/2, N/2, N/2) at 0), matching forge's image coordinates ix = (x - N/2)/N.
Affine centred_affine(const std::array<std::size_t, 3>& n, const std::array<double, 3>& voxel_mm);

// Writes a volume of nx*ny*nz*nt values (x fastest). float -> FLOAT32, std::complex<float> -> COMPLEX64.
// The file is written under a temporary name and renamed at the end: no partial file on failure.
// Throws std::runtime_error naming the path on I/O failure, forge::invalid_argument on a size mismatch.
template <typename T>
void write_nifti(const std::string& path, const std::vector<T>& data, const std::array<std::size_t, 4>& dims,
                 const Affine& affine, const std::string& description = "forge-recon");

struct NiftiVolume {
    std::array<std::size_t, 7> dims{};       // dim[1..7] of the header (1 where unused)
    std::size_t ndim = 0;                    // dim[0]
    std::vector<std::complex<double>> data;  // x fastest; real types have zero imaginary part
    bool is_complex = false;
    std::array<double, 3> voxel_mm{};
};

// Reads a .nii file (little-endian NIfTI-1, single file). Supports UINT8, INT8, INT16, UINT16, INT32,
// UINT32, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 and applies scl_slope/scl_inter to real data.
// The header's sizes are checked against the file's length before anything is allocated; 'check'
// then sees the dims (dim[1..dim[0]]). Throws input_error with one line naming the file and the field.
NiftiVolume read_nifti(const std::string& path, const DimsCheck& check = {});

}  // namespace io
}  // namespace forge
