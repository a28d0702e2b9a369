#pragma once
// Element-wise arithmetic and reductions on device arrays, used by forgeCol when its data lives on
// the GPU. Declared here without CUDA headers; implemented in forge/CUDA/DeviceOps.cu (explicitly
// instantiated for float, double, forgeComplex<float>, forgeComplex<double>) and by throwing stubs on
// CPU builds. Reductions accumulate in double and are deterministic (fixed-order two-pass sums).
#include <utility>

#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace device {

enum class BinOp { Add, Sub, Mul, Div };

// a op b, shared by the host loops and the kernels so both compute exactly the same expression.
template <typename TO, typename TA, typename TB>
FORGE_HD TO apply_op(BinOp op, TA a, TB b) {
    switch (op) {
        case BinOp::Add: return TO(a + b);
        case BinOp::Sub: return TO(a - b);
        case BinOp::Mul: return TO(a * b);
        default: return TO(a / b);
    }
}

// out[i] = a[i] op b[i]; (TA, TB) is (T, T), (complex, real) or (real, complex), TO = result type.
template <typename TO, typename TA, typename TB>
void binary(BinOp op, const TA* a, const TB* b, TO* out, uword n);
// out[i] = a[i] op s, or s op a[i] when scalar_left.
template <typename T>
void binary_scalar(BinOp op, const T* a, T s, T* out, uword n, bool scalar_left);
template <typename T>
void fill(T* out, T value, uword n);
// y = a*x + b*y
template <typename T>
void axpby(T a, const T* x, T b, T* y, uword n);
template <typename T>
void conj(const T* a, T* out, uword n);
template <typename T>
void real_part(const T* a, real_t<T>* out, uword n);
template <typename T>
void imag_part(const T* a, real_t<T>* out, uword n);
template <typename T>
void abs(const T* a, real_t<T>* out, uword n);
// sum_i conj(a_i) b_i
template <typename T>
T dot(const T* a, const T* b, uword n);
// (Re sum_i conj(a_i) b_i, Re sum_i conj(c_i) d_i) in one pass and one wait for the result; each the double sum
// that dot() on its pair rounds to T's real part, bit for bit.
template <typename T>
std::pair<double, double> re_dot2(const T* a, const T* b, const T* c, const T* d, uword n);
// sum_i |a_i|^2
template <typename T>
real_t<T> norm2_squared(const T* a, uword n);
template <typename T>
T sum(const T* a, uword n);

}  // namespace device
}  // namespace forge
