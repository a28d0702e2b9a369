// cuFFT plans: the device half of FftPlan (the centred transforms of Gfft, the padded grids of ToeplitzNormal and
// the oversampled grids of CudaNufftPipeline).
#include "forge/CUDA/detail/CudaFft.h"

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <type_traits>

#include "forge/CUDA/PlanOptions.h"
#include "forge/CUDA/detail/CudaCheck.h"
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

// out[i] = s * (-1)^(x+y+z) * in[i] over 'total' entries: grids of n entries back to back.
template <typename T1>
__global__ void kernel_checkerboard(const T1* in, T1* out, int Nx, int Ny, long long n, long long total, T1 s) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    const long long p = i % n;
    int x = int(p % Nx);
    long long r = p / Nx;
    int y = int(r % Ny);
    int z = int(r / Ny);
    T1 f = ((x + y + z) & 1) ? -s : s;
    out[2 * i] = f * in[2 * i];
    out[2 * i + 1] = f * in[2 * i + 1];
}

}  // namespace

// Grid entries per pass: 2^27 complex values (1 GiB in float, 2 GiB in double) or one grid.
constexpr long long kPassEntries = 1LL << 27;

template <typename T1>
CudaFftPlan<T1>::CudaFftPlan(int Nx, int Ny, int Nz, CUstream_st* stream, int device)
    : Nx_(Nx), Ny_(Ny), Nz_(Nz), stream_(stream), device_(resolve_device("CudaFftPlan", device)) {
    handle_for(1);  // the single-grid plan now, so that a size cuFFT refuses fails here
}

template <typename T1>
CudaFftPlan<T1>::~CudaFftPlan() {
    int previous = 0;
    const bool switched =
        cudaGetDevice(&previous) == cudaSuccess && previous != device_ && cudaSetDevice(device_) == cudaSuccess;
    for (const auto& h : handles_) cufftDestroy(cufftHandle(h.second));
    if (switched && cudaSetDevice(previous) != cudaSuccess) cudaGetLastError();
}

template <typename T1>
uword CudaFftPlan<T1>::max_pass() const {
    const long long n = (long long)Nx_ * Ny_ * Nz_;
    return uword(std::max(1LL, std::min(kPassEntries / n, 65535LL)));
}

template <typename T1>
int CudaFftPlan<T1>::handle_for(int nbatch) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = handles_.find(nbatch);
    if (it != handles_.end()) return it->second;
    DeviceGuard guard(device_);
    const cufftType type = std::is_same<T1, float>::value ? CUFFT_C2C : CUFFT_Z2Z;
    // cuFFT dimensions are row-major (slowest first); forge stores x fastest. Null embeds: grids contiguous,
    // one after another.
    long long n[3];
    int rank;
    if (Nz_ > 1) {
        rank = 3, n[0] = Nz_, n[1] = Ny_, n[2] = Nx_;
    } else if (Ny_ > 1) {
        rank = 2, n[0] = Ny_, n[1] = Nx_;
    } else {
        rank = 1, n[0] = Nx_;
    }
    const long long dist = (long long)Nx_ * Ny_ * Nz_;
    cufftHandle h;
    FORGE_FFT_CUFFT(cufftCreate(&h));
    size_t work = 0;
    const cufftResult r = cufftMakePlanMany64(h, rank, n, nullptr, 1, dist, nullptr, 1, dist, type, nbatch, &work);
    if (r != CUFFT_SUCCESS) {
        cufftDestroy(h);
        FORGE_FFT_CUFFT(r);
    }
    FORGE_FFT_CUFFT(cufftSetStream(h, cudaStream_t(stream_)));
    handles_[nbatch] = int(h);
    return int(h);
}

template <typename T1>
void CudaFftPlan<T1>::exec(T1* d, bool forward, uword nbatch) const {
    DeviceGuard guard(device_);
    const LegacyOrder ordered(cudaStream_t(stream_));
    const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    const long long n = (long long)Nx_ * Ny_ * Nz_;
    const uword pass = max_pass();
    for (uword b0 = 0; b0 < nbatch; b0 += pass) {
        const int nb = int(std::min(pass, nbatch - b0));
        const cufftHandle h = cufftHandle(handle_for(nb));
        T1* p = d + 2 * (long long)b0 * n;
        if constexpr (std::is_same<T1, float>::value) {
            FORGE_FFT_CUFFT(
                cufftExecC2C(h, reinterpret_cast<cufftComplex*>(p), reinterpret_cast<cufftComplex*>(p), dir));
        } else {
            FORGE_FFT_CUFFT(cufftExecZ2Z(h, reinterpret_cast<cufftDoubleComplex*>(p),
                                         reinterpret_cast<cufftDoubleComplex*>(p), dir));
        }
    }
}

template <typename T1>
void CudaFftPlan<T1>::centred(const T1* d_in, T1* d_out, bool forward, uword nbatch) const {
    DeviceGuard guard(device_);
    const LegacyOrder ordered(cudaStream_t(stream_));
    const long long n = (long long)Nx_ * Ny_ * Nz_;
    const long long total = n * (long long)nbatch;
    const int threads = 256;
    const unsigned blocks = unsigned((total + threads - 1) / threads);
    int half = (Nx_ > 1 ? Nx_ / 2 : 0) + (Ny_ > 1 ? Ny_ / 2 : 0) + (Nz_ > 1 ? Nz_ / 2 : 0);
    const T1 sN = (half & 1) ? T1(-1) : T1(1);
    const cudaStream_t st = cudaStream_t(stream_);
    kernel_checkerboard<T1><<<blocks, threads, 0, st>>>(d_in, d_out, Nx_, Ny_, n, total, T1(1));
    FORGE_FFT_CUDA(cudaGetLastError());
    exec(d_out, forward, nbatch);
    kernel_checkerboard<T1><<<blocks, threads, 0, st>>>(d_out, d_out, Nx_, Ny_, n, total, sN);
    FORGE_FFT_CUDA(cudaGetLastError());
}

template class CudaFftPlan<float>;
template class CudaFftPlan<double>;

bool stream_is_blocking(CUstream_st* stream) {
    if (!stream) return true;
    unsigned flags = 0;
    FORGE_FFT_CUDA(cudaStreamGetFlags(cudaStream_t(stream), &flags));
    return (flags & cudaStreamNonBlocking) == 0;
}

}  // namespace cuda
}  // namespace forge
