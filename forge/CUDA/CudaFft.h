#pragma once
// cuFFT plans for forge's centred Cartesian transforms, declared without CUDA headers.
// Implemented in CudaFft.cu (CUDA builds) and by throwing stubs in CudaFft_nocuda.cpp.
// Data are interleaved complex device arrays [re0, im0, re1, im1, ...], x fastest.
#include "forge/Core/Config.h"

namespace forge {
namespace cuda {

template <typename T1>
class CudaFftPlan {
public:
    // A plan for an Nx x Ny x Nz grid (x fastest) and up to maxBatch arrays per call.
    CudaFftPlan(int Nx, int Ny, int Nz);
    ~CudaFftPlan();
    CudaFftPlan(const CudaFftPlan&) = delete;
    CudaFftPlan& operator=(const CudaFftPlan&) = delete;

    // Plain unnormalised FFT in place (forward: exponent -1, backward: +1).
    void exec(T1* d_data, bool forward) const;
    // Centred transform (see Gfft.h): out = sN (-1)^k FFT((-1)^r in). in and out may alias.
    void centred(const T1* d_in, T1* d_out, bool forward) const;

private:
    int Nx_, Ny_, Nz_;
    int handle_ = 0;
};

}  // namespace cuda
}  // namespace forge
