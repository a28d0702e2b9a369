#pragma once
// recon_solve_prox: recon_solve for the proximal penalties (compressed sensing). Give it the data, an encoding
// operator and a ProxPenalty; it picks where to run, prepares x0 and the weights, runs FISTA, POGM or ADMM
// (docs/compressed-sensing.md) and returns the image.
//
//   recon_solve_prox(data, G, R, niter, opts)       N = G^H W G through G (its own normal() with unit weights)
//   recon_solve_prox(data, G, N, R, niter, opts)    N given (a ToeplitzNormal, NormalOf(A)); b = G^H W y once with G
//
//   opts   device (Auto, Host, GPU, as recon_solve), weights (empty: ones), x0 (empty: zeros), method (Fista, Pogm,
//          Admm; default Fista), prox (tolerance, callback, L, ADMM's rho and CG steps), report (optional).
// On the GPU the data, weights and x0 are uploaded once (and every operator's device data with prepare_device()),
// the loop runs on the device, and the image is downloaded once at the end. The callback's cost is
// ||W^{1/2} (y - G x)||^2 + lambda R(x) on both paths.
#include "forge/Solvers/recon_solve.h"
#include "forge/Solvers/solve_admm.h"
#include "forge/Solvers/solve_fista.h"
#include "forge/Solvers/solve_pogm.h"

namespace forge {

enum class ProxMethod { Fista, Pogm, Admm };

inline const char* prox_method_name(ProxMethod m) {
    return m == ProxMethod::Fista ? "fista" : m == ProxMethod::Pogm ? "pogm" : "admm";
}

template <typename T1>
struct ReconProxOptions {
    ReconDevice device = ReconDevice::Auto;
    arma::Col<T1> weights;           // empty: all ones
    arma::Col<std::complex<T1>> x0;  // empty: zeros
    ProxMethod method = ProxMethod::Fista;
    ProxOptions<T1> prox;
    ProxReport* report = nullptr;
};

namespace solver_detail {

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> run_prox_normal(ProxMethod m, const forgeCol<forgeComplex<T1>>& x0, const Op& N,
                                           const forgeCol<forgeComplex<T1>>& b, const ProxPenalty<T1>& R, uword niter,
                                           const ProxOptions<T1>& o, ProxReport* rep) {
    if (m == ProxMethod::Pogm) return solve_pogm_normal<T1>(x0, N, b, R, niter, o, rep);
    if (m == ProxMethod::Admm) return solve_admm_normal<T1>(x0, N, b, R, niter, o, rep);
    return solve_fista_normal<T1>(x0, N, b, R, niter, o, rep);
}

template <typename T1, typename Op>
forgeCol<forgeComplex<T1>> run_prox(ProxMethod m, const forgeCol<forgeComplex<T1>>& x0, const Op& G,
                                    const forgeCol<T1>& W, const forgeCol<forgeComplex<T1>>& y,
                                    const ProxPenalty<T1>& R, uword niter, const ProxOptions<T1>& o, ProxReport* rep) {
    if (m == ProxMethod::Pogm) return solve_pogm<T1>(x0, G, W, y, R, niter, o, rep);
    if (m == ProxMethod::Admm) return solve_admm<T1>(x0, G, W, y, R, niter, o, rep);
    return solve_fista<T1>(x0, G, W, y, R, niter, o, rep);
}

}  // namespace solver_detail

template <typename T1, typename Op>
arma::Col<std::complex<T1>> recon_solve_prox(const arma::Col<std::complex<T1>>& data, const Op& G,
                                             const ProxPenalty<T1>& R, uword niter,
                                             const ReconProxOptions<T1>& opts = {}) {
    const uword n2 = G.n2();
    const arma::Col<std::complex<T1>> x0 =
        opts.x0.is_empty() ? arma::Col<std::complex<T1>>(n2, arma::fill::zeros) : opts.x0;
    const arma::Col<T1> W = opts.weights.is_empty() ? arma::Col<T1>(data.n_elem, arma::fill::ones) : opts.weights;
    solver_detail::require_len("recon_solve_prox", "x0", x0.n_elem, n2, "G.n2()");
    solver_detail::require_len("recon_solve_prox", "weights", W.n_elem, data.n_elem, "the length of data");
    const bool gpu = solver_detail::recon_on_gpu<T1>(opts.device, "recon_solve_prox");
    forgeCol<forgeComplex<T1>> fx0(x0), fy(data);
    forgeCol<T1> fW(W);
    if (gpu) {
        fx0.put_on_gpu();
        fy.put_on_gpu();
        fW.put_on_gpu();
        solver_detail::prepare_device_of(G, 0);
    }
    forgeCol<forgeComplex<T1>> x =
        solver_detail::run_prox<T1>(opts.method, fx0, G, fW, fy, R, niter, opts.prox, opts.report);
    if (x.on_gpu()) x.get_from_gpu();
    return x.to_arma();
}

template <typename T1, typename Op, typename NormalOp>
arma::Col<std::complex<T1>> recon_solve_prox(const arma::Col<std::complex<T1>>& data, const Op& G, const NormalOp& N,
                                             const ProxPenalty<T1>& R, uword niter,
                                             const ReconProxOptions<T1>& opts = {}) {
    const auto in =
        solver_detail::normal_inputs<T1>("recon_solve_prox", data, G, N, opts.x0, opts.weights, opts.device);
    ProxOptions<T1> o = opts.prox;
    if (o.data_norm2 < 0) o.data_norm2 = in.data_norm2;
    forgeCol<forgeComplex<T1>> x =
        solver_detail::run_prox_normal<T1>(opts.method, in.x0, N, in.b, R, niter, o, opts.report);
    if (x.on_gpu()) x.get_from_gpu();
    return x.to_arma();
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::ProxMethod;
using forge::recon_solve_prox;
using forge::ReconProxOptions;
#endif
