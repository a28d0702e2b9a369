#pragma once
// OrthoWavelet<T1>: the separable orthogonal discrete wavelet transform of an image grid (1D, 2D or 3D; the axes of
// length 1 are left alone), with periodic boundaries so that the transform is orthogonal: inverse() is its adjoint
// and its inverse, and ||forward(x)|| = ||x||.
//
//   OrthoWavelet<float> Psi(ImageGrid(256, 256), WaveletFamily::Db4);   // levels chosen from the grid
//   forgeCol<forgeComplex<float>> c = Psi.forward(x);                      // same length, host or device
//
// Filters: Haar (2 taps), Daubechies db2 (4 taps, 2 vanishing moments) and db4 (8 taps, 4 vanishing moments). One
// level filters every axis of the current approximation box and keeps the approximation in its low half (Mallat's
// layout: after J levels the coarsest approximation is the box [0, n_a / 2^J) of each axis, the details around it).
// Every transformed axis must be divisible by 2^levels: an odd axis, or levels that do not divide it, throws
// forge::invalid_argument naming the axis (pad the image to an even size first). levels = 0 chooses the largest J
// that divides every axis and keeps the coarsest band at least as long as the filter (at least 1).
#include <string>
#include <vector>

#include "forge/Core/Geometry.h"
#include "forge/Core/forgeCol.h"

namespace forge {

enum class WaveletFamily { Haar, Db2, Db4 };

// "haar", "db2", "db4" -> the family; anything else throws forge::invalid_argument listing the names.
WaveletFamily wavelet_family_from_name(const std::string& name);
const char* wavelet_family_name(WaveletFamily f);
// The orthonormal scaling (low-pass reconstruction) filter h of the family, sum h = sqrt(2), sum h^2 = 1.
const std::vector<double>& wavelet_scaling_filter(WaveletFamily f);

template <typename T1>
class OrthoWavelet {
public:
    using ForgeVec = forgeCol<forgeComplex<T1>>;

    // Throws forge::invalid_argument for a zero axis, an odd axis of length > 1, or levels that do not divide it.
    OrthoWavelet(const ImageGrid& grid, WaveletFamily family = WaveletFamily::Db4, uword levels = 0);

    // The coefficients of x (grid().n_pixels() entries, host or device; the result lives with x).
    ForgeVec forward(const ForgeVec& x) const;
    // The image of coefficients c: the inverse and the adjoint of forward().
    ForgeVec inverse(const ForgeVec& c) const;

    const ImageGrid& grid() const { return grid_; }
    WaveletFamily family() const { return family_; }
    uword levels() const { return levels_; }
    // The coarsest approximation band: the box [0, n_a / 2^levels) of each transformed axis.
    ImageGrid coarse_box() const;

private:
    ForgeVec transform(const ForgeVec& x, bool analysis) const;
    void check(const ForgeVec& x, const char* what) const;

    ImageGrid grid_;
    WaveletFamily family_;
    uword levels_;
};

extern template class OrthoWavelet<float>;
extern template class OrthoWavelet<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::OrthoWavelet;
using forge::WaveletFamily;
#endif
