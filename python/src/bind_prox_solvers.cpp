// forge._native: the proximal solvers of forge/Solvers (solve_fista, solve_pogm, solve_admm and their normal forms)
// with ProxOptions from Python, the per-iteration callback and the ProxReport as a dict. The method is named by a
// string; the C++ dispatch is recon_solve_prox's (run_prox, run_prox_normal), so every algorithm has one
// implementation, whichever penalty (forge's own or a PythonProxPenalty) it runs with.
#include <string>

#include <nanobind/stl/string.h>

#include "forge/Operators/LinearOperator.h"
#include "forge/Penalties/ProxPenalty.h"
#include "forge/Solvers/recon_solve_prox.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

forge::ProxMethod method_of(const std::string& m) {
    if (m == "fista") return forge::ProxMethod::Fista;
    if (m == "pogm") return forge::ProxMethod::Pogm;
    if (m == "admm") return forge::ProxMethod::Admm;
    throw forge::invalid_argument("solver must be 'fista', 'pogm' or 'admm', got '" + m + "'");
}

// The options Python passes, as one dict: tolerance, lipschitz (0: estimate), power_iterations, lipschitz_margin,
// restart, monotone, rho (0: from N), cg_iterations, adaptive_rho, data_norm2 (< 0: unknown).
template <typename T1>
forge::ProxOptions<T1> prox_options(const nb::dict& d, nb::object callback) {
    forge::ProxOptions<T1> o;
    o.tolerance = T1(nb::cast<double>(d["tolerance"]));
    o.lipschitz = nb::cast<double>(d["lipschitz"]);
    o.power_iterations = nb::cast<uword>(d["power_iterations"]);
    o.lipschitz_margin = nb::cast<double>(d["lipschitz_margin"]);
    o.restart = nb::cast<bool>(d["restart"]);
    o.monotone = nb::cast<bool>(d["monotone"]);
    o.rho = nb::cast<double>(d["rho"]);
    o.cg_iterations = nb::cast<uword>(d["cg_iterations"]);
    o.adaptive_rho = nb::cast<bool>(d["adaptive_rho"]);
    o.data_norm2 = nb::cast<double>(d["data_norm2"]);
    o.callback = iteration_callback(callback);
    return o;
}

nb::dict prox_report_dict(const forge::ProxReport& r) {
    nb::dict d;
    d["iterations"] = r.iterations;
    d["converged"] = r.converged;
    d["stop_reason"] = std::string(forge::stop_reason_name(r.stop_reason));
    d["initial_gradient_norm"] = r.initial_gradient_norm;
    d["final_gradient_norm"] = r.final_gradient_norm;
    d["elapsed_s"] = r.elapsed_s;
    d["lipschitz"] = r.lipschitz;
    d["normal_applies"] = r.normal_applies;
    d["restarts"] = r.restarts;
    d["rho"] = r.rho;
    d["primal_residual"] = r.primal_residual;
    d["dual_residual"] = r.dual_residual;
    return d;
}

template <typename T1>
void bind_prox_solver_functions(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using Prox = forge::ProxPenalty<T1>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

    m.def(
        name("solve_prox").c_str(),
        [](const std::string& method, CIn<T1> x0, const Op& G, RIn<T1> W, CIn<T1> y, const Prox& R, uword niter,
           const nb::dict& options, nb::object callback, COut<T1> out) {
            const std::string w = "solve_" + method;
            const forge::ProxMethod pm = method_of(method);
            require_size(x0, G.domain_size(), w.c_str(), "x0", "the operator's domain size");
            require_size(y, G.codomain_size(), w.c_str(), "y", "the operator's codomain size");
            require_size(W, G.codomain_size(), w.c_str(), "weights", "the operator's codomain size");
            require_size(out, G.domain_size(), w.c_str(), "out", "the operator's domain size");
            require_same_place(x0, "x0", y, "y", w.c_str());
            require_same_place(x0, "x0", W, "weights", w.c_str());
            require_same_place(x0, "x0", out, "out", w.c_str());
            const bool cuda = on_cuda(x0, w.c_str(), "x0");
            const auto fx0 = col_of<forge::forgeComplex<T1>>(x0, cuda);
            const auto fy = col_of<forge::forgeComplex<T1>>(y, cuda);
            const auto fW = col_of<T1>(W, cuda);
            const forge::ProxOptions<T1> opts = prox_options<T1>(options, callback);
            forge::ProxReport rep;
            {
                nb::gil_scoped_release release;
                write_to(forge::solver_detail::run_prox<T1>(pm, fx0, G, fW, fy, R, niter, opts, &rep), out);
            }
            return prox_report_dict(rep);
        },
        "method"_a, "x0"_a.noconvert(), "G"_a, "weights"_a.noconvert(), "y"_a.noconvert(), "R"_a, "niter"_a,
        "options"_a, "callback"_a.none(), "out"_a.noconvert());

    m.def(
        name("solve_prox_normal").c_str(),
        [](const std::string& method, CIn<T1> x0, const Op& N, CIn<T1> b, const Prox& R, uword niter,
           const nb::dict& options, nb::object callback, COut<T1> out) {
            const std::string w = "solve_" + method + "_normal";
            const forge::ProxMethod pm = method_of(method);
            if (N.domain_size() != N.codomain_size()) {
                std::ostringstream msg;
                msg << w << ": N maps " << N.domain_size() << " to " << N.codomain_size()
                    << " entries; the normal operator must be square (NormalOf(A) makes one of A)";
                throw forge::invalid_argument(msg.str());
            }
            require_size(x0, N.domain_size(), w.c_str(), "x0", "the operator's size");
            require_size(b, N.domain_size(), w.c_str(), "b", "the operator's size");
            require_size(out, N.domain_size(), w.c_str(), "out", "the operator's size");
            require_same_place(x0, "x0", b, "b", w.c_str());
            require_same_place(x0, "x0", out, "out", w.c_str());
            const bool cuda = on_cuda(x0, w.c_str(), "x0");
            const auto fx0 = col_of<forge::forgeComplex<T1>>(x0, cuda);
            const auto fb = col_of<forge::forgeComplex<T1>>(b, cuda);
            const forge::ProxOptions<T1> opts = prox_options<T1>(options, callback);
            forge::ProxReport rep;
            {
                nb::gil_scoped_release release;
                write_to(forge::solver_detail::run_prox_normal<T1>(pm, fx0, N, fb, R, niter, opts, &rep), out);
            }
            return prox_report_dict(rep);
        },
        "method"_a, "x0"_a.noconvert(), "N"_a, "b"_a.noconvert(), "R"_a, "niter"_a, "options"_a,
        "callback"_a.none(), "out"_a.noconvert());
}

}  // namespace

void bind_prox_solvers(nb::module_& m) {
    bind_prox_solver_functions<float>(m, "_float32");
    bind_prox_solver_functions<double>(m, "_float64");
}

}  // namespace forge_python
