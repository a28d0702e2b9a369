#pragma once
// ProxPenalty<T1>: the interface of the non-smooth regularisers the proximal solvers use (solve_fista, solve_pogm,
// solve_admm in forge/Solvers):
//
//   value(x)     lambda R(x), a real number (R convex, e.g. ||x||_1, TV(x), ||Psi x||_1)
//   prox(v, t)   v <- argmin_u  t lambda R(u) + 1/2 ||u - v||^2, in place (the proximal operator of t lambda R)
//
// lambda is the penalty's weight, given at construction; the cost the solvers minimise is
//   Phi(x) = ||W^{1/2} (y - G x)||^2 + lambda R(x)
// (the data term without a factor 1/2, as solve_pwls_pcg's). Host vectors run in OpenMP loops, device vectors
// (forgeCol after put_on_gpu) in CUDA kernels, and the result stays where v lives. A vector of another length than
// grid().n_pixels() throws forge::invalid_argument naming it; t must be finite and >= 0.
//
// Implementations: L1Penalty (the image's L1 norm: complex soft threshold), WaveletL1Penalty (the L1 norm of an
// orthogonal wavelet transform), ExactTVPenalty (isotropic or anisotropic total variation, not smoothed).
#include <complex>
#include <string>

#include <armadillo>

#include "forge/Core/Geometry.h"
#include "forge/Core/forgeCol.h"

namespace forge {

template <typename T1>
class ProxPenalty {
public:
    using complex_type = std::complex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<forgeComplex<T1>>;

    virtual ~ProxPenalty() = default;

    // lambda R(x), accumulated in double.
    virtual double value(const ForgeVec& x) const = 0;
    // v <- prox_{t lambda R}(v).
    virtual void prox(ForgeVec& v, T1 t) const = 0;

    // Whether prox() is the proximal operator of one fixed function on every call (false for WaveletL1Penalty with
    // random shifts: each call draws another transform). ADMM needs a fixed one; FISTA and POGM take either.
    virtual bool fixed_between_calls() const { return true; }

    double value(const ArmaVec& x) const { return value(ForgeVec(x)); }
    ArmaVec prox(const ArmaVec& v, T1 t) const {
        ForgeVec f(v);
        prox(f, t);
        return f.to_arma();
    }

    T1 lambda() const { return lambda_; }
    const ImageGrid& grid() const { return grid_; }
    uword n_pixels() const { return grid_.n_pixels(); }
    const std::string& name() const { return name_; }

protected:
    // Checks the grid (no zero axis, no overflow) and lambda (finite, >= 0); 'name' prefixes the messages.
    ProxPenalty(std::string name, const ImageGrid& grid, T1 lambda);
    // x has n_pixels() entries (else forge::invalid_argument naming 'arg' and 'what').
    void check_length(const ForgeVec& x, const char* what, const char* arg) const;
    // t is finite and >= 0.
    void check_step(T1 t) const;

private:
    std::string name_;
    ImageGrid grid_;
    T1 lambda_;
};

extern template class ProxPenalty<float>;
extern template class ProxPenalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::ProxPenalty;
#endif
