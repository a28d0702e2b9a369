// Tests of the exact-DFT CPU loops behind Gdft and GdftR2 in each instruction-set build this CPU runs
// (forge::cpu_kernel_isas()): against float64 brute-force sums written here, with sizes that are not
// multiples of the vector width, sinc arguments far beyond one, batches, repeatability across thread
// counts, and the accuracy of a large problem (131072 samples x 16384 pixels).
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <armadillo>
#include <catch2/catch.hpp>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/dft/CpuKernelIsa.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

namespace {

using forge::uword;
using cxd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

template <typename T1>
double tol() {
    return std::is_same<T1, float>::value ? 1e-5 : 1e-12;
}

double sinc_ref(double x) { return x == 0.0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

// A random problem on an nx x ny x nz grid; gradient maps uniform in [-gmax, gmax] cycles/s per voxel
// (gmax = 0: plain Gdft). Everything in double for the reference, the same values in T1 for forge.
struct Problem {
    uword nx, ny, nz;
    arma::vec kx, ky, kz, t, ix, iy, iz, FM, gx, gy, gz;
    uword n1() const { return kx.n_elem; }
    uword n2() const { return ix.n_elem; }
};

Problem make_problem(uword nx, uword ny, uword nz, uword n1, double gmax, double tmax = 10e-3) {
    Problem p{nx, ny, nz, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    const uword n2 = nx * ny * nz;
    // Values representable in float, so that the float operator and the float64 reference see the same input.
    auto f = [](arma::vec v) { return arma::conv_to<arma::vec>::from(arma::conv_to<arma::fvec>::from(v)); };
    p.kx = f(forge_test::uniform<double>(n1, -0.5 * nx, 0.5 * nx));
    p.ky = f(forge_test::uniform<double>(n1, -0.5 * ny, 0.5 * ny));
    p.kz = nz > 1 ? f(forge_test::uniform<double>(n1, -0.5 * nz, 0.5 * nz)) : arma::vec(n1, arma::fill::zeros);
    p.t = f(forge_test::uniform<double>(n1, 0.0, tmax));
    p.ix.set_size(n2);
    p.iy.set_size(n2);
    p.iz.set_size(n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                p.ix[i] = double(float((double(x) - double(nx / 2)) / double(nx)));
                p.iy[i] = double(float((double(y) - double(ny / 2)) / double(ny)));
                p.iz[i] = double(float((double(z) - double(nz / 2)) / double(nz)));
            }
    p.FM = f(forge_test::uniform<double>(n2, -2 * kPi * 80, 2 * kPi * 80));
    if (gmax > 0) {
        p.gx = f(forge_test::uniform<double>(n2, -gmax, gmax));
        p.gy = f(forge_test::uniform<double>(n2, -gmax, gmax));
        // A 2D grid has no z gradient: its sinc argument kz/numZ + 0 t is exactly 0 for every pair.
        p.gz = nz > 1 ? f(forge_test::uniform<double>(n2, -gmax, gmax)) : arma::vec(n2, arma::fill::zeros);
    }
    return p;
}

cxd entry(const Problem& p, uword j, uword k) {
    const double ph = 2 * kPi * (p.kx[j] * p.ix[k] + p.ky[j] * p.iy[k] + p.kz[j] * p.iz[k]) + p.FM[k] * p.t[j];
    cxd e = std::polar(1.0, -ph);
    if (p.gx.n_elem) {
        const double tj = p.t[j];
        e *= sinc_ref(p.kx[j] / double(p.nx) + p.gx[k] * tj) * sinc_ref(p.ky[j] / double(p.ny) + p.gy[k] * tj) *
             sinc_ref(p.kz[j] / double(p.nz) + p.gz[k] * tj);
    }
    return e;
}

// Float64 forward for the samples 'rows' and adjoint for the pixels 'cols'.
arma::cx_vec ref_forward(const Problem& p, const arma::cx_vec& x, const std::vector<uword>& rows) {
    arma::cx_vec y(rows.size(), arma::fill::zeros);
    for (size_t r = 0; r < rows.size(); ++r)
        for (uword k = 0; k < p.n2(); ++k) y[r] += entry(p, rows[r], k) * x[k];
    return y;
}
arma::cx_vec ref_adjoint(const Problem& p, const arma::cx_vec& y, const std::vector<uword>& cols) {
    arma::cx_vec x(cols.size(), arma::fill::zeros);
    for (size_t c = 0; c < cols.size(); ++c)
        for (uword j = 0; j < p.n1(); ++j) x[c] += std::conj(entry(p, j, cols[c])) * y[j];
    return x;
}
std::vector<uword> all(uword n) {
    std::vector<uword> v(n);
    for (uword i = 0; i < n; ++i) v[i] = i;
    return v;
}
std::vector<uword> spread(uword n, uword m) {
    std::vector<uword> v;
    for (uword i = 0; i < m; ++i) v.push_back(i * n / m);
    return v;
}

template <typename T1>
std::unique_ptr<forge::DftOperator<T1>> make_op(const Problem& p) {
    auto c = [](const arma::vec& v) { return arma::conv_to<arma::Col<T1>>::from(v); };
    if (p.gx.n_elem) {
        return std::make_unique<forge::GdftR2<T1>>(p.n1(), p.n2(), c(p.kx), c(p.ky), c(p.kz), c(p.ix), c(p.iy), c(p.iz),
                                                   c(p.FM), c(p.t), c(p.gx), c(p.gy), c(p.gz), p.nx, p.ny, p.nz);
    }
    return std::make_unique<forge::Gdft<T1>>(p.n1(), p.n2(), c(p.kx), c(p.ky), c(p.kz), c(p.ix), c(p.iy), c(p.iz),
                                             c(p.FM), c(p.t));
}

template <typename T1>
using CxVec = arma::Col<std::complex<T1>>;

template <typename T1>
arma::cx_vec d(const CxVec<T1>& v) {
    return arma::conv_to<arma::cx_vec>::from(v);
}

// Forward and adjoint of p, one vector and a batch of three, against float64.
template <typename T1>
void check_against_float64(const Problem& p) {
    const auto G = make_op<T1>(p);
    const CxVec<T1> x = forge_test::complex_normal<T1>(p.n2());
    const CxVec<T1> y = forge_test::complex_normal<T1>(p.n1());
    const double ef = forge_test::rel_error(d<T1>(*G * x), ref_forward(p, d<T1>(x), all(p.n1())));
    const double ea = forge_test::rel_error(d<T1>(*G / y), ref_adjoint(p, d<T1>(y), all(p.n2())));
    INFO("forward rel. error " << ef << ", adjoint rel. error " << ea);
    CHECK(ef < tol<T1>());
    CHECK(ea < tol<T1>());
    // A batch of three (one pass of two vectors, one of one): each equals its own reference.
    const CxVec<T1> x2 = forge_test::complex_normal<T1>(p.n2()), x3 = forge_test::complex_normal<T1>(p.n2());
    const CxVec<T1> xb = arma::join_cols(arma::join_cols(x, x2), x3);
    const CxVec<T1> fb = G->forward_batch(forgeCol<forgeComplex<T1>>(xb), 3).to_arma();
    REQUIRE(fb.n_elem == 3 * p.n1());
    CHECK(forge_test::rel_error(d<T1>(CxVec<T1>(fb.subvec(p.n1(), 2 * p.n1() - 1))),
                                ref_forward(p, d<T1>(x2), all(p.n1()))) < tol<T1>());
    CHECK(forge_test::rel_error(d<T1>(CxVec<T1>(fb.tail(p.n1()))), ref_forward(p, d<T1>(x3), all(p.n1()))) < tol<T1>());
}

// Restores the instruction set in use when a test that switches it ends.
struct IsaGuard {
    std::string saved = forge::cpu_kernel_isa();
    ~IsaGuard() { forge::set_cpu_kernel_isa(saved); }
};

}  // namespace

TEST_CASE("CPU DFT loops: the instruction set in use is one of those listed, others are refused", "[gdft][isa]") {
    const std::vector<std::string> isas = forge::cpu_kernel_isas();
    REQUIRE_FALSE(isas.empty());
    const std::string cur = forge::cpu_kernel_isa();
    CHECK(std::find(isas.begin(), isas.end(), cur) != isas.end());
    const int bits = forge::cpu_kernel_vector_bits();
    CHECK((bits == 128 || bits == 256 || bits == 512));
    CHECK_THROWS_AS(forge::set_cpu_kernel_isa("no-such-isa"), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::set_cpu_kernel_isa("no-such-isa"),
                      Catch::Contains("no-such-isa") && Catch::Contains(isas.front()));
    CHECK(forge::cpu_kernel_isa() == cur);  // a refused name changes nothing
}

TEMPLATE_TEST_CASE("CPU DFT loops: every instruction-set build matches float64 brute force", "[gdft][gdftr2][isa]",
                   float, double) {
    using T1 = TestType;
    FORGE_INFO_SEED();
    IsaGuard guard;
    // Pixel and sample counts that are no multiple of any vector width or of the inner padding.
    const Problem plain = make_problem(7, 9, 3, 301, 0.0);
    // Gradients up to 400 cycles/s per voxel over 10 ms: sinc arguments up to 4.5, across even and odd
    // integers (where the sinc vanishes and changes sign).
    const Problem wide = make_problem(7, 9, 3, 301, 400.0);
    // 2D: the z sinc argument is exactly 0 for every pair.
    const Problem flat = make_problem(13, 11, 1, 257, 150.0);
    for (const std::string& isa : forge::cpu_kernel_isas()) {
        forge::set_cpu_kernel_isa(isa);
        REQUIRE(forge::cpu_kernel_isa() == isa);
        INFO("instruction set " << isa);
        check_against_float64<T1>(plain);
        check_against_float64<T1>(wide);
        check_against_float64<T1>(flat);
    }
}

TEST_CASE("CPU DFT loops: results do not depend on the thread count and repeat exactly", "[gdft][gdftr2][isa]") {
    FORGE_INFO_SEED();
    const Problem p = make_problem(16, 12, 5, 777, 200.0);
    const auto G = make_op<float>(p);
    const CxVec<float> x = forge_test::complex_normal<float>(p.n2());
    const CxVec<float> y = forge_test::complex_normal<float>(p.n1());
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    const CxVec<float> f1 = *G * x, a1 = *G / y;
#ifdef _OPENMP
    omp_set_num_threads(3);  // more threads than this machine may have: still one order of summation
#endif
    const CxVec<float> f3 = *G * x, a3 = *G / y;
    const CxVec<float> f3b = *G * x;
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    CHECK(arma::approx_equal(f1, f3, "absdiff", 0.0));
    CHECK(arma::approx_equal(a1, a3, "absdiff", 0.0));
    CHECK(arma::approx_equal(f3, f3b, "absdiff", 0.0));
}

TEST_CASE("CPU DFT loops: float error stays below 1e-5 at 131072 samples x 16384 pixels", "[gdft][large]") {
    FORGE_INFO_SEED();
    // 128 x 128 pixels over the full k-space extent, readouts of 20 ms through a field map of +-80 Hz.
    const Problem p = make_problem(128, 128, 1, 131072, 0.0, 20e-3);
    const auto G = make_op<float>(p);
    const CxVec<float> x = forge_test::complex_normal<float>(p.n2());
    const CxVec<float> y = forge_test::complex_normal<float>(p.n1());
    const std::vector<uword> rows = spread(p.n1(), 24), cols = spread(p.n2(), 24);
    const arma::cx_vec fwd = d<float>(*G * x), adj = d<float>(*G / y);
    arma::cx_vec fs(rows.size()), as(cols.size());
    for (size_t i = 0; i < rows.size(); ++i) fs[i] = fwd[rows[i]];
    for (size_t i = 0; i < cols.size(); ++i) as[i] = adj[cols[i]];
    const double ef = forge_test::rel_error(fs, ref_forward(p, d<float>(x), rows));
    const double ea = forge_test::rel_error(as, ref_adjoint(p, d<float>(y), cols));
    INFO("instruction set " << forge::cpu_kernel_isa() << ": forward rel. error " << ef << ", adjoint " << ea);
    CHECK(ef < 1e-5);
    CHECK(ea < 1e-5);
}
