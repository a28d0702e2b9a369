#pragma once
// FiniteDifferencePenalty<T1>: R(x) = beta * sum_a sum_i psi(|d_a(x)(i)|) over first differences along
// each image axis of length > 1 (see forge/Penalties/cuda/FiniteDifferenceKernels.h for the layout and the potentials).
// QuadPenalty and TVPenalty are its two public faces. Host vectors run in OpenMP loops, device vectors in
// CUDA kernels (results of Gradient stay on the device; Penalty and Denom return host scalars).
#include "forge/Penalties/cuda/FiniteDifferenceKernels.h"
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

    uword Nx() const { return grid_.Nx; }
    uword Ny() const { return grid_.Ny; }
    uword Nz() const { return grid_.Nz; }
    uword n_pixels() const { return grid_.Nx * grid_.Ny * grid_.Nz; }
    T1 beta() const { return beta_; }
    T1 delta() const { return delta_; }

protected:
    FiniteDifferencePenalty(const char* name, uword Nx, uword Ny, uword Nz, T1 beta, fd::Potential kind, T1 delta);

private:
    void check(const ForgeVec& x, const char* what, const char* arg) const;

    const char* name_;
    fd::Grid grid_;
    T1 beta_;
    fd::Potential kind_;
    T1 delta_;
};

extern template class FiniteDifferencePenalty<float>;
extern template class FiniteDifferencePenalty<double>;

}  // namespace forge
