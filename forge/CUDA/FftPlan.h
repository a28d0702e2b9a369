#pragma once
// forge's FFT plans, one facade for host and device data, declared without FFTW, CUDA or Armadillo headers (the
// .cu pipelines use it too).
//
//   FftPlan<float> F(ImageGrid{Nx, Ny, Nz});                    // FFTW plans now; cuFFT on first device use
//   F.execute(FftMemory::host, grids, true, nbatch);             // plain FFT in place, exponent -1
//   F.centred(FftMemory::device, d_in, d_out, false, nbatch);    // centred inverse (Gfft's), on the GPU
//
// Grids are complex, x fastest (index x + Nx (y + Ny z)), nbatch grids back to back; every transform is
// unnormalised (forward: exponent -1, backward: +1). The centred transform is Gfft's (Gfft.h):
// out = sN (-1)^k FFT((-1)^r in), sN = prod (-1)^(N/2) over the axes longer than 1; in and out may alias.
//   host    FFTW: one plan pair for one grid (FFTW_ESTIMATE | FFTW_UNALIGNED, so it runs on any array), made in
//           the constructor under fftw_planner_mutex(); execution is thread-safe on distinct arrays. A batch runs
//           its grids on the OpenMP threads, one grid each (one after another inside a parallel region).
//   device  cuFFT: CudaFftPlan (detail/CudaFft.h), one plan-many per batch count, made on first device use or by
//           prepare_device(), on options.stream and options.device; forge built without CUDA throws cuda_error.
// FftLines<T1> are the pruned transforms' building block: 1D FFTs along one axis of strided lines (FFTW's guru
// interface), single-threaded, for callers that run many at once on their own threads (ToeplitzNormal's host
// apply transforms only the lines of its padded grid that are not zero).
#include <complex>
#include <initializer_list>
#include <memory>
#include <mutex>

#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

struct CUstream_st;  // the type behind cudaStream_t

namespace forge {

struct ImageGrid;  // forge/Core/Geometry.h

// Where the data of one transform lives.
enum class FftMemory { host, device };

struct FftPlanOptions {
    // Device transforms: the stream they are queued on (null: the legacy default stream) and the CUDA device of
    // the plan (-1: the device current when the device plan is made). A given stream stays the caller's; a
    // non-blocking one is ordered with the legacy stream at each transform's start and end (events).
    CUstream_st* stream = nullptr;
    int device = -1;
    // Make the FFTW plans (false: a device-only plan, e.g. a GPU pipeline's; host data then throw).
    bool host = true;
};

namespace cuda {
template <typename T1>
class CudaFftPlan;
}

namespace detail {
// The FFTW planner is not thread-safe: forge creates and destroys every FFTW plan under this lock.
std::mutex& fftw_planner_mutex();

// FFTW's and cuFFT's plans take each dimension as an int.
constexpr uword kMaxFftAxis = 2147483647;
// Validates a grid size for the centred transforms: every axis >= 1, even when > 1 and at most
// kMaxFftAxis; returns Nx*Ny*Nz (forge::invalid_argument if the product does not fit a uword).
uword require_centred_grid(const char* where, uword Nx, uword Ny, uword Nz);
}  // namespace detail

template <typename T1>
class FftPlan {
public:
    // Plans for an Nx x Ny x Nz grid; each axis at least 1 and at most kMaxFftAxis (the centred transform also
    // needs even axes: detail::require_centred_grid). Throws forge::invalid_argument when FFTW cannot plan it.
    FftPlan(uword Nx, uword Ny, uword Nz, const FftPlanOptions& options = {});
    explicit FftPlan(const ImageGrid& grid, const FftPlanOptions& options = {});
    ~FftPlan();
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;

    // Plain FFT in place of nbatch grids.
    void execute(FftMemory where, forgeComplex<T1>* data, bool forward, uword nbatch = 1) const;
    // Centred transform of nbatch grids (see above); in == out is allowed.
    void centred(FftMemory where, const forgeComplex<T1>* in, forgeComplex<T1>* out, bool forward,
                 uword nbatch = 1) const;

    // Makes the cuFFT plan now (a size cuFFT refuses then fails here, not on the first device transform).
    void prepare_device() const;
    bool has_device_plan() const;

    uword size() const { return n_; }  // entries of one grid
    uword nx() const { return N_[0]; }
    uword ny() const { return N_[1]; }
    uword nz() const { return N_[2]; }
    const FftPlanOptions& options() const { return options_; }

private:
    struct HostPlans;
    void host_centred(forgeComplex<T1>* data, bool forward) const;
    const cuda::CudaFftPlan<T1>& device_plan() const;

    uword N_[3];
    uword n_ = 0;
    FftPlanOptions options_;
    std::unique_ptr<HostPlans> host_;
    mutable std::mutex deviceMutex_;
    mutable std::unique_ptr<cuda::CudaFftPlan<T1>> device_;
};

// In-place 1D FFTs of length n at element stride 'stride', over up to two loops {count, step} (in elements): the
// lines of one axis of a grid that one stage of a pruned transform touches. None when n = 1. Planned on 'data'
// (FFTW_ESTIMATE leaves it untouched); run on any array of the same alignment. Single-threaded.
template <typename T1>
class FftLines {
public:
    struct Loop {
        uword count, step;
    };
    FftLines(uword n, uword stride, std::initializer_list<Loop> loops, bool forward, forgeComplex<T1>* data);
    ~FftLines();
    FftLines(const FftLines&) = delete;
    FftLines& operator=(const FftLines&) = delete;
    void run(forgeComplex<T1>* data) const;

private:
    void* plan_ = nullptr;
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;
extern template class FftLines<float>;
extern template class FftLines<double>;

}  // namespace forge
