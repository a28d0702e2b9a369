// forge._native: the proximal penalties of forge/Penalties (L1Penalty, WaveletL1Penalty, ExactTVPenalty), their value
// and prox on host or CUDA arrays, and PythonProxPenalty: a ProxPenalty whose prox (and value) are Python callables,
// so that the C++ solvers (FISTA, POGM, ADMM; bind_prox_solvers.cpp) run a penalty written in Python.
//
// prox(x, t, out) writes prox_{t lambda R}(x) into out: on the device out receives a device-to-device copy of x and
// the penalty works on a view of out in place (no host copy); on the host through a forgeCol as the other bindings.
//
// PythonProxPenalty's prox and value take the GIL (the solvers release it) and call one Python function with a
// non-owning view of the solver's vector: a NumPy array for host data, a DLPack holder of the current CUDA device for
// device data (python/forge/_prox.py copies it before user code sees it and writes the result back into the view).
// A Python exception inside leaves through the solver as nb::python_error and reaches the caller unchanged.
#include <string>
#include <utility>

#include <nanobind/stl/string.h>

#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/ProxPenalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

template <typename T1>
class PythonProxPenalty final : public forge::ProxPenalty<T1> {
public:
    using typename forge::ProxPenalty<T1>::ForgeVec;
    using forge::ProxPenalty<T1>::value;
    using forge::ProxPenalty<T1>::prox;

    // call(view, t, mode): mode 0 writes prox_{t R}(view) into view, mode 1 returns R(view) as a float. R carries its
    // own weight (lambda = 1 here). has_value false: value() is 0 (the solvers' reported cost leaves R out).
    PythonProxPenalty(uword n, nb::object call, bool hasValue, bool fixed, std::string name)
        : forge::ProxPenalty<T1>(std::move(name), forge::ImageGrid(n), T1(1)), call_(std::move(call)),
          hasValue_(hasValue), fixed_(fixed) {
        if (!call_.is_valid() || !PyCallable_Check(call_.ptr()))
            throw forge::invalid_argument(this->name() + ": the prox function must be callable");
    }
    ~PythonProxPenalty() override {
        if (Py_IsInitialized()) {
            nb::gil_scoped_acquire gil;
            call_.reset();
        }
    }

    double value(const ForgeVec& x) const override {
        this->check_length(x, "value", "x");
        if (!hasValue_) return 0.0;
        nb::gil_scoped_acquire gil;
        return nb::cast<double>(run(const_cast<ForgeVec&>(x), 0, 1, false));
    }
    void prox(ForgeVec& v, T1 t) const override {
        this->check_length(v, "prox", "v");
        this->check_step(t);
        nb::gil_scoped_acquire gil;
        run(v, double(t), 0, true);
    }
    bool fixed_between_calls() const override { return fixed_; }

    nb::handle callable() const { return call_; }
    void clear_callable() { call_.reset(); }

private:
    // Calls the Python function on a view of x (GIL held). writable: the view may be written (prox).
    nb::object run(ForgeVec& x, double t, int mode, bool writable) const {
        if (!call_.is_valid()) throw forge::invalid_argument(this->name() + ": its Python functions were released");
        using C = std::complex<T1>;
        const size_t shape[1] = {size_t(x.n_elem)};
        constexpr nb::rv_policy ref = nb::rv_policy::reference;
        nb::object view;
        if (x.on_gpu()) {
            C* p = reinterpret_cast<C*>(writable ? x.device_memptr() : const_cast<forge::forgeComplex<T1>*>(
                                                                            std::as_const(x).device_memptr()));
            view = nb::cast(nb::ndarray<C, nb::ndim<1>>(p, 1, shape, nb::handle(), nullptr, nb::dtype<C>(), kCuda,
                                                        forge::device::current_device()),
                            ref);
        } else if (writable) {
            view = nb::cast(nb::ndarray<nb::numpy, C, nb::ndim<1>>(reinterpret_cast<C*>(x.memptr()), 1, shape,
                                                                   nb::handle()),
                            ref);
        } else {
            const C* p = reinterpret_cast<const C*>(std::as_const(x).memptr());
            view = nb::cast(nb::ndarray<nb::numpy, const C, nb::ndim<1>>(p, 1, shape, nb::handle()), ref);
        }
        return call_(view, t, mode);
    }

    nb::object call_;
    bool hasValue_, fixed_;
};

template <typename T1>
int python_prox_traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self)) return 0;
    Py_VISIT(nb::inst_ptr<PythonProxPenalty<T1>>(self)->callable().ptr());
    return 0;
}
template <typename T1>
int python_prox_clear(PyObject* self) {
    if (nb::inst_ready(self)) nb::inst_ptr<PythonProxPenalty<T1>>(self)->clear_callable();
    return 0;
}

forge::WaveletFamily family_of(const std::string& name) { return forge::wavelet_family_from_name(name); }

forge::TVNorm tv_norm_of(const std::string& name) {
    if (name == "isotropic") return forge::TVNorm::Isotropic;
    if (name == "anisotropic") return forge::TVNorm::Anisotropic;
    throw forge::invalid_argument("ExactTVPenalty: norm must be 'isotropic' or 'anisotropic', got '" + name + "'");
}

template <typename T1>
void bind_prox_classes(nb::module_& m, const std::string& sfx) {
    const auto name = [&](const char* base) { return std::string(base) + sfx; };
    using Prox = forge::ProxPenalty<T1>;
    using Vec = typename Prox::ForgeVec;

    nb::class_<Prox>(m, name("ProxPenalty").c_str())
        .def(
            "value",
            [](const Prox& R, CIn<T1> x) {
                const Vec fx = col_of<forge::forgeComplex<T1>>(x, on_cuda(x, "value", "x"));
                nb::gil_scoped_release release;
                return R.value(fx);
            },
            "x"_a.noconvert())
        .def(
            "prox",
            [](const Prox& R, CIn<T1> x, double t, COut<T1> out) {
                const char* w = "prox";
                require_size(out, x.size(), w, "out", "the length of x");
                require_same_place(x, "x", out, "out", w);
                const bool cuda = on_cuda(x, w, "x");
                nb::gil_scoped_release release;
                if (cuda) {
                    // prox in place on a view of out, which first receives x (device to device).
                    auto* po = fc<T1>(out.data());
                    if (x.size()) forge::device::copy_on_device(po, x.data(), x.size() * sizeof(std::complex<T1>));
                    Vec v = Vec::device_view(po, out.size());
                    R.prox(v, T1(t));
                    if (v.n_elem && v.device_memptr() != po) write_to(v, out);  // rebound to a result of its own
                } else {
                    Vec v = col_of<forge::forgeComplex<T1>>(x, false);
                    R.prox(v, T1(t));
                    write_to(v, out);
                }
            },
            "x"_a.noconvert(), "t"_a, "out"_a.noconvert())
        .def_prop_ro("lam", [](const Prox& R) { return double(R.lambda()); })
        .def_prop_ro("n_pixels", [](const Prox& R) { return R.n_pixels(); })
        .def_prop_ro("fixed_between_calls", [](const Prox& R) { return R.fixed_between_calls(); })
        .def_prop_ro("name", [](const Prox& R) { return R.name(); });

    nb::class_<forge::L1Penalty<T1>, Prox>(m, name("L1Penalty").c_str())
        .def(
            "__init__",
            [](forge::L1Penalty<T1>* self, uword nx, uword ny, uword nz, double lam) {
                new (self) forge::L1Penalty<T1>(forge::ImageGrid(nx, ny, nz), T1(lam));
            },
            "nx"_a, "ny"_a, "nz"_a, "lam"_a);

    nb::class_<forge::WaveletL1Penalty<T1>, Prox>(m, name("WaveletL1Penalty").c_str())
        .def(
            "__init__",
            [](forge::WaveletL1Penalty<T1>* self, uword nx, uword ny, uword nz, double lam, const std::string& family,
               uword levels, bool randomShift, std::uint64_t seed, bool penalizeCoarse) {
                forge::WaveletL1Options o;
                o.family = family_of(family);
                o.levels = levels;
                o.random_shift = randomShift;
                o.seed = seed;
                o.penalize_coarse = penalizeCoarse;
                new (self) forge::WaveletL1Penalty<T1>(forge::ImageGrid(nx, ny, nz), T1(lam), o);
            },
            "nx"_a, "ny"_a, "nz"_a, "lam"_a, "wavelet"_a, "levels"_a, "random_shift"_a, "seed"_a,
            "penalize_coarse"_a)
        .def_prop_ro("levels", [](const forge::WaveletL1Penalty<T1>& R) { return R.transform().levels(); })
        .def(
            "transform",
            [](const forge::WaveletL1Penalty<T1>& R, CIn<T1> x, bool forward, COut<T1> out) {
                const char* w = forward ? "wavelet_forward" : "wavelet_inverse";
                require_size(out, x.size(), w, "out", "the length of x");
                require_same_place(x, "x", out, "out", w);
                const Vec fx = col_of<forge::forgeComplex<T1>>(x, on_cuda(x, w, "x"));
                nb::gil_scoped_release release;
                write_to(forward ? R.transform().forward(fx) : R.transform().inverse(fx), out);
            },
            "x"_a.noconvert(), "forward"_a, "out"_a.noconvert());

    nb::class_<forge::ExactTVPenalty<T1>, Prox>(m, name("ExactTVPenalty").c_str())
        .def(
            "__init__",
            [](forge::ExactTVPenalty<T1>* self, uword nx, uword ny, uword nz, double lam, const std::string& norm,
               uword iterations, bool warmStart) {
                forge::ExactTVOptions o;
                o.norm = tv_norm_of(norm);
                o.iterations = iterations;
                o.warm_start = warmStart;
                new (self) forge::ExactTVPenalty<T1>(forge::ImageGrid(nx, ny, nz), T1(lam), o);
            },
            "nx"_a, "ny"_a, "nz"_a, "lam"_a, "norm"_a, "iterations"_a, "warm_start"_a)
        .def("reset", [](const forge::ExactTVPenalty<T1>& R) { R.reset(); });

    static PyType_Slot slots[] = {{Py_tp_traverse, (void*)python_prox_traverse<T1>},
                                  {Py_tp_clear, (void*)python_prox_clear<T1>},
                                  {0, nullptr}};
    nb::class_<PythonProxPenalty<T1>, Prox>(m, name("PythonProxPenalty").c_str(), nb::type_slots(slots))
        .def(nb::init<uword, nb::object, bool, bool, std::string>(), "n"_a, "call"_a, "has_value"_a,
             "fixed_between_calls"_a, "name"_a);
}

}  // namespace

void bind_prox(nb::module_& m) {
    bind_prox_classes<float>(m, "_float32");
    bind_prox_classes<double>(m, "_float64");
}

}  // namespace forge_python
