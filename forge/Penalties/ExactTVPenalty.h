#pragma once
// ExactTVPenalty<T1>: total variation, not smoothed (TVPenalty is its Charbonnier-smoothed, differentiable cousin):
//   isotropic     lambda sum_i sqrt(sum_a |d_a(x)(i)|^2)
//   anisotropic   lambda sum_i sum_a |d_a(x)(i)|
// over the forward differences d_a(x)(i) = x(i + s_a) - x(i) along each axis of length > 1 (no difference across
// the last pixel of an axis, as QuadPenalty and TVPenalty).
//
//   ExactTVPenalty<float> R(A.domain_shape(), 0.002f);                                // isotropic
//   ExactTVPenalty<float> R(grid, 0.002f, {TVNorm::Anisotropic, 50, false});
//
// prox(v, t) has no closed form: it solves the dual problem
//   min_{|p| <= 1} ||v - t lambda D^H p||^2,  then u = v - t lambda D^H p
// by fast gradient projection (Beck and Teboulle, 2009: FGP) with 'iterations' steps of size 1 / (t lambda ||D||^2),
// ||D||^2 <= 4 per axis. The dual iterate is kept between calls (warm_start, the default), so inside a solver a few
// steps per call suffice; for a prox on its own use more iterations and warm_start = false. The dual variable holds
// one complex value per axis and pixel (2 or 3 images), kept where the last v lived.
#include "forge/Penalties/ProxPenalty.h"

namespace forge {

enum class TVNorm { Isotropic, Anisotropic };

struct ExactTVOptions {
    TVNorm norm = TVNorm::Isotropic;
    uword iterations = 10;   // dual (FGP) steps per prox call, >= 1
    bool warm_start = true;  // start from the previous call's dual variable
};

template <typename T1>
class ExactTVPenalty : public ProxPenalty<T1> {
public:
    using typename ProxPenalty<T1>::ForgeVec;
    using ProxPenalty<T1>::value;
    using ProxPenalty<T1>::prox;

    // Throws forge::invalid_argument for a zero axis, a grid of one pixel, a negative / non-finite lambda or 0
    // iterations.
    ExactTVPenalty(const ImageGrid& grid, T1 lambda, const ExactTVOptions& options = {});

    double value(const ForgeVec& x) const override;
    void prox(ForgeVec& v, T1 t) const override;

    const ExactTVOptions& options() const { return opts_; }
    // Forget the kept dual variable (the next prox starts from p = 0).
    void reset() const { dual_ = ForgeVec(); }

private:
    ExactTVOptions opts_;
    mutable ForgeVec dual_;
};

extern template class ExactTVPenalty<float>;
extern template class ExactTVPenalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::ExactTVOptions;
using forge::ExactTVPenalty;
using forge::TVNorm;
#endif
