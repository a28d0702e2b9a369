// forge._native: the roughness penalties (value, gradient and curvature on host or CUDA arrays).
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

template <typename T1>
void bind_penalty_classes(nb::module_& m, const std::string& sfx) {
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

    using Rob = forge::Robject<T1>;
    nb::class_<Rob>(m, name("Penalty").c_str())
        .def(
            "penalty",
            [](const Rob& R, CIn<T1> x) {
                const bool cuda = on_cuda(x, "penalty", "x");
                const auto fx = col_of<forge::forgeComplex<T1>>(x, cuda);
                nb::gil_scoped_release release;
                return double(R.penalty(fx));
            },
            "x"_a.noconvert())
        .def(
            "gradient",
            [](const Rob& R, CIn<T1> x, COut<T1> out) {
                require_size(out, x.size(), "gradient", "out", "the length of x");
                require_same_place(x, "x", out, "out", "gradient");
                const auto fx = col_of<forge::forgeComplex<T1>>(x, on_cuda(x, "gradient", "x"));
                nb::gil_scoped_release release;
                write_to(R.gradient(fx), out);
            },
            "x"_a.noconvert(), "out"_a.noconvert())
        .def(
            "denom",
            [](const Rob& R, CIn<T1> d, CIn<T1> x) {
                require_same_place(d, "d", x, "x", "denom");
                const bool cuda = on_cuda(x, "denom", "x");
                const auto fd = col_of<forge::forgeComplex<T1>>(d, cuda);
                const auto fx = col_of<forge::forgeComplex<T1>>(x, cuda);
                nb::gil_scoped_release release;
                return double(R.denom(fd, fx));
            },
            "d"_a.noconvert(), "x"_a.noconvert());
    nb::class_<forge::QuadPenalty<T1>, Rob>(m, name("QuadPenalty").c_str())
        .def(nb::init<uword, uword, uword, T1>(), "nx"_a, "ny"_a, "nz"_a, "beta"_a);
    nb::class_<forge::TVPenalty<T1>, Rob>(m, name("TVPenalty").c_str())
        .def(nb::init<uword, uword, uword, T1, T1>(), "nx"_a, "ny"_a, "nz"_a, "beta"_a, "delta"_a);
}

}  // namespace

void bind_penalties(nb::module_& m) {
    bind_penalty_classes<float>(m, "_float32");
    bind_penalty_classes<double>(m, "_float64");
}

}  // namespace forge_python
