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
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/nufft/DensityCompensation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/CoilPreprocessing.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Solvers/solve_pwls_pcg.h"

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

// PCG options from Python: the tolerance and a callable taking a dict per iteration (None: no callback).
template <typename T1>
forge::PcgOptions<T1> pcg_options(double tolerance, nb::object callback) {
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
               uword kernel_width, double tolerance) {
                forge::NufftOptions o;
                o.oversampling = oversampling;
                o.kernel_width = kernel_width;
                o.tolerance = tolerance;  // > 0: overrides the two above
                new (self) forge::Gnufft<T1>(kx.size(), nx, ny, nz, to_col(kx), to_col(ky), to_col(kz), o);
            },
            "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "oversampling"_a, "kernel_width"_a, "tolerance"_a)
        .def("gpu_enabled", &forge::Gnufft<T1>::gpu_enabled)
        .def_prop_ro("kernel_width", &forge::Gnufft<T1>::kernel_width)
        .def_prop_ro("oversampling", &forge::Gnufft<T1>::oversampling)
        .def_prop_ro("tolerance", &forge::Gnufft<T1>::tolerance);

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

    using Toeplitz = forge::ToeplitzNormal<T1>;
    nb::class_<Toeplitz, Op>(m, name("ToeplitzNormal").c_str())
        .def(
            "__init__",
            [](Toeplitz* self, uword nx, uword ny, uword nz, RH kx, RH ky, RH kz, RH W, RH fm, RH t, uword L,
               int interp, bool host_build, bool grouping) {
                const forge::KernelBuild where = host_build ? forge::KernelBuild::Host : forge::KernelBuild::Auto;
                const forge::AxisGrouping g = grouping ? forge::AxisGrouping::Auto : forge::AxisGrouping::Off;
                // The build is long (adjoint DFTs): other Python threads run meanwhile.
                const arma::Col<T1> ckx = to_col(kx), cky = to_col(ky), ckz = to_col(kz), cW = to_col(W);
                const arma::Col<T1> cfm = to_col(fm), ct = to_col(t);
                try {
                    nb::gil_scoped_release release;
                    if (cfm.n_elem == 0) {
                        new (self) Toeplitz(nx, ny, nz, ckx, cky, ckz, cW, where, g);
                    } else {
                        new (self) Toeplitz(nx, ny, nz, ckx, cky, ckz, cW, cfm, ct, L,
                                            interp ? forge::TSInterp::MinMax : forge::TSInterp::Hanning, where, g);
                    }
                } catch (const std::bad_alloc&) {
                    // The constructor refuses kernels larger than half the memory; this is what remains (the
                    // machine's memory unknown, or taken by others): a MemoryError that names the size.
                    std::ostringstream m;
                    m << "ToeplitzNormal: out of memory building the operator of the " << nx << " x " << ny << " x "
                      << nz << " grid (its kernels take up to " << Toeplitz::kernel_bytes(nx, ny, nz, L) << " bytes)";
                    PyErr_SetString(PyExc_MemoryError, m.str().c_str());
                    throw nb::python_error();
                }
            },
            "nx"_a, "ny"_a, "nz"_a, "kx"_a, "ky"_a, "kz"_a, "weights"_a, "field_map"_a, "t"_a, "segments"_a, "minmax"_a,
            "host_build"_a, "axis_grouping"_a)
        .def_prop_ro("segments", &Toeplitz::segments)
        .def_prop_ro("kernel_count", &Toeplitz::kernel_count)
        .def_prop_ro("dft_count", &Toeplitz::dft_count)
        .def_prop_ro("kernel_bytes", [](const Toeplitz& T) { return T.kernel_bytes(); })
        .def_prop_ro("build_seconds", &Toeplitz::build_seconds)
        .def_prop_ro("kernels_built_on_gpu", &Toeplitz::kernels_built_on_gpu)
        .def_prop_ro("grouped_axis", &Toeplitz::grouped_axis)
        .def_static(
            "choose_segments",
            [](RH fm, RH t, double target, int interp, uword lmax) {
                return Toeplitz::choose_segments(to_col(fm), to_col(t), target,
                                                 interp ? forge::TSInterp::MinMax : forge::TSInterp::Hanning, lmax);
            },
            "field_map"_a, "t"_a, "target_error"_a, "minmax"_a, "max_segments"_a)
        .def_static(
            "kernel_bytes_for",
            [](uword nx, uword ny, uword nz, uword L) { return Toeplitz::kernel_bytes(nx, ny, nz, L); }, "nx"_a, "ny"_a,
            "nz"_a, "segments"_a);

    nb::class_<forge::WithNormal<T1>, Op>(m, name("WithNormal").c_str()).def(nb::init<OpPtr, OpPtr>(), "A"_a, "N"_a);
    nb::class_<forge::NormalOf<T1>, Op>(m, name("NormalOf").c_str()).def(nb::init<OpPtr>(), "A"_a);

    // ------------------------------------------------------------------ penalties
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

    // ------------------------------------------------------------------ density compensation
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

// ---------------------------------------------------------------------- map estimation (float32, host)
using CF = std::complex<float>;
using CHostF = nb::ndarray<const CF, nb::c_contig, nb::device::cpu>;
using RHostF = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using CHostD = nb::ndarray<const std::complex<double>, nb::c_contig, nb::device::cpu>;
template <typename T>
using HostOut = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

// A C-ordered (rows, cols) array as an arma matrix of the same orientation (a transposed copy).
template <typename T, typename A>
arma::Mat<T> c_order_matrix(const A& a, const char* where, const char* arg) {
    if (a.ndim() != 2) {
        std::ostringstream m;
        m << where << ": " << arg << " must be a 2-D array, got " << a.ndim() << " dimensions";
        throw forge::invalid_argument(m.str());
    }
    return arma::Mat<T>(const_cast<T*>(a.data()), a.shape(1), a.shape(0), false, true).st();
}
// An arma matrix into a C-ordered (rows, cols) output array.
template <typename T, typename A>
void write_c_order(const arma::Mat<T>& M, A& out, const char* where) {
    if (out.ndim() != 2 || out.shape(0) != M.n_rows || out.shape(1) != M.n_cols) {
        std::ostringstream m;
        m << where << ": out must have shape (" << M.n_rows << ", " << M.n_cols << ")";
        throw forge::invalid_argument(m.str());
    }
    const arma::Mat<T> Mt = M.st();
    std::memcpy(out.data(), Mt.memptr(), Mt.n_elem * sizeof(T));
}
// (n_echoes, n2) echo images as the library's list of vectors.
std::vector<arma::cx_fvec> echo_list(const CHostF& echoes, const char* where) {
    if (echoes.ndim() != 2) {
        std::ostringstream m;
        m << where << ": echoes must be a 2-D array (n_echoes, n_pixels), got " << echoes.ndim() << " dimensions";
        throw forge::invalid_argument(m.str());
    }
    std::vector<arma::cx_fvec> v;
    for (std::size_t e = 0; e < echoes.shape(0); ++e)
        v.emplace_back(const_cast<CF*>(echoes.data()) + e * echoes.shape(1), echoes.shape(1), true, false);
    return v;
}

void bind_maps(nb::module_& m) {
    namespace fr = forge::recon;
    m.def(
        "coil_maps_from_images",
        [](CHostF images, uword nx, uword ny, uword nz, int kernel, double threshold, HostOut<CF> maps,
           HostOut<std::uint8_t> mask) {
            const char* w = "coil_maps_from_images";
            // (n_coils, n2) C order is n2 x n_coils column-major: the coil images as the library takes them.
            if (images.ndim() != 2)
                throw forge::invalid_argument(std::string(w) + ": images must be 2-D (n_coils, n_pixels)");
            const arma::cx_fmat imgs(const_cast<CF*>(images.data()), images.shape(1), images.shape(0), false, true);
            require_size(maps, images.size(), w, "maps", "n_coils * n_pixels");
            require_size(mask, images.shape(1), w, "mask", "n_pixels");
            fr::CoilMapOptions o;
            o.kernel = kernel;
            o.threshold = threshold;
            arma::uvec msk;
            arma::cx_fvec s;
            {
                nb::gil_scoped_release release;
                s = fr::coil_maps_from_images(imgs, nx, ny, nz, o, &msk);
            }
            std::memcpy(maps.data(), s.memptr(), s.n_elem * sizeof(CF));
            for (uword i = 0; i < msk.n_elem; ++i) mask.data()[i] = std::uint8_t(msk[i] != 0);
        },
        "images"_a, "nx"_a, "ny"_a, "nz"_a, "kernel"_a, "threshold"_a, "maps"_a.noconvert(), "mask"_a.noconvert());

    m.def(
        "coil_maps",
        [](CHostF data, RHostF kx, RHostF ky, RHostF kz, uword nx, uword ny, uword nz, uword nc, double calibration,
           int kernel, double threshold, HostOut<CF> maps, HostOut<std::uint8_t> mask) {
            const char* w = "coil_maps";
            const uword n1 = kx.size();
            require_size(ky, n1, w, "ky", "the length of kx");
            require_size(kz, n1, w, "kz", "the length of kx");
            require_size(data, forge::checked_product(w, {{"n_coils", nc}, {"samples", n1}}), w, "data",
                         "n_coils * samples");
            fr::ReconProblem P;
            P.Nx = nx;
            P.Ny = ny;
            P.Nz = nz;
            P.nc = nc;
            P.source = "forge.coil_maps";
            fr::set_pixel_grid(P);
            fr::ReconFrame f;
            f.kx = arma::fvec(const_cast<float*>(kx.data()), n1);
            f.ky = arma::fvec(const_cast<float*>(ky.data()), n1);
            f.kz = arma::fvec(const_cast<float*>(kz.data()), n1);
            f.t = arma::fvec(n1, arma::fill::zeros);
            f.y = arma::cx_fvec(const_cast<CF*>(data.data()), data.size());
            P.frames.push_back(std::move(f));
            P.n1total = P.n1max = n1;
            require_size(maps, forge::checked_product(w, {{"n_coils", nc}, {"pixels", P.n2()}}), w, "maps",
                         "n_coils * nx * ny * nz");
            require_size(mask, P.n2(), w, "mask", "nx * ny * nz");
            fr::CoilMapOptions o;
            o.calibration = calibration;
            o.kernel = kernel;
            o.threshold = threshold;
            std::vector<arma::uvec> masks;
            std::array<double, 3> used{{0, 0, 0}};
            std::vector<arma::cx_fvec> s;
            {
                nb::gil_scoped_release release;
                s = fr::estimate_coil_maps(P, o, &masks, &used);
            }
            std::memcpy(maps.data(), s[0].memptr(), s[0].n_elem * sizeof(CF));
            for (uword i = 0; i < masks[0].n_elem; ++i) mask.data()[i] = std::uint8_t(masks[0][i] != 0);
            return nb::make_tuple(used[0], used[1], used[2]);
        },
        "data"_a, "kx"_a, "ky"_a, "kz"_a, "nx"_a, "ny"_a, "nz"_a, "n_coils"_a, "calibration"_a, "kernel"_a,
        "threshold"_a, "maps"_a.noconvert(), "mask"_a.noconvert());

    m.def(
        "estimate_fieldmap",
        [](CHostF echoes, std::vector<double> times, uword nx, uword ny, uword nz, double beta, int iterations,
           int init_kernel, HostOut<float> out) {
            const char* w = "estimate_fieldmap";
            const auto e = echo_list(echoes, w);
            require_size(out, echoes.ndim() == 2 ? echoes.shape(1) : 0, w, "out", "n_pixels");
            fr::FieldMapOptions o;
            o.beta = beta;
            o.iterations = iterations;
            o.initKernel = init_kernel;
            std::vector<double> cost;
            arma::fvec fm;
            {
                nb::gil_scoped_release release;
                fm = fr::estimate_fieldmap(e, times, nx, ny, nz, o, &cost);
            }
            std::memcpy(out.data(), fm.memptr(), fm.n_elem * sizeof(float));
            return cost;
        },
        "echoes"_a, "times"_a, "nx"_a, "ny"_a, "nz"_a, "beta"_a, "iterations"_a, "init_kernel"_a, "out"_a.noconvert());

    m.def(
        "phase_difference_fieldmap",
        [](CHostF echoes, std::vector<double> times, HostOut<float> out) {
            const char* w = "phase_difference_fieldmap";
            const auto e = echo_list(echoes, w);
            require_size(out, echoes.ndim() == 2 ? echoes.shape(1) : 0, w, "out", "n_pixels");
            const arma::fvec fm = fr::phase_difference_fieldmap(e, times);
            std::memcpy(out.data(), fm.memptr(), fm.n_elem * sizeof(float));
        },
        "echoes"_a, "times"_a, "out"_a.noconvert());

    // Coil matrices in the orientation of the math (y' = A y for a coil vector y), as C-ordered arrays.
    m.def(
        "noise_covariance",
        [](CHostF noise, HostOut<std::complex<double>> out) {
            // (n_coils, n_samples) C order is samples x coils column-major: the library's layout.
            if (noise.ndim() != 2)
                throw forge::invalid_argument("noise_covariance: noise must be 2-D (n_coils, n_samples)");
            const arma::cx_fmat N(const_cast<CF*>(noise.data()), noise.shape(1), noise.shape(0), false, true);
            write_c_order(fr::noise_covariance(N), out, "noise_covariance");
        },
        "noise"_a, "out"_a.noconvert());
    m.def(
        "whitening_matrix",
        [](CHostD covariance, HostOut<std::complex<double>> out) {
            const arma::cx_mat C = c_order_matrix<std::complex<double>>(covariance, "whitening_matrix", "covariance");
            write_c_order(fr::whitening_matrix(C), out, "whitening_matrix");
        },
        "covariance"_a, "out"_a.noconvert());
    m.def(
        "coil_compression_matrix",
        [](CHostF data, uword nv, HostOut<std::complex<double>> out) {
            if (data.ndim() != 2)
                throw forge::invalid_argument("coil_compression_matrix: data must be 2-D (n_coils, n_samples)");
            const arma::cx_fmat Y(const_cast<CF*>(data.data()), data.shape(1), data.shape(0), false, true);
            double energy = 0;
            arma::cx_mat A;
            {
                nb::gil_scoped_release release;
                A = fr::coil_compression_matrix(Y, nv, &energy);
            }
            write_c_order(A, out, "coil_compression_matrix");
            return energy;
        },
        "data"_a, "n_virtual"_a, "out"_a.noconvert());
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
    bind_maps(m);
}
