// Tests of forgeCol's arithmetic on the host path against Armadillo computed in the test: element-wise operations,
// reductions (in float64), axpy, and the threaded loops above the element-wise threshold. Fresh random inputs every
// run (replay a failure with FORGE_TEST_SEED=<seed printed in the failure message>).
#include <cmath>
#include <complex>

#include "forge/Core/Parallel.h"

#include "CoreTypesTestHelpers.h"

using namespace core_test;

// ============================================================================ forgeCol element-wise
TEMPLATE_TEST_CASE("forgeCol: complex vector-vector arithmetic matches Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using FV = forgeCol<forgeComplex<R>>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const arma::Col<std::complex<R>> a = forge_test::complex_normal<R>(n);
        const arma::Col<std::complex<R>> b = cx_divisor<R>(n);
        const FV fa(a), fb(b);
        CHECK(rel(fa + fb, arma::Col<std::complex<R>>(a + b)) < tol);
        CHECK(rel(fa - fb, arma::Col<std::complex<R>>(a - b)) < tol);
        CHECK(rel(fa % fb, arma::Col<std::complex<R>>(a % b)) < tol);
        CHECK(rel(fa * fb, arma::Col<std::complex<R>>(a % b)) < tol);  // * of two columns is element-wise
        CHECK(rel(fa / fb, arma::Col<std::complex<R>>(a / b)) < tol);
        CHECK(rel(-fa, arma::Col<std::complex<R>>(-a)) < tol);

        FV c = fa;
        c += fb;
        CHECK(rel(c, arma::Col<std::complex<R>>(a + b)) < tol);
        c = fa;
        c -= fb;
        CHECK(rel(c, arma::Col<std::complex<R>>(a - b)) < tol);
        c = fa;
        c %= fb;
        CHECK(rel(c, arma::Col<std::complex<R>>(a % b)) < tol);
        c = fa;
        c /= fb;
        CHECK(rel(c, arma::Col<std::complex<R>>(a / b)) < tol);
        // The operands are untouched by the binary operators.
        CHECK(rel(fa, a) == 0.0);
        CHECK(rel(fb, b) == 0.0);
    }
}

TEMPLATE_TEST_CASE("forgeCol: complex vector-scalar arithmetic matches Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using C = std::complex<R>;
    using FC = forgeComplex<R>;
    using FV = forgeCol<FC>;
    using AV = arma::Col<C>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV a = cx_divisor<R>(n);
        const C s = cx_scalar<R>();
        const R r = re_divisor<R>(1)[0];
        const FV fa(a);
        const FC fs(s);
        // complex scalar, both sides
        CHECK(rel(fa + fs, AV(a + s)) < tol);
        CHECK(rel(fs + fa, AV(s + a)) < tol);
        CHECK(rel(fa - fs, AV(a - s)) < tol);
        CHECK(rel(fs - fa, AV(s - a)) < tol);
        CHECK(rel(fa * fs, AV(a * s)) < tol);
        CHECK(rel(fs * fa, AV(s * a)) < tol);
        CHECK(rel(fa / fs, AV(a / s)) < tol);
        CHECK(rel(fs / fa, AV(s / a)) < tol);
        // real scalar with a complex vector
        CHECK(rel(fa * r, AV(a * r)) < tol);
        CHECK(rel(r * fa, AV(r * a)) < tol);
        CHECK(rel(fa / r, AV(a / r)) < tol);
        // in place
        FV c = fa;
        c *= fs;
        CHECK(rel(c, AV(a * s)) < tol);
        c = fa;
        c /= fs;
        CHECK(rel(c, AV(a / s)) < tol);
        c = fa;
        c += fs;
        CHECK(rel(c, AV(a + s)) < tol);
        c = fa;
        c -= fs;
        CHECK(rel(c, AV(a - s)) < tol);
    }
}

TEMPLATE_TEST_CASE("forgeCol: real vector arithmetic matches Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using AV = arma::Col<R>;
    using FV = forgeCol<R>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV a = forge_test::uniform<R>(n, -3.0, 3.0);
        const AV b = re_divisor<R>(n);
        const R s = re_divisor<R>(1)[0];
        const FV fa(a), fb(b);
        CHECK(rel(fa + fb, AV(a + b)) < tol);
        CHECK(rel(fa - fb, AV(a - b)) < tol);
        CHECK(rel(fa % fb, AV(a % b)) < tol);
        CHECK(rel(fa / fb, AV(a / b)) < tol);
        CHECK(rel(fa + s, AV(a + s)) < tol);
        CHECK(rel(s + fa, AV(s + a)) < tol);
        CHECK(rel(fa - s, AV(a - s)) < tol);
        CHECK(rel(s - fa, AV(s - a)) < tol);
        CHECK(rel(fa * s, AV(a * s)) < tol);
        CHECK(rel(s * fa, AV(s * a)) < tol);
        CHECK(rel(fa / s, AV(a / s)) < tol);
        CHECK(rel(s / fb, AV(s / b)) < tol);
        CHECK(rel(-fa, AV(-a)) < tol);
    }
}

TEMPLATE_TEST_CASE("forgeCol: complex times real vectors matches Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using AV = arma::Col<std::complex<R>>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV a = forge_test::complex_normal<R>(n);
        const arma::Col<R> w = re_divisor<R>(n);
        const AV wc = arma::conv_to<AV>::from(w);
        const forgeCol<forgeComplex<R>> fa(a);
        const forgeCol<R> fw(w);
        forgeCol<forgeComplex<R>> p1 = fa % fw;
        forgeCol<forgeComplex<R>> p2 = fw % fa;
        forgeCol<forgeComplex<R>> q = fa / fw;
        CHECK(rel(p1, AV(a % wc)) < tol);
        CHECK(rel(p2, AV(wc % a)) < tol);
        CHECK(rel(fa * fw, AV(a % wc)) < tol);
        CHECK(rel(fw * fa, AV(wc % a)) < tol);
        CHECK(rel(q, AV(a / wc)) < tol);
    }
}

TEMPLATE_TEST_CASE("forgeCol: conj real imag abs match Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using AV = arma::Col<std::complex<R>>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV a = forge_test::complex_normal<R>(n);
        const forgeCol<forgeComplex<R>> fa(a);
        CHECK(rel(forge::conj(fa), AV(arma::conj(a))) == 0.0);
        CHECK(rel(forge::real(fa), arma::Col<R>(arma::real(a))) == 0.0);
        CHECK(rel(forge::imag(fa), arma::Col<R>(arma::imag(a))) == 0.0);
        CHECK(rel(forge::abs(fa), arma::Col<R>(arma::abs(a))) < tol);
        // Real vectors: conj is the identity, imag is zero, abs drops the sign.
        const arma::Col<R> v = forge_test::uniform<R>(n, -2.0, 2.0);
        const forgeCol<R> fv(v);
        CHECK(rel(forge::conj(fv), v) == 0.0);
        CHECK(rel(forge::real(fv), v) == 0.0);
        CHECK(arma::norm(forge::imag(fv).to_arma()) == 0.0);
        CHECK(rel(forge::abs(fv), arma::Col<R>(arma::abs(v))) == 0.0);
    }
}

TEMPLATE_TEST_CASE("forgeCol: norm cdot sum match float64 Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using AV = arma::Col<std::complex<R>>;
    FORGE_INFO_SEED();
    // forge accumulates in double and rounds the result once to R.
    const double tol = std::is_same<R, float>::value ? 1e-6 : 1e-13;
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV a = forge_test::complex_normal<R>(n);
        const AV b = forge_test::complex_normal<R>(n);
        const arma::cx_vec ad = arma::conv_to<arma::cx_vec>::from(a);
        const arma::cx_vec bd = arma::conv_to<arma::cx_vec>::from(b);
        const forgeCol<forgeComplex<R>> fa(a), fb(b);

        const double nref = arma::norm(ad);
        CHECK(std::abs(double(forge::norm(fa)) - nref) <= tol * nref);

        const std::complex<double> dref = arma::cdot(ad, bd);  // sum conj(a) b
        const forgeComplex<R> d = forge::cdot(fa, fb);
        CHECK(std::abs(std::complex<double>(d.re, d.im) - dref) <= tol * nref * arma::norm(bd));
        // conjugate symmetry: cdot(b, a) = conj(cdot(a, b))
        const forgeComplex<R> d2 = forge::cdot(fb, fa);
        CHECK(std::abs(std::complex<double>(d2.re, d2.im) - std::conj(dref)) <= tol * nref * arma::norm(bd));

        const std::complex<double> sref = arma::accu(ad);
        const forgeComplex<R> s = forge::sum(fa);
        CHECK(std::abs(std::complex<double>(s.re, s.im) - sref) <= tol * std::sqrt(double(n)) * nref);

        // Real vectors.
        const arma::Col<R> v = forge_test::uniform<R>(n, -1.0, 1.0);
        const arma::Col<R> w = forge_test::uniform<R>(n, -1.0, 1.0);
        const arma::vec vd = arma::conv_to<arma::vec>::from(v), wd = arma::conv_to<arma::vec>::from(w);
        const forgeCol<R> fv(v), fw(w);
        CHECK(std::abs(double(forge::norm(fv)) - arma::norm(vd)) <= tol * arma::norm(vd));
        CHECK(std::abs(double(forge::cdot(fv, fw)) - arma::dot(vd, wd)) <= tol * arma::norm(vd) * arma::norm(wd));
        CHECK(std::abs(double(forge::sum(fv)) - arma::accu(vd)) <= tol * std::sqrt(double(n)) * arma::norm(vd));
    }
}

TEMPLATE_TEST_CASE("forgeCol: axpy and axpby match Armadillo", "[core][forgeCol]", float, double) {
    using R = TestType;
    using C = std::complex<R>;
    using AV = arma::Col<C>;
    using FV = forgeCol<forgeComplex<R>>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    for (uword n : kSizes) {
        INFO("n = " << n);
        const AV x = forge_test::complex_normal<R>(n);
        const AV y = forge_test::complex_normal<R>(n);
        const C a = cx_scalar<R>(), b = cx_scalar<R>();
        const FV fx(x);
        FV fy(y);
        forge::axpy(forgeComplex<R>(a), fx, fy);
        CHECK(rel(fy, AV(a * x + y)) < tol);
        FV fy2(y);
        forge::axpby(forgeComplex<R>(a), fx, forgeComplex<R>(b), fy2);
        CHECK(rel(fy2, AV(a * x + b * y)) < tol);
        CHECK(rel(fx, x) == 0.0);  // x is read only

        const arma::Col<R> xr = forge_test::uniform<R>(n, -1.0, 1.0), yr = forge_test::uniform<R>(n, -1.0, 1.0);
        const R ar = re_divisor<R>(1)[0];
        forgeCol<R> fyr(yr);
        forge::axpy(ar, forgeCol<R>(xr), fyr);
        CHECK(rel(fyr, arma::Col<R>(ar * xr + yr)) < tol);
    }
}

TEST_CASE("parallel_elementwise: forks exactly from kParallelElementwiseBytes touched", "[core][threads]") {
    using forge::detail::kParallelElementwiseBytes;
    using forge::detail::parallel_elementwise;
    const uword cf = sizeof(forgeComplex<float>), cd = sizeof(forgeComplex<double>);
    // c = a % b on complex float touches 3 x 8 bytes per element: the boundary is where 24 n reaches the
    // threshold (rounded up to whole elements).
    const uword first = (kParallelElementwiseBytes + 3 * cf - 1) / (3 * cf);
    CHECK_FALSE(parallel_elementwise(first - 1, 3 * cf));
    CHECK(parallel_elementwise(first, 3 * cf));
    CHECK((first - 1) * 3 * cf < kParallelElementwiseBytes);
    CHECK(first * 3 * cf >= kParallelElementwiseBytes);
    // An exact multiple: n bytes_per_element == threshold forks, one element less does not.
    CHECK(parallel_elementwise(kParallelElementwiseBytes / 8, 8));
    CHECK_FALSE(parallel_elementwise(kParallelElementwiseBytes / 8 - 1, 8));
    // The product that ran 12-16 ms on two threads of a loaded 2-core machine stays on one thread.
    CHECK_FALSE(parallel_elementwise(65536, 3 * cf));
    CHECK_FALSE(parallel_elementwise(65536, 3 * cd));
    // Larger elements reach the threshold sooner; no elements or no bytes never fork; no overflow.
    CHECK(parallel_elementwise(first, 3 * cd));
    CHECK_FALSE(parallel_elementwise(0, 3 * cf));
    CHECK_FALSE(parallel_elementwise(first, 0));
    CHECK(parallel_elementwise(std::numeric_limits<uword>::max(), std::numeric_limits<uword>::max()));
    CHECK(parallel_elementwise(std::numeric_limits<uword>::max(), 1));
}

TEST_CASE("forgeCol: loops above the element-wise threshold (threaded) match Armadillo", "[core][forgeCol][threads]") {
    FORGE_INFO_SEED();
    using C = std::complex<float>;
    using FV = forgeCol<forgeComplex<float>>;
    // Just above the threshold for a complex float a op b (3 x 8 bytes per element).
    const uword n = forge::detail::kParallelElementwiseBytes / (3 * sizeof(forgeComplex<float>)) + 123;
    REQUIRE(forge::detail::parallel_elementwise(n, 3 * sizeof(forgeComplex<float>)));
    const arma::Col<C> a = forge_test::complex_normal<float>(n), b = cx_divisor<float>(n);
    const FV fa(a), fb(b);
    const double tol = elem_tol<float>();
    CHECK(rel(fa + fb, arma::Col<C>(a + b)) < tol);
    CHECK(rel(fa % fb, arma::Col<C>(a % b)) < tol);
    CHECK(rel(fa / fb, arma::Col<C>(a / b)) < tol);
    CHECK(rel(fa * forgeComplex<float>(2.f, -1.f), arma::Col<C>(a * C(2.f, -1.f))) < tol);
    CHECK(rel(forge::conj(fa), arma::Col<C>(arma::conj(a))) < tol);
    FV acc(a);
    acc += fb;
    CHECK(rel(acc, arma::Col<C>(a + b)) < tol);
    FV y(b);
    forge::axpy(forgeComplex<float>(0.5f, 0.f), fa, y);
    CHECK(rel(y, arma::Col<C>(b + 0.5f * a)) < tol);
    const arma::cx_vec ad = arma::conv_to<arma::cx_vec>::from(a), bd = arma::conv_to<arma::cx_vec>::from(b);
    const std::complex<double> dot = arma::cdot(ad, bd);
    const forgeComplex<float> fdot = forge::cdot(fa, fb);
    CHECK(std::abs(std::complex<double>(fdot.re, fdot.im) - dot) / std::abs(dot) < 1e-5);
    CHECK(double(forge::norm(fa)) == Approx(arma::norm(ad)).epsilon(1e-6));
}
