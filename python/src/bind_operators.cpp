// forge._native: the operator base class (apply of one vector or a batch, forward, adjoint or normal, on host
// or CUDA arrays) and the encoding operators Gdft, GdftR2, Gnufft and Gfft; the density compensation of a
// trajectory.
#include <chrono>
#include <memory>
#include <new>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/DensityCompensation.h"
#include "forge/Operators/nufft/Gnufft.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

enum Mode { kForward = 0, kAdjoint = 1, kNormal = 2 };

template <typename T1>
void apply(const forge::LinearOperator<T1>& op, const CIn<T1>& in, COut<T1>& out, uword nbatch, int mode) {
    const std::string where = op.name() + (mode == kForward ? " forward" : mode == kAdjoint ? " adjoint" : " normal");
    const char* w = where.c_str();
    if (nbatch == 0) throw forge::invalid_argument(where + ": nbatch must be at least 1, got 0");
    if (mode < 0 || mode > 2) throw forge::invalid_argument(where + ": mode must be 0, 1 or 2");
    const uword inSize = mode == kAdjoint ? op.codomain_size() : op.domain_size();
    const uword outSize = mode == kForward ? op.codomain_size() : op.domain_size();
    require_size(in, forge::checked_product(w, {{"input size", inSize}, {"nbatch", nbatch}}), w, "the input",
                 mode == kAdjoint ? "codomain size times nbatch" : "domain size times nbatch");
    require_size(out, forge::checked_product(w, {{"output size", outSize}, {"nbatch", nbatch}}), w, "out",
                 mode == kForward ? "codomain size times nbatch" : "domain size times nbatch");
    require_same_place(in, "the input", out, "out", w);
    const forge::Residency r = on_cuda(in, w, "the input") ? forge::Residency::Device : forge::Residency::Host;
    nb::gil_scoped_release release;
    if (mode == kNormal) {
        op.apply_normal(fc<T1>(in.data()), fc<T1>(out.data()), nbatch, r);
    } else {
        op.apply(fc<T1>(in.data()), fc<T1>(out.data()), nbatch, mode == kForward, r);
    }
}

// Python's set_devices(list) on an operator already made: the front end of DftOptions::devices, which C++ code gives
// to the constructor. It calls the C++ alias (deprecated there, kept one release), which sets the devices on this
// operator and its GPU plan in place -- an operator rebuilt with new DftOptions would not be the object that SENSE
// and the other composites already hold, and its errors would name options.devices instead of set_devices.
template <typename Op>
void set_devices(Op& op, const std::vector<int>& devices) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    op.set_devices(devices);
#pragma GCC diagnostic pop
}

// Seconds per call of `repeats` applications timed in a C++ loop (the reference for the Python overhead).
template <typename T1>
double time_apply(const forge::LinearOperator<T1>& op, const CIn<T1>& in, COut<T1>& out, uword nbatch, int mode,
                  uword repeats, bool sync_each) {
    apply(op, in, out, nbatch, mode);  // checks, and warms up
    const bool cuda = in.device_type() == kCuda;
    const forge::Residency r = cuda ? forge::Residency::Device : forge::Residency::Host;
    nb::gil_scoped_release release;
    if (cuda) forge::device::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (uword i = 0; i < repeats; ++i) {
        if (mode == kNormal) {
            op.apply_normal(fc<T1>(in.data()), fc<T1>(out.data()), nbatch, r);
        } else {
            op.apply(fc<T1>(in.data()), fc<T1>(out.data()), nbatch, mode == kForward, r);
        }
        if (cuda && sync_each) forge::device::synchronize();
    }
    if (cuda) forge::device::synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count() / double(repeats ? repeats : 1);
}

// Gnufft's samples kx, ky, kz: true when they are on a CUDA device, false on the host; a residency_error naming
// them when they are not all in one place.
template <typename T1>
bool k_on_cuda(const RIn<T1>& kx, const RIn<T1>& ky, const RIn<T1>& kz, const char* where) {
    require_same_place(kx, "kx", ky, "ky", where);
    require_same_place(kx, "kx", kz, "kz", where);
    return on_cuda(kx, where, "kx");
}
template <typename T1>
arma::Col<T1> host_k(const RIn<T1>& a) {
    return arma::Col<T1>(const_cast<T1*>(a.data()), a.size(), true, false);  // copies
}

template <typename T1>
void bind_operator_classes(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using RH = RHost<T1>;
    using RI = RIn<T1>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

    nb::class_<Op>(m, name("LinearOperator").c_str())
        .def_prop_ro("domain_size", &Op::domain_size)
        .def_prop_ro("codomain_size", &Op::codomain_size)
        .def_prop_ro("name", &Op::name)
        .def("apply", &apply<T1>, "input"_a.noconvert(), "out"_a.noconvert(), "nbatch"_a, "mode"_a,
             "Writes the forward (mode 0), adjoint (1) or normal (2) of nbatch vectors into out.")
        .def("time_apply", &time_apply<T1>, "input"_a.noconvert(), "out"_a.noconvert(), "nbatch"_a, "mode"_a,
             "repeats"_a, "sync_each"_a = false,
             "Seconds per call of `repeats` applications in a C++ loop (benchmarks).")
        .def("prepare_device", &Op::prepare_device);

    nb::class_<forge::Gdft<T1>, Op>(m, name("Gdft").c_str())
        .def(
            "__init__",
            [](forge::Gdft<T1>* self, RH kx, RH ky, RH kz, RH ix, RH iy, RH iz, RH fm, RH t) {
                new (self) forge::Gdft<T1>(kx.size(), ix.size(), to_col(kx), to_col(ky), to_col(kz), to_col(ix),
                                           to_col(iy), to_col(iz), to_col(fm), to_col(t));
            },
            "kx"_a, "ky"_a, "kz"_a, "ix"_a, "iy"_a, "iz"_a, "field_map"_a, "t"_a)
        .def("gpu_enabled", &forge::Gdft<T1>::gpu_enabled)
        .def("set_devices", &set_devices<forge::Gdft<T1>>, "devices"_a)
        .def("devices", &forge::Gdft<T1>::devices);

    nb::class_<forge::GdftR2<T1>, Op>(m, name("GdftR2").c_str())
        .def(
            "__init__",
            [](forge::GdftR2<T1>* self, RH kx, RH ky, RH kz, RH ix, RH iy, RH iz, RH fm, RH t, uword nx, uword ny,
               uword nz) {
                new (self) forge::GdftR2<T1>(kx.size(), ix.size(), to_col(kx), to_col(ky), to_col(kz), to_col(ix),
                                             to_col(iy), to_col(iz), to_col(fm), to_col(t), nx, ny, nz);
            },
            "kx"_a, "ky"_a, "kz"_a, "ix"_a, "iy"_a, "iz"_a, "field_map"_a, "t"_a, "nx"_a, "ny"_a, "nz"_a)
        .def("gpu_enabled", &forge::GdftR2<T1>::gpu_enabled)
        .def("set_devices", &set_devices<forge::GdftR2<T1>>, "devices"_a)
        .def("devices", &forge::GdftR2<T1>::devices);

    // k on the host is copied into the operator; k on a CUDA device (all three on the same one) is read there by
    // the forgeCol constructor and set_points, whose GPU plan checks and sorts it with no copy through the host.
    nb::class_<forge::Gnufft<T1>, Op>(m, name("Gnufft").c_str())
        .def(
            "__init__",
            [](forge::Gnufft<T1>* self, uword nx, uword ny, uword nz, RI kx, RI ky, RI kz, double oversampling,
               uword kernel_width, double tolerance) {
                forge::NufftOptions o;
                o.oversampling = oversampling;
                o.kernel_width = kernel_width;
                o.tolerance = tolerance;  // > 0: overrides the two above
                if (!k_on_cuda(kx, ky, kz, "Gnufft")) {
                    new (self) forge::Gnufft<T1>(kx.size(), nx, ny, nz, host_k(kx), host_k(ky), host_k(kz), o);
                    return;
                }
                o.device = kx.device_id();
                const forge::forgeCol<T1> cx = col_of<T1>(kx, true), cy = col_of<T1>(ky, true),
                                          cz = col_of<T1>(kz, true);
                nb::gil_scoped_release release;
                new (self) forge::Gnufft<T1>(kx.size(), nx, ny, nz, cx, cy, cz, o);
            },
            "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "oversampling"_a, "kernel_width"_a, "tolerance"_a)
        .def(
            "set_points",
            [](forge::Gnufft<T1>& self, RI kx, RI ky, RI kz) {
                if (!k_on_cuda(kx, ky, kz, "Gnufft.set_points")) {
                    self.set_points(host_k(kx), host_k(ky), host_k(kz));
                    return;
                }
                const forge::forgeCol<T1> cx = col_of<T1>(kx, true), cy = col_of<T1>(ky, true),
                                          cz = col_of<T1>(kz, true);
                nb::gil_scoped_release release;
                self.set_points(cx, cy, cz);
            },
            "kx"_a, "ky"_a, "kz"_a,
            "New sample positions (host or CUDA arrays, all three in one place), same grid, kernel and FFT plans.")
        .def("n1", &forge::Gnufft<T1>::n1)
        .def("gpu_enabled", &forge::Gnufft<T1>::gpu_enabled)
        .def_prop_ro("kernel_width", &forge::Gnufft<T1>::kernel_width)
        .def_prop_ro("oversampling", &forge::Gnufft<T1>::oversampling)
        .def_prop_ro("tolerance", &forge::Gnufft<T1>::tolerance);

    nb::class_<forge::Gfft<T1>, Op>(m, name("Gfft").c_str())
        .def(nb::init<uword, uword, uword>(), "nx"_a, "ny"_a, "nz"_a);
}

template <typename T1>
void bind_density_compensation(nb::module_& m, const std::string& sfx) {
    using RH = RHost<T1>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

    m.def(
        name("density_compensation").c_str(),
        [](uword nx, uword ny, uword nz, RH kx, RH ky, RH kz, uword iterations,
           nb::ndarray<T1, nb::c_contig, nb::device::cpu> out) {
            require_size(out, kx.size(), "density_compensation", "out", "the number of samples");
            arma::Col<T1> wts;
            try {
                const arma::Col<T1> ckx = to_col(kx), cky = to_col(ky), ckz = to_col(kz);
                nb::gil_scoped_release release;
                wts = forge::density_compensation<T1>(kx.size(), nx, ny, nz, ckx, cky, ckz, iterations);
            } catch (const forge::invalid_argument& e) {  // named as the Python function
                std::string m = e.what();
                const std::string cxx = "density_compensation: ";
                if (m.compare(0, cxx.size(), cxx) == 0) m.erase(0, cxx.size());
                throw forge::invalid_argument("density_compensation: " + m);
            }
            if (wts.n_elem) std::memcpy(out.data(), wts.memptr(), wts.n_elem * sizeof(T1));
        },
        "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "iterations"_a, "out"_a.noconvert());
}

}  // namespace

void bind_operators(nb::module_& m) {
    bind_operator_classes<float>(m, "_float32");
    bind_operator_classes<double>(m, "_float64");
    bind_density_compensation<float>(m, "_float32");
    bind_density_compensation<double>(m, "_float64");
}

}  // namespace forge_python
