#pragma once
// L1Penalty<T1>: lambda ||x||_1 = lambda sum_i |x_i| of the image itself (sparse images: angiography, spectroscopy).
// Its prox is the complex soft threshold x max(0, 1 - t lambda / |x|), which keeps each pixel's phase.
//   L1Penalty<float> R(A.domain_shape(), 0.01f);
#include "forge/Penalties/ProxPenalty.h"

namespace forge {

template <typename T1>
class L1Penalty : public ProxPenalty<T1> {
public:
    using typename ProxPenalty<T1>::ForgeVec;
    using ProxPenalty<T1>::value;
    using ProxPenalty<T1>::prox;

    // Throws forge::invalid_argument for a zero axis or a negative / non-finite lambda.
    L1Penalty(const ImageGrid& grid, T1 lambda);

    double value(const ForgeVec& x) const override;
    void prox(ForgeVec& v, T1 t) const override;
};

extern template class L1Penalty<float>;
extern template class L1Penalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::L1Penalty;
#endif
