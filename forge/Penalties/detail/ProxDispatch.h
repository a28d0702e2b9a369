#pragma once
// The element-wise steps of the proximal penalties on forgeCol, each run where its vector lives: OpenMP loops over
// the FORGE_HD functions of forge/Penalties/cuda/ProxKernels.h on the host, the kernels of ProxDevice.h on the GPU.
// Private to forge/Penalties.
#include <string>

#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Penalties/cuda/ProxDevice.h"
#include "forge/Penalties/cuda/ProxKernels.h"

namespace forge {
namespace prox {

template <typename T1>
using CVec = forgeCol<forgeComplex<T1>>;

inline void require_same_place(const char* where, bool a, bool b) {
    if (a != b) throw residency_error(std::string(where) + ": the vectors must both be on the GPU or both on the host");
}

// x <- soft(x, tau), except inside the box d.len when skip_box.
template <typename T1>
void soft_threshold(CVec<T1>& x, T1 tau, const Dims& d, bool skip_box) {
    const uword n = x.n_elem;
    if (x.on_gpu()) return cuda::prox_soft_threshold<T1>(x.device_memptr(), n, tau, d, skip_box);
    forgeComplex<T1>* p = x.memptr();
#pragma omp parallel for if (n > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(n); ++i)
        if (!(skip_box && in_box(d, uword(i)))) p[i] = soft(p[i], tau);
}

// sum_i |x_i| in double, leaving out the box d.len when skip_box.
template <typename T1>
double abs_sum(const CVec<T1>& x, const Dims& d, bool skip_box) {
    const uword n = x.n_elem;
    if (x.on_gpu()) {
        forgeCol<T1> v = forgeCol<T1>::device_uninitialized(n);
        cuda::prox_abs_values<T1>(x.device_memptr(), v.device_memptr(), n, d, skip_box);
        return double(sum(v));
    }
    const forgeComplex<T1>* p = x.memptr();
    return detail::fixed_order_sum<double>(n, n > detail::kParallelThreshold, [&](std::size_t i, double& acc) {
        if (!(skip_box && in_box(d, uword(i)))) acc += std::sqrt(double(abs2(p[i])));
    });
}

// out = one analysis or synthesis pass of in along 'axis' of the box d.len (out and in distinct, same place).
template <typename T1>
void wavelet_pass(const CVec<T1>& in, CVec<T1>& out, const Dims& d, int axis, const Filters<T1>& f, bool analysis) {
    require_same_place("wavelet_pass", in.on_gpu(), out.on_gpu());
    if (in.on_gpu()) return cuda::prox_wavelet_pass<T1>(in.device_memptr(), out.device_memptr(), d, axis, f, analysis);
    const uword n = in.n_elem;
    const forgeComplex<T1>* pi = in.memptr();
    forgeComplex<T1>* po = out.memptr();
#pragma omp parallel for if (n > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(n); ++i)
        po[i] = analysis ? analysis_at(uword(i), pi, d, axis, f) : synthesis_at(uword(i), pi, d, axis, f);
}

// out = in cyclically shifted by s on the grid d.n (or by -s when !forward).
template <typename T1>
void cyclic_shift(const CVec<T1>& in, CVec<T1>& out, const Dims& d, const Shift& s, bool forward) {
    require_same_place("cyclic_shift", in.on_gpu(), out.on_gpu());
    if (in.on_gpu()) return cuda::prox_cyclic_shift<T1>(in.device_memptr(), out.device_memptr(), d, s, forward);
    const uword n = in.n_elem;
    const forgeComplex<T1>* pi = in.memptr();
    forgeComplex<T1>* po = out.memptr();
#pragma omp parallel for if (n > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(n); ++i) po[shifted_index(d, uword(i), s, forward)] = pi[i];
}

}  // namespace prox
}  // namespace forge
