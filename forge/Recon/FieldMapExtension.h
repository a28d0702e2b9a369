#pragma once
// Field maps extended smoothly beyond the object (docs/map-estimation.md, "Field maps from other tools").
//
// A field map measured by another tool (a scanner's, FSL's, OCTOPUS's) holds values only where the object gives
// signal: zero or noise outside. Field-corrected operators use the map at every pixel, and a time-segmented
// operator's interpolation is fitted to the map's whole range: a jump from several hundred Hz to 0 at the object's
// edge, or noise outside it, costs segments and puts the error of its interpolation where there is no signal to
// correct. extend_field_map() keeps the map on a support (the object) and fills every other pixel with a smooth
// continuation of it, a harmonic (Laplace) fill:
//
//   1. onion peel: pixels outside the support are visited in layers of growing distance from it (4-connected in
//      2D, 6-connected in 3D); each takes the mean of its neighbours already known. This is continuous at the
//      support's edge and reaches every pixel of the grid.
//   2. relaxation: 'iterations' Gauss-Seidel sweeps of Laplace's equation on the filled pixels (each the mean of
//      its neighbours, the grid's faces reflecting, the support fixed), which removes the layer-by-layer creases
//      of step 1 and tends to the harmonic extension of the support's values.
//
// Both steps take means of known values, so the filled values stay within the range of the support's (the
// maximum principle); the support's values are returned unchanged, bit for bit.
#include <cstddef>
#include <vector>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace recon {

struct FieldMapExtensionOptions {
    int iterations = 200;  // Gauss-Seidel sweeps of step 2 (0: the onion peel alone)
};

// 'field_map' (rad/s, or any unit: the fill is linear) on an Nx x Ny x Nz grid, x fastest; 'support' one entry per
// pixel, nonzero where the map is known. Returns the map with every pixel outside the support filled as above.
// Throws forge::invalid_argument naming the argument when sizes disagree, the grid is empty, the support is
// empty, the options are out of range, or a value inside the support is not finite (values outside it are
// ignored, NaN included).
arma::fvec extend_field_map(const arma::fvec& field_map, const std::vector<unsigned char>& support, std::size_t Nx,
                            std::size_t Ny, std::size_t Nz, const FieldMapExtensionOptions& options = {});

// The same with the support taken as the map's nonzero (and finite) pixels: the convention of tools that write 0
// outside the object. A map with no zero pixel is returned unchanged; an all-zero map is returned as it is (there
// is nothing to extend).
arma::fvec extend_field_map(const arma::fvec& field_map, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                            const FieldMapExtensionOptions& options = {});

// The nonzero, finite pixels of 'field_map' (1) and the rest (0): the support the second overload uses.
std::vector<unsigned char> field_map_support(const arma::fvec& field_map);

// The names before the field_map spelling, until forge 0.3.0.
FORGE_DEPRECATED("extend_field_map")
inline arma::fvec extend_fieldmap(const arma::fvec& field_map, const std::vector<unsigned char>& support,
                                  std::size_t Nx, std::size_t Ny, std::size_t Nz,
                                  const FieldMapExtensionOptions& options = {}) {
    return extend_field_map(field_map, support, Nx, Ny, Nz, options);
}
FORGE_DEPRECATED("extend_field_map")
inline arma::fvec extend_fieldmap(const arma::fvec& field_map, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                                  const FieldMapExtensionOptions& options = {}) {
    return extend_field_map(field_map, Nx, Ny, Nz, options);
}
FORGE_DEPRECATED("field_map_support")
inline std::vector<unsigned char> fieldmap_support(const arma::fvec& field_map) { return field_map_support(field_map); }

}  // namespace recon
}  // namespace forge
