#include "forge/Operators/fft/Gfft.h"

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"

namespace forge {

template <typename T1>
Gfft<T1>::Gfft(uword Nx, uword Ny, uword Nz)
    : LinearOperator<T1>("Gfft", 0, 0), Nx_(Nx), Ny_(Ny), Nz_(Nz),
      n_(detail::require_centred_grid("Gfft", Nx, Ny, Nz)) {
    this->set_sizes(n_, n_);
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));
    auto plan = std::make_shared<FftPlan<T1>>(Nx, Ny, Nz);
    if (device::available()) plan->prepare_device();
    plan_ = std::move(plan);
}

template <typename T1>
void Gfft<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    if (!plan_->has_device_plan()) {
        throw cuda_error("Gfft: input is on the GPU but the operator has no cuFFT plan (no CUDA device was "
                         "available when it was constructed)");
    }
    // The whole batch at once: cuFFT plan-many over the grids.
    plan_->centred(FftMemory::device, in, out, forward, nbatch);
}

template <typename T1>
void Gfft<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    // The batch's grids on the OpenMP threads, each centred and transformed in place in out.
    plan_->centred(FftMemory::host, in, out, forward, nbatch);
}

template <typename T1>
arma::Mat<T1> Gfft<T1>::image_coords() const {
    arma::Mat<T1> c(n_, 3);
    for (uword z = 0; z < Nz_; ++z)
        for (uword y = 0; y < Ny_; ++y)
            for (uword x = 0; x < Nx_; ++x) {
                const uword i = x + Nx_ * (y + Ny_ * z);
                c(i, 0) = Nx_ > 1 ? T1((double(x) - double(Nx_ / 2)) / double(Nx_)) : T1(0);
                c(i, 1) = Ny_ > 1 ? T1((double(y) - double(Ny_ / 2)) / double(Ny_)) : T1(0);
                c(i, 2) = Nz_ > 1 ? T1((double(z) - double(Nz_ / 2)) / double(Nz_)) : T1(0);
            }
    return c;
}

template <typename T1>
arma::Mat<T1> Gfft<T1>::kspace_coords() const {
    arma::Mat<T1> c(n_, 3);
    for (uword z = 0; z < Nz_; ++z)
        for (uword y = 0; y < Ny_; ++y)
            for (uword x = 0; x < Nx_; ++x) {
                const uword i = x + Nx_ * (y + Ny_ * z);
                c(i, 0) = T1(double(x) - double(Nx_ / 2));
                c(i, 1) = T1(double(y) - double(Ny_ / 2));
                c(i, 2) = T1(double(z) - double(Nz_ / 2));
            }
    return c;
}

template class Gfft<float>;
template class Gfft<double>;

}  // namespace forge
