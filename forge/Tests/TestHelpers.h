#pragma once
// Shared helpers for forge's tests: fresh random inputs (a new seed every run, printed on failure)
// and relative errors. References are computed in the tests themselves, independently of forge.
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <random>

#include <armadillo>
#include <catch2/catch.hpp>

#include "forge/Recon/Metrics.h"

namespace forge_test {

// One seed per test process, from the clock, reported so a failure can be replayed with FORGE_TEST_SEED.
inline std::uint64_t test_seed() {
    static const std::uint64_t seed = [] {
        if (const char* s = std::getenv("FORGE_TEST_SEED")) return std::uint64_t(std::strtoull(s, nullptr, 10));
        return std::uint64_t(std::random_device{}()) ^ (std::uint64_t(std::random_device{}()) << 32);
    }();
    return seed;
}
inline std::mt19937_64& rng() {
    static thread_local std::mt19937_64 g(test_seed());
    return g;
}
template <typename T>
arma::Col<T> uniform(arma::uword n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    arma::Col<T> v(n);
    for (auto& x : v) x = T(d(rng()));
    return v;
}
template <typename T>
arma::Col<std::complex<T>> complex_normal(arma::uword n) {
    std::normal_distribution<double> d(0.0, 1.0);
    arma::Col<std::complex<T>> v(n);
    for (auto& x : v) x = std::complex<T>(T(d(rng())), T(d(rng())));
    return v;
}
// ||a - b|| / ||b|| computed in double: forge's NRMSE (forge/Recon/Metrics.h).
template <typename A, typename B>
double rel_error(const A& a, const B& b) {
    return forge::recon::nrmse(a, b);
}

}  // namespace forge_test

#define FORGE_INFO_SEED() INFO("FORGE_TEST_SEED=" << forge_test::test_seed())
