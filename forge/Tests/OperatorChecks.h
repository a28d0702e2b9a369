#pragma once
// Checks every forge::LinearOperator must pass, in the spirit of BART's lintest (src/linops/lintest.c): each draws
// fresh random inputs (forge_test::rng(), replayable with FORGE_TEST_SEED), applies the operator and measures in
// float64 how far it is from the identity it must satisfy.
//
//   check_adjoint(A, tol, scale)    <A x, y> = <x, A^H y>            (the dot test; scale: what the error is
//                                                                     relative to, see DotScale)
//   check_normal(A, tol)            A.normal(x) = A^H (A x)           (nbatch vectors at once when asked)
//   check_normal(A, R, tol)         A.normal(x) = R.normal(x)         (an operator with a normal of its own, e.g.
//                                                                     a Toeplitz embedding, against the exact R)
//   check_batch(A, nbatch, tol)     forward, adjoint and normal of nbatch vectors in one call = nbatch single calls
//                                   (tol = 0: bit for bit)
//   check_host_device(A, tol)       forward, adjoint and normal on the GPU = on the host (results stay on the GPU)
//
// Each check_x CHECKs x_test(...).passes(tol) and returns the measurement; the x_test functions only measure, so
// that a test can assert that a check rejects a broken operator (OperatorContractTests.cpp). The adjoint, normal and
// host/device checks take an nbatch (vectors per call); the adjoint, normal and batch checks a residency
// (forge::Residency::Device: inputs uploaded, applies on the GPU, results downloaded for the float64 sums).
#include <algorithm>
#include <complex>
#include <string>

#include <armadillo>
#include <catch2/catch.hpp>

#include "TestHelpers.h"
#include "forge/Operators/LinearOperator.h"

namespace forge_test {

// What the dot test's difference |<A x, y> - <x, A^H y>| is divided by.
enum class DotScale {
    Norms,         // ||A x|| ||y||, the largest |<A x, y>| can be (Cauchy-Schwarz)
    AdjointNorms,  // ||x|| ||A^H y||, the same bound from the other side
    Value,         // |<A x, y>|
    Sum,           // |<A x, y>| + |<x, A^H y>|
};

inline const char* scale_name(DotScale s) {
    switch (s) {
        case DotScale::Norms: return "||A x|| ||y||";
        case DotScale::AdjointNorms: return "||x|| ||A^H y||";
        case DotScale::Value: return "|<A x, y>|";
        case DotScale::Sum: return "|<A x, y>| + |<x, A^H y>|";
    }
    return "?";
}

// An error passes below tol; tol = 0 asks for exact equality.
inline bool within(double error, double tol) { return tol == 0 ? error == 0 : error < tol; }

namespace detail {

template <typename T1>
using OpVec = forge::forgeCol<forge::forgeComplex<T1>>;

template <typename T1>
OpVec<T1> placed(const arma::Col<std::complex<T1>>& a, forge::Residency where) {
    OpVec<T1> v(a);
    if (where == forge::Residency::Device) v.put_on_gpu();
    return v;
}

// A result in float64 on the host; 'resident' turns false when it did not come back where its input was.
template <typename T1>
arma::cx_vec fetched(OpVec<T1> v, forge::Residency where, bool& resident) {
    resident = resident && (v.on_gpu() == (where == forge::Residency::Device));
    if (v.on_gpu()) v.get_from_gpu();
    return arma::conv_to<arma::cx_vec>::from(v.to_arma());
}

template <typename T1>
arma::Col<std::complex<T1>> as(const arma::cx_vec& v) {
    return arma::conv_to<arma::Col<std::complex<T1>>>::from(v);
}

inline const char* where_name(forge::Residency where) { return where == forge::Residency::Device ? "GPU" : "host"; }

}  // namespace detail

// ---------------------------------------------------------------------------------------------------- adjoint
// The dot test's bound relative to ||A x|| ||y|| (DotScale::Norms, the most |<A x, y>| can be), which rounding
// cannot exceed by chance as it can a bound relative to |<A x, y>| (small for some random probes): about 17 roundings
// of float and 450 of double. Measured on every host operator's random probes (SENSE, pcSENSE, TimeSegmentation,
// pcSenseTimeSeg, Gfft, GfftSampled, Gnufft; 25 seeds): at most 2e-8 in float and 8e-17 in double; on an H200 the
// device paths (Gdft, GdftR2, SENSE with tensor-core coil batches, pcSENSE, Gfft, GfftSampled, Gnufft,
// TimeSegmentation, ToeplitzNormal; 15 seeds) at most 5e-8. An adjoint that is not the adjoint (a conjugate
// missing) errs by about 1 / sqrt(n).
template <typename T1>
constexpr double adjoint_tolerance() {
    return sizeof(T1) == sizeof(float) ? 1e-6 : 1e-13;
}

struct AdjointTest {
    std::complex<double> lhs, rhs;  // <A x, y>, <x, A^H y>
    double norm_Ax = 0, norm_AHy = 0;
    double error = 0;      // |lhs - rhs| / scale
    bool resident = true;  // results came back where the inputs were
    bool passes(double tol) const { return resident && norm_Ax > 0 && norm_AHy > 0 && within(error, tol); }
};

template <typename T1>
AdjointTest adjoint_test(const forge::LinearOperator<T1>& A, DotScale scale, forge::uword nbatch = 1,
                         forge::Residency where = forge::Residency::Host) {
    using namespace detail;
    const arma::Col<std::complex<T1>> x = complex_normal<T1>(A.domain_size() * nbatch);
    const arma::Col<std::complex<T1>> y = complex_normal<T1>(A.codomain_size() * nbatch);
    AdjointTest t;
    const arma::cx_vec Ax = fetched<T1>(A.forward(placed(x, where), nbatch), where, t.resident);
    const arma::cx_vec AHy = fetched<T1>(A.adjoint(placed(y, where), nbatch), where, t.resident);
    REQUIRE(Ax.n_elem == y.n_elem);
    REQUIRE(AHy.n_elem == x.n_elem);
    const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), yd = arma::conv_to<arma::cx_vec>::from(y);
    t.lhs = arma::cdot(Ax, yd);  // sum conj(A x) y
    t.rhs = arma::cdot(xd, AHy);
    t.norm_Ax = arma::norm(Ax);
    t.norm_AHy = arma::norm(AHy);
    double s = 0;
    switch (scale) {
        case DotScale::Norms: s = t.norm_Ax * arma::norm(yd); break;
        case DotScale::AdjointNorms: s = arma::norm(xd) * t.norm_AHy; break;
        case DotScale::Value: s = std::abs(t.lhs); break;
        case DotScale::Sum: s = std::abs(t.lhs) + std::abs(t.rhs); break;
    }
    t.error = s > 0 ? std::abs(t.lhs - t.rhs) / s : std::abs(t.lhs - t.rhs);
    return t;
}

template <typename T1>
AdjointTest check_adjoint(const forge::LinearOperator<T1>& A, double tol, DotScale scale = DotScale::Norms,
                          forge::uword nbatch = 1, forge::Residency where = forge::Residency::Host) {
    const AdjointTest t = adjoint_test(A, scale, nbatch, where);
    INFO(A.name() << " adjoint test (" << nbatch << " vector(s) on the " << detail::where_name(where)
                  << "): <A x, y> = " << t.lhs << ", <x, A^H y> = " << t.rhs << ", |difference| / ("
                  << scale_name(scale) << ") = " << t.error << ", tolerance " << tol);
    CHECK(t.resident);
    CHECK(t.norm_Ax > 0);  // an operator that returns zeros passes any dot test
    CHECK(t.norm_AHy > 0);
    CHECK(within(t.error, tol));
    return t;
}

// ---------------------------------------------------------------------------------------------------- normal
struct NormalTest {
    double error = 0;  // ||normal(x) - reference|| / ||reference||
    bool resident = true;
    bool passes(double tol) const { return resident && within(error, tol); }
};

// A.normal(x, nbatch) against A.adjoint(A.forward(x, nbatch), nbatch).
template <typename T1>
NormalTest normal_test(const forge::LinearOperator<T1>& A, forge::uword nbatch = 1,
                       forge::Residency where = forge::Residency::Host) {
    using namespace detail;
    const arma::Col<std::complex<T1>> x = complex_normal<T1>(A.domain_size() * nbatch);
    NormalTest t;
    const arma::cx_vec n = fetched<T1>(A.normal(placed(x, where), nbatch), where, t.resident);
    const arma::cx_vec r = fetched<T1>(A.adjoint(A.forward(placed(x, where), nbatch), nbatch), where, t.resident);
    t.error = rel_error(n, r);
    return t;
}

template <typename T1>
NormalTest check_normal(const forge::LinearOperator<T1>& A, double tol, forge::uword nbatch = 1,
                        forge::Residency where = forge::Residency::Host) {
    const NormalTest t = normal_test(A, nbatch, where);
    INFO(A.name() << " normal test (" << nbatch << " vector(s) on the " << detail::where_name(where)
                  << "): ||normal(x) - A^H A x|| / ||A^H A x|| = " << t.error << ", tolerance " << tol);
    CHECK(t.resident);
    CHECK(within(t.error, tol));
    return t;
}

// A.normal(x) against reference.normal(x) (x drawn in float64, rounded to each operator's precision): an operator
// whose normal is its own, e.g. by Toeplitz embedding, against the exact operator it stands for.
template <typename T1, typename T2>
NormalTest normal_test(const forge::LinearOperator<T1>& A, const forge::LinearOperator<T2>& reference) {
    using namespace detail;
    REQUIRE(A.domain_size() == reference.domain_size());
    const arma::cx_vec x = complex_normal<double>(A.domain_size());
    NormalTest t;
    const arma::cx_vec n = fetched<T1>(A.normal(OpVec<T1>(as<T1>(x))), forge::Residency::Host, t.resident);
    const arma::cx_vec r = fetched<T2>(reference.normal(OpVec<T2>(as<T2>(x))), forge::Residency::Host, t.resident);
    t.error = rel_error(n, r);
    return t;
}

template <typename T1, typename T2>
NormalTest check_normal(const forge::LinearOperator<T1>& A, const forge::LinearOperator<T2>& reference, double tol) {
    const NormalTest t = normal_test(A, reference);
    INFO(A.name() << " normal against " << reference.name() << "'s: relative error " << t.error << ", tolerance "
                  << tol);
    CHECK(within(t.error, tol));
    return t;
}

// ---------------------------------------------------------------------------------------------------- batch
struct ApplyErrors {
    double forward = 0, adjoint = 0, normal = 0;  // largest relative difference over the vectors
    bool resident = true;
    double max() const { return std::max(forward, std::max(adjoint, normal)); }
    bool passes(double tol) const {
        return resident && within(forward, tol) && within(adjoint, tol) && within(normal, tol);
    }
};

// Forward, adjoint and normal of nbatch vectors in one call against one call per vector.
template <typename T1>
ApplyErrors batch_test(const forge::LinearOperator<T1>& A, forge::uword nbatch,
                       forge::Residency where = forge::Residency::Host) {
    using namespace detail;
    using CVec = arma::Col<std::complex<T1>>;
    const forge::uword n2 = A.domain_size(), n1 = A.codomain_size();
    const CVec x = complex_normal<T1>(n2 * nbatch), y = complex_normal<T1>(n1 * nbatch);
    ApplyErrors e;
    const arma::cx_vec f = fetched<T1>(A.forward(placed(x, where), nbatch), where, e.resident);
    const arma::cx_vec a = fetched<T1>(A.adjoint(placed(y, where), nbatch), where, e.resident);
    const arma::cx_vec n = fetched<T1>(A.normal(placed(x, where), nbatch), where, e.resident);
    for (forge::uword b = 0; b < nbatch; ++b) {
        const CVec xb = x.subvec(b * n2, (b + 1) * n2 - 1), yb = y.subvec(b * n1, (b + 1) * n1 - 1);
        const arma::cx_vec f1 = fetched<T1>(A.forward(placed(xb, where)), where, e.resident);
        const arma::cx_vec a1 = fetched<T1>(A.adjoint(placed(yb, where)), where, e.resident);
        const arma::cx_vec n1b = fetched<T1>(A.normal(placed(xb, where)), where, e.resident);
        e.forward = std::max(e.forward, rel_error(arma::cx_vec(f.subvec(b * n1, (b + 1) * n1 - 1)), f1));
        e.adjoint = std::max(e.adjoint, rel_error(arma::cx_vec(a.subvec(b * n2, (b + 1) * n2 - 1)), a1));
        e.normal = std::max(e.normal, rel_error(arma::cx_vec(n.subvec(b * n2, (b + 1) * n2 - 1)), n1b));
    }
    return e;
}

template <typename T1>
ApplyErrors check_batch(const forge::LinearOperator<T1>& A, forge::uword nbatch, double tol,
                        forge::Residency where = forge::Residency::Host) {
    const ApplyErrors e = batch_test(A, nbatch, where);
    INFO(A.name() << " batch of " << nbatch << " on the " << detail::where_name(where)
                  << " against single applies: forward " << e.forward << ", adjoint " << e.adjoint << ", normal "
                  << e.normal << ", tolerance " << tol << (tol == 0 ? " (bit for bit)" : ""));
    CHECK(e.resident);
    CHECK(within(e.forward, tol));
    CHECK(within(e.adjoint, tol));
    CHECK(within(e.normal, tol));
    return e;
}

// ---------------------------------------------------------------------------------------------------- host/device
// Forward, adjoint and normal of the same nbatch vectors on the GPU against the host; the GPU results must stay on
// the GPU.
template <typename T1>
ApplyErrors host_device_test(const forge::LinearOperator<T1>& A, forge::uword nbatch = 1) {
    using namespace detail;
    using CVec = arma::Col<std::complex<T1>>;
    const CVec x = complex_normal<T1>(A.domain_size() * nbatch), y = complex_normal<T1>(A.codomain_size() * nbatch);
    const forge::Residency host = forge::Residency::Host, dev = forge::Residency::Device;
    ApplyErrors e;
    const arma::cx_vec fh = fetched<T1>(A.forward(placed(x, host), nbatch), host, e.resident);
    const arma::cx_vec ah = fetched<T1>(A.adjoint(placed(y, host), nbatch), host, e.resident);
    const arma::cx_vec nh = fetched<T1>(A.normal(placed(x, host), nbatch), host, e.resident);
    e.forward = rel_error(fetched<T1>(A.forward(placed(x, dev), nbatch), dev, e.resident), fh);
    e.adjoint = rel_error(fetched<T1>(A.adjoint(placed(y, dev), nbatch), dev, e.resident), ah);
    e.normal = rel_error(fetched<T1>(A.normal(placed(x, dev), nbatch), dev, e.resident), nh);
    return e;
}

template <typename T1>
ApplyErrors check_host_device(const forge::LinearOperator<T1>& A, double tol, forge::uword nbatch = 1) {
    const ApplyErrors e = host_device_test(A, nbatch);
    INFO(A.name() << " GPU against host (" << nbatch << " vector(s)): forward " << e.forward << ", adjoint "
                  << e.adjoint << ", normal " << e.normal << ", tolerance " << tol);
    CHECK(e.resident);
    CHECK(within(e.forward, tol));
    CHECK(within(e.adjoint, tol));
    CHECK(within(e.normal, tol));
    return e;
}

}  // namespace forge_test
