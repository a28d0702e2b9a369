// forge._native: the nanobind extension behind the Python package forge (python/forge/).
//
// Arrays arrive as nanobind ndarrays, i.e. through DLPack, so NumPy, CuPy, PyTorch and JAX arrays come in
// without copies. The Python layer (python/forge/_arrays.py) checks dtypes, shapes and contiguity with
// messages that name the argument, and allocates every output with the input's own library; this layer
// checks sizes and residency again (a second line: it is reachable directly) and runs the C++ code on the
// raw memory: host arrays on the CPU path, CUDA arrays on the GPU path (device memory wrapped by
// forgeCol::device_view where a forgeCol is needed), results written into the caller's output array, so
// nothing crosses between host and device. The GIL is released while forge computes.
//
// Classes are bound once per precision with a suffix: Gdft_float32, Gdft_float64, ...
#include <chrono>
#include <complex>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/DensityCompensation.h"
#include "forge/Operators/Gdft.h"
#include "forge/Operators/GdftR2.h"
#include "forge/Operators/Gfft.h"
#include "forge/Operators/Gnufft.h"
#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using forge::uword;

namespace {

template <typename T1>
using CIn = nb::ndarray<const std::complex<T1>, nb::c_contig>;
template <typename T1>
using COut = nb::ndarray<std::complex<T1>, nb::c_contig>;
template <typename T1>
using RIn = nb::ndarray<const T1, nb::c_contig>;
template <typename T1>
using ROut = nb::ndarray<T1, nb::c_contig>;
// Geometry (trajectories, coordinates, maps) is copied into the operator at construction: host arrays only.
template <typename T1>
using RHost = nb::ndarray<const T1, nb::c_contig, nb::device::cpu>;
template <typename T1>
using CHost = nb::ndarray<const std::complex<T1>, nb::c_contig, nb::device::cpu>;

constexpr int kCpu = nb::device::cpu::value;
constexpr int kCuda = nb::device::cuda::value;

template <typename A>
bool on_cuda(const A& a, const char* where, const char* arg) {
    const int d = a.device_type();
    if (d == kCpu) return false;
    if (d == kCuda) return true;
    std::ostringstream m;
    m << where << ": " << arg << " lives on DLPack device type " << d
      << "; forge takes host (CPU) arrays and CUDA device arrays only";
    throw forge::invalid_argument(m.str());
}

// All arrays of one call on the host, or all on the same CUDA device: forge never copies between them.
template <typename A, typename B>
void require_same_place(const A& a, const char* an, const B& b, const char* bn, const char* where) {
    const bool ca = on_cuda(a, where, an), cb = on_cuda(b, where, bn);
    if (ca != cb || (ca && a.device_id() != b.device_id())) {
        std::ostringstream m;
        m << where << ": " << an << " is on " << (ca ? "a CUDA device" : "the host") << " and " << bn << " on "
          << (cb ? "a CUDA device" : "the host") << (ca && cb ? " (another one)" : "")
          << "; all arrays of one call must live in the same place (forge never copies between them)";
        throw forge::residency_error(m.str());
    }
}

template <typename A>
void require_size(const A& a, uword expected, const char* where, const char* arg, const char* what) {
    if (a.size() != expected) {
        std::ostringstream m;
        m << where << ": " << arg << " has " << a.size() << " entries, expected " << what << " = " << expected;
        throw forge::invalid_argument(m.str());
    }
}

template <typename T1>
arma::Col<T1> to_col(const RHost<T1>& a) {
    return arma::Col<T1>(const_cast<T1*>(a.data()), a.size(), true, false);  // copies
}
template <typename T1>
arma::Col<std::complex<T1>> to_ccol(const CHost<T1>& a) {
    return arma::Col<std::complex<T1>>(const_cast<std::complex<T1>*>(a.data()), a.size(), true, false);
}
// A rows x cols column-major matrix from a C-ordered (cols, rows) array: the same memory.
template <typename T1>
arma::Mat<T1> to_mat(const RHost<T1>& a, const char* where, const char* arg) {
    if (a.ndim() != 2) {
        std::ostringstream m;
        m << where << ": " << arg << " must be a 2-D array, got " << a.ndim() << " dimensions";
        throw forge::invalid_argument(m.str());
    }
    return arma::Mat<T1>(const_cast<T1*>(a.data()), a.shape(1), a.shape(0), true, false);
}

template <typename T1>
const forge::forgeComplex<T1>* fc(const std::complex<T1>* p) {
    return reinterpret_cast<const forge::forgeComplex<T1>*>(p);
}
template <typename T1>
forge::forgeComplex<T1>* fc(std::complex<T1>* p) {
    return reinterpret_cast<forge::forgeComplex<T1>*>(p);
}

// A forgeCol over an input array: a device view of CUDA memory (no copy), or a host copy.
template <typename E, typename A>
forge::forgeCol<E> col_of(const A& a, bool cuda) {
    using S = std::remove_const_t<std::remove_pointer_t<decltype(a.data())>>;
    static_assert(sizeof(S) == sizeof(E), "element layouts must match");
    E* p = reinterpret_cast<E*>(const_cast<S*>(a.data()));
    if (cuda) return forge::forgeCol<E>::device_view(p, a.size());
    forge::forgeCol<E> c(a.size());
    if (a.size()) std::memcpy(static_cast<void*>(c.memptr()), p, a.size() * sizeof(E));
    return c;
}
// Writes a result into the caller's output array where both live (device-to-device or host copy).
template <typename E, typename A>
void write_to(const forge::forgeCol<E>& r, A& out) {
    void* dst = out.data();
    if (r.on_gpu()) {
        if (r.n_elem) forge::device::copy_on_device(dst, r.device_memptr(), r.n_elem * sizeof(E));
    } else if (r.n_elem) {
        std::memcpy(dst, r.memptr(), r.n_elem * sizeof(E));
    }
}

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

template <typename T1>
void bind_precision(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using OpPtr = std::shared_ptr<Op>;
    using RH = RHost<T1>;
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
        .def("set_devices", &forge::Gdft<T1>::set_devices, "devices"_a)
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
        .def("set_devices", &forge::GdftR2<T1>::set_devices, "devices"_a)
        .def("devices", &forge::GdftR2<T1>::devices);

    nb::class_<forge::Gnufft<T1>, Op>(m, name("Gnufft").c_str())
        .def(
            "__init__",
            [](forge::Gnufft<T1>* self, uword nx, uword ny, uword nz, RH kx, RH ky, RH kz, double oversampling,
               uword kernel_width) {
                forge::NufftOptions o;
                o.oversampling = oversampling;
                o.kernelWidth = kernel_width;
                new (self) forge::Gnufft<T1>(kx.size(), nx, ny, nz, to_col(kx), to_col(ky), to_col(kz), o);
            },
            "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "oversampling"_a, "kernel_width"_a)
        .def("gpu_enabled", &forge::Gnufft<T1>::gpu_enabled);

    nb::class_<forge::Gfft<T1>, Op>(m, name("Gfft").c_str())
        .def(nb::init<uword, uword, uword>(), "nx"_a, "ny"_a, "nz"_a);

    nb::class_<forge::TimeSegmentationCore<T1>, Op>(m, name("TimeSegmentation").c_str())
        .def(
            "__init__",
            [](forge::TimeSegmentationCore<T1>* self, OpPtr G, RH fm, RH t, uword L, int interp) {
                new (self) forge::TimeSegmentationCore<T1>(G, to_col(fm), to_col(t), L,
                                                           interp ? forge::TSInterp::MinMax : forge::TSInterp::Hanning);
            },
            "G"_a, "field_map"_a, "t"_a, "segments"_a, "minmax"_a)
        .def_prop_ro("segments", &forge::TimeSegmentationCore<T1>::L)
        .def_static(
            "choose_segments",
            [](RH fm, RH t, double target, int interp, uword lmax) {
                const forge::TSErrorReport r = forge::TimeSegmentationCore<T1>::choose_segments(
                    to_col(fm), to_col(t), target, interp ? forge::TSInterp::MinMax : forge::TSInterp::Hanning, lmax);
                return nb::make_tuple(r.L, r.rms_error, r.max_error);
            },
            "field_map"_a, "t"_a, "target_error"_a, "minmax"_a, "max_segments"_a);

    using Sense = forge::SENSE<T1, Op>;
    nb::class_<Sense, Op>(m, name("SENSE").c_str())
        .def(
            "__init__",
            [](Sense* self, OpPtr G, CHost<T1> maps, uword nc) {
                new (self) Sense(std::shared_ptr<const Op>(G), to_ccol(maps), nc);
            },
            "G"_a, "maps"_a, "n_coils"_a)
        .def_prop_ro("n_coils", &Sense::n_coils);

    nb::class_<forge::pcSENSE<T1>, Op>(m, name("pcSENSE").c_str())
        .def(
            "__init__",
            [](forge::pcSENSE<T1>* self, RH kx, RH ky, RH kz, RH t, RH ix, RH iy, RH iz, RH fm, CHost<T1> maps,
               RH phases, uword nc) {
                const char* w = "pcSENSE";
                new (self) forge::pcSENSE<T1>(to_mat(kx, w, "kx"), to_mat(ky, w, "ky"), to_mat(kz, w, "kz"),
                                              to_mat(t, w, "t"), to_col(ix), to_col(iy), to_col(iz), to_col(fm),
                                              to_ccol(maps), to_mat(phases, w, "shot_phases"), nc);
            },
            "kx"_a, "ky"_a, "kz"_a, "t"_a, "ix"_a, "iy"_a, "iz"_a, "field_map"_a, "maps"_a, "shot_phases"_a,
            "n_coils"_a)
        .def_prop_ro("n_coils", &forge::pcSENSE<T1>::n_coils)
        .def_prop_ro("n_shots", &forge::pcSENSE<T1>::n_shots);

    // The Toeplitz normal operator (forge/Operators/ToeplitzNormal.h) binds here, as a subclass of Op whose
    // normal() is the Toeplitz embedding; the Python class forge.ToeplitzNormal wraps it.

    // ------------------------------------------------------------------ penalties
    using Rob = forge::Robject<T1>;
    nb::class_<Rob>(m, name("Penalty").c_str())
        .def(
            "penalty",
            [](const Rob& R, CIn<T1> x) {
                const bool cuda = on_cuda(x, "penalty", "x");
                const auto fx = col_of<forge::forgeComplex<T1>>(x, cuda);
                nb::gil_scoped_release release;
                return double(R.Penalty(fx));
            },
            "x"_a.noconvert())
        .def(
            "gradient",
            [](const Rob& R, CIn<T1> x, COut<T1> out) {
                require_size(out, x.size(), "gradient", "out", "the length of x");
                require_same_place(x, "x", out, "out", "gradient");
                const auto fx = col_of<forge::forgeComplex<T1>>(x, on_cuda(x, "gradient", "x"));
                nb::gil_scoped_release release;
                write_to(R.Gradient(fx), out);
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
                return double(R.Denom(fd, fx));
            },
            "d"_a.noconvert(), "x"_a.noconvert());
    nb::class_<forge::QuadPenalty<T1>, Rob>(m, name("QuadPenalty").c_str())
        .def(nb::init<uword, uword, uword, T1>(), "nx"_a, "ny"_a, "nz"_a, "beta"_a);
    nb::class_<forge::TVPenalty<T1>, Rob>(m, name("TVPenalty").c_str())
        .def(nb::init<uword, uword, uword, T1, T1>(), "nx"_a, "ny"_a, "nz"_a, "beta"_a, "delta"_a);

    // ------------------------------------------------------------------ solver
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
            forge::PcgOptions<T1> opts;
            opts.tolerance = T1(tolerance);
            if (!callback.is_none()) {
                opts.callback = [callback](const forge::PcgIterationInfo& i) {
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
            forge::SolverReport rep;
            {
                nb::gil_scoped_release release;
                write_to(forge::solve_pwls_pcg<T1>(fx0, G, fW, fy, R, niter, opts, &rep), out);
            }
            nb::dict d;
            d["iterations"] = rep.iterations;
            d["converged"] = rep.converged;
            d["initial_gradient_norm"] = rep.initial_gradient_norm;
            d["final_gradient_norm"] = rep.final_gradient_norm;
            d["elapsed_s"] = rep.elapsed_s;
            return d;
        },
        "x0"_a.noconvert(), "G"_a, "weights"_a.noconvert(), "y"_a.noconvert(), "R"_a, "niter"_a, "tolerance"_a,
        "callback"_a.none(), "out"_a.noconvert());

    // ------------------------------------------------------------------ density compensation
    m.def(
        name("density_compensation").c_str(),
        [](uword nx, uword ny, uword nz, RH kx, RH ky, RH kz, uword iterations,
           nb::ndarray<T1, nb::c_contig, nb::device::cpu> out) {
            require_size(out, kx.size(), "density_compensation", "out", "the number of samples");
            arma::Col<T1> wts;
            {
                const arma::Col<T1> ckx = to_col(kx), cky = to_col(ky), ckz = to_col(kz);
                nb::gil_scoped_release release;
                wts = forge::calc3DDensityCompensation<T1>(kx.size(), nx, ny, nz, ckx, cky, ckz, iterations);
            }
            if (wts.n_elem) std::memcpy(out.data(), wts.memptr(), wts.n_elem * sizeof(T1));
        },
        "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "iterations"_a, "out"_a.noconvert());

    // Map estimators (forge/Recon) bind here once they are part of the library.
}

}  // namespace

NB_MODULE(_native, m) {
    m.doc() = "forge's C++ library; use the Python package forge, which wraps this module";
    nb::exception<forge::residency_error>(m, "ResidencyError", PyExc_RuntimeError);
    nb::exception<forge::cuda_error>(m, "CudaError", PyExc_RuntimeError);
    // forge::invalid_argument derives from std::invalid_argument: nanobind raises ValueError for it.

    m.def("built_with_cuda", &forge::device::built_with_cuda);
    m.def("cuda_available", &forge::device::available);
    m.def("device_name", [] { return std::string(forge::device::device_name()); });
    m.def("synchronize", [] {
        nb::gil_scoped_release release;
        forge::device::synchronize();
    });
    m.def("transfer_stats", [] {
        const auto s = forge::device::transfer_stats();
        nb::dict d;
        d["host_to_device_count"] = s.host_to_device_count;
        d["host_to_device_bytes"] = s.host_to_device_bytes;
        d["device_to_host_count"] = s.device_to_host_count;
        d["device_to_host_bytes"] = s.device_to_host_bytes;
        return d;
    });
    m.def("reset_transfer_stats", &forge::device::reset_transfer_stats);

    bind_precision<float>(m, "_float32");
    bind_precision<double>(m, "_float64");
}
