#pragma once
// forgeComplex<T>: two T {re, im}, layout-compatible with std::complex<T> and with the
// interleaved [re0, im0, re1, im1, ...] arrays the CUDA kernels read.
#include <cmath>
#include <complex>
#include <type_traits>

#include "forge/Core/Config.h"

namespace forge {

template <typename T>
struct forgeComplex {
    static_assert(std::is_floating_point<T>::value, "forgeComplex<T> needs a floating-point T");
    using value_type = T;
    T re;
    T im;

    FORGE_HD constexpr forgeComplex() : re(0), im(0) {}
    FORGE_HD constexpr forgeComplex(T r) : re(r), im(0) {}
    FORGE_HD constexpr forgeComplex(T r, T i) : re(r), im(i) {}
    template <typename U, typename = std::enable_if_t<!std::is_same<U, T>::value>>
    FORGE_HD constexpr explicit forgeComplex(const forgeComplex<U>& o) : re(T(o.re)), im(T(o.im)) {}
    forgeComplex(const std::complex<T>& c) : re(c.real()), im(c.imag()) {}
    operator std::complex<T>() const { return {re, im}; }

    FORGE_HD T real() const { return re; }
    FORGE_HD T imag() const { return im; }

    FORGE_HD forgeComplex& operator+=(const forgeComplex& b) {
        re += b.re;
        im += b.im;
        return *this;
    }
    FORGE_HD forgeComplex& operator-=(const forgeComplex& b) {
        re -= b.re;
        im -= b.im;
        return *this;
    }
    FORGE_HD forgeComplex& operator*=(const forgeComplex& b) {
        *this = *this * b;
        return *this;
    }
    FORGE_HD forgeComplex& operator/=(const forgeComplex& b) {
        *this = *this / b;
        return *this;
    }
    FORGE_HD forgeComplex& operator*=(T s) {
        re *= s;
        im *= s;
        return *this;
    }
    FORGE_HD forgeComplex& operator/=(T s) {
        re /= s;
        im /= s;
        return *this;
    }

    FORGE_HD friend forgeComplex operator+(forgeComplex a, forgeComplex b) { return {a.re + b.re, a.im + b.im}; }
    FORGE_HD friend forgeComplex operator-(forgeComplex a, forgeComplex b) { return {a.re - b.re, a.im - b.im}; }
    FORGE_HD friend forgeComplex operator-(forgeComplex a) { return {-a.re, -a.im}; }
    FORGE_HD friend forgeComplex operator*(forgeComplex a, forgeComplex b) {
        return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    }
    FORGE_HD friend forgeComplex operator/(forgeComplex a, forgeComplex b) {
        // Smith's algorithm: no overflow for large |b|, no loss for badly scaled parts.
        if (fabs(b.re) >= fabs(b.im)) {
            T r = b.im / b.re, d = b.re + b.im * r;
            return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
        }
        T r = b.re / b.im, d = b.re * r + b.im;
        return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
    }
    FORGE_HD friend forgeComplex operator*(forgeComplex a, T s) { return {a.re * s, a.im * s}; }
    FORGE_HD friend forgeComplex operator*(T s, forgeComplex a) { return {a.re * s, a.im * s}; }
    FORGE_HD friend forgeComplex operator/(forgeComplex a, T s) { return {a.re / s, a.im / s}; }
    FORGE_HD friend forgeComplex operator+(forgeComplex a, T s) { return {a.re + s, a.im}; }
    FORGE_HD friend forgeComplex operator+(T s, forgeComplex a) { return {a.re + s, a.im}; }
    FORGE_HD friend forgeComplex operator-(forgeComplex a, T s) { return {a.re - s, a.im}; }
    FORGE_HD friend forgeComplex operator-(T s, forgeComplex a) { return {s - a.re, -a.im}; }
    FORGE_HD friend forgeComplex operator/(T s, forgeComplex a) { return forgeComplex(s) / a; }
    FORGE_HD friend bool operator==(forgeComplex a, forgeComplex b) { return a.re == b.re && a.im == b.im; }
    FORGE_HD friend bool operator!=(forgeComplex a, forgeComplex b) { return !(a == b); }
};

static_assert(sizeof(forgeComplex<float>) == sizeof(std::complex<float>), "layout");
static_assert(sizeof(forgeComplex<double>) == sizeof(std::complex<double>), "layout");
static_assert(std::is_trivially_copyable<forgeComplex<float>>::value, "device copies need trivial copy");

template <typename T>
FORGE_HD forgeComplex<T> conj(forgeComplex<T> a) {
    return {a.re, -a.im};
}
template <typename T>
FORGE_HD T real(forgeComplex<T> a) {
    return a.re;
}
template <typename T>
FORGE_HD T imag(forgeComplex<T> a) {
    return a.im;
}
template <typename T>
FORGE_HD T norm(forgeComplex<T> a) {
    return a.re * a.re + a.im * a.im;
}  // |a|^2, as std::norm
template <typename T>
FORGE_HD T abs(forgeComplex<T> a) {
    return hypot(a.re, a.im);
}

// Scalar traits shared by forgeCol and the device helpers.
template <typename T>
struct is_forge_complex : std::false_type {};
template <typename T>
struct is_forge_complex<forgeComplex<T>> : std::true_type {};
template <typename T>
struct real_of {
    using type = T;
};
template <typename T>
struct real_of<forgeComplex<T>> {
    using type = T;
};
template <typename T>
struct real_of<std::complex<T>> {
    using type = T;
};
template <typename T>
using real_t = typename real_of<T>::type;

// Real-valued conj/real/imag/abs so generic code works on real and complex elements.
template <typename T, typename = std::enable_if_t<std::is_floating_point<T>::value>>
FORGE_HD T conj(T a) {
    return a;
}
template <typename T, typename = std::enable_if_t<std::is_floating_point<T>::value>>
FORGE_HD T real(T a) {
    return a;
}
template <typename T, typename = std::enable_if_t<std::is_floating_point<T>::value>>
FORGE_HD T imag(T) {
    return T(0);
}

}  // namespace forge
