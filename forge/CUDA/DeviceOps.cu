// CUDA implementation of forge/Core/DeviceOps.h: element-wise kernels and deterministic reductions.
// All work is queued on the legacy default stream, which orders it against the operators' own
// (blocking) streams, so forgeCol arithmetic and CudaDftPipeline calls never race.
#include <algorithm>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/CUDA/detail/DeviceOpsInstantiations.h"
#include "forge/Core/DeviceMemory.h"

namespace forge {
namespace device {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocks_for(uword n) { return int(std::min<uword>((n + kThreads - 1) / kThreads, kMaxBlocks)); }

template <typename F>
__global__ void map_kernel(F f, uword n) {
    for (uword i = uword(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uword(gridDim.x) * blockDim.x) f(i);
}

template <typename F>
void launch_map(const F& f, uword n) {
    if (n == 0) return;
    map_kernel<<<blocks_for(n), kThreads>>>(f, n);
    FORGE_CUDA_CHECK_LAUNCH("forge::device::map_kernel");
}

template <typename TO, typename TA, typename TB>
struct BinaryF {
    BinOp op;
    const TA* a;
    const TB* b;
    TO* out;
    __device__ void operator()(uword i) const { out[i] = apply_op<TO>(op, a[i], b[i]); }
};
template <typename T>
struct BinaryScalarF {
    BinOp op;
    const T* a;
    T s;
    T* out;
    bool left;
    __device__ void operator()(uword i) const { out[i] = left ? apply_op<T>(op, s, a[i]) : apply_op<T>(op, a[i], s); }
};
template <typename T>
struct FillF {
    T* out;
    T v;
    __device__ void operator()(uword i) const { out[i] = v; }
};
template <typename T>
struct AxpbyF {
    T a;
    const T* x;
    T b;
    T* y;
    __device__ void operator()(uword i) const { y[i] = a * x[i] + b * y[i]; }
};
// Unary maps; Kind selects conj / real / imag / abs.
enum class Unary { Conj, Real, Imag, Abs };
template <Unary K, typename T, typename TO>
struct UnaryF {
    const T* a;
    TO* out;
    __device__ void operator()(uword i) const {
        if constexpr (K == Unary::Conj) out[i] = forge::conj(a[i]);
        if constexpr (K == Unary::Real) out[i] = forge::real(a[i]);
        if constexpr (K == Unary::Imag) out[i] = forge::imag(a[i]);
        if constexpr (K == Unary::Abs) {
            if constexpr (is_forge_complex<T>::value) {
                out[i] = forge::abs(a[i]);
            } else {
                out[i] = fabs(a[i]);
            }
        }
    }
};

// ------------------------------------------------------------------ reductions
// Every reduction is a sum of double2 terms (re, im), in two passes of fixed shape: deterministic.
template <typename F>
__global__ void reduce_partial_kernel(F f, uword n, double2* partial) {
    __shared__ double sre[kThreads];
    __shared__ double sim[kThreads];
    double re = 0, im = 0;
    for (uword i = uword(blockIdx.x) * kThreads + threadIdx.x; i < n; i += uword(gridDim.x) * kThreads) {
        const double2 v = f(i);
        re += v.x;
        im += v.y;
    }
    sre[threadIdx.x] = re;
    sim[threadIdx.x] = im;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sre[threadIdx.x] += sre[threadIdx.x + s];
            sim[threadIdx.x] += sim[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = make_double2(sre[0], sim[0]);
}

struct PartialTermF {
    const double2* p;
    __device__ double2 operator()(uword i) const { return p[i]; }
};

template <typename T>
__device__ double2 as_d2(T v) {
    return make_double2(double(forge::real(v)), double(forge::imag(v)));
}

template <typename T>
struct DotF {
    const T* a;
    const T* b;
    __device__ double2 operator()(uword i) const {
        const double2 x = as_d2(a[i]), y = as_d2(b[i]);
        // conj(x) * y
        return make_double2(x.x * y.x + x.y * y.y, x.x * y.y - x.y * y.x);
    }
};
// The real parts of two such products, as DotF computes each, in the two slots.
template <typename T>
struct ReDot2F {
    DotF<T> ab, cd;
    __device__ double2 operator()(uword i) const { return make_double2(ab(i).x, cd(i).x); }
};
template <typename T>
struct Norm2F {
    const T* a;
    __device__ double2 operator()(uword i) const {
        const double2 x = as_d2(a[i]);
        return make_double2(x.x * x.x + x.y * x.y, 0.0);
    }
};
template <typename T>
struct SumF {
    const T* a;
    __device__ double2 operator()(uword i) const { return as_d2(a[i]); }
};

template <typename F>
double2 reduce(const F& f, uword n) {
    if (n == 0) return make_double2(0, 0);
    const int blocks = blocks_for(n);
    DeviceBuffer scratch((blocks + 1) * sizeof(double2));
    double2* partial = scratch.as<double2>();
    reduce_partial_kernel<<<blocks, kThreads>>>(f, n, partial);
    FORGE_CUDA_CHECK_LAUNCH("forge::device::reduce_partial_kernel");
    reduce_partial_kernel<<<1, kThreads>>>(PartialTermF{partial}, uword(blocks), partial + blocks);
    FORGE_CUDA_CHECK_LAUNCH("forge::device::reduce_partial_kernel (final)");
    double2 result;
    // A scalar result, not vector data: not counted as a transfer.
    FORGE_CUDA_CHECK(cudaMemcpy(&result, partial + blocks, sizeof(double2), cudaMemcpyDeviceToHost));
    return result;
}

template <typename T>
T from_d2(double2 v) {
    if constexpr (is_forge_complex<T>::value) {
        return T(real_t<T>(v.x), real_t<T>(v.y));
    } else {
        return T(v.x);
    }
}

}  // namespace

template <typename TO, typename TA, typename TB>
void binary(BinOp op, const TA* a, const TB* b, TO* out, uword n) {
    launch_map(BinaryF<TO, TA, TB>{op, a, b, out}, n);
}
template <typename T>
void binary_scalar(BinOp op, const T* a, T s, T* out, uword n, bool scalar_left) {
    launch_map(BinaryScalarF<T>{op, a, s, out, scalar_left}, n);
}
template <typename T>
void fill(T* out, T value, uword n) {
    launch_map(FillF<T>{out, value}, n);
}
template <typename T>
void axpby(T a, const T* x, T b, T* y, uword n) {
    launch_map(AxpbyF<T>{a, x, b, y}, n);
}
template <typename T>
void conj(const T* a, T* out, uword n) {
    launch_map(UnaryF<Unary::Conj, T, T>{a, out}, n);
}
template <typename T>
void real_part(const T* a, real_t<T>* out, uword n) {
    launch_map(UnaryF<Unary::Real, T, real_t<T>>{a, out}, n);
}
template <typename T>
void imag_part(const T* a, real_t<T>* out, uword n) {
    launch_map(UnaryF<Unary::Imag, T, real_t<T>>{a, out}, n);
}
template <typename T>
void abs(const T* a, real_t<T>* out, uword n) {
    launch_map(UnaryF<Unary::Abs, T, real_t<T>>{a, out}, n);
}
template <typename T>
T dot(const T* a, const T* b, uword n) {
    return from_d2<T>(reduce(DotF<T>{a, b}, n));
}
template <typename T>
std::pair<double, double> re_dot2(const T* a, const T* b, const T* c, const T* d, uword n) {
    const double2 r = reduce(ReDot2F<T>{{a, b}, {c, d}}, n);
    return {r.x, r.y};
}
template <typename T>
real_t<T> norm2_squared(const T* a, uword n) {
    return real_t<T>(reduce(Norm2F<T>{a}, n).x);
}
template <typename T>
T sum(const T* a, uword n) {
    return from_d2<T>(reduce(SumF<T>{a}, n));
}

FORGE_DEVICE_OPS_INSTANTIATE_ALL

}  // namespace device
}  // namespace forge
