#pragma once
// Gnufft<T1>: non-uniform FFT by Kaiser-Bessel gridding (Beatty et al., IEEE TMI 2005), 2D and 3D.
// It approximates the field-free Gdft on the Cartesian image grid of Gfft:
//
//   forward  s_j = sum_r m(r) exp(-i 2 pi k_j . r)     (unnormalised, as Gdft)
//   adjoint  m(r) = sum_j s_j exp(+i 2 pi k_j . r)     (the exact adjoint of the approximate forward)
//
//   Gnufft<float> G(ImageGrid{Nx, Ny, Nz}, Trajectory<float>{kx, ky, kz});  // oversampling 2, kernel width 5
//   Gnufft<float> G(grid, k, {1.5, 6});                             // NufftOptions{oversampling, kernel_width}
//   Gnufft<float> G(grid, k, NufftOptions::for_tolerance(1e-4));    // requested relative error
//   Gnufft<float> G(n1, Nx, Ny, Nz, kx, ky, kz);                    // the positional form
//   y = G * x;  x = G / y;
//   G.set_points(Trajectory<float>{kx2, ky2, kz2});   // new samples (any count), same grid, kernel and FFT plans
//
// Units and layout: k in cycles/FOV with every component in [-N/2, N/2] for its axis (the grid is
// periodic in k: +N/2 is the same sample as -N/2; an axis of length 1 takes k in [-1/2, 1/2], which it
// ignores); the image is Nx x Ny x Nz, x fastest, pixel r = ((x - Nx/2)/Nx, ...) in FOV units (see Gfft.h,
// Gfft::image_coords()). Each axis longer than 1 must be even. n1 = samples, n2 = Nx*Ny*Nz pixels.
//
// Pipeline: forward = deapodize, zero-pad to the oversampled grid (alpha*N per axis, rounded up to even),
// FFT, KB interpolation; adjoint = KB gridding, inverse FFT, crop, deapodize. Beatty's kernel shape
// beta = pi sqrt(W^2/alpha^2 (alpha - 1/2)^2 - 0.8) (it measures as accurate as FINUFFT's
// exponential-of-semicircle kernel or better at every width). The kernel is evaluated by a per-tap
// polynomial (Horner, degree W + 3) of the sample's offset within a grid cell, W values per axis and
// sample; positions are kept as an integer first cell and a fraction, so float positions lose no
// accuracy on large grids. The CPU path uses FFTW and OpenMP; gridding is race-free (samples are
// presorted into slabs at least W cells thick, by a parallel counting sort; even and odd slabs run in two passes) and
// the inner loops over the contiguous x taps are compiled per width. A Gnufft<float> with a GPU plan checks and
// sorts its samples on the device and makes its host data (slab sort, FFTW plans) only when a host transform first
// needs them (plan_times() says where the plan's time went). On CUDA builds a Gnufft<float> given a forgeCol
// already on the GPU runs on its CudaNufftPipeline (sector-based shared-memory gridding, a plan shared by copies)
// and the result stays on the GPU. A batch of nbatch vectors back to back runs on the GPU as one plan execution
// (the vector in every kernel's blockIdx.y, one cuFFT plan-many per pass); on the host one vector after another.
// The FFTs of both sides are FftPlans (forge/CUDA/FftPlan.h). domain_shape() is the image grid.
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/LinearOperator.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

namespace cuda {
class CudaNufftPipeline;
}

// Accuracy of a Gnufft: either explicit (oversampling, kernel_width) or a requested relative error
// (tolerance > 0), from which the constructor picks oversampling 2 and the narrowest kernel whose measured
// error (docs/nufft.md, tolerance table) is within it; for_tolerance(tol) fills in both forms.
// Where its GPU plan (Gnufft<float> with a device present) runs: stream and device, as cuda::PlanOptions.
struct NufftOptions {
    double oversampling = 2.0;  // grid oversampling factor alpha (>= 1.25)
    uword kernel_width = 5;      // Kaiser-Bessel kernel width W in oversampled grid cells (2..16)
    double tolerance = 0;       // > 0: requested relative error; overrides oversampling and kernel_width
    // Stream the GPU transforms are queued on; null: the plan creates and owns a blocking stream. A given stream
    // stays the caller's and must be ordered with the legacy default stream, where forgeCol's arithmetic runs
    // (made without cudaStreamNonBlocking; the constructor checks), so that device applies see their input.
    CUstream_st* stream = nullptr;
    // CUDA device of the GPU plan; -1: the device current when the operator is made. Device data given to the
    // operator must live there.
    int device = -1;

    // Options for a requested relative error tol: float reaches [1e-6, 1e-1], double [1e-12, 1e-1].
    // kernel_width is the double-precision choice; Gnufft<float> picks its own from tolerance.
    static NufftOptions for_tolerance(double tol);
    // Narrowest kernel width at oversampling 2 whose expected error (plus float's rounding, about 5e-7,
    // when singlePrecision) is within tol; tol in [1e-12, 1e-1] ([1e-6, 1e-1] when singlePrecision).
    static uword width_for_tolerance(double tol, bool singlePrecision = false);
    // Measured relative error (the largest over 2D/3D, random and spiral trajectories, forward and adjoint,
    // in double precision, rounded up) of a kernel of width W at oversampling 2.
    static double expected_error(uword W);
};

template <typename T1>
class Gnufft : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    using complex_type = std::complex<T1>;
    static constexpr int kMaxTaps = 16;  // widest kernel

    Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
           const arma::Col<T1>& kz, NufftOptions options = NufftOptions());
    // The same from the geometry: n1 = k.n_samples() (the trajectory's times t are ignored).
    Gnufft(const ImageGrid& grid, const Trajectory<T1>& k, NufftOptions options = NufftOptions())
        : Gnufft(k.kx.n_elem, grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, options) {}
    // The same from forgeCols. Samples on the GPU (all three, on options.device) are checked and sorted there with
    // no copy through the host, as set_points(forgeCol...) does; an operator that cannot have a GPU plan (double,
    // no device, sizes the GPU kernels cannot index) throws forge::residency_error for them. On the host: as above.
    Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const forgeCol<T1>& kx, const forgeCol<T1>& ky,
           const forgeCol<T1>& kz, NufftOptions options = NufftOptions());

    // New sample positions (any number, at least one) on the same grid, with the same kernel, deapodization and
    // FFT plans; the GPU plan sorts them into its sectors on the device, in plan memory that only grows (a copy of
    // the operator that shares it gets a plan of its own, so copies keep their samples). Checked as the
    // constructor checks k (lengths equal, finite, within the band); on a throw the operator is unchanged.
    // n1() and codomain_size() become the new count. Not to be called while another thread applies the operator.
    void set_points(const Trajectory<T1>& k);
    void set_points(const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz);
    // The same from forgeCols. On the GPU (all three, on the plan's device): a Gnufft<float> with a GPU plan checks
    // and sorts them there with no copy through the host (per-frame trajectories); the checks and their messages are
    // the host's (a refusal copies the samples back to name the first bad one). An operator without a GPU plan throws
    // forge::residency_error for samples on the GPU. On the host: as the arma::Col overload.
    void set_points(const forgeCol<T1>& kx, const forgeCol<T1>& ky, const forgeCol<T1>& kz);

    uword n1() const { return n1_; }  // k-space samples
    uword Nx() const { return N_[0]; }
    uword Ny() const { return N_[1]; }
    uword Nz() const { return N_[2]; }
    // Oversampled grid size per axis (0 = x, 1 = y, 2 = z) and its total.
    uword grid_size(int axis) const { return G_[axis]; }
    uword grid_elems() const { return G_[0] * G_[1] * G_[2]; }
    uword kernel_width() const { return W_; }
    double oversampling() const { return alpha_; }
    // Requested relative error (0 when the options gave oversampling and kernel_width explicitly).
    double tolerance() const { return tol_; }
    double beta() const { return beta_; }
    bool gpu_enabled() const { return static_cast<bool>(pipeline_); }
    // Where the plan of the current points took its time (seconds, host clock). A Gnufft<float> with a GPU plan
    // checks and sorts its samples on the device, and makes its host data (slab sort, FFTW plans) only when a host
    // transform first needs them: their entries stay 0 until then.
    struct PlanTimes {
        double host_check = 0;   // host: k checked (finite, within the band) and converted to grid units
        double host_sort = 0;    // host: slab sort and stencils (parallel counting sort)
        double upload = 0;       // GPU: k copied to the device
        double device_sort = 0;  // GPU: k checked, converted and sorted into sector order on the device
        double gpu_plan = 0;     // GPU: the rest of a new GPU plan (cuFFT plan, workspace, tables); 0 when reused
        double fft_plan = 0;     // host FFTW plans of the oversampled grid (kept across set_points)
    };
    PlanTimes plan_times() const;
    // The GPU plan device input runs on (null without one); copies of the operator share it.
    const cuda::CudaNufftPipeline* gpu_plan() const { return pipeline_.get(); }

    // Building blocks on the oversampled grid (grid_elems() entries, x fastest, unshifted FFT layout),
    // for gridding of other quantities. interpolate: s_j = sum_g K(u_j - g) grid_g;
    // spread (its adjoint): grid_g = sum_j K(u_j - g) s_j, overwriting grid.
    void interpolate(const std::complex<T1>* grid, std::complex<T1>* samples) const;
    void spread(const std::complex<T1>* samples, std::complex<T1>* grid) const;
    // Integral of the 1D kernel (= its Fourier transform at 0), for normalising gridded sums.
    double kernel_integral() const;
    // Sample positions along an axis in grid cells, wrapped into [0, grid_size(axis)) (0 on axes of length 1).
    const std::vector<T1>& grid_positions(int axis) const;
    // The kernel as the polynomials the transforms evaluate: tap a (0..W-1) of a sample whose stencil
    // starts at cell ceil(u - W/2) weighs K(u - first - a) = sum_k kernel_coefficients()[k * kMaxTaps + a] y^k
    // with y = 2 (u - first) - (W - 1) in [-1, 1], k = 0..kernel_degree().
    const std::vector<T1>& kernel_coefficients() const { return coef_; }
    int kernel_degree() const { return degree_; }

protected:
    void apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;
    void apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;

private:
    // Everything but the samples: options checked, grid, kernel and deapodization (both public constructors).
    struct GridOnly {};
    Gnufft(GridOnly, uword n1, uword Nx, uword Ny, uword Nz, NufftOptions options);
    // The forgeCol samples of the constructor and set_points: on the GPU plan when all three are on the GPU.
    void load_points(const char* where, const forgeCol<T1>& kx, const forgeCol<T1>& ky, const forgeCol<T1>& kz);
    struct Points;      // host sample data (cpu/HostPlan.h)
    struct HostPoints;  // the current points' host data, made at once or on first use
    struct HostFft;     // the host FFTW plans, made at once or on first use
    // Checks k against the grid and sorts it for gridding (nothing of the operator changes); OpenMP-parallel, the
    // result independent of the thread count (cpu/SortPoints.cpp).
    Points sort_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                       const arma::Col<T1>& kz) const;
    // Throws the message of the first bad component of k (the order of the serial checks), if there is one.
    void check_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                      const arma::Col<T1>& kz) const;
    // New points for the operator (constructor and set_points): sorted on the GPU plan (Gnufft<float> with a device
    // present) or on the host; on a throw the operator is unchanged.
    void load_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz);
    // The GPU plan given the new points k (host or device arrays of n1), made or reused; false when there is no
    // device or the GPU cannot take them (sizes: gpuRefusal says why). A refused sample calls host_check, which
    // throws the host's message.
    bool load_points_gpu(const char* where, uword n1, const T1* const k[3], bool onDevice,
                         const std::function<void()>& host_check, std::string& gpuRefusal);
    // The operator's points are now the GPU plan's (n1 of them); the host plan follows on first use.
    void adopt_gpu_points(uword n1);
    const Points& host_points() const;
    const FftPlan<T1>& host_fft() const;
    void forward_host(const std::complex<T1>* image, std::complex<T1>* kdata) const;
    void adjoint_host(const std::complex<T1>* kdata, std::complex<T1>* image) const;

    uword n1_, n2_;
    uword N_[3], G_[3];
    uword W_;
    double alpha_, beta_, tol_ = 0;
    int dims_;  // axes longer than 1
    // The current points' host data (slab order, stencils, grid positions) and the host FFT plans; shared by copies.
    std::shared_ptr<HostPoints> points_;
    std::shared_ptr<HostFft> fft_;
    PlanTimes times_;  // the GPU entries and the constructor's (host entries come from points_ and fft_)
    // Kernel K(t) = I0(beta sqrt(1 - (2t/W)^2)) / I0(beta) at tap a of a stencil, as a polynomial in y:
    // coef_[k * kMaxTaps + a] multiplies y^k, k = 0..degree_.
    std::vector<T1> coef_;
    int degree_ = 0;
    // 1/D per axis for the image pixels (deapodization).
    std::vector<T1> deapod_[3];
    std::shared_ptr<cuda::CudaNufftPipeline> pipeline_;
    CUstream_st* stream_ = nullptr;  // NufftOptions::stream and device, for the GPU plan
    int device_ = -1;
    // Why there is no pipeline although a device is present (sizes the kernels cannot index); else empty.
    std::string gpuRefusal_;
};

extern template class Gnufft<float>;
extern template class Gnufft<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::Gnufft;
using forge::NufftOptions;
#endif
