#pragma once
// Robject<T1>: the penalty interface the solvers use.
//
//   penalty(x)      R(x), a real number
//   gradient(x)     the gradient of R with respect to the real and imaginary parts of x, as a complex vector
//                   g = dR/dRe(x) + i dR/dIm(x); so d/da R(x + a v) at a = 0 equals Re<g, v> = Re(g^H v)
//   denom(d, x)     the curvature of R along the direction d at x (exact second derivative
//                   d^2/da^2 R(x + a d) for quadratic penalties, a majorizer's curvature otherwise);
//                   the PCG step size divides by it
//
// The forgeCol overloads accept host or device vectors; on the device the work runs in CUDA kernels and
// gradient()'s result stays on the device. The arma overloads are conveniences that run on the host.
#include <complex>

#include <armadillo>

#include "forge/Core/forgeCol.h"

namespace forge {

template <typename T1>
class Robject {
public:
    using complex_type = std::complex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<forgeComplex<T1>>;

    virtual ~Robject() = default;

    virtual T1 penalty(const ForgeVec& x) const = 0;
    virtual ForgeVec gradient(const ForgeVec& x) const = 0;
    virtual T1 denom(const ForgeVec& ddir, const ForgeVec& x) const = 0;

    T1 penalty(const ArmaVec& x) const { return penalty(ForgeVec(x)); }
    ArmaVec gradient(const ArmaVec& x) const { return gradient(ForgeVec(x)).to_arma(); }
    T1 denom(const ArmaVec& ddir, const ArmaVec& x) const { return denom(ForgeVec(ddir), ForgeVec(x)); }

    // The names before the rename, for callers (a subclass overrides penalty, gradient and denom).
    FORGE_DEPRECATED("penalty()") T1 Penalty(const ForgeVec& x) const { return penalty(x); }
    FORGE_DEPRECATED("gradient()") ForgeVec Gradient(const ForgeVec& x) const { return gradient(x); }
    FORGE_DEPRECATED("denom()") T1 Denom(const ForgeVec& d, const ForgeVec& x) const { return denom(d, x); }
    FORGE_DEPRECATED("penalty()") T1 Penalty(const ArmaVec& x) const { return penalty(x); }
    FORGE_DEPRECATED("gradient()") ArmaVec Gradient(const ArmaVec& x) const { return gradient(x); }
    FORGE_DEPRECATED("denom()") T1 Denom(const ArmaVec& d, const ArmaVec& x) const { return denom(d, x); }
};

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::Robject;
#endif
