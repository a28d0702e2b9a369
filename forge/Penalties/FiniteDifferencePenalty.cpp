#include "forge/Penalties/FiniteDifferencePenalty.h"

#include <cmath>
#include <sstream>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Penalties/cuda/FiniteDifferenceKernels.h"
#include "forge/Penalties/cuda/PenaltyKernels.h"

namespace forge {

namespace {
void require_dim(const char* where, const char* name, uword v) {
    if (v == 0) throw invalid_argument(std::string(where) + ": " + name + " must be at least 1, got 0");
}
template <typename T1>
void require_nonneg_finite(const char* where, const char* name, T1 v) {
    if (!(std::isfinite(v) && v >= 0)) {
        std::ostringstream m;
        m << where << ": " << name << " must be finite and >= 0, got " << v;
        throw invalid_argument(m.str());
    }
}
// The grid as the kernels take it.
fd::Grid kernel_grid(const ImageGrid& g) { return fd::Grid{g.nx, g.ny, g.nz}; }
}  // namespace

template <typename T1>
ImageGrid FiniteDifferencePenalty<T1>::positional_grid(const char* name, uword Nx, uword Ny, uword Nz) {
    require_dim(name, "Nx", Nx);
    require_dim(name, "Ny", Ny);
    require_dim(name, "Nz", Nz);
    // The pixel count and the z stride Nx*Ny must not wrap (a wrapped count would accept a wrong-size x).
    checked_product(name, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
    return ImageGrid(Nx, Ny, Nz);
}

template <typename T1>
FiniteDifferencePenalty<T1>::FiniteDifferencePenalty(const char* name, const ImageGrid& grid, T1 beta,
                                                     fd::Potential kind, T1 delta)
    : name_(name), grid_(grid), beta_(beta), kind_(kind), delta_(delta) {
    grid.check(name);  // no zero axis, and the pixel count and the z stride nx*ny do not wrap
    require_nonneg_finite(name, "beta", beta);
    if (kind == fd::Potential::Charbonnier && !(std::isfinite(delta) && delta > 0)) {
        std::ostringstream m;
        m << name << ": delta must be finite and > 0, got " << delta;
        throw invalid_argument(m.str());
    }
}

template <typename T1>
void FiniteDifferencePenalty<T1>::check(const ForgeVec& x, const char* what, const char* arg) const {
    if (x.n_elem != n_pixels()) {
        std::ostringstream m;
        m << name_ << "::" << what << ": " << arg << " has " << x.n_elem << " entries, expected Nx*Ny*Nz = " << grid_.nx
          << "*" << grid_.ny << "*" << grid_.nz << " = " << n_pixels();
        throw invalid_argument(m.str());
    }
}

template <typename T1>
T1 FiniteDifferencePenalty<T1>::penalty(const ForgeVec& x) const {
    check(x, "penalty", "x");
    const uword n = n_pixels();
    if (x.on_gpu()) {
        forgeCol<T1> v = forgeCol<T1>::device_uninitialized(n);
        cuda::fd_penalty_values<T1>(x.device_memptr(), v.device_memptr(), kernel_grid(grid_), kind_, delta_);
        return beta_ * sum(v);
    }
    const forgeComplex<T1>* px = x.memptr();
    const fd::Grid kg = kernel_grid(grid_);
    const double s =
        detail::fixed_order_sum<double>(n, n > detail::kParallelThreshold, [&](std::size_t i, double& acc) {
            acc += fd::value_at<T1>(uword(i), px, kg, kind_, delta_);
        });
    return T1(double(beta_) * s);
}

template <typename T1>
typename FiniteDifferencePenalty<T1>::ForgeVec FiniteDifferencePenalty<T1>::gradient(const ForgeVec& x) const {
    check(x, "gradient", "x");
    const uword n = n_pixels();
    if (x.on_gpu()) {
        ForgeVec g = ForgeVec::device_uninitialized(n);
        cuda::fd_penalty_gradient<T1>(x.device_memptr(), g.device_memptr(), kernel_grid(grid_), kind_, delta_, beta_);
        return g;
    }
    ForgeVec g(n);
    const forgeComplex<T1>* px = x.memptr();
    forgeComplex<T1>* pg = g.memptr();
    const fd::Grid kg = kernel_grid(grid_);
#pragma omp parallel for if (n > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(n); ++i)
        pg[i] = fd::gradient_at<T1>(uword(i), px, kg, kind_, delta_) * beta_;
    return g;
}

template <typename T1>
T1 FiniteDifferencePenalty<T1>::denom(const ForgeVec& ddir, const ForgeVec& x) const {
    check(ddir, "denom", "ddir");
    check(x, "denom", "x");
    if (ddir.on_gpu() != x.on_gpu()) {
        throw residency_error(std::string(name_) + "::denom: ddir and x must both be on the GPU or both on the host");
    }
    const uword n = n_pixels();
    if (x.on_gpu()) {
        forgeCol<T1> v = forgeCol<T1>::device_uninitialized(n);
        cuda::fd_penalty_denoms<T1>(ddir.device_memptr(), x.device_memptr(), v.device_memptr(), kernel_grid(grid_),
                                    kind_, delta_);
        return beta_ * sum(v);
    }
    const forgeComplex<T1>* pd = ddir.memptr();
    const forgeComplex<T1>* px = x.memptr();
    const fd::Grid kg = kernel_grid(grid_);
    const double s =
        detail::fixed_order_sum<double>(n, n > detail::kParallelThreshold, [&](std::size_t i, double& acc) {
            acc += fd::denom_at<T1>(uword(i), pd, px, kg, kind_, delta_);
        });
    return T1(double(beta_) * s);
}

template <typename T1>
QuadPenalty<T1>::QuadPenalty(const ImageGrid& grid, T1 beta)
    : FiniteDifferencePenalty<T1>("QuadPenalty", grid, beta, fd::Potential::Quadratic, T1(1)) {}
template <typename T1>
QuadPenalty<T1>::QuadPenalty(uword Nx, uword Ny, uword Nz, T1 beta)
    : QuadPenalty(FiniteDifferencePenalty<T1>::positional_grid("QuadPenalty", Nx, Ny, Nz), beta) {}

template <typename T1>
TVPenalty<T1>::TVPenalty(const ImageGrid& grid, T1 beta, T1 delta)
    : FiniteDifferencePenalty<T1>("TVPenalty", grid, beta, fd::Potential::Charbonnier, delta) {}
template <typename T1>
TVPenalty<T1>::TVPenalty(uword Nx, uword Ny, uword Nz, T1 beta, T1 delta)
    : TVPenalty(FiniteDifferencePenalty<T1>::positional_grid("TVPenalty", Nx, Ny, Nz), beta, delta) {}

template class FiniteDifferencePenalty<float>;
template class FiniteDifferencePenalty<double>;
template class QuadPenalty<float>;
template class QuadPenalty<double>;
template class TVPenalty<float>;
template class TVPenalty<double>;

}  // namespace forge
