#include "forge/Penalties/WaveletL1Penalty.h"

#include "forge/Penalties/detail/ProxDispatch.h"

namespace forge {

namespace {
// The coefficient box left out of the norm (the coarsest approximation band).
template <typename T1>
prox::Dims coarse_dims(const OrthoWavelet<T1>& psi) {
    const ImageGrid& g = psi.grid();
    const ImageGrid c = psi.coarse_box();
    return prox::Dims{{g.nx, g.ny, g.nz}, {c.nx, c.ny, c.nz}};
}
}  // namespace

template <typename T1>
WaveletL1Penalty<T1>::WaveletL1Penalty(const ImageGrid& grid, T1 lambda, const WaveletL1Options& options)
    : ProxPenalty<T1>("WaveletL1Penalty", grid, lambda), opts_(options), psi_(grid, options.family, options.levels),
      rng_(options.seed) {}

template <typename T1>
double WaveletL1Penalty<T1>::value(const ForgeVec& x) const {
    this->check_length(x, "value", "x");
    return double(this->lambda()) * prox::abs_sum<T1>(psi_.forward(x), coarse_dims(psi_), !opts_.penalize_coarse);
}

template <typename T1>
void WaveletL1Penalty<T1>::prox(ForgeVec& v, T1 t) const {
    this->check_length(v, "prox", "v");
    this->check_step(t);
    const prox::Dims cd = coarse_dims(psi_);
    const T1 tau = t * this->lambda();
    if (!opts_.random_shift) {
        ForgeVec c = psi_.forward(v);
        prox::soft_threshold<T1>(c, tau, cd, !opts_.penalize_coarse);
        v = psi_.inverse(c);
        return;
    }
    prox::Shift s{{0, 0, 0}};
    const uword period = uword(1) << psi_.levels();
    for (int a = 0; a < 3; ++a)
        if (cd.n[a] > 1) s.s[a] = uword(rng_() % period);
    ForgeVec shifted = ForgeVec::same_place(v, v.n_elem);
    prox::cyclic_shift<T1>(v, shifted, cd, s, true);
    ForgeVec c = psi_.forward(shifted);
    prox::soft_threshold<T1>(c, tau, cd, !opts_.penalize_coarse);
    shifted = psi_.inverse(c);
    prox::cyclic_shift<T1>(shifted, v, cd, s, false);
}

template class WaveletL1Penalty<float>;
template class WaveletL1Penalty<double>;

}  // namespace forge
