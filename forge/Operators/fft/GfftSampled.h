#pragma once
// GfftSampled<T1>: the exact field-free DFT at FFT cost, for samples on the integer points of an FFT grid
// (Cartesian data: fully sampled, undersampled, partial Fourier, asymmetric echoes, readout oversampling).
//
//   A   = S F P    P: zero-pad the Nx x Ny x Nz image into the centre of an Mx x My x Mz grid (M >= N)
//                  F: Gfft on that grid (centred, unnormalised)
//                  S: keep the sampled grid points, in data order (a point may be sampled more than once)
//   A^H = P^T F^H S^T   crop after the inverse FFT of the samples added onto their grid points: the exact
//                       adjoint by construction.
//
//   GfftSampled<float> G(ImageGrid{Nx, Ny, Nz}, ImageGrid{Mx, My, Mz}, Trajectory<float>{kx, ky, kz});
//   GfftSampled<float> G(Nx, Ny, Nz, Mx, My, Mz, kx, ky, kz);   // the same, positional
//   y = G * x;   x = G / y;   G.domain_shape() == ImageGrid{Nx, Ny, Nz}
//
// Units as Gdft: k in cycles per image FOV, pixel r = ((x - Nx/2)/Nx, ...) in image-FOV units (Gfft.h).
// The FFT grid has the image's pixel size and an FOV M/N times larger, so its k-space step is N/M cycles
// per image FOV: every sample must lie on a multiple of N/M on each axis longer than 1 (within 1e-3 of a
// step; an axis of length 1 ignores its k). Any multiple will do: k and k + N give the same phase on the
// pixel lattice. So A equals Gdft(k, the image grid, zero field map) to rounding. ISMRMRD's readout
// oversampling (encoded FOV twice the recon FOV) is Mx = 2 Nx with kx on half-integers.
// Each axis: N = 1 or even, M = N (when N = 1) or even and >= N.
// Host data runs on FFTW, batches (coils) in parallel with OpenMP, the centring signs folded into the
// pad/crop and the selection (no extra pass over the grid); a forgeCol on the GPU runs on cuFFT (a batch as
// one plan-many over its grids) and the result stays there. Both sides share one FftPlan (forge/CUDA/FftPlan.h).
#include <complex>
#include <memory>
#include <vector>

#include <armadillo>

#include "forge/Operators/fft/Gfft.h"

namespace forge {

template <typename T1>
class GfftSampled : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    using complex_type = std::complex<T1>;

    GfftSampled(uword Nx, uword Ny, uword Nz, uword Mx, uword My, uword Mz, const arma::Col<T1>& kx,
                const arma::Col<T1>& ky, const arma::Col<T1>& kz);
    // The same from the geometry: the image grid, the FFT grid and the samples (their times t are ignored).
    GfftSampled(const ImageGrid& image, const ImageGrid& fft_grid, const Trajectory<T1>& k)
        : GfftSampled(image.nx, image.ny, image.nz, fft_grid.nx, fft_grid.ny, fft_grid.nz, k.kx, k.ky, k.kz) {}

    // True when every sample lies on the k-space lattice of the Mx x My x Mz grid (see above).
    static bool on_grid(uword Nx, uword Ny, uword Nz, uword Mx, uword My, uword Mz, const arma::Col<T1>& kx,
                        const arma::Col<T1>& ky, const arma::Col<T1>& kz);

    uword n1() const { return n1_; }  // samples (n2(): image pixels Nx*Ny*Nz)
    uword grid_size(int axis) const { return M_[axis]; }
    uword grid_elems() const { return M_[0] * M_[1] * M_[2]; }
    // Grid point (x fastest on the FFT grid) of sample j.
    const std::vector<uword>& sample_grid_index() const { return sel_; }

protected:
    // Batches (coils, segments) run in parallel on the host, each thread on its own grid.
    void apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;
    void apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;

private:
    struct DeviceIndex;
    void forward_host(const forgeComplex<T1>* image, forgeComplex<T1>* kdata, forgeComplex<T1>* grid) const;
    void adjoint_host(const forgeComplex<T1>* kdata, forgeComplex<T1>* image, forgeComplex<T1>* grid) const;

    uword n1_, n2_;
    uword N_[3], M_[3], off_[3];
    std::shared_ptr<const FftPlan<T1>> plan_;     // the FFT grid's: FFTW, and cuFFT with a device
    std::vector<uword> sel_;                      // n1: grid point of each sample
    std::vector<T1> sign_;                        // n1: the centring sign of each sample's grid point
    std::vector<uword> dest_, start_, src_;       // S^T: distinct grid points, and their samples in order
    std::shared_ptr<DeviceIndex> dev_;            // GPU: the index arrays (a device was present)
};

extern template class GfftSampled<float>;
extern template class GfftSampled<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::GfftSampled;
#endif
