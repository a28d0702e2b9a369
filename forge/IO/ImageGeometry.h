#pragma once
// Where a reconstructed image lies in the scanner: its matrix, FOV and, per slice, the centre and the
// read/phase/slice directions, from the acquisitions' headers (ISMRMRD's position, read_dir, phase_dir,
// slice_dir: the patient's LPS frame, mm) and the XML header's recon FOV. Every image writer takes it from here:
// the NIfTI affine (RAS+), the MRD image headers and the DICOM geometry (ImagePositionPatient,
// ImageOrientationPatient, PixelSpacing, SliceThickness).
//
// Image pixel (x, y, z) of an Nx x Ny x Nz grid is at  centre + (x - Nx/2) dx read + (y - Ny/2) dy phase
// + (z - Nz/2) dz slice  (forge's centring: docs/conventions.md), dx = FOV_x / Nx, and so on; for 2D slices
// Nz = 1 and dz is the slice thickness (the FOV's z).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "forge/IO/Mrd.h"
#include "forge/Recon/ReconProblem.h"

namespace forge {
namespace io {

struct SliceGeometry {
    uint16_t index = 0;                // the acquisitions' idx.slice
    std::array<double, 3> position{};  // LPS mm: the centre of the slice (2D) or of the volume (3D)
    std::array<double, 3> read_dir{{1, 0, 0}}, phase_dir{{0, 1, 0}}, slice_dir{{0, 0, 1}};  // unit vectors, LPS
};

struct ImageGeometry {
    std::array<std::size_t, 3> matrix{{1, 1, 1}};  // Nx, Ny, Nz of one slice or volume
    std::array<double, 3> fov_mm{{1, 1, 1}};       // recon FOV; 2D: z is the slice thickness
    std::vector<SliceGeometry> slices;             // one per slice, in forge's slice order (idx.slice sorted)
    // (idx.repetition, idx.contrast) of each frame, in forge's frame order (ReconFrame::frame indexes it)
    std::vector<std::array<uint16_t, 2>> frames;
    std::array<double, 3> voxel_mm() const {
        return {{fov_mm[0] / double(matrix[0]), fov_mm[1] / double(matrix[1]), fov_mm[2] / double(matrix[2])}};
    }
    // Distance between the centres of neighbouring slices along slice_dir (2D multi-slice; the slice thickness
    // when there is one slice or they coincide).
    double slice_spacing_mm() const;
    // LPS position (mm) of the centre of pixel (x, y, z) of slice s.
    std::array<double, 3> pixel_position(std::size_t s, double x, double y, double z = 0) const;
};

// The geometry of P's image from the acquisitions of F (the first acquisition of each slice; P from
// problem_from_mrd(F)). Directions are normalised; without read and phase directions (zero vectors) the image
// is axis-aligned (read x, phase y, slice z); a missing slice direction is read x phase.
ImageGeometry image_geometry(const MrdFile& F, const recon::ReconProblem& P);

// The NIfTI affine (voxel (i, j, k) of the volume x, y, z * slices -> RAS+ mm) of that geometry: voxel (0, 0, 0)
// at slice 0's pixel (0, 0, 0), the k axis along slice_dir with the slice spacing (2D) or dz (3D).
recon::Affine nifti_affine(const ImageGeometry& g);

}  // namespace io
}  // namespace forge
