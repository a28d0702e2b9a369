#pragma once
// Gfft<T1>: centred Cartesian FFT operator (2D or 3D), the Cartesian special case of Gdft.
//
//   Gfft<float> G(ImageGrid{Nx, Ny, Nz});   // or Gfft<float> G(Nx, Ny, Nz); Nz = 1 for 2D
//   y = G * x;   // forward: y(k) = sum_r x(r) exp(-i 2 pi k . r)          (unnormalised)
//   x = G / y;   // adjoint: x(r) = sum_k y(k) exp(+i 2 pi k . r)          (exact adjoint, unnormalised)
//
// Layout (image and k-space alike): column-major, x fastest: index = x + Nx*(y + Ny*z).
//   image  r = ((x - Nx/2)/Nx, (y - Ny/2)/Ny, (z - Nz/2)/Nz)   [FOV units]
//   k      k = (x - Nx/2, y - Ny/2, z - Nz/2)                    [cycles/FOV], i.e. kx in [-Nx/2, Nx/2)
// An axis of length 1 has r = 0 and k = 0. Every axis longer than 1 must have even length.
// So G equals Gdft built from image_coords() and kspace_coords() with a zero field map, and G / (G * x)
// = Nx*Ny*Nz * x. Both sides run on one FftPlan (forge/CUDA/FftPlan.h): host data on FFTW (plans made once, in
// the constructor); a forgeCol already on the GPU on cuFFT (planned in the constructor when a device is present)
// and the result stays on the GPU; a batch there is one cuFFT plan-many over its grids. domain_shape() is the grid.
#include <complex>
#include <memory>

#include <armadillo>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/LinearOperator.h"

namespace forge {

template <typename T1>
class Gfft : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    using complex_type = std::complex<T1>;

    Gfft(uword Nx, uword Ny, uword Nz = 1);
    explicit Gfft(const ImageGrid& grid) : Gfft(grid.nx, grid.ny, grid.nz) {}

    uword n1() const { return n_; }  // k-space samples (= Nx*Ny*Nz = n2, the pixels)
    uword Nx() const { return Nx_; }
    uword Ny() const { return Ny_; }
    uword Nz() const { return Nz_; }

    // Coordinates of the grid in the conventions above (columns x, y, z), for building a matching Gdft.
    arma::Mat<T1> image_coords() const;
    arma::Mat<T1> kspace_coords() const;

protected:
    void apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;
    void apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;

private:
    uword Nx_, Ny_, Nz_, n_;
    std::shared_ptr<const FftPlan<T1>> plan_;  // FFTW, and cuFFT when a device was present (shared by copies)
};

extern template class Gfft<float>;
extern template class Gfft<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::Gfft;
#endif
