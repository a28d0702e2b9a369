#pragma once
// cuFFT plans for forge's centred Cartesian transforms, declared without CUDA headers.
// Implemented in CudaFft.cu (CUDA builds) and by throwing stubs in CudaFft_nocuda.cpp.
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
    // A plan for an Nx x Ny x Nz grid (x fastest) on 'stream' (null: the legacy default stream). Plans for
    // each batch count are made on first use and kept; a batch is split into passes of at most
    // max_pass() grids so that cuFFT's workspace stays near 1 GiB.
    CudaFftPlan(int Nx, int Ny, int Nz, CUstream_st* stream = nullptr);
    ~CudaFftPlan();
    CudaFftPlan(const CudaFftPlan&) = delete;
    CudaFftPlan& operator=(const CudaFftPlan&) = delete;

    // Plain unnormalised FFT in place of nbatch grids (forward: exponent -1, backward: +1).
    void exec(T1* d_data, bool forward, uword nbatch = 1) const;
    // Centred transform (see Gfft.h) of nbatch grids: out = sN (-1)^k FFT((-1)^r in). in and out may alias.
    void centred(const T1* d_in, T1* d_out, bool forward, uword nbatch = 1) const;

    uword max_pass() const;
    CUstream_st* stream() const { return stream_; }

private:
    int handle_for(int nbatch) const;  // cufftHandle of the plan-many for nbatch grids

    int Nx_, Ny_, Nz_;
    CUstream_st* stream_ = nullptr;
    mutable std::mutex mutex_;
    mutable std::map<int, int> handles_;  // batch count -> cufftHandle
};

}  // namespace cuda
}  // namespace forge
