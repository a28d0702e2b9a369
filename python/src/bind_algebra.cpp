// forge._native: the composition operators of forge/Operators/Composition.h (Chain, Batched, StackedDiagonal,
// AdjointOf, VerticalStack), from which the Python package builds A @ B, A + B, a * A, A.H and its stacking
// helpers, and PythonOperator: an operator whose forward, adjoint (and optionally normal) are Python callables,
// usable inside every composite and by the solvers.
//
// PythonOperator's C++ apply takes the GIL (the solvers and applies release it while forge computes) and calls
// one Python function with non-owning views of the input and output buffers: NumPy arrays for host data, DLPack
// capsule holders (nanobind ndarrays) of the current CUDA device for device data. The views live for the call
// only; python/forge/_algebra.py copies the input before handing it to user code and writes the result into the
// output view. A Python exception inside the callable leaves through the C++ operator as nb::python_error and
// reaches the caller unchanged.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "forge/Operators/Composition.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

template <typename T1>
class PythonOperator final : public forge::LinearOperator<T1> {
public:
    using typename forge::LinearOperator<T1>::Elem;
    // call(input_view, output_view, nbatch, mode): mode 0 forward, 1 adjoint, 2 normal (only when has_normal).
    PythonOperator(uword codomainSize, uword domainSize, nb::object call, bool hasNormal, std::string name)
        : forge::LinearOperator<T1>(std::move(name), codomainSize, domainSize), call_(std::move(call)),
          hasNormal_(hasNormal) {
        if (!call_.is_valid() || !PyCallable_Check(call_.ptr()))
            throw forge::invalid_argument(this->name() + ": the apply function must be callable");
    }
    ~PythonOperator() override {
        // The last owner may be a composite released by C++ code; the callable needs the GIL to go.
        if (Py_IsInitialized()) {
            nb::gil_scoped_acquire gil;
            call_.reset();
        }
    }

    // Python's garbage collector sees the callable through the operator (tp_traverse below): a callable that
    // refers back to the operator (a closure over module globals) forms a cycle it can then collect.
    nb::handle callable() const { return call_; }
    void clear_callable() { call_.reset(); }

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        run(in, out, nbatch, forward ? 0 : 1, false);
    }
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        run(in, out, nbatch, forward ? 0 : 1, true);
    }
    void normal_impl(const Elem* in, Elem* out, uword nbatch, forge::Residency where) const override {
        if (!hasNormal_) return forge::LinearOperator<T1>::normal_impl(in, out, nbatch, where);
        run(in, out, nbatch, 2, where == forge::Residency::Device);
    }

private:
    void run(const Elem* in, Elem* out, uword nbatch, int mode, bool device) const {
        const uword nin = (mode == 1 ? this->codomain_size() : this->domain_size()) * nbatch;
        const uword nout = (mode == 0 ? this->codomain_size() : this->domain_size()) * nbatch;
        using C = std::complex<T1>;
        C* pin = reinterpret_cast<C*>(const_cast<Elem*>(in));
        C* pout = reinterpret_cast<C*>(out);
        const size_t sin[1] = {size_t(nin)}, sout[1] = {size_t(nout)};
        nb::gil_scoped_acquire gil;
        if (!call_.is_valid()) throw forge::invalid_argument(this->name() + ": its Python functions were released");
        // Views, not copies (nanobind copies an owner-less array under its default policy).
        constexpr nb::rv_policy ref = nb::rv_policy::reference;
        nb::object vin, vout;
        if (device) {
            const int id = forge::device::current_device();
            vin = nb::cast(nb::ndarray<C, nb::ndim<1>>(pin, 1, sin, nb::handle(), nullptr, nb::dtype<C>(), kCuda, id),
                           ref);
            vout = nb::cast(
                nb::ndarray<C, nb::ndim<1>>(pout, 1, sout, nb::handle(), nullptr, nb::dtype<C>(), kCuda, id), ref);
        } else {
            vin = nb::cast(nb::ndarray<nb::numpy, const C, nb::ndim<1>>(pin, 1, sin, nb::handle()), ref);
            vout = nb::cast(nb::ndarray<nb::numpy, C, nb::ndim<1>>(pout, 1, sout, nb::handle()), ref);
        }
        call_(vin, vout, nbatch, mode);
    }

    nb::object call_;
    bool hasNormal_;
};

template <typename T1>
int python_operator_traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self)) return 0;
    Py_VISIT(nb::inst_ptr<PythonOperator<T1>>(self)->callable().ptr());
    return 0;
}
template <typename T1>
int python_operator_clear(PyObject* self) {
    if (nb::inst_ready(self)) nb::inst_ptr<PythonOperator<T1>>(self)->clear_callable();
    return 0;
}

template <typename T1>
void bind_algebra_classes(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using OpPtr = std::shared_ptr<Op>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };
    const auto part = [](const OpPtr& p) { return std::shared_ptr<const Op>(p); };

    nb::class_<forge::Chain<T1>, Op>(m, name("Chain").c_str())
        .def(
            "__init__",
            [part](forge::Chain<T1>* self, OpPtr first, OpPtr then) {
                new (self) forge::Chain<T1>(part(first), part(then));
            },
            "first"_a, "then"_a);
    nb::class_<forge::Batched<T1>, Op>(m, name("Batched").c_str())
        .def(
            "__init__",
            [part](forge::Batched<T1>* self, OpPtr A, uword copies) {
                new (self) forge::Batched<T1>(part(A), copies);
            },
            "A"_a, "copies"_a);
    nb::class_<forge::StackedDiagonal<T1>, Op>(m, name("StackedDiagonal").c_str())
        .def(
            "__init__",
            [](forge::StackedDiagonal<T1>* self, CHost<T1> weights, uword copies, std::string label) {
                new (self) forge::StackedDiagonal<T1>(to_ccol(weights), copies, std::move(label));
            },
            "weights"_a, "copies"_a, "name"_a);
    nb::class_<forge::AdjointOf<T1>, Op>(m, name("AdjointOf").c_str())
        .def(
            "__init__", [part](forge::AdjointOf<T1>* self, OpPtr A) { new (self) forge::AdjointOf<T1>(part(A)); },
            "A"_a);
    nb::class_<forge::VerticalStack<T1>, Op>(m, name("VerticalStack").c_str())
        .def(
            "__init__",
            [part](forge::VerticalStack<T1>* self, const std::vector<OpPtr>& blocks) {
                std::vector<forge::OperatorPtr<T1>> b;
                for (const auto& p : blocks) b.push_back(part(p));
                new (self) forge::VerticalStack<T1>(std::move(b));
            },
            "blocks"_a);
    static PyType_Slot slots[] = {{Py_tp_traverse, (void*)python_operator_traverse<T1>},
                                  {Py_tp_clear, (void*)python_operator_clear<T1>},
                                  {0, nullptr}};
    nb::class_<PythonOperator<T1>, Op>(m, name("PythonOperator").c_str(), nb::type_slots(slots))
        .def(nb::init<uword, uword, nb::object, bool, std::string>(), "codomain_size"_a, "domain_size"_a,
             "call"_a, "has_normal"_a, "name"_a);
}

}  // namespace

void bind_algebra(nb::module_& m) {
    bind_algebra_classes<float>(m, "_float32");
    bind_algebra_classes<double>(m, "_float64");
}

}  // namespace forge_python
