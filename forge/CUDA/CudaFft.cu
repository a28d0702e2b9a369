// cuFFT plans for the centred Cartesian transforms of Gfft (and the oversampled FFT of CudaNufftPipeline).
#include "forge/CUDA/CudaFft.h"

#include <cuda_runtime.h>
#include <cufft.h>

#include <sstream>
#include <string>
#include <type_traits>

#include "forge/Core/Exceptions.h"

namespace forge {
namespace cuda {
namespace {

void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
    if (e != cudaSuccess) {
        std::ostringstream m;
        m << what << " failed: " << cudaGetErrorString(e) << " (" << file << ":" << line << ")";
        throw cuda_error(m.str());
    }
}
void check_cufft(cufftResult r, const char* what, const char* file, int line) {
    if (r != CUFFT_SUCCESS) {
        std::ostringstream m;
        m << what << " failed with cufftResult " << int(r) << " (" << file << ":" << line << ")";
        throw cuda_error(m.str());
    }
}
#define FORGE_FFT_CUDA(call) check_cuda((call), #call, __FILE__, __LINE__)
#define FORGE_FFT_CUFFT(call) check_cufft((call), #call, __FILE__, __LINE__)

// out[i] = s * (-1)^(x+y+z) * in[i]
template <typename T1>
__global__ void kernel_checkerboard(const T1* in, T1* out, int Nx, int Ny, long long n,
                                    T1 s) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = int(i % Nx);
    long long r = i / Nx;
    int y = int(r % Ny);
    int z = int(r / Ny);
    T1 f = ((x + y + z) & 1) ? -s : s;
    out[2 * i] = f * in[2 * i];
    out[2 * i + 1] = f * in[2 * i + 1];
}

}  // namespace

template <typename T1>
CudaFftPlan<T1>::CudaFftPlan(int Nx, int Ny, int Nz) : Nx_(Nx), Ny_(Ny), Nz_(Nz) {
    const cufftType type = std::is_same<T1, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    cufftHandle h;
    // cuFFT dimensions are row-major (slowest first); forge stores x fastest.
    if (Nz > 1) {
        FORGE_FFT_CUFFT(cufftPlan3d(&h, Nz, Ny, Nx, type));
    } else if (Ny > 1) {
        FORGE_FFT_CUFFT(cufftPlan2d(&h, Ny, Nx, type));
    } else {
        FORGE_FFT_CUFFT(cufftPlan1d(&h, Nx, type, 1));
    }
    handle_ = int(h);
}

template <typename T1>
CudaFftPlan<T1>::~CudaFftPlan() {
    cufftDestroy(cufftHandle(handle_));
}

template <typename T1>
void CudaFftPlan<T1>::exec(T1* d, bool forward) const {
    const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    if constexpr (std::is_same<T1, float>::value) {
        FORGE_FFT_CUFFT(cufftExecC2C(cufftHandle(handle_), reinterpret_cast<cufftComplex*>(d),
                                     reinterpret_cast<cufftComplex*>(d), dir));
    } else {
        FORGE_FFT_CUFFT(cufftExecZ2Z(cufftHandle(handle_), reinterpret_cast<cufftDoubleComplex*>(d),
                                     reinterpret_cast<cufftDoubleComplex*>(d), dir));
    }
}

template <typename T1>
void CudaFftPlan<T1>::centred(const T1* d_in, T1* d_out, bool forward) const {
    const long long n = (long long)Nx_ * Ny_ * Nz_;
    const int threads = 256;
    const unsigned blocks = unsigned((n + threads - 1) / threads);
    int half = (Nx_ > 1 ? Nx_ / 2 : 0) + (Ny_ > 1 ? Ny_ / 2 : 0) + (Nz_ > 1 ? Nz_ / 2 : 0);
    const T1 sN = (half & 1) ? T1(-1) : T1(1);
    kernel_checkerboard<T1><<<blocks, threads>>>(d_in, d_out, Nx_, Ny_, n, T1(1));
    FORGE_FFT_CUDA(cudaGetLastError());
    exec(d_out, forward);
    kernel_checkerboard<T1><<<blocks, threads>>>(d_out, d_out, Nx_, Ny_, n, sN);
    FORGE_FFT_CUDA(cudaGetLastError());
}

template class CudaFftPlan<float>;
template class CudaFftPlan<double>;

}  // namespace cuda
}  // namespace forge
