#pragma once
// What the binding files of forge._native share: the array types nanobind hands in, the checks of their sizes
// and residency, and the conversions to the library's vectors. One file per subject binds its part of the
// module (bind_*.cpp); module.cpp calls them in the order the types depend on each other.
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
#include <complex>
#include <functional>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Solvers/SolverCommon.h"

namespace forge_python {

namespace nb = nanobind;
using forge::uword;

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

inline constexpr int kCpu = nb::device::cpu::value;
inline constexpr int kCuda = nb::device::cuda::value;

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

// The parts of the module, in the order module.cpp calls them: a class's base before the class.
// A solver's per-iteration callback from a Python callable (bind_solvers.cpp): called with a dict of iteration,
// cost, gradient_norm, step and elapsed_s, holding the GIL; None gives no callback.
std::function<void(const forge::PcgIterationInfo&)> iteration_callback(nb::object callback);

void bind_operators(nb::module_& m);   // LinearOperator, Gdft, GdftR2, Gnufft, Gfft, density_compensation
void bind_composites(nb::module_& m);  // TimeSegmentation, SENSE, pcSENSE, ToeplitzNormal, WithNormal, NormalOf
void bind_algebra(nb::module_& m);     // Chain, Batched, StackedDiagonal, AdjointOf, VerticalStack, PythonOperator
void bind_penalties(nb::module_& m);   // Penalty, QuadPenalty, TVPenalty
void bind_solvers(nb::module_& m);     // solve_pwls_pcg, solve_pwls_pcg_normal
void bind_prox(nb::module_& m);        // ProxPenalty, L1Penalty, WaveletL1Penalty, ExactTVPenalty, PythonProxPenalty
void bind_prox_solvers(nb::module_& m);  // solve_prox (FISTA, POGM, ADMM), solve_prox_normal
void bind_maps(nb::module_& m);        // coil and field maps, coil preprocessing
void bind_recon(nb::module_& m);       // ReconSession: the reconstruction pipeline (forge/Recon/Pipeline.h)
void bind_io(nb::module_& m);          // MRD files (only when Forge::IO is built: FORGE_PYTHON_HAS_IO)

}  // namespace forge_python
