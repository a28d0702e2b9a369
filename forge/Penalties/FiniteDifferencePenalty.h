#pragma once
// FiniteDifferencePenalty<T1>: R(x) = beta * sum_a sum_i psi(|d_a(x)(i)|) over first differences along
// each image axis of length > 1 of an ImageGrid (x fastest; the layout and the potentials:
// forge/Penalties/cuda/FiniteDifferenceKernels.h). QuadPenalty and TVPenalty are its two public faces. Host
// vectors run in OpenMP loops, device vectors in CUDA kernels (results of gradient stay on the device; penalty and
// denom return host scalars). A vector of another length than grid().n_pixels() throws forge::invalid_argument
// naming it.
#include <type_traits>

#include "forge/Core/Geometry.h"
#include "forge/Penalties/FiniteDifferencePotential.h"
#include "forge/Penalties/Robject.h"

namespace forge {

template <typename T1>
class FiniteDifferencePenalty : public Robject<T1> {
    static_assert(std::is_same<T1, float>::value || std::is_same<T1, double>::value, "T1 must be float or double");

public:
    using typename Robject<T1>::ForgeVec;
    using typename Robject<T1>::ArmaVec;
    using Robject<T1>::penalty;
    using Robject<T1>::gradient;
    using Robject<T1>::denom;

    T1 penalty(const ForgeVec& x) const override;
    ForgeVec gradient(const ForgeVec& x) const override;
    T1 denom(const ForgeVec& ddir, const ForgeVec& x) const override;

    // The image grid the differences run over (an operator's domain_shape() when built from one).
    const ImageGrid& grid() const { return grid_; }
    uword Nx() const { return grid_.nx; }
    uword Ny() const { return grid_.ny; }
    uword Nz() const { return grid_.nz; }
    uword n_pixels() const { return grid_.n_pixels(); }
    T1 beta() const { return beta_; }
    T1 delta() const { return delta_; }

protected:
    // grid: checked here (every axis at least 1, the pixel count fits); beta finite and >= 0; delta finite and > 0
    // for the Charbonnier potential.
    FiniteDifferencePenalty(const char* name, const ImageGrid& grid, T1 beta, fd::Potential kind, T1 delta);
    // The grid of the positional constructors (Nx, Ny, Nz), checked with those names in the messages.
    static ImageGrid positional_grid(const char* name, uword Nx, uword Ny, uword Nz);

private:
    void check(const ForgeVec& x, const char* what, const char* arg) const;

    const char* name_;
    ImageGrid grid_;
    T1 beta_;
    fd::Potential kind_;
    T1 delta_;
};

extern template class FiniteDifferencePenalty<float>;
extern template class FiniteDifferencePenalty<double>;

}  // namespace forge
