// Tests of forgeComplex against std::complex computed in the test: layout and scalar arithmetic. Fresh random
// inputs every run (replay a failure with FORGE_TEST_SEED=<seed printed in the failure message>).
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "CoreTypesTestHelpers.h"

using namespace core_test;

// ============================================================================ forgeComplex
TEMPLATE_TEST_CASE("forgeComplex: layout matches std::complex and interleaved pairs", "[core][complex]", float,
                   double) {
    using R = TestType;
    FORGE_INFO_SEED();
    STATIC_REQUIRE(sizeof(forgeComplex<R>) == 2 * sizeof(R));
    STATIC_REQUIRE(alignof(forgeComplex<R>) == alignof(R));
    STATIC_REQUIRE(std::is_standard_layout<forgeComplex<R>>::value);
    STATIC_REQUIRE(std::is_trivially_copyable<forgeComplex<R>>::value);

    arma::Col<std::complex<R>> a = forge_test::complex_normal<R>(16);
    // Memory of an arma complex vector read as forgeComplex and as interleaved R pairs.
    const auto* fc = reinterpret_cast<const forgeComplex<R>*>(a.memptr());
    const auto* pairs = reinterpret_cast<const R*>(a.memptr());
    for (uword i = 0; i < a.n_elem; ++i) {
        CHECK(fc[i].re == a[i].real());
        CHECK(fc[i].im == a[i].imag());
        CHECK(pairs[2 * i] == a[i].real());
        CHECK(pairs[2 * i + 1] == a[i].imag());
        // Conversions both ways are exact.
        forgeComplex<R> f(a[i]);
        std::complex<R> back = f;
        CHECK(back == a[i]);
    }
}

TEMPLATE_TEST_CASE("forgeComplex: scalar arithmetic matches std::complex", "[core][complex]", float, double) {
    using R = TestType;
    using C = std::complex<R>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    auto close = [tol](forgeComplex<R> f, C ref) {
        const double err = std::abs(std::complex<double>(f.re, f.im) - std::complex<double>(ref));
        return err <= tol * std::max(1.0, double(std::abs(ref)));
    };
    for (int rep = 0; rep < 200; ++rep) {
        const C a = forge_test::complex_normal<R>(1)[0];
        const C b = cx_scalar<R>();
        const R s = re_divisor<R>(1)[0];
        const forgeComplex<R> fa(a), fb(b);
        INFO("a = " << a << ", b = " << b << ", s = " << s);
        CHECK(close(fa + fb, a + b));
        CHECK(close(fa - fb, a - b));
        CHECK(close(fa * fb, a * b));
        CHECK(close(fa / fb, a / b));
        CHECK(close(-fa, -a));
        CHECK(close(fa * s, a * s));
        CHECK(close(s * fa, s * a));
        CHECK(close(fa / s, a / s));
        CHECK(close(fa + s, a + s));
        CHECK(close(s - fa, s - a));
        CHECK(close(s / fb, s / b));
        forgeComplex<R> acc = fa;
        acc *= fb;
        CHECK(close(acc, a * b));
        acc = fa;
        acc /= fb;
        CHECK(close(acc, a / b));
        CHECK(close(forge::conj(fa), std::conj(a)));
        CHECK(forge::real(fa) == a.real());
        CHECK(forge::imag(fa) == a.imag());
        CHECK(forge::norm(fa) == Approx(std::norm(a)).epsilon(tol));
        CHECK(forge::abs(fa) == Approx(std::abs(a)).epsilon(tol));
    }
    // Smith's division stays finite where the naive formula would overflow |b|^2.
    const R big = std::numeric_limits<R>::max() / R(4);
    const forgeComplex<R> q = forgeComplex<R>(big, big) / forgeComplex<R>(big, big);
    CHECK(q.re == Approx(1.0).epsilon(tol));
    CHECK(std::abs(q.im) < tol);
}
