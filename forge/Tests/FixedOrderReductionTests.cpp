// Host reductions and small matrix products whose result does not depend on the number of OpenMP threads: the
// forgeCol reductions (cdot, norm, sum), the penalties' sums (value and curvature) and the fixed-order products give
// the same bits with 1, 2 and 7 threads, on sizes that span several reduction blocks and fork; so do the Toeplitz
// kernels' pair data, whose row blocks go to the threads whole. Inputs come from a
// seeded std::mt19937 (arma::randn's stream itself depends on the thread count).
#include <omp.h>

#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "TestHelpers.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/detail/FixedOrderProduct.h"
#include "forge/Operators/toeplitz/detail/KernelSources.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"

namespace {

template <typename T>
arma::Col<std::complex<T>> seeded_complex(arma::uword n, unsigned seed) {
    std::mt19937 g(seed);
    std::normal_distribution<T> d;
    arma::Col<std::complex<T>> v(n);
    for (auto& x : v) x = std::complex<T>(d(g), d(g));
    return v;
}

template <typename T>
bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// f() with 1, 2 and 7 threads: every result equals the first, bit for bit.
template <typename R>
void check_thread_independent(const std::function<R()>& f, const char* what) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const R one = f();
    for (int threads : {2, 7}) {
        omp_set_num_threads(threads);
        const R r = f();
        INFO(what << " with " << threads << " threads");
        CHECK(same_bits(r, one));
    }
    omp_set_num_threads(saved);
}

}  // namespace

TEST_CASE("fixed_order_sum: the same bits on 1, 2 and 7 threads, the serial sum within one block",
          "[threads][reduction]") {
    std::mt19937 g(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(5 * forge::detail::kReductionBlock + 123);
    for (double& x : v) x = u(g) * std::exp(20 * u(g));  // wide range: the order of the additions shows
    auto sum = [&](std::size_t n) {
        return forge::detail::fixed_order_sum<double>(n, true, [&](std::size_t i, double& acc) { acc += v[i]; });
    };
    check_thread_independent<double>([&] { return sum(v.size()); }, "fixed_order_sum");
    double serial = 0;
    for (std::size_t i = 0; i < forge::detail::kReductionBlock; ++i) serial += v[i];
    CHECK(same_bits(sum(forge::detail::kReductionBlock), serial));
    CHECK(sum(0) == 0.0);
}

TEST_CASE("forgeCol cdot, norm and sum: the same bits on 1, 2 and 7 threads where they fork", "[threads][reduction]") {
    // Over 2^21 complex floats: the size at which the element-wise reductions use threads (parallel_elementwise).
    const arma::uword n = (arma::uword(1) << 22) + 4099;
    REQUIRE(forge::detail::parallel_elementwise(n, 2 * sizeof(forge::forgeComplex<float>)));
    const forge::forgeCol<forge::forgeComplex<float>> a(seeded_complex<float>(n, 1)), b(seeded_complex<float>(n, 2));
    check_thread_independent<forge::forgeComplex<float>>([&] { return forge::cdot(a, b); }, "cdot");
    check_thread_independent<float>([&] { return forge::norm(a); }, "norm");
    check_thread_independent<forge::forgeComplex<float>>([&] { return forge::sum(a); }, "sum");
    // and they are the sums: against arma in double
    const arma::cx_vec ad = arma::conv_to<arma::cx_vec>::from(a.to_arma()),
                       bd = arma::conv_to<arma::cx_vec>::from(b.to_arma());
    const std::complex<double> ref = arma::cdot(ad, bd);
    const forge::forgeComplex<float> c = forge::cdot(a, b);
    CHECK(std::abs(std::complex<double>(c.real(), c.imag()) - ref) <= 1e-6 * arma::norm(ad) * arma::norm(bd));
    CHECK(std::abs(double(forge::norm(a)) - arma::norm(ad)) <= 1e-6 * arma::norm(ad));
}

TEST_CASE("Penalty values and curvatures: the same bits on 1, 2 and 7 threads on a 256 x 256 image",
          "[threads][reduction]") {
    const forge::uword N = 256;  // 65536 pixels: two reduction blocks, above the penalties' fork threshold
    const forge::ImageGrid grid(N, N, 1);
    const forge::forgeCol<forge::forgeComplex<float>> x(seeded_complex<float>(N * N, 3)),
        d(seeded_complex<float>(N * N, 4));
    const forge::QuadPenalty<float> quad(grid, 0.5f);
    const forge::TVPenalty<float> tv(grid, 0.5f, 0.1f);
    check_thread_independent<float>([&] { return quad.penalty(x); }, "QuadPenalty::penalty");
    check_thread_independent<float>([&] { return quad.denom(d, x); }, "QuadPenalty::denom");
    check_thread_independent<float>([&] { return tv.penalty(x); }, "TVPenalty::penalty");
    check_thread_independent<float>([&] { return tv.denom(d, x); }, "TVPenalty::denom");
    const forge::L1Penalty<float> l1(grid, 0.25f);
    const forge::ExactTVPenalty<float> tvx(grid, 0.25f);
    check_thread_independent<double>([&] { return l1.value(x); }, "L1Penalty::value");
    check_thread_independent<double>([&] { return tvx.value(x); }, "ExactTVPenalty::value");
}

TEST_CASE("Fixed-order products: the same bits on 1, 2 and 7 threads, and the products", "[threads][reduction]") {
    const arma::cx_mat A = arma::reshape(seeded_complex<double>(300 * 9, 5), 300, 9),
                       B = arma::reshape(seeded_complex<double>(9 * 400, 6), 9, 400),
                       C = arma::reshape(seeded_complex<double>(300 * 11, 7), 300, 11);
    auto bits_of = [](const arma::cx_mat& M) { return std::vector<std::complex<double>>(M.begin(), M.end()); };
    using V = std::vector<std::complex<double>>;
    const auto same = [&](const std::function<arma::cx_mat()>& f, const char* what) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        const V one = bits_of(f());
        for (int threads : {2, 7}) {
            omp_set_num_threads(threads);
            const V r = bits_of(f());
            INFO(what << " with " << threads << " threads");
            CHECK(std::memcmp(r.data(), one.data(), one.size() * sizeof(one[0])) == 0);
        }
        omp_set_num_threads(saved);
    };
    same([&] { return forge::detail::fixed_order_product(A, B); }, "A B");
    same([&] { return forge::detail::fixed_order_transpose_product(A, C, true); }, "A^H C");
    same([&] { return forge::detail::fixed_order_transpose_product(A, C, false); }, "A^T C");
    const arma::cx_mat AB = A * B, AHC = A.t() * C, ATC = A.st() * C;
    CHECK(arma::norm(forge::detail::fixed_order_product(A, B) - AB, "fro") <= 1e-13 * arma::norm(AB, "fro"));
    CHECK(arma::norm(forge::detail::fixed_order_transpose_product(A, C, true) - AHC, "fro") <=
          1e-13 * arma::norm(AHC, "fro"));
    CHECK(arma::norm(forge::detail::fixed_order_transpose_product(A, C, false) - ATC, "fro") <=
          1e-13 * arma::norm(ATC, "fro"));
    const arma::cx_fmat Af = arma::conv_to<arma::cx_fmat>::from(A), Bf = arma::conv_to<arma::cx_fmat>::from(B);
    const arma::cx_fmat ABf = forge::detail::fixed_order_product(Af, Bf);
    CHECK(arma::norm(arma::conv_to<arma::cx_mat>::from(ABf) - AB, "fro") <= 1e-5 * arma::norm(AB, "fro"));
    CHECK_THROWS_AS(forge::detail::fixed_order_product(A, C), forge::invalid_argument);
}

TEST_CASE("Toeplitz pair data: the same bits on 1, 2 and 7 threads over several row blocks, and its rows the "
          "weighted pair products",
          "[threads][reduction][Toeplitz]") {
    // 3 blocks of 2048 distinct rows and a partial one; column 3 repeats column 0, so that pairs (0, 0) and (0, 3)
    // have equal products and the compression drops a direction.
    const arma::uword n1 = 3 * 2048 + 517, S = 4;
    arma::cx_fmat a = arma::conv_to<arma::cx_fmat>::from(arma::reshape(seeded_complex<double>(n1 * S, 8), n1, S));
    a.col(3) = a.col(0);
    std::mt19937 g(9);
    std::uniform_real_distribution<double> u(0.2, 1.5);
    arma::vec w(n1);
    for (double& x : w) x = u(g);
    for (const double relTol : {0.0, 1e-5}) {
        INFO("relTol " << relTol);
        auto rows = [&] { return forge::toeplitz::pair_data(a, w, relTol).full(); };
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        const arma::cx_mat one = rows();
        for (int threads : {2, 7}) {
            omp_set_num_threads(threads);
            const arma::cx_mat r = rows();
            INFO(threads << " threads");
            REQUIRE(r.n_rows == one.n_rows);
            REQUIRE(r.n_cols == one.n_cols);
            CHECK(std::memcmp(r.memptr(), one.memptr(), one.n_elem * sizeof(one[0])) == 0);
        }
        omp_set_num_threads(saved);
        // D: the pairs' weighted products in double, brute force; B = D (no compression) or D V, B^H B = V^H D^H D V
        const forge::toeplitz::PairData pd = forge::toeplitz::pair_data(a, w, relTol);
        const arma::uword np = pd.pairs.size() / 2;
        arma::cx_mat D(n1, np);
        for (arma::uword p = 0; p < np; ++p)
            for (arma::uword j = 0; j < n1; ++j)
                D(j, p) = w[j] * std::conj(std::complex<double>(a(j, pd.pairs[2 * p]))) *
                          std::complex<double>(a(j, pd.pairs[2 * p + 1]));
        CHECK(np == S * (S + 1) / 2);
        if (relTol == 0) {
            CHECK(arma::norm(one - D, "fro") <= 1e-12 * arma::norm(D, "fro"));
        } else {
            CHECK(one.n_cols < np);  // the repeated column's direction dropped
            const arma::cx_mat G = pd.V.t() * (D.t() * D) * pd.V;
            CHECK(arma::norm(one.t() * one - G, "fro") <= 1e-10 * arma::norm(G, "fro"));
        }
    }
}
