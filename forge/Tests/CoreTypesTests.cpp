// Tests of forge's core types on the host path: forgeCol and forgeMat conversions and value semantics, size and
// range errors, size arithmetic, residency without a GPU and device views, each against Armadillo computed
// independently in the test (arithmetic: ForgeColArithmeticTests.cpp; forgeComplex: ForgeComplexTests.cpp). Fresh
// random inputs every run (replay a failure with FORGE_TEST_SEED=<seed printed in the failure message>).
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <armadillo>
#include <catch2/catch.hpp>

#include "CoreTypesTestHelpers.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/forgeCol.h"
#include "forge/Core/forgeComplex.h"
#include "forge/Core/forgeMat.h"

// forge::uword is arma::uword: sizes pass between forge and Armadillo without conversions, and a file with
// both using-directives finds one `uword` (QuickExampleTests.cpp compiles the documented example that way).
static_assert(std::is_same<forge::uword, arma::uword>::value, "forge::uword must be arma::uword");

using namespace core_test;

// ============================================================================ conversions and semantics
TEMPLATE_TEST_CASE("forgeCol and forgeMat: Armadillo conversions both ways are exact", "[core][forgeCol][forgeMat]",
                   float, double) {
    using R = TestType;
    using AV = arma::Col<std::complex<R>>;
    FORGE_INFO_SEED();
    const AV a = forge_test::complex_normal<R>(53);
    const forgeCol<forgeComplex<R>> f(a);
    REQUIRE(f.n_elem == a.n_elem);
    CHECK_FALSE(f.on_gpu());
    for (uword i = 0; i < a.n_elem; ++i) {
        CHECK(f(i).re == a[i].real());
        CHECK(f[i].im == a[i].imag());
        CHECK(std::complex<R>(f.at(i)) == a[i]);
    }
    CHECK(arma::approx_equal(f.to_arma(), a, "absdiff", 0.0));
    const AV back = static_cast<AV>(f);
    CHECK(arma::approx_equal(back, a, "absdiff", 0.0));
    // memptr() is contiguous interleaved data.
    CHECK(std::memcmp(f.memptr(), a.memptr(), a.n_elem * sizeof(std::complex<R>)) == 0);

    // forgeMat: column-major, (r, c) matches arma, col/set_col/as_col agree.
    const uword rows = 7, cols = 5;
    arma::Mat<std::complex<R>> m(rows, cols);
    {
        AV flat = forge_test::complex_normal<R>(rows * cols);
        std::memcpy(m.memptr(), flat.memptr(), flat.n_elem * sizeof(std::complex<R>));
    }
    forgeMat<forgeComplex<R>> fm(m);
    REQUIRE(fm.n_rows == rows);
    REQUIRE(fm.n_cols == cols);
    REQUIRE(fm.n_elem == rows * cols);
    CHECK_FALSE(fm.on_gpu());
    for (uword c = 0; c < cols; ++c)
        for (uword r = 0; r < rows; ++r) {
            CHECK(std::complex<R>(fm(r, c)) == m(r, c));
            CHECK(std::complex<R>(fm.at(r, c)) == m(r, c));
            CHECK(std::complex<R>(fm.as_col()[r + c * rows]) == m(r, c));
        }
    CHECK(arma::approx_equal(fm.to_arma(), m, "absdiff", 0.0));
    CHECK(arma::approx_equal(fm.col(3).to_arma(), AV(m.col(3)), "absdiff", 0.0));
    const AV newcol = forge_test::complex_normal<R>(rows);
    fm.set_col(2, forgeCol<forgeComplex<R>>(newcol));
    m.col(2) = newcol;
    CHECK(arma::approx_equal(fm.to_arma(), m, "absdiff", 0.0));
    // Writes through (r, c) land where arma puts them.
    fm(4, 1) = forgeComplex<R>(R(3), R(-2));
    m(4, 1) = std::complex<R>(R(3), R(-2));
    CHECK(arma::approx_equal(fm.to_arma(), m, "absdiff", 0.0));
}

TEMPLATE_TEST_CASE("forgeMat: element-wise arithmetic matches Armadillo", "[core][forgeMat]", float, double) {
    using R = TestType;
    using AM = arma::Mat<std::complex<R>>;
    FORGE_INFO_SEED();
    const double tol = elem_tol<R>();
    const uword rows = 9, cols = 4;
    auto rand_mat = [&] {
        AM m(rows, cols);
        auto v = forge_test::complex_normal<R>(rows * cols);
        std::memcpy(m.memptr(), v.memptr(), v.n_elem * sizeof(std::complex<R>));
        return m;
    };
    const AM a = rand_mat(), b = rand_mat();
    const std::complex<R> s = cx_scalar<R>();
    const forgeMat<forgeComplex<R>> fa(a), fb(b);
    auto mrel = [](const forgeMat<forgeComplex<R>>& f, const AM& ref) {
        return forge_test::rel_error(arma::vectorise(f.to_arma()).eval(), arma::vectorise(ref).eval());
    };
    CHECK(mrel(fa + fb, AM(a + b)) < tol);
    CHECK(mrel(fa - fb, AM(a - b)) < tol);
    CHECK(mrel(fa % fb, AM(a % b)) < tol);
    CHECK(mrel(fa * forgeComplex<R>(s), AM(a * s)) < tol);
    CHECK(mrel(forgeComplex<R>(s) * fa, AM(s * a)) < tol);
    forgeMat<forgeComplex<R>> c = fa;
    c /= forgeComplex<R>(s);
    CHECK(mrel(c, AM(a / s)) < tol);
    forgeMat<forgeComplex<R>> z(rows, cols);
    z.ones();
    CHECK(mrel(z, AM(rows, cols, arma::fill::ones)) == 0.0);
    z.zeros();
    CHECK(arma::norm(arma::vectorise(z.to_arma())) == 0.0);
}

TEST_CASE("forgeCol: copies are deep and moves transfer ownership", "[core][forgeCol]") {
    using FV = forgeCol<forgeComplex<float>>;
    FORGE_INFO_SEED();
    const arma::cx_fvec a = forge_test::complex_normal<float>(64);
    FV src(a);

    FV copy(src);  // copy construction
    copy(0) = forgeComplex<float>(100.f, -100.f);
    CHECK(std::complex<float>(src(0)) == a[0]);
    CHECK(copy.memptr() != src.memptr());
    CHECK(rel(src, a) == 0.0);

    FV assigned(3);  // copy assignment replaces size and contents
    assigned = src;
    REQUIRE(assigned.n_elem == src.n_elem);
    CHECK(rel(assigned, a) == 0.0);
    assigned(5) = forgeComplex<float>(7.f, 7.f);
    CHECK(std::complex<float>(src(5)) == a[5]);

    FV& self = assigned;  // self assignment is harmless
    assigned = self;
    CHECK(assigned.n_elem == a.n_elem);

    const forgeComplex<float>* data = src.memptr();
    FV moved(std::move(src));  // move construction steals the buffer
    CHECK(moved.memptr() == data);
    CHECK(rel(moved, a) == 0.0);
    CHECK(src.n_elem == 0);  // NOLINT(bugprone-use-after-move): documented moved-from state
    CHECK(src.is_empty());
    CHECK_FALSE(src.on_gpu());

    FV target(10);
    target = std::move(moved);  // move assignment
    CHECK(target.memptr() == data);
    CHECK(target.n_elem == a.n_elem);
    CHECK(moved.n_elem == 0);  // NOLINT(bugprone-use-after-move)
    CHECK(rel(target, a) == 0.0);

    // A moved-from vector is reusable.
    src.set_size(4);
    src.fill(forgeComplex<float>(1.f, 2.f));
    CHECK(src.n_elem == 4);
    CHECK(std::complex<float>(src(3)) == std::complex<float>(1.f, 2.f));

    // forgeMat copies are deep too.
    forgeMat<float> m(3, 2, 1.f);
    forgeMat<float> mc = m;
    mc(1, 1) = 5.f;
    CHECK(m(1, 1) == 1.f);
    forgeMat<float> mm = std::move(mc);
    CHECK(mm(1, 1) == 5.f);
}

TEST_CASE("forgeCol and forgeMat: size mismatches throw forge::invalid_argument", "[core][errors]") {
    using FV = forgeCol<forgeComplex<double>>;
    FORGE_INFO_SEED();
    const FV a(forge_test::complex_normal<double>(5));
    FV b(forge_test::complex_normal<double>(6));
    const forgeCol<double> w(6, 1.0);
    const forgeComplex<double> one(1.0);
    CHECK_THROWS_AS(a + b, forge::invalid_argument);
    CHECK_THROWS_AS(a - b, forge::invalid_argument);
    CHECK_THROWS_AS(a % b, forge::invalid_argument);
    CHECK_THROWS_AS(a / b, forge::invalid_argument);
    CHECK_THROWS_AS(a % w, forge::invalid_argument);
    CHECK_THROWS_AS(w % a, forge::invalid_argument);
    CHECK_THROWS_AS(a / w, forge::invalid_argument);
    CHECK_THROWS_AS(b += a, forge::invalid_argument);
    CHECK_THROWS_AS(b -= a, forge::invalid_argument);
    CHECK_THROWS_AS(b %= a, forge::invalid_argument);
    CHECK_THROWS_AS(b /= a, forge::invalid_argument);
    CHECK_THROWS_AS(forge::cdot(a, b), forge::invalid_argument);
    CHECK_THROWS_AS(forge::axpy(one, a, b), forge::invalid_argument);
    CHECK_THROWS_AS(forge::axpby(one, a, one, b), forge::invalid_argument);
    // Also catchable as std::invalid_argument, and the message gives both lengths.
    CHECK_THROWS_AS(a + b, std::invalid_argument);
    CHECK_THROWS_WITH(a + b, Catch::Contains("5") && Catch::Contains("6"));
    // b was not modified by the failed in-place operations.
    CHECK(b.n_elem == 6);

    forgeMat<float> m1(3, 4), m2(4, 3), m3(3, 4);
    CHECK_THROWS_AS(m1 + m2, forge::invalid_argument);
    CHECK_THROWS_AS(m1 - m2, forge::invalid_argument);
    CHECK_THROWS_AS(m1 % m2, forge::invalid_argument);
    CHECK_THROWS_WITH(m1 + m2, Catch::Contains("3x4") && Catch::Contains("4x3"));
    CHECK_NOTHROW(m1 + m3);
    CHECK_THROWS_AS(m1.set_col(0, forgeCol<float>(4)), forge::invalid_argument);
    CHECK_THROWS_WITH(m1.set_col(0, forgeCol<float>(4)), Catch::Contains("n_rows"));
}

TEST_CASE("forgeCol and forgeMat: out-of-range at() throws std::out_of_range", "[core][errors]") {
    forgeCol<forgeComplex<float>> v(8);
    const forgeCol<float> cv(3, 2.f);
    CHECK_NOTHROW(v.at(7));
    CHECK_THROWS_AS(v.at(8), std::out_of_range);
    CHECK_THROWS_AS(cv.at(3), std::out_of_range);
    CHECK_THROWS_WITH(v.at(8), Catch::Contains("8"));
    CHECK(cv.at(2) == 2.f);
    forgeCol<float> empty;
    CHECK_THROWS_AS(empty.at(0), std::out_of_range);

    forgeMat<double> m(4, 3);
    CHECK_NOTHROW(m.at(3, 2));
    CHECK_THROWS_AS(m.at(4, 0), std::out_of_range);
    CHECK_THROWS_AS(m.at(0, 3), std::out_of_range);
    CHECK_THROWS_AS(m.col(3), std::out_of_range);
}

TEST_CASE("forgeCol: without a usable GPU put_on_gpu throws forge::cuda_error and data stays on the host",
          "[core][residency]") {
    FORGE_INFO_SEED();
    const arma::cx_fvec a = forge_test::complex_normal<float>(32);
    forgeCol<forgeComplex<float>> v(a);
    CHECK_FALSE(v.on_gpu());
    CHECK_NOTHROW(v.get_from_gpu());  // no-op on the host
    CHECK_FALSE(v.on_gpu());
    CHECK_THROWS_AS(v.device_memptr(), forge::residency_error);

    if (!forge::device::built_with_cuda()) {
        CHECK_FALSE(forge::device::available());
        CHECK_THROWS_AS(v.put_on_gpu(), forge::cuda_error);
        CHECK_THROWS_WITH(v.put_on_gpu(), Catch::Contains("without CUDA"));
        forgeMat<float> m(2, 2);
        CHECK_THROWS_AS(m.put_on_gpu(), forge::cuda_error);
        CHECK_FALSE(m.on_gpu());
    } else if (!forge::device::available()) {
        // CUDA build on a machine without a device (CI): a clear cuda_error too.
        CHECK_THROWS_AS(v.put_on_gpu(), forge::cuda_error);
    } else {
        // A GPU is present: the round trip is exact and the host is locked while the data is on the GPU.
        v.put_on_gpu();
        CHECK(v.on_gpu());
        CHECK_THROWS_AS(v.memptr()[0] = forgeComplex<float>(0.f), forge::residency_error);
        v.get_from_gpu();
        CHECK_FALSE(v.on_gpu());
    }
    // Whatever happened, the host data is intact and usable.
    CHECK_FALSE(v.on_gpu());
    CHECK(rel(v, a) == 0.0);
    CHECK(rel(v + v, arma::cx_fvec(a + a)) < 1e-6);
}

// ============================================================================ size arithmetic
#include "forge/Core/Validation.h"

TEST_CASE("checked_product: products that exceed the limit throw, naming each factor and the limit",
          "[core][errors][sizes]") {
    using forge::checked_product;
    const uword big = (uword(1) << 58) + 1, max = std::numeric_limits<uword>::max();
    // 64 * (2^58 + 1) wraps to 64 in uword arithmetic.
    CHECK(uword(64) * big == 64);
    CHECK_THROWS_AS(checked_product("Op", {{"numX", 64}, {"numY", big}, {"numZ", 1}}), forge::invalid_argument);
    CHECK_THROWS_WITH(checked_product("Op", {{"numX", 64}, {"numY", big}, {"numZ", 1}}),
                      Catch::Contains("Op: numX * numY * numZ = 64 * 288230376151711745 * 1 exceeds " +
                                      std::to_string(max)));
    // Exact products up to and at the limit pass; one more throws and names the limit and why.
    CHECK(checked_product("Op", {{"a", uword(1) << 32}, {"b", (uword(1) << 32) - 1}}) ==
          (uword(1) << 32) * ((uword(1) << 32) - 1));
    CHECK(checked_product("Op", {{"a", max}, {"b", 1}}) == max);
    CHECK_THROWS(checked_product("Op", {{"a", uword(1) << 32}, {"b", uword(1) << 32}}));
    CHECK(checked_product("Op", {{"n", 100}, {"m", 21}}, 2100, "test limit") == 2100);
    CHECK_THROWS_WITH(checked_product("Op", {{"n", 100}, {"m", 22}}, 2100, "test limit"),
                      Catch::Contains("n * m = 100 * 22 exceeds 2100 (test limit)"));
    CHECK_THROWS_WITH(checked_product("Op", {{"n1", 2101}}, 2100, "test limit"),
                      Catch::Contains("Op: n1 = 2101 exceeds 2100 (test limit)"));
    // A zero factor makes the product 0 whatever the others are.
    CHECK(checked_product("Op", {{"a", max}, {"b", max}, {"c", 0}}) == 0);
}

TEST_CASE("forgeMat and forgeCol: sizes whose byte or element count wraps throw instead of allocating less",
          "[core][errors][sizes]") {
    // 2^32 x 2^32 wraps to 0 elements.
    CHECK_THROWS_AS(forgeMat<float>(uword(1) << 32, uword(1) << 32), forge::invalid_argument);
    CHECK_THROWS_WITH(forgeMat<float>(uword(1) << 32, uword(1) << 32), Catch::Contains("rows * cols"));
    CHECK_THROWS_AS(forgeMat<double>(uword(1) << 40, uword(1) << 30, 1.0), forge::invalid_argument);
    // 2^62 complex floats are 2^65 bytes: the byte count wraps to 0.
    CHECK_THROWS_AS(forgeCol<forgeComplex<float>>::device_uninitialized(uword(1) << 62), forge::invalid_argument);
    CHECK_THROWS_WITH(forgeCol<forgeComplex<float>>::device_uninitialized(uword(1) << 62),
                      Catch::Contains("sizeof(T)"));
    // An empty matrix of many columns is still fine, and its columns are empty.
    forgeMat<float> m(0, 5);
    CHECK(m.n_elem == 0);
}

TEST_CASE("forgeMat: columns of a matrix with no rows are empty, not out of range", "[core][forgeMat]") {
    forgeMat<float> m(0, 5);
    CHECK(m.col(4).n_elem == 0);
    CHECK_NOTHROW(m.set_col(2, forgeCol<float>()));
    CHECK_THROWS_AS(m.col(5), std::out_of_range);
    CHECK_THROWS_WITH(m.col(5), Catch::Contains("column 5 out of range for 0x5"));
}

TEST_CASE("forgeCol: an empty vector goes to the GPU under the same rules as a full one", "[core][residency]") {
    forgeCol<forgeComplex<float>> e;
    forgeCol<double> z(0);
    forgeMat<float> m(0, 3);
    if (!forge::device::available()) {
        // No device (CPU build, or CUDA build on a machine without a GPU): the same cuda_error as for data.
        const char* why = forge::device::built_with_cuda() ? "no CUDA device" : "without CUDA";
        CHECK_THROWS_AS(e.put_on_gpu(), forge::cuda_error);
        CHECK_THROWS_WITH(e.put_on_gpu(), Catch::Contains(why));
        CHECK_THROWS_WITH(z.put_on_gpu(), Catch::Contains(why));
        CHECK_THROWS_WITH(m.put_on_gpu(), Catch::Contains(why));
        CHECK_THROWS_WITH(forgeCol<float>::device_uninitialized(0), Catch::Contains(why));
        CHECK_FALSE(e.on_gpu());
        CHECK_FALSE(z.on_gpu());
        CHECK_FALSE(m.on_gpu());
    } else {
        e.put_on_gpu();
        m.put_on_gpu();
        CHECK(e.on_gpu());
        CHECK(m.on_gpu());
        const forgeCol<forgeComplex<float>> s = e + e;  // runs on the device, stays there
        CHECK(s.on_gpu());
        CHECK(s.n_elem == 0);
        e.get_from_gpu();
        CHECK_FALSE(e.on_gpu());
        CHECK(e.n_elem == 0);
    }
}

// ---------------------------------------------------------------- device views (host-side properties)
TEST_CASE("forgeCol::device_view: a GPU-resident view that refuses host access and bad pointers", "[core][forgeCol]") {
    // Any non-null address serves: without a device nothing reads through it here.
    alignas(8) float storage[4] = {1, 2, 3, 4};
    forgeCol<float> v = forgeCol<float>::device_view(storage, 4);
    CHECK(v.on_gpu());
    CHECK(v.is_view());
    CHECK(v.n_elem == 4);
    CHECK(static_cast<const forgeCol<float>&>(v).device_memptr() == storage);
    CHECK_THROWS_AS(v.memptr(), forge::residency_error);
    CHECK_THROWS_AS(v.to_arma(), forge::residency_error);
    CHECK_THROWS_AS(v.set_size(2), forge::residency_error);

    // Moving hands the view on; the moved-from vector is an empty host vector.
    forgeCol<float> w = std::move(v);
    CHECK(w.is_view());
    CHECK(!v.is_view());
    CHECK(!v.on_gpu());
    CHECK(v.n_elem == 0);

    // Assigning an owning vector rebinds the view without touching the viewed memory.
    w = forgeCol<float>(2, 7.0f);
    CHECK(!w.is_view());
    CHECK(!w.on_gpu());
    CHECK(storage[0] == 1.0f);
    CHECK(storage[3] == 4.0f);

    CHECK_THROWS_AS(forgeCol<float>::device_view(nullptr, 3), forge::invalid_argument);
    forgeCol<float> empty = forgeCol<float>::device_view(nullptr, 0);
    CHECK(empty.on_gpu());
    CHECK(empty.n_elem == 0);
}
