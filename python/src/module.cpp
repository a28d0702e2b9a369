// forge._native: the nanobind extension behind the Python package forge (python/forge/). bindings.h says how
// arrays cross; each bind_*.cpp binds one subject; this file makes the module: the exceptions, the device
// functions, then the parts in dependency order.
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"

namespace nb = nanobind;

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

    forge_python::bind_operators(m);
    forge_python::bind_composites(m);
    forge_python::bind_algebra(m);
    forge_python::bind_penalties(m);
    forge_python::bind_solvers(m);
    forge_python::bind_prox(m);
    forge_python::bind_prox_solvers(m);
    forge_python::bind_maps(m);
    forge_python::bind_recon(m);
#ifdef FORGE_PYTHON_HAS_IO
    forge_python::bind_io(m);
#else
    m.def("has_mrd", [] { return false; });
#endif
}
