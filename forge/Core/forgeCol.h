#pragma once
// forgeCol<T>: an owning vector that lives on the host, or on the GPU after put_on_gpu().
//
// Residency rules (BART-style: the data decides where work runs):
//  - Arithmetic runs where the operands live: all on the host -> host loops (OpenMP for long
//    vectors); all on the GPU -> CUDA kernels, and results stay on the GPU.
//  - Mixing a host and a device operand is an error (forge::residency_error), never a silent copy.
//  - put_on_gpu() uploads and keeps the host copy valid (readable) until the data changes on the GPU;
//    get_from_gpu() brings the data back (downloading only if the host copy is stale).
//  - Writable host access (operator(), memptr()) to a vector on the GPU throws: it would desynchronise
//    the two copies. Read-only access is allowed while the host copy is still valid.
//  - device_view(ptr, n) wraps device memory that another library owns (a CuPy or PyTorch array) without
//    copying it: the view reads and writes that memory in place and never frees it. The memory must outlive
//    the view. Copying a view makes an owning vector (a device-to-device copy); assigning to a view rebinds
//    it to the assigned vector and leaves the viewed memory untouched.
// T is float, double, forgeComplex<float> or forgeComplex<double>.
#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <vector>

#include <armadillo>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/DeviceOps.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Core/forgeComplex.h"

namespace forge {

static_assert(std::is_same<uword, arma::uword>::value,
              "forge::uword must be arma::uword: build with Armadillo's 64-bit words (ARMA_32BIT_WORD undefined)");

namespace detail {
// The arma element type that matches a forge element type (forgeComplex<T> <-> std::complex<T>).
template <typename T>
struct arma_elem {
    using type = T;
};
template <typename T>
struct arma_elem<forgeComplex<T>> {
    using type = std::complex<T>;
};
// Compute-heavier host loops (the penalties) above this length run with OpenMP. Element-wise loops,
// which are memory-bound, follow parallel_elementwise() (forge/Core/Parallel.h).
constexpr uword kParallelThreshold = 1u << 15;
// Host reductions accumulate in double (or complex<double>) like the device ones.
template <typename T>
struct accum {
    using type = double;
};
template <typename T>
struct accum<forgeComplex<T>> {
    using type = forgeComplex<double>;
};
}  // namespace detail

// Whole-vector conversions between arma::Col and forgeCol (each one a copy of the vector), counted so
// that tests can prove a solver iteration makes none: arma::Col is the API boundary only.
struct ArmaConversionStats {
    std::uint64_t to_forge = 0;  // forgeCol(const arma::Col&)
    std::uint64_t to_arma = 0;   // forgeCol::to_arma()
};
namespace detail {
enum class ArmaConversion { ToForge, ToArma };
inline std::atomic<std::uint64_t>* arma_conversion_counters() {
    static std::atomic<std::uint64_t> counters[2];
    return counters;
}
inline void count_arma_conversion(ArmaConversion c) { ++arma_conversion_counters()[int(c)]; }
}  // namespace detail
inline ArmaConversionStats arma_conversion_stats() {
    return {detail::arma_conversion_counters()[0].load(), detail::arma_conversion_counters()[1].load()};
}
inline void reset_arma_conversion_stats() {
    detail::arma_conversion_counters()[0] = 0;
    detail::arma_conversion_counters()[1] = 0;
}

template <typename T>
class forgeCol {
    static_assert(std::is_floating_point<real_t<T>>::value, "forgeCol element must be real or forgeComplex");

public:
    using elem_type = T;
    using real_type = real_t<T>;
    using arma_type = typename detail::arma_elem<T>::type;

    // Number of elements. Read it; change the size only through set_size().
    uword n_elem = 0;

    forgeCol() = default;
    explicit forgeCol(uword n) : n_elem(n), host_(n) {}
    forgeCol(uword n, T value) : n_elem(n), host_(n, value) {}
    explicit forgeCol(const arma::Col<arma_type>& c) : n_elem(c.n_elem), host_(c.n_elem) {
        detail::count_arma_conversion(detail::ArmaConversion::ToForge);
        if (n_elem) std::memcpy(static_cast<void*>(host_.data()), c.memptr(), n_elem * sizeof(T));
    }

    forgeCol(const forgeCol& o) : n_elem(o.n_elem), onGpu_(o.onGpu_), hostValid_(o.hostValid_) {
        if (o.hostValid_) host_ = o.host_;
        if (o.onGpu_) {
            dev_ = DeviceBuffer(n_elem * sizeof(T));
            device::copy_on_device(dev_.get(), o.device_data(), n_elem * sizeof(T));
        }
    }
    forgeCol(forgeCol&& o) noexcept
        : n_elem(std::exchange(o.n_elem, 0)), host_(std::move(o.host_)), dev_(std::move(o.dev_)),
          view_(std::exchange(o.view_, nullptr)), onGpu_(std::exchange(o.onGpu_, false)),
          hostValid_(std::exchange(o.hostValid_, true)) {}
    forgeCol& operator=(const forgeCol& o) {
        if (this != &o) *this = forgeCol(o);
        return *this;
    }
    forgeCol& operator=(forgeCol&& o) noexcept {
        if (this != &o) {
            n_elem = std::exchange(o.n_elem, 0);
            host_ = std::move(o.host_);
            dev_ = std::move(o.dev_);
            view_ = std::exchange(o.view_, nullptr);
            onGpu_ = std::exchange(o.onGpu_, false);
            hostValid_ = std::exchange(o.hostValid_, true);
        }
        return *this;
    }

    // ------------------------------------------------------------------ conversion
    arma::Col<arma_type> to_arma() const {
        require_host_readable("to_arma");
        detail::count_arma_conversion(detail::ArmaConversion::ToArma);
        arma::Col<arma_type> c(n_elem);
        if (n_elem) std::memcpy(static_cast<void*>(c.memptr()), host_.data(), n_elem * sizeof(T));
        return c;
    }
    FORGE_DEPRECATED("to_arma()") arma::Col<arma_type> getArma() const { return to_arma(); }
    explicit operator arma::Col<arma_type>() const { return to_arma(); }

    // ------------------------------------------------------------------ residency
    bool on_gpu() const { return onGpu_; }
    // Uploads to the GPU (no-op if already there). Throws forge::cuda_error on CPU builds or
    // without a device, empty vectors included, naming the size when the allocation does not fit.
    void put_on_gpu() {
        if (onGpu_) return;
        DeviceBuffer buf(n_elem * sizeof(T));
        if (n_elem) device::copy_to_device(buf.get(), host_.data(), n_elem * sizeof(T));
        dev_ = std::move(buf);
        onGpu_ = true;
        hostValid_ = true;
    }
    // Brings the data back to the host and frees the device copy (no-op on the host). A device view
    // downloads the viewed memory and lets go of it (an owning host vector from then on).
    FORGE_DEPRECATED("put_on_gpu()") void putOnGPU() { put_on_gpu(); }
    FORGE_DEPRECATED("get_from_gpu()") void getFromGPU() { get_from_gpu(); }
    void get_from_gpu() {
        if (!onGpu_) return;
        if (!hostValid_) {
            host_.resize(n_elem);
            if (n_elem) device::copy_to_host(host_.data(), device_data(), n_elem * sizeof(T));
        }
        dev_.reset();
        view_ = nullptr;
        onGpu_ = false;
        hostValid_ = true;
    }
    // The data where they live: the device pointer on the GPU, the host pointer otherwise.
    T* data_ptr() { return onGpu_ ? device_memptr() : memptr(); }
    const T* data_ptr() const { return onGpu_ ? device_memptr() : memptr(); }
    // Device pointer of a GPU-resident vector. The writable overload marks the host copy stale.
    T* device_memptr() {
        require_gpu("device_memptr");
        hostValid_ = false;
        return device_data();
    }
    const T* device_memptr() const {
        require_gpu("device_memptr");
        return device_data();
    }
    // A GPU-resident vector that views n elements of device memory at ptr, owned elsewhere (see the
    // residency rules above): no allocation, no copy, no transfer counted, and the destructor frees
    // nothing. ptr may be null only for n = 0. forge does not check that ptr is device memory: the
    // caller knows (DLPack's device type, __cuda_array_interface__).
    static forgeCol device_view(T* ptr, uword n) {
        if (ptr == nullptr && n != 0) {
            std::ostringstream m;
            m << "forgeCol::device_view: ptr is null but n = " << n << "; a null pointer views 0 elements only";
            throw invalid_argument(m.str());
        }
        checked_product("forgeCol::device_view", {{"n", n}, {"sizeof(T)", sizeof(T)}});
        forgeCol c;
        c.n_elem = n;
        c.view_ = ptr;
        c.onGpu_ = true;
        c.hostValid_ = false;
        return c;
    }
    // True for a device view (memory owned elsewhere).
    bool is_view() const { return view_ != nullptr; }
    // A GPU-resident vector of n elements whose contents are left for a kernel to write.
    static forgeCol device_uninitialized(uword n) {
        forgeCol c;
        c.n_elem = n;
        c.dev_ = DeviceBuffer(checked_product("forgeCol::device_uninitialized", {{"n", n}, {"sizeof(T)", sizeof(T)}}));
        c.onGpu_ = true;
        c.hostValid_ = false;
        return c;
    }
    // A vector of n elements, uninitialised, living where 'like' lives.
    static forgeCol same_place(const forgeCol& like, uword n) {
        return like.onGpu_ ? device_uninitialized(n) : forgeCol(n);
    }

    // ------------------------------------------------------------------ host element access
    T* memptr() {
        require_host_writable("memptr");
        return host_.data();
    }
    const T* memptr() const {
        require_host_readable("memptr");
        return host_.data();
    }
    T& operator()(uword i) { return memptr()[i]; }
    const T& operator()(uword i) const { return memptr()[i]; }
    T& operator[](uword i) { return memptr()[i]; }
    const T& operator[](uword i) const { return memptr()[i]; }
    T& at(uword i) {
        check_index(i);
        return memptr()[i];
    }
    const T& at(uword i) const {
        check_index(i);
        return memptr()[i];
    }

    // ------------------------------------------------------------------ filling and size
    forgeCol& fill(T value) {
        if (onGpu_) {
            device::fill(device_memptr(), value, n_elem);
        } else {
            std::fill(host_.begin(), host_.end(), value);
        }
        return *this;
    }
    forgeCol& zeros() { return fill(T(0)); }
    forgeCol& ones() { return fill(T(1)); }
    // Resizes on the host (contents zeroed). A vector on the GPU must come back first.
    void set_size(uword n) {
        if (onGpu_) throw residency_error("forgeCol::set_size: the vector is on the GPU; call get_from_gpu() first");
        host_.assign(n, T(0));
        n_elem = n;
    }
    bool is_empty() const { return n_elem == 0; }

    // ------------------------------------------------------------------ in-place arithmetic
    forgeCol& operator+=(const forgeCol& b) { return inplace(device::BinOp::Add, b, "operator+="); }
    forgeCol& operator-=(const forgeCol& b) { return inplace(device::BinOp::Sub, b, "operator-="); }
    forgeCol& operator%=(const forgeCol& b) { return inplace(device::BinOp::Mul, b, "operator%="); }
    forgeCol& operator/=(const forgeCol& b) { return inplace(device::BinOp::Div, b, "operator/="); }
    forgeCol& operator*=(T s) { return inplace_scalar(device::BinOp::Mul, s); }
    forgeCol& operator/=(T s) { return inplace_scalar(device::BinOp::Div, s); }
    forgeCol& operator+=(T s) { return inplace_scalar(device::BinOp::Add, s); }
    forgeCol& operator-=(T s) { return inplace_scalar(device::BinOp::Sub, s); }

    // Internal helpers used by the free operators below; not part of the documented API.
    void require_host_readable(const char* what) const {
        if (onGpu_ && !hostValid_) {
            throw residency_error(std::string("forgeCol::") + what +
                                  ": the data lives on the GPU and the host copy is stale; call get_from_gpu() first");
        }
    }
    void require_host_writable(const char* what) const {
        if (onGpu_) {
            throw residency_error(std::string("forgeCol::") + what +
                                  ": host write access to a vector that is on the GPU; call get_from_gpu() first");
        }
    }
    void require_gpu(const char* what) const {
        if (!onGpu_) {
            throw residency_error(std::string("forgeCol::") + what +
                                  ": the vector is on the host; call put_on_gpu() first");
        }
    }
    const T* host_data() const { return host_.data(); }  // valid when !on_gpu()

private:
    void check_index(uword i) const {
        if (i >= n_elem) {
            std::ostringstream m;
            m << "forgeCol::at: index " << i << " out of range for " << n_elem << " elements";
            throw std::out_of_range(m.str());
        }
    }
    forgeCol& inplace(device::BinOp op, const forgeCol& b, const char* what);
    forgeCol& inplace_scalar(device::BinOp op, T s);
    // The device memory: the viewed memory of a view, else the owned buffer.
    T* device_data() const { return view_ ? view_ : dev_.as<T>(); }

    std::vector<T> host_;
    DeviceBuffer dev_;
    T* view_ = nullptr;  // non-owning device memory (device_view); never freed here
    bool onGpu_ = false;
    bool hostValid_ = true;
};

// ============================================================================ implementation
namespace detail {

using device::apply_op;

inline const char* op_name(device::BinOp op) {
    switch (op) {
        case device::BinOp::Add: return "+";
        case device::BinOp::Sub: return "-";
        case device::BinOp::Mul: return "%";
        default: return "/";
    }
}

template <typename A, typename B>
void require_same_place_and_size(const A& a, const B& b, const char* what) {
    if (a.n_elem != b.n_elem) {
        std::ostringstream m;
        m << "forgeCol " << what << ": operands have " << a.n_elem << " and " << b.n_elem
          << " elements; they must have the same length";
        throw invalid_argument(m.str());
    }
    if (a.on_gpu() != b.on_gpu()) {
        throw residency_error(std::string("forgeCol ") + what + ": the " + (a.on_gpu() ? "left" : "right") +
                              " operand is on the GPU and the other on the host; call put_on_gpu() or get_from_gpu() "
                              "so both live in the same place (forge never copies silently)");
    }
}

// Element-wise a op b into a new vector placed where the operands live.
template <typename TO, typename TA, typename TB>
forgeCol<TO> binary(device::BinOp op, const forgeCol<TA>& a, const forgeCol<TB>& b) {
    require_same_place_and_size(a, b, op_name(op));
    const uword n = a.n_elem;
    if (a.on_gpu()) {
        forgeCol<TO> out = forgeCol<TO>::device_uninitialized(n);
        device::binary<TO, TA, TB>(op, a.device_memptr(), b.device_memptr(), out.device_memptr(), n);
        return out;
    }
    forgeCol<TO> out(n);
    const TA* pa = a.host_data();
    const TB* pb = b.host_data();
    TO* po = out.memptr();
#pragma omp parallel for if (parallel_elementwise(n, sizeof(TA) + sizeof(TB) + sizeof(TO)))
    for (long long i = 0; i < static_cast<long long>(n); ++i) po[i] = apply_op<TO>(op, pa[i], pb[i]);
    return out;
}

template <typename T>
forgeCol<T> binary_scalar(device::BinOp op, const forgeCol<T>& a, T s, bool scalar_left) {
    const uword n = a.n_elem;
    if (a.on_gpu()) {
        forgeCol<T> out = forgeCol<T>::device_uninitialized(n);
        device::binary_scalar<T>(op, a.device_memptr(), s, out.device_memptr(), n, scalar_left);
        return out;
    }
    forgeCol<T> out(n);
    const T* pa = a.host_data();
    T* po = out.memptr();
#pragma omp parallel for if (parallel_elementwise(n, 2 * sizeof(T)))
    for (long long i = 0; i < static_cast<long long>(n); ++i)
        po[i] = scalar_left ? apply_op<T>(op, s, pa[i]) : apply_op<T>(op, pa[i], s);
    return out;
}

// Unary map into a new vector of element type TO, on host or device.
template <typename TO, typename T, typename HostFn, typename DevFn>
forgeCol<TO> unary(const forgeCol<T>& a, HostFn host_fn, DevFn dev_fn) {
    const uword n = a.n_elem;
    if (a.on_gpu()) {
        forgeCol<TO> out = forgeCol<TO>::device_uninitialized(n);
        dev_fn(a.device_memptr(), out.device_memptr(), n);
        return out;
    }
    forgeCol<TO> out(n);
    const T* pa = a.host_data();
    TO* po = out.memptr();
#pragma omp parallel for if (parallel_elementwise(n, sizeof(T) + sizeof(TO)))
    for (long long i = 0; i < static_cast<long long>(n); ++i) po[i] = host_fn(pa[i]);
    return out;
}

template <typename T>
FORGE_HD T accum_cast(typename accum<T>::type v) {
    return T(v);
}

}  // namespace detail

template <typename T>
forgeCol<T>& forgeCol<T>::inplace(device::BinOp op, const forgeCol& b, const char* what) {
    detail::require_same_place_and_size(*this, b, what);
    if (onGpu_) {
        device::binary<T, T, T>(op, device_memptr(), b.device_memptr(), device_memptr(), n_elem);
        return *this;
    }
    T* pa = host_.data();
    const T* pb = b.host_data();
#pragma omp parallel for if (detail::parallel_elementwise(n_elem, 3 * sizeof(T)))
    for (long long i = 0; i < static_cast<long long>(n_elem); ++i) pa[i] = detail::apply_op<T>(op, pa[i], pb[i]);
    return *this;
}

template <typename T>
forgeCol<T>& forgeCol<T>::inplace_scalar(device::BinOp op, T s) {
    if (onGpu_) {
        device::binary_scalar<T>(op, device_memptr(), s, device_memptr(), n_elem, false);
        return *this;
    }
    for (auto& v : host_) v = detail::apply_op<T>(op, v, s);
    return *this;
}

// ---------------------------------------------------------------- vector (op) vector
template <typename T>
forgeCol<T> operator+(const forgeCol<T>& a, const forgeCol<T>& b) {
    return detail::binary<T>(device::BinOp::Add, a, b);
}
template <typename T>
forgeCol<T> operator-(const forgeCol<T>& a, const forgeCol<T>& b) {
    return detail::binary<T>(device::BinOp::Sub, a, b);
}
// Element-wise product and quotient (Armadillo's % and /).
template <typename T>
forgeCol<T> operator%(const forgeCol<T>& a, const forgeCol<T>& b) {
    return detail::binary<T>(device::BinOp::Mul, a, b);
}
template <typename T>
forgeCol<T> operator/(const forgeCol<T>& a, const forgeCol<T>& b) {
    return detail::binary<T>(device::BinOp::Div, a, b);
}
// Complex vector times real vector (weights, masks) and the reverse.
template <typename R>
forgeCol<forgeComplex<R>> operator%(const forgeCol<forgeComplex<R>>& a, const forgeCol<R>& b) {
    return detail::binary<forgeComplex<R>>(device::BinOp::Mul, a, b);
}
template <typename R>
forgeCol<forgeComplex<R>> operator%(const forgeCol<R>& a, const forgeCol<forgeComplex<R>>& b) {
    return detail::binary<forgeComplex<R>>(device::BinOp::Mul, a, b);
}
// For two columns * is element-wise too (the same as %): there is no matrix product of two columns.
template <typename T>
forgeCol<T> operator*(const forgeCol<T>& a, const forgeCol<T>& b) {
    return a % b;
}
template <typename R>
forgeCol<forgeComplex<R>> operator*(const forgeCol<forgeComplex<R>>& a, const forgeCol<R>& b) {
    return a % b;
}
template <typename R>
forgeCol<forgeComplex<R>> operator*(const forgeCol<R>& a, const forgeCol<forgeComplex<R>>& b) {
    return a % b;
}
template <typename R>
forgeCol<forgeComplex<R>> operator/(const forgeCol<forgeComplex<R>>& a, const forgeCol<R>& b) {
    return detail::binary<forgeComplex<R>>(device::BinOp::Div, a, b);
}

// ---------------------------------------------------------------- vector (op) scalar
template <typename T>
forgeCol<T> operator+(const forgeCol<T>& a, T s) {
    return detail::binary_scalar(device::BinOp::Add, a, s, false);
}
template <typename T>
forgeCol<T> operator+(T s, const forgeCol<T>& a) {
    return detail::binary_scalar(device::BinOp::Add, a, s, true);
}
template <typename T>
forgeCol<T> operator-(const forgeCol<T>& a, T s) {
    return detail::binary_scalar(device::BinOp::Sub, a, s, false);
}
template <typename T>
forgeCol<T> operator-(T s, const forgeCol<T>& a) {
    return detail::binary_scalar(device::BinOp::Sub, a, s, true);
}
template <typename T>
forgeCol<T> operator*(const forgeCol<T>& a, T s) {
    return detail::binary_scalar(device::BinOp::Mul, a, s, false);
}
template <typename T>
forgeCol<T> operator*(T s, const forgeCol<T>& a) {
    return detail::binary_scalar(device::BinOp::Mul, a, s, true);
}
template <typename T>
forgeCol<T> operator/(const forgeCol<T>& a, T s) {
    return detail::binary_scalar(device::BinOp::Div, a, s, false);
}
template <typename T>
forgeCol<T> operator/(T s, const forgeCol<T>& a) {
    return detail::binary_scalar(device::BinOp::Div, a, s, true);
}
// Real scalars with complex vectors (x * 0.5f).
template <typename R, typename = std::enable_if_t<std::is_floating_point<R>::value>>
forgeCol<forgeComplex<R>> operator*(const forgeCol<forgeComplex<R>>& a, R s) {
    return a * forgeComplex<R>(s);
}
template <typename R, typename = std::enable_if_t<std::is_floating_point<R>::value>>
forgeCol<forgeComplex<R>> operator*(R s, const forgeCol<forgeComplex<R>>& a) {
    return a * forgeComplex<R>(s);
}
template <typename R, typename = std::enable_if_t<std::is_floating_point<R>::value>>
forgeCol<forgeComplex<R>> operator/(const forgeCol<forgeComplex<R>>& a, R s) {
    return a / forgeComplex<R>(s);
}
template <typename T>
forgeCol<T> operator-(const forgeCol<T>& a) {
    return a * T(-1);
}

// ---------------------------------------------------------------- updates
// y = a*x + y (BLAS axpy), on the host or on the GPU.
template <typename T>
void axpy(T a, const forgeCol<T>& x, forgeCol<T>& y) {
    detail::require_same_place_and_size(x, y, "axpy");
    if (y.on_gpu()) {
        device::axpby(a, x.device_memptr(), T(1), y.device_memptr(), y.n_elem);
        return;
    }
    const T* px = x.host_data();
    T* py = y.memptr();
#pragma omp parallel for if (detail::parallel_elementwise(y.n_elem, 3 * sizeof(T)))
    for (long long i = 0; i < static_cast<long long>(y.n_elem); ++i) py[i] += a * px[i];
}
// y = a*x + b*y
template <typename T>
void axpby(T a, const forgeCol<T>& x, T b, forgeCol<T>& y) {
    detail::require_same_place_and_size(x, y, "axpby");
    if (y.on_gpu()) {
        device::axpby(a, x.device_memptr(), b, y.device_memptr(), y.n_elem);
        return;
    }
    const T* px = x.host_data();
    T* py = y.memptr();
#pragma omp parallel for if (detail::parallel_elementwise(y.n_elem, 3 * sizeof(T)))
    for (long long i = 0; i < static_cast<long long>(y.n_elem); ++i) py[i] = a * px[i] + b * py[i];
}

// ---------------------------------------------------------------- element-wise functions
template <typename T>
forgeCol<T> conj(const forgeCol<T>& a) {
    return detail::unary<T>(
        a, [](T v) { return forge::conj(v); }, [](const T* in, T* out, uword n) { device::conj(in, out, n); });
}
template <typename T>
forgeCol<real_t<T>> real(const forgeCol<T>& a) {
    return detail::unary<real_t<T>>(
        a, [](T v) { return forge::real(v); },
        [](const T* in, real_t<T>* out, uword n) { device::real_part(in, out, n); });
}
template <typename T>
forgeCol<real_t<T>> imag(const forgeCol<T>& a) {
    return detail::unary<real_t<T>>(
        a, [](T v) { return forge::imag(v); },
        [](const T* in, real_t<T>* out, uword n) { device::imag_part(in, out, n); });
}
template <typename T>
forgeCol<real_t<T>> abs(const forgeCol<T>& a) {
    return detail::unary<real_t<T>>(
        a,
        [](T v) {
            using std::abs;
            using forge::abs;
            return real_t<T>(abs(v));
        },
        [](const T* in, real_t<T>* out, uword n) { device::abs(in, out, n); });
}

// ---------------------------------------------------------------- reductions (double accumulation)
// In fixed blocks added in a fixed order (detail::fixed_order_sum): the same bits on any number of threads.
// sum_i conj(a_i) b_i
template <typename T>
T cdot(const forgeCol<T>& a, const forgeCol<T>& b) {
    detail::require_same_place_and_size(a, b, "cdot");
    if (a.on_gpu()) return device::dot(a.device_memptr(), b.device_memptr(), a.n_elem);
    using A = typename detail::accum<T>::type;
    const T* pa = a.host_data();
    const T* pb = b.host_data();
    const std::complex<double> s =
        detail::fixed_order_sum<std::complex<double>>(a.n_elem, detail::parallel_elementwise(a.n_elem, 2 * sizeof(T)),
                                                      [pa, pb](std::size_t i, std::complex<double>& acc) {
                                                          const A v = A(forge::conj(pa[i])) * A(pb[i]);
                                                          acc += std::complex<double>(forge::real(v), forge::imag(v));
                                                      });
    const double re = s.real(), im = s.imag();
    if constexpr (is_forge_complex<T>::value) {
        return T(real_t<T>(re), real_t<T>(im));
    } else {
        return T(re);
    }
}
// Euclidean norm ||a||_2
template <typename T>
real_t<T> norm(const forgeCol<T>& a) {
    if (a.on_gpu()) return real_t<T>(std::sqrt(double(device::norm2_squared(a.device_memptr(), a.n_elem))));
    const T* pa = a.host_data();
    const double s = detail::fixed_order_sum<double>(a.n_elem, detail::parallel_elementwise(a.n_elem, sizeof(T)),
                                                     [pa](std::size_t i, double& acc) {
                                                         const double r = forge::real(pa[i]), m = forge::imag(pa[i]);
                                                         acc += r * r + m * m;
                                                     });
    return real_t<T>(std::sqrt(s));
}
template <typename T>
T sum(const forgeCol<T>& a) {
    if (a.on_gpu()) return device::sum(a.device_memptr(), a.n_elem);
    const T* pa = a.host_data();
    const std::complex<double> s =
        detail::fixed_order_sum<std::complex<double>>(a.n_elem, detail::parallel_elementwise(a.n_elem, sizeof(T)),
                                                      [pa](std::size_t i, std::complex<double>& acc) {
                                                          acc += std::complex<double>(forge::real(pa[i]),
                                                                                      forge::imag(pa[i]));
                                                      });
    const double re = s.real(), im = s.imag();
    if constexpr (is_forge_complex<T>::value) {
        return T(real_t<T>(re), real_t<T>(im));
    } else {
        return T(re);
    }
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::forgeCol;
using forge::forgeComplex;
#endif
