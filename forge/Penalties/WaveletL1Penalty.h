#pragma once
// WaveletL1Penalty<T1>: lambda ||Psi x||_1, the L1 norm of the detail coefficients of an orthogonal wavelet transform
// Psi (OrthoWavelet: Haar, db2 or db4, periodic, 1D/2D/3D), the sparsity prior of compressed sensing MRI.
//
//   WaveletL1Penalty<float> R(A.domain_shape(), 0.005f);                       // db2, levels from the grid
//   WaveletL1Penalty<float> R(grid, 0.005f, {WaveletFamily::Haar, 3, false}); // Haar, 3 levels, no shifts
//
// prox(v, t) = Psi^H soft(Psi v, t lambda) (exact, as Psi is orthogonal). With random_shift (the default, as BART's
// pics -l1) each prox call first shifts v cyclically by a random offset in [0, 2^levels) on each axis and shifts the
// result back, so that the block edges of the transform fall elsewhere on every iteration (no blocking artefacts);
// that prox is then the prox of the shifted transform's norm, and value() is the unshifted one. The offsets come from
// a generator seeded with 'seed', so a sequence of calls is reproducible (CPU and GPU draw the same offsets). The
// generator makes prox() non-reentrant: one penalty per solver thread.
// The coarsest approximation band is not penalised unless penalize_coarse (it holds the image's mean and slow
// variations, which are not sparse).
// The default family is db2 (4 taps), the wavelet of BART's pics -l1 and of Lustig's sparse MRI: an edge spreads over
// fewer coefficients per level than with db4's 8 taps, and MR images' coefficients are mostly their edges' (on the
// radial and spiral benchmarks of docs/benchmarks.md db2 gives the lower error at every undersampling).
#include <cstdint>
#include <random>

#include "forge/Penalties/ProxPenalty.h"
#include "forge/Penalties/Wavelet.h"

namespace forge {

struct WaveletL1Options {
    WaveletFamily family = WaveletFamily::Db2;
    uword levels = 0;          // 0: chosen from the grid (OrthoWavelet)
    bool random_shift = true;  // a random cyclic shift per prox call
    std::uint64_t seed = 0;    // the shifts' generator
    bool penalize_coarse = false;
};

template <typename T1>
class WaveletL1Penalty : public ProxPenalty<T1> {
public:
    using typename ProxPenalty<T1>::ForgeVec;
    using ProxPenalty<T1>::value;
    using ProxPenalty<T1>::prox;

    // Throws forge::invalid_argument for a bad grid (see OrthoWavelet) or a negative / non-finite lambda.
    WaveletL1Penalty(const ImageGrid& grid, T1 lambda, const WaveletL1Options& options = {});

    double value(const ForgeVec& x) const override;
    void prox(ForgeVec& v, T1 t) const override;
    bool fixed_between_calls() const override { return !opts_.random_shift; }

    const OrthoWavelet<T1>& transform() const { return psi_; }
    const WaveletL1Options& options() const { return opts_; }

private:
    WaveletL1Options opts_;
    OrthoWavelet<T1> psi_;
    mutable std::mt19937_64 rng_;
};

extern template class WaveletL1Penalty<float>;
extern template class WaveletL1Penalty<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::WaveletL1Options;
using forge::WaveletL1Penalty;
#endif
