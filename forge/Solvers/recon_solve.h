#pragma once
// recon_solve: the high-level entry point. Give it the measured data, an encoding operator and a penalty;
// it picks where to run, prepares x0 and the weights, runs the solver and returns the image.
//
//   template <typename T1, typename Op>
//   arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G,
//                                          const Robject<T1>& R, uword niter,
//                                          const ReconOptions<T1>& opts = {});
//
//   data   measured samples, length = length of G * x (for SENSE: n1 * ncoils, coil-major)
//   G      operator with G * x, G / y and n2() (number of image pixels): Gdft, GdftR2, SENSE, pcSENSE, ...
//   R      penalty (QuadPenalty, TVPenalty)
//   niter  PCG iterations (at most)
//   opts   device: Auto (GPU when forge was built with CUDA, a device is present and T1 = float), Host, GPU;
//          weights (empty = all ones), x0 (empty = zeros), pcg (tolerance, callback), report (optional),
//          data_scale (the data are solved multiplied by it: on the GPU after their upload, with no host copy).
//   Runs solve_pwls_pcg: every iteration applies G and G^H.
//
// The normal-equations path, for an operator whose normal operator N = G^H W G is cheaper than G and G^H
// (ToeplitzNormal: FFTs on a 2x grid; NormalOf(A) for an A built with with_normal(G, ToeplitzNormal)):
//
//   template <typename T1, typename Op, typename NormalOp>
//   arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G,
//                                          const NormalOp& N, const Robject<T1>& R, uword niter,
//                                          const ReconOptions<T1>& opts = {});
//
//   N      square operator with N * x on forgeCol (n2 pixels in and out): G^H W G, exactly or approximately
//   Forms b = G^H W y once with G (exact), then runs solve_pwls_pcg_normal on (N, b): one N per iteration. The
//   callback's cost is ||W^{1/2} (y - G x)||^2 + R(x), as on the other path (y^H W y is passed as
//   PcgOptions::data_norm2 unless the caller set it), and equal to it where N = G^H W G.
//
// Device (both paths): decided here, once. On the GPU the data, weights and x0 are uploaded once (and on the
// normal path every operator's device data with prepare_device(), where it has one), the whole PCG loop runs on
// the device, and the image is downloaded once at the end.
#include <cmath>
#include <type_traits>
#include <utility>

#include "forge/Core/Device.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Solvers/solve_pwls_pcg.h"

namespace forge {

template <typename T1>
struct ReconOptions {
    ReconDevice device = ReconDevice::Auto;
    arma::Col<T1> weights;           // empty: all ones
    arma::Col<std::complex<T1>> x0;  // empty: zeros
    PcgOptions<T1> pcg;
    SolverReport* report = nullptr;
    // The data are solved multiplied by this (finite, not zero); on the GPU on the device after their upload, so
    // that a caller scaling its data to a unit range makes no host copy of them (a power of two scales exactly).
    T1 data_scale = 1;
};

namespace solver_detail {

// opts.data_scale, checked: finite and not zero.
template <typename T1>
T1 checked_data_scale(T1 s, const char* name) {
    if (!std::isfinite(s) || s == T1(0))
        throw invalid_argument(std::string(name) + ": data_scale is " + std::to_string(s) +
                               " (expected a finite factor other than zero; 1 leaves the data as given)");
    return s;
}

// The data times 'scale', placed where the solve runs. On the GPU they go straight from the caller's vector to the
// device and are scaled there: a host copy first (a 256x256 x 16-coil slice's 12 MB) took longer than the upload.
template <typename T1>
forgeCol<forgeComplex<T1>> placed_data(const arma::Col<std::complex<T1>>& data, T1 scale, bool gpu) {
    using V = forgeCol<forgeComplex<T1>>;
    V fy = gpu ? V::device_uninitialized(data.n_elem) : V(data);
    if (gpu && data.n_elem)
        device::copy_to_device(fy.device_memptr(), data.memptr(), data.n_elem * sizeof(std::complex<T1>));
    if (scale != T1(1)) fy *= forgeComplex<T1>(scale, T1(0));
    return fy;
}

// Whether recon_solve runs on the GPU for 'device'. Throws cuda_error naming 'name' when the GPU is asked for and
// none is usable.
template <typename T1>
bool recon_on_gpu(ReconDevice device, const char* name) {
    if (device == ReconDevice::GPU) {
        if (!device::available())
            throw cuda_error(std::string(name) +
                             ": device = GPU was requested but no CUDA device is usable (built with CUDA: " +
                             std::string(device::built_with_cuda() ? "yes" : "no") + ")");
        return true;
    }
    return device == ReconDevice::Auto && std::is_same<T1, float>::value && device::available();
}

// op.prepare_device() where the operator has one (LinearOperator does); nothing otherwise.
template <typename Op>
auto prepare_device_of(const Op& op, int) -> decltype(op.prepare_device(), void()) {
    op.prepare_device();
}
template <typename Op>
void prepare_device_of(const Op&, long) {}

// What a solve on the normal equations (N, b) starts from, checked and placed where the solve runs: x0 (zeros when
// none is given), b = G^H W y (unit weights multiply nothing: b = G^H y exactly), and y^H W y, with which the
// callbacks report the cost of the G path, of the data times 'scale'. Shared by recon_solve and recon_solve_prox;
// 'name' names the caller.
template <typename T1>
struct NormalInputs {
    forgeCol<forgeComplex<T1>> x0, b;
    double data_norm2 = 0;
};
template <typename T1, typename Op, typename NormalOp>
NormalInputs<T1> normal_inputs(const char* name, const arma::Col<std::complex<T1>>& data, const Op& G,
                               const NormalOp& N, const arma::Col<std::complex<T1>>& x0, const arma::Col<T1>& weights,
                               ReconDevice device, T1 scale = 1) {
    using V = forgeCol<forgeComplex<T1>>;
    const uword n2 = G.n2();
    require_len(name, "N.n2()", N.n2(), n2, "G.n2()");
    if (!x0.is_empty()) require_len(name, "x0", x0.n_elem, n2, "G.n2()");
    const bool weighted = !weights.is_empty();
    if (weighted) {
        require_len(name, "weights", weights.n_elem, data.n_elem, "the length of data");
        require_valid_weights<T1>(name, weights);
    }
    const bool gpu = recon_on_gpu<T1>(device, name);
    NormalInputs<T1> in;
    V fy = placed_data(data, scale, gpu);
    in.x0 = x0.is_empty() ? V(arma::Col<std::complex<T1>>(n2, arma::fill::zeros)) : V(x0);
    forgeCol<T1> fW;
    if (weighted) fW = forgeCol<T1>(weights);
    if (gpu) {
        in.x0.put_on_gpu();
        if (weighted) fW.put_on_gpu();
        prepare_device_of(G, 0);
        prepare_device_of(N, 0);
    }
    const double ynorm = robust_norm(fy);
    if (!std::isfinite(ynorm))
        throw invalid_argument(std::string(name) + ": data has a NaN or Inf entry (data must be finite)");
    in.data_norm2 = weighted ? weighted_norm2<T1>(fy, fW) : ynorm * ynorm;
    in.b = weighted ? V(G / times_w<T1>(fW, fy)) : V(G / fy);
    return in;
}

}  // namespace solver_detail

template <typename T1, typename Op>
arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G, const Robject<T1>& R,
                                        uword niter, const ReconOptions<T1>& opts = {}) {
    const uword n2 = G.n2();
    arma::Col<std::complex<T1>> x0 = opts.x0.is_empty() ? arma::Col<std::complex<T1>>(n2, arma::fill::zeros) : opts.x0;
    arma::Col<T1> W = opts.weights.is_empty() ? arma::Col<T1>(data.n_elem, arma::fill::ones) : opts.weights;
    solver_detail::require_len("recon_solve", "x0", x0.n_elem, n2, "G.n2()");
    solver_detail::require_len("recon_solve", "weights", W.n_elem, data.n_elem, "the length of data");

    const T1 scale = solver_detail::checked_data_scale(opts.data_scale, "recon_solve");
    const bool gpu = solver_detail::recon_on_gpu<T1>(opts.device, "recon_solve");
    if (!gpu)
        return scale == T1(1) ? solve_pwls_pcg<T1>(x0, G, W, data, R, niter, opts.pcg, opts.report)
                              : solve_pwls_pcg<T1>(x0, G, W, arma::Col<std::complex<T1>>(data * scale), R, niter,
                                                   opts.pcg, opts.report);

    forgeCol<forgeComplex<T1>> fx0(x0), fy = solver_detail::placed_data(data, scale, true);
    forgeCol<T1> fW(W);
    fx0.put_on_gpu();
    fW.put_on_gpu();
    forgeCol<forgeComplex<T1>> x = solve_pwls_pcg<T1>(fx0, G, fW, fy, R, niter, opts.pcg, opts.report);
    x.get_from_gpu();
    return x.to_arma();
}

template <typename T1, typename Op, typename NormalOp>
arma::Col<std::complex<T1>> recon_solve(const arma::Col<std::complex<T1>>& data, const Op& G, const NormalOp& N,
                                        const Robject<T1>& R, uword niter, const ReconOptions<T1>& opts = {}) {
    const auto in = solver_detail::normal_inputs<T1>("recon_solve", data, G, N, opts.x0, opts.weights, opts.device,
                                                     solver_detail::checked_data_scale(opts.data_scale, "recon_solve"));
    PcgOptions<T1> pcg = opts.pcg;
    if (pcg.data_norm2 < 0) pcg.data_norm2 = in.data_norm2;  // the callback then reports the cost of the G path
    forgeCol<forgeComplex<T1>> x = solve_pwls_pcg_normal<T1>(in.x0, N, in.b, R, niter, pcg, opts.report);
    if (x.on_gpu()) x.get_from_gpu();
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
using forge::recon_solve;
using forge::ReconDevice;
using forge::ReconOptions;
using forge::reconSolve;
#endif
