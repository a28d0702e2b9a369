#pragma once
// The device half of forge's FFT plan facade (forge/CUDA/FftPlan.h): cuFFT plans, declared without CUDA headers.
// Private to forge/CUDA (FftPlan.cpp reaches it; not installed).
// Implemented in CudaFft.cu (CUDA builds) and by throwing stubs in NoCuda.cpp (CPU-only builds, where FftPlan
// reaches it only with device data, which cannot exist there). Operators use FftPlan.
// Data are interleaved complex device arrays [re0, im0, re1, im1, ...], x fastest; a batch is nbatch
// grids back to back, transformed by one cuFFT plan-many call (cufftPlanMany's layout) per pass.
#include <map>
#include <mutex>

#include "forge/Core/Config.h"

struct CUstream_st;

namespace forge {
namespace cuda {

template <typename T1>
class CudaFftPlan {
public:
    // A plan for an Nx x Ny x Nz grid (x fastest) on 'stream' (null: the legacy default stream) and 'device'
    // (-1: the current device; else forge::invalid_argument outside [0, device count)). Plans for each batch
    // count are made on first use and kept; a batch is split into passes of at most max_pass() grids so that
    // cuFFT's workspace stays near 1 GiB. Every call runs with the plan's device current.
    CudaFftPlan(int Nx, int Ny, int Nz, CUstream_st* stream = nullptr, int device = -1);
    ~CudaFftPlan();
    CudaFftPlan(const CudaFftPlan&) = delete;
    CudaFftPlan& operator=(const CudaFftPlan&) = delete;

    // Plain unnormalised FFT in place of nbatch grids (forward: exponent -1, backward: +1).
    void exec(T1* d_data, bool forward, uword nbatch = 1) const;
    // Centred transform (see Gfft.h) of nbatch grids: out = sN (-1)^k FFT((-1)^r in). in and out may alias.
    void centred(const T1* d_in, T1* d_out, bool forward, uword nbatch = 1) const;

    uword max_pass() const;
    CUstream_st* stream() const { return stream_; }
    int device() const { return device_; }

private:
    int handle_for(int nbatch) const;  // cufftHandle of the plan-many for nbatch grids

    int Nx_, Ny_, Nz_;
    CUstream_st* stream_ = nullptr;
    int device_ = 0;
    mutable std::mutex mutex_;
    mutable std::map<int, int> handles_;  // batch count -> cufftHandle
};

}  // namespace cuda
}  // namespace forge
