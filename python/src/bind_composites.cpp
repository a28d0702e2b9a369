// forge._native: operators built from others: TimeSegmentation, SENSE, pcSENSE, ToeplitzNormal, and WithNormal /
// NormalOf, which pair an operator with a normal of its own.
#include <memory>
#include <new>

#include <nanobind/stl/shared_ptr.h>

#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

template <typename T1>
void bind_composite_classes(nb::module_& m, const std::string& sfx) {
    using Op = forge::LinearOperator<T1>;
    using OpPtr = std::shared_ptr<Op>;
    using RH = RHost<T1>;
    const auto name = [&](const char* base) { return std::string(base) + sfx; };

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
                forge::ToeplitzOptions options;
                options.build = host_build ? forge::KernelBuild::Host : forge::KernelBuild::Auto;
                options.grouping = grouping ? forge::AxisGrouping::Auto : forge::AxisGrouping::Off;
                // The build is long (adjoint DFTs): other Python threads run meanwhile.
                const arma::Col<T1> ckx = to_col(kx), cky = to_col(ky), ckz = to_col(kz), cW = to_col(W);
                const arma::Col<T1> cfm = to_col(fm), ct = to_col(t);
                try {
                    nb::gil_scoped_release release;
                    if (cfm.n_elem == 0) {
                        new (self) Toeplitz(nx, ny, nz, ckx, cky, ckz, cW, options);
                    } else {
                        new (self) Toeplitz(nx, ny, nz, ckx, cky, ckz, cW, cfm, ct, L,
                                            interp ? forge::TSInterp::MinMax : forge::TSInterp::Hanning, options);
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
}

}  // namespace

void bind_composites(nb::module_& m) {
    bind_composite_classes<float>(m, "_float32");
    bind_composite_classes<double>(m, "_float64");
}

}  // namespace forge_python
