#include "forge/Operators/fft/Gfft.h"

#include <fftw3.h>

#include <cstring>

#include <mutex>
#include <sstream>
#include <vector>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"

#ifdef FORGE_HAS_CUDA
#include "forge/CUDA/CudaFft.h"
#endif

namespace forge {
namespace detail {

std::mutex& fftw_planner_mutex() {
    static std::mutex m;
    return m;
}

namespace {
// FFTW wants the slowest dimension first; forge stores x fastest. Callers bound each axis by kMaxFftAxis.
int fftw_dims(uword Nx, uword Ny, uword Nz, int* n) {
    if (Nz > 1) {
        n[0] = int(Nz), n[1] = int(Ny), n[2] = int(Nx);
        return 3;
    }
    if (Ny > 1) {
        n[0] = int(Ny), n[1] = int(Nx);
        return 2;
    }
    n[0] = int(Nx);
    return 1;
}
}  // namespace

uword require_centred_grid(const char* where, uword Nx, uword Ny, uword Nz) {
    const uword N[3] = {Nx, Ny, Nz};
    const char* names[3] = {"Nx", "Ny", "Nz"};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 0 || (N[d] > 1 && N[d] % 2 != 0)) {
            std::ostringstream m;
            m << where << ": " << names[d] << " = " << N[d]
              << "; each grid size must be 1 or an even number (the grid is centred at N/2)";
            throw invalid_argument(m.str());
        }
        checked_product(where, {{names[d], N[d]}}, kMaxFftAxis, "FFTW and cuFFT take int dimensions");
    }
    return checked_product(where, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
}

template <>
FftwPlan<double>::FftwPlan(uword Nx, uword Ny, uword Nz) : n_(Nx * Ny * Nz) {
    int n[3];
    const int rank = fftw_dims(Nx, Ny, Nz, n);
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_complex* buf = fftw_alloc_complex(n_);
    // FFTW_ESTIMATE leaves the array untouched; FFTW_UNALIGNED lets execute run on any user array.
    fwd_ = fftw_plan_dft(rank, n, buf, buf, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    bwd_ = fftw_plan_dft(rank, n, buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    fftw_free(buf);
    if (!fwd_ || !bwd_) throw invalid_argument("FftwPlan: FFTW could not plan the transform");
}
template <>
FftwPlan<double>::~FftwPlan() {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    if (fwd_) fftw_destroy_plan(static_cast<fftw_plan>(fwd_));
    if (bwd_) fftw_destroy_plan(static_cast<fftw_plan>(bwd_));
}
template <>
void FftwPlan<double>::forward(std::complex<double>* d) const {
    fftw_execute_dft(static_cast<fftw_plan>(fwd_), reinterpret_cast<fftw_complex*>(d),
                     reinterpret_cast<fftw_complex*>(d));
}
template <>
void FftwPlan<double>::backward(std::complex<double>* d) const {
    fftw_execute_dft(static_cast<fftw_plan>(bwd_), reinterpret_cast<fftw_complex*>(d),
                     reinterpret_cast<fftw_complex*>(d));
}

template <>
FftwPlan<float>::FftwPlan(uword Nx, uword Ny, uword Nz) : n_(Nx * Ny * Nz) {
    int n[3];
    const int rank = fftw_dims(Nx, Ny, Nz, n);
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftwf_complex* buf = fftwf_alloc_complex(n_);
    fwd_ = fftwf_plan_dft(rank, n, buf, buf, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    bwd_ = fftwf_plan_dft(rank, n, buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    fftwf_free(buf);
    if (!fwd_ || !bwd_) throw invalid_argument("FftwPlan: FFTW could not plan the transform");
}
template <>
FftwPlan<float>::~FftwPlan() {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    if (fwd_) fftwf_destroy_plan(static_cast<fftwf_plan>(fwd_));
    if (bwd_) fftwf_destroy_plan(static_cast<fftwf_plan>(bwd_));
}
template <>
void FftwPlan<float>::forward(std::complex<float>* d) const {
    fftwf_execute_dft(static_cast<fftwf_plan>(fwd_), reinterpret_cast<fftwf_complex*>(d),
                      reinterpret_cast<fftwf_complex*>(d));
}
template <>
void FftwPlan<float>::backward(std::complex<float>* d) const {
    fftwf_execute_dft(static_cast<fftwf_plan>(bwd_), reinterpret_cast<fftwf_complex*>(d),
                      reinterpret_cast<fftwf_complex*>(d));
}

}  // namespace detail

template <typename T1>
Gfft<T1>::Gfft(uword Nx, uword Ny, uword Nz)
    : LinearOperator<T1>("Gfft", 0, 0), Nx_(Nx), Ny_(Ny), Nz_(Nz),
      n_(detail::require_centred_grid("Gfft", Nx, Ny, Nz)) {
    this->set_sizes(n_, n_);
    plan_ = std::make_shared<detail::FftwPlan<T1>>(Nx, Ny, Nz);
#ifdef FORGE_HAS_CUDA
    if (device::available()) gpuPlan_ = std::make_shared<cuda::CudaFftPlan<T1>>(int(Nx), int(Ny), int(Nz));
#endif
}

template <typename T1>
void Gfft<T1>::host_transform(forgeComplex<T1>* data, bool forward) const {
    // Centred DFT = sN (-1)^k FFT((-1)^r x) with sN = prod (-1)^(N/2) over the axes longer than 1.
    const uword half = (Nx_ > 1 ? Nx_ / 2 : 0) + (Ny_ > 1 ? Ny_ / 2 : 0) + (Nz_ > 1 ? Nz_ / 2 : 0);
    const T1 sN = (half & 1) ? T1(-1) : T1(1);
    auto checker = [&](T1 s) {
        for (uword z = 0; z < Nz_; ++z)
            for (uword y = 0; y < Ny_; ++y) {
                forgeComplex<T1>* row = data + Nx_ * (y + Ny_ * z);
                T1 f = ((y + z) & 1) ? -s : s;
                for (uword x = 0; x < Nx_; ++x, f = -f) row[x] *= f;
            }
    };
    checker(T1(1));
    auto* c = reinterpret_cast<std::complex<T1>*>(data);
    if (forward) {
        plan_->forward(c);
    } else {
        plan_->backward(c);
    }
    checker(sN);
}

template <typename T1>
void Gfft<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
#ifdef FORGE_HAS_CUDA
    if (!gpuPlan_) {
        throw cuda_error("Gfft: input is on the GPU but the operator has no cuFFT plan (no CUDA device was "
                         "available when it was constructed)");
    }
    // The whole batch at once: cuFFT plan-many over the grids (CudaFftPlan).
    gpuPlan_->centred(reinterpret_cast<const T1*>(in), reinterpret_cast<T1*>(out), forward, nbatch);
#else
    (void)in, (void)out, (void)nbatch, (void)forward;
    throw residency_error("Gfft: input is on the GPU but forge was built without CUDA");
#endif
}

template <typename T1>
void Gfft<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    if (in != out) std::memcpy(static_cast<void*>(out), in, nbatch * n_ * sizeof(Elem));
    detail::for_each_in_batch(nbatch, [&](std::size_t b) { host_transform(out + b * n_, forward); });
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
