#pragma once
// What the core-type tests share (CoreTypesTests.cpp, ForgeComplexTests.cpp, ForgeColArithmeticTests.cpp): tolerances
// of element-wise results, safe divisors, test lengths and the relative error of a forge vector against Armadillo.
#include <complex>
#include <type_traits>

#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Core/forgeCol.h"
#include "forge/Core/forgeComplex.h"
#include "forge/Core/forgeMat.h"

namespace core_test {

using forge::uword;

// Relative tolerance for element-wise results computed in T (a few ulps, norm-wise).
template <typename T>
double elem_tol() {
    return std::is_same<T, float>::value ? 2e-6 : 1e-14;
}

// A complex vector whose entries stay away from 0 (used as divisors).
template <typename R>
arma::Col<std::complex<R>> cx_divisor(uword n) {
    arma::Col<std::complex<R>> v = forge_test::complex_normal<R>(n);
    for (auto& z : v) {
        const R m = std::abs(z);
        z = (m > R(0)) ? z * (R(0.5) + m) / m : std::complex<R>(R(1), R(0));
    }
    return v;
}
// A real vector with entries in +-[0.5, 2] (random sign): a safe divisor.
template <typename R>
arma::Col<R> re_divisor(uword n) {
    arma::Col<R> mag = forge_test::uniform<R>(n, 0.5, 2.0);
    arma::Col<R> sgn = forge_test::uniform<R>(n, -1.0, 1.0);
    for (uword i = 0; i < n; ++i) mag[i] = sgn[i] < 0 ? -mag[i] : mag[i];
    return mag;
}
template <typename R>
std::complex<R> cx_scalar() {
    arma::Col<std::complex<R>> s = cx_divisor<R>(1);
    return s[0];
}

// Lengths: trivial, odd, and mid-sized (below the element-wise threshold of forge/Core/Parallel.h: one
// thread; the threaded loops have their own test below).
inline const uword kSizes[] = {1, 37, (uword(1) << 15) + 123};

template <typename FC, typename AC>
double rel(const FC& f, const AC& a) {
    return forge_test::rel_error(f.to_arma(), a);
}

}  // namespace core_test
