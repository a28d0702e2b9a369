#pragma once
// recon_solve: the high-level entry point. Give it the measured data, an encoding operator and a penalty;
// it picks where to run, prepares x0 and the weights, runs solve_pwls_pcg and returns the image.
//
//   template <typename T1, typename Op>
//   arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G,
//                                          const Robject<T1>& R, uword niter,
//                                          const ReconOptions<T1>& opts = {});
//
//   data   measured samples, length = length of G * x (for SENSE: n1 * ncoils, coil-major)
//   G      operator with G * x, G / y and n2() (number of image pixels): Gdft, GdftR2, SENSE, pcSENSE, ...
//   R      penalty (QuadPenalty, TVPenalty)
//   niter  PCG iterations
//   opts   device: Auto (GPU when forge was built with CUDA, a device is present and T1 = float), Host, GPU;
//          weights (empty = all ones), x0 (empty = zeros), pcg (tolerance, callback), report (optional).
//
// On the GPU the data, weights and x0 are uploaded once, the whole PCG loop runs on the device, and the
// image is downloaded once at the end.
#include "forge/Core/DeviceMemory.h"
#include "forge/Solvers/solve_pwls_pcg.h"

namespace forge {

enum class ReconDevice { Auto, Host, GPU };

template <typename T1>
struct ReconOptions {
    ReconDevice device = ReconDevice::Auto;
    arma::Col<T1> weights;           // empty: all ones
    arma::Col<std::complex<T1>> x0;  // empty: zeros
    PcgOptions<T1> pcg;
    SolverReport* report = nullptr;
};

template <typename T1, typename Op>
arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G, const Robject<T1>& R,
                                       uword niter, const ReconOptions<T1>& opts = {}) {
    const uword n2 = G.n2();
    arma::Col<std::complex<T1>> x0 = opts.x0.is_empty() ? arma::Col<std::complex<T1>>(n2, arma::fill::zeros) : opts.x0;
    arma::Col<T1> W = opts.weights.is_empty() ? arma::Col<T1>(data.n_elem, arma::fill::ones) : opts.weights;
    solver_detail::require_len("recon_solve", "x0", x0.n_elem, n2, "G.n2()");
    solver_detail::require_len("recon_solve", "weights", W.n_elem, data.n_elem, "the length of data");

    bool gpu = false;
    if (opts.device == ReconDevice::GPU) {
        if (!device::available())
            throw cuda_error("recon_solve: device = GPU was requested but no CUDA device is usable (built with CUDA: " +
                             std::string(device::built_with_cuda() ? "yes" : "no") + ")");
        gpu = true;
    } else if (opts.device == ReconDevice::Auto) {
        gpu = std::is_same<T1, float>::value && device::available();
    }
    if (!gpu) return solve_pwls_pcg<T1>(x0, G, W, data, R, niter, opts.pcg, opts.report);

    forgeCol<forgeComplex<T1>> fx0(x0), fy(data);
    forgeCol<T1> fW(W);
    fx0.put_on_gpu();
    fy.put_on_gpu();
    fW.put_on_gpu();
    forgeCol<forgeComplex<T1>> x = solve_pwls_pcg<T1>(fx0, G, fW, fy, R, niter, opts.pcg, opts.report);
    x.get_from_gpu();
    return x.to_arma();
}

template <typename T1, typename Op>
FORGE_DEPRECATED("recon_solve()")
arma::Col<std::complex<T1>> reconSolve(const arma::Col<std::complex<T1>>& data, const Op& G, const Robject<T1>& R,
                                       uword niter, const ReconOptions<T1>& opts = {}) {
    return recon_solve(data, G, R, niter, opts);
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::ReconDevice;
using forge::ReconOptions;
using forge::recon_solve;
using forge::reconSolve;
#endif
