#pragma once
// Robject<T1>: the penalty interface the solvers use.
//
//   Penalty(x)      R(x), a real number
//   Gradient(x)     the gradient of R with respect to the real and imaginary parts of x, as a complex vector
//                   g = dR/dRe(x) + i dR/dIm(x); so d/da R(x + a v) at a = 0 equals Re<g, v> = Re(g^H v)
//   Denom(d, x)     the curvature of R along the direction d at x (exact second derivative
//                   d^2/da^2 R(x + a d) for quadratic penalties, a majorizer's curvature otherwise);
//                   the PCG step size divides by it
//
// The forgeCol overloads accept host or device vectors; on the device the work runs in CUDA kernels and
// Gradient's result stays on the device. The arma overloads are conveniences that run on the host.
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

    virtual T1 Penalty(const ForgeVec& x) const = 0;
    virtual ForgeVec Gradient(const ForgeVec& x) const = 0;
    virtual T1 Denom(const ForgeVec& ddir, const ForgeVec& x) const = 0;

    T1 Penalty(const ArmaVec& x) const { return Penalty(ForgeVec(x)); }
    ArmaVec Gradient(const ArmaVec& x) const { return Gradient(ForgeVec(x)).getArma(); }
    T1 Denom(const ArmaVec& ddir, const ArmaVec& x) const { return Denom(ForgeVec(ddir), ForgeVec(x)); }
};

}  // namespace forge

#ifndef FORGE_NO_GLOBAL_NAMES
using forge::Robject;
#endif
