#pragma once
// solve_grad_desc: the same problem as solve_pwls_pcg (see there for arguments, units and residency),
//   xhat = argmin_x ||W^{1/2} (y - G x)||^2 + R(x),
// by steepest descent with the same step rule (exact line search for quadratic R, majorize-minimize
// for TVPenalty). Slower to converge than PCG; useful as a reference and for debugging operators.
#include "forge/Solvers/solve_pwls_pcg.h"

namespace forge {

template <typename T1, typename Op>
arma::Col<std::complex<T1>> solve_grad_desc(const arma::Col<std::complex<T1>>& x0, const Op& G, const arma::Col<T1>& W,
                                            const arma::Col<std::complex<T1>>& y, const Robject<T1>& R, uword niter,
                                            const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_at_boundary<T1>("solve_grad_desc", x0, G, W, y, R, niter, opts, false, report);
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> solve_grad_desc(const forgeCol<forgeComplex<T1>>& x0, const Op& G, const forgeCol<T1>& W,
                                           const forgeCol<forgeComplex<T1>>& y, const Robject<T1>& R, uword niter,
                                           const PcgOptions<T1>& opts = {}, SolverReport* report = nullptr) {
    return solver_detail::pwls_core<T1>("solve_grad_desc", x0, G, W, y, R, niter, opts, false, report);
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::solve_grad_desc;
#endif
