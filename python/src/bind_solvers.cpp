// forge._native: the PCG solvers, from the data (solve_pwls_pcg) or from the normal equations
// (solve_pwls_pcg_normal), with their per-iteration callback and report.
#include "forge/Operators/LinearOperator.h"
#include "forge/Penalties/Robject.h"
#include "forge/Solvers/solve_pwls_pcg.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

std::function<void(const forge::PcgIterationInfo&)> iteration_callback(nb::object callback) {
    if (callback.is_none()) return nullptr;
    return [callback](const forge::PcgIterationInfo& i) {
        nb::gil_scoped_acquire acquire;
        nb::dict d;
        d["iteration"] = i.iteration;
        d["cost"] = i.cost;
        d["gradient_norm"] = i.gradient_norm;
        d["step"] = i.step;
        d["elapsed_s"] = i.elapsed_s;
        callback(d);
    };
}

namespace {

// PCG options from Python: the tolerance and a callable taking a dict per iteration (None: no callback).
template <typename T1>
forge::PcgOptions<T1> pcg_options(double tolerance, nb::object callback) {
    forge::PcgOptions<T1> opts;
    opts.tolerance = T1(tolerance);
    opts.callback = iteration_callback(std::move(callback));
    return opts;
}

nb::dict report_dict(const forge::SolverReport& rep) {
    nb::dict d;
    d["iterations"] = rep.iterations;
    d["converged"] = rep.converged;
    d["initial_gradient_norm"] = rep.initial_gradient_norm;
    d["final_gradient_norm"] = rep.final_gradient_norm;
    d["elapsed_s"] = rep.elapsed_s;
    return d;
}

template <typename T1>
void bind_solver_functions(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using Rob = forge::Robject<T1>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

    m.def(
        name("solve_pwls_pcg").c_str(),
        [](CIn<T1> x0, const Op& G, RIn<T1> W, CIn<T1> y, const Rob& R, uword niter, double tolerance,
           nb::object callback, COut<T1> out) {
            const char* w = "solve_pwls_pcg";
            require_size(x0, G.domain_size(), w, "x0", "the operator's domain size");
            require_size(y, G.codomain_size(), w, "y", "the operator's codomain size");
            require_size(W, G.codomain_size(), w, "weights", "the operator's codomain size");
            require_size(out, G.domain_size(), w, "out", "the operator's domain size");
            require_same_place(x0, "x0", y, "y", w);
            require_same_place(x0, "x0", W, "weights", w);
            require_same_place(x0, "x0", out, "out", w);
            const bool cuda = on_cuda(x0, w, "x0");
            const auto fx0 = col_of<forge::forgeComplex<T1>>(x0, cuda);
            const auto fy = col_of<forge::forgeComplex<T1>>(y, cuda);
            const auto fW = col_of<T1>(W, cuda);
            const forge::PcgOptions<T1> opts = pcg_options<T1>(tolerance, callback);
            forge::SolverReport rep;
            {
                nb::gil_scoped_release release;
                write_to(forge::solve_pwls_pcg<T1>(fx0, G, fW, fy, R, niter, opts, &rep), out);
            }
            return report_dict(rep);
        },
        "x0"_a.noconvert(), "G"_a, "weights"_a.noconvert(), "y"_a.noconvert(), "R"_a, "niter"_a, "tolerance"_a,
        "callback"_a.none(), "out"_a.noconvert());

    m.def(
        name("solve_pwls_pcg_normal").c_str(),
        [](CIn<T1> x0, const Op& N, CIn<T1> b, const Rob& R, uword niter, double tolerance, nb::object callback,
           COut<T1> out) {
            const char* w = "solve_pwls_pcg_normal";
            if (N.domain_size() != N.codomain_size()) {
                std::ostringstream msg;
                msg << w << ": N maps " << N.domain_size() << " to " << N.codomain_size()
                    << " entries; the normal operator must be square (NormalOf(A) makes one of A)";
                throw forge::invalid_argument(msg.str());
            }
            require_size(x0, N.domain_size(), w, "x0", "the operator's size");
            require_size(b, N.domain_size(), w, "b", "the operator's size");
            require_size(out, N.domain_size(), w, "out", "the operator's size");
            require_same_place(x0, "x0", b, "b", w);
            require_same_place(x0, "x0", out, "out", w);
            const bool cuda = on_cuda(x0, w, "x0");
            const auto fx0 = col_of<forge::forgeComplex<T1>>(x0, cuda);
            const auto fb = col_of<forge::forgeComplex<T1>>(b, cuda);
            const forge::PcgOptions<T1> opts = pcg_options<T1>(tolerance, callback);
            forge::SolverReport rep;
            {
                nb::gil_scoped_release release;
                write_to(forge::solve_pwls_pcg_normal<T1>(fx0, N, fb, R, niter, opts, &rep), out);
            }
            return report_dict(rep);
        },
        "x0"_a.noconvert(), "N"_a, "b"_a.noconvert(), "R"_a, "niter"_a, "tolerance"_a, "callback"_a.none(),
        "out"_a.noconvert());
}

}  // namespace

void bind_solvers(nb::module_& m) {
    bind_solver_functions<float>(m, "_float32");
    bind_solver_functions<double>(m, "_float64");
}

}  // namespace forge_python
