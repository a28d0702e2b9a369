#pragma once
// MultiShotSense<T1, ShotOp>: what pcSENSE and pcSenseTimeSeg share: shot operators A_s, each with its phase
// map P_s, stacked over shots, inside a coil stack:
//
//   forward  y_{c,s} = A_s (x .* S_c .* exp(-i P_s))
//   adjoint  x       = sum_c sum_s conj(S_c) .* exp(+i P_s) .* (A_s^H y_{c,s})
//
// with data ordered shot fastest within coil: y_{c,s} (samplesPerShot values) at
// [(c*nShots + s) * samplesPerShot, ...). Built from parts (Composition.h):
//   Chain(StackedDiagonal(maps, nc), Batched(VerticalStack_s(Chain(Diagonal(exp(-i P_s)), A_s)), nc))
// so each shot operator receives all nc coil images as one batch. The derived classes build A_s (exact
// Gdft, or time-segmented Gnufft), hand each shot to add_shot() and call finish(). Host and device data.
#include <cmath>
#include <string>
#include <vector>

#include "forge/Core/Geometry.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/Composition.h"

namespace forge {

namespace detail {
// The shots of a multi-shot operator given as geometry types, as the samplesPerShot x nShots matrices of its
// positional constructor (column s = shot s); t zeros where no shot has times. Throws invalid_argument naming
// 'where' for no shots, a shot's trajectory that does not check (Trajectory::check), shots of different lengths
// or times given for some shots only.
template <typename T1>
struct ShotMatrices {
    arma::Mat<T1> kx, ky, kz, t;
    ShotMatrices(const std::vector<Trajectory<T1>>& shots, const char* where) {
        const std::string w(where);
        if (shots.empty()) throw invalid_argument(w + ": no shots (expected at least one trajectory)");
        const uword n = shots.front().n_samples(), ns = shots.size();
        kx.set_size(n, ns), ky.set_size(n, ns), kz.set_size(n, ns), t.zeros(n, ns);
        for (uword s = 0; s < ns; ++s) {
            const Trajectory<T1>& k = shots[s];
            k.check(where);
            if (k.n_samples() != n)
                throw invalid_argument(w + ": shot " + std::to_string(s) + " has " + std::to_string(k.n_samples()) +
                                       " samples; expected " + std::to_string(n) + " (those of shot 0)");
            if (k.has_times() != shots.front().has_times())
                throw invalid_argument(w + ": shot " + std::to_string(s) + (k.has_times() ? " has" : " has no") +
                                       " readout times but shot 0" + (k.has_times() ? " has none" : " has them"));
            kx.col(s) = k.kx, ky.col(s) = k.ky, kz.col(s) = k.kz;
            if (k.has_times()) t.col(s) = k.t;
        }
    }
};
}  // namespace detail

template <typename T1, typename ShotOp>
class MultiShotSense : public ComposedOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    using complex_type = std::complex<T1>;

    // All coil images through each shot operator as one batch (default), or one coil at a time.
    void set_coil_batching(bool on) { batching_ = on; }
    bool coil_batching() const { return batching_; }

    uword n1() const { return nsamp_ * nshots_; }  // samples per coil (all shots)
    uword n_coils() const { return nc_; }
    uword n_shots() const { return nshots_; }
    uword samples_per_shot() const { return nsamp_; }
    uword n_data() const { return this->codomain_size(); }  // length of A * x: samplesPerShot * nShots * nc
    const ShotOp& shot_operator(uword s) const { return *shots_.at(s); }

    // Normal operators for the shots (one per shot, each of n2 pixels: e.g. a ToeplitzNormal of shot s's
    // trajectory): normal() then applies sum_c S_c^H (sum_s D_s^H N_s D_s) S_c with D_s = diag(exp(-i P_s)),
    // the coils batched through each N_s; forward and adjoint stay the shot operators'. An empty list restores
    // the exact normal.
    void set_shot_normals(const std::vector<OperatorPtr<T1>>& normals) {
        const char* where = this->name().c_str();
        if (!normals.empty() && normals.size() != nshots_) {
            throw invalid_argument(std::string(where) + "::set_shot_normals: " + std::to_string(normals.size()) +
                                   " normal operators, expected one per shot (" + std::to_string(nshots_) + ")");
        }
        std::vector<OperatorPtr<T1>> blocks;
        for (uword s = 0; s < nshots_; ++s) {
            OperatorPtr<T1> shot = shots_[s];
            if (!normals.empty()) shot = std::make_shared<WithNormal<T1>>(shot, normals[s]);
            blocks.push_back(chain<T1>(shotPhase_[s], shot));
        }
        assemble(std::move(blocks));
    }

protected:
    // Checks the arguments every multi-shot operator takes (trajectory and time matrices of
    // samplesPerShot x nShots, nc maps of n2 pixels, n2 x nShots phase maps).
    MultiShotSense(const char* name, const arma::Mat<T1>& kx, const arma::Mat<T1>& ky, const arma::Mat<T1>& kz,
                   const arma::Mat<T1>& t, uword n2, const ArmaVec& maps, const arma::Mat<T1>& shotPhases, uword nc)
        : ComposedOperator<T1>(name, 0, 0), nsamp_(kx.n_rows), nshots_(kx.n_cols), nc_(nc), maps_(maps),
          phases_(shotPhases) {
        require_positive(name, "nc (number of coils)", nc);
        if (nsamp_ == 0 || nshots_ == 0) {
            throw invalid_argument(std::string(name) + ": kx must be samplesPerShot x nShots with both at least 1");
        }
        require_positive(name, "n2 (number of pixels)", n2);
        require_shape(name, "ky", ky, nsamp_, nshots_, "size(kx)");
        require_shape(name, "kz", kz, nsamp_, nshots_, "size(kx)");
        require_shape(name, "t", t, nsamp_, nshots_, "size(kx)");
        const uword nData = checked_product(name, {{"samplesPerShot", nsamp_}, {"nShots", nshots_}, {"nc", nc}});
        require_length(name, "maps", maps.n_elem, checked_product(name, {{"n2", n2}, {"nc", nc}}), "n2 * nc");
        require_shape(name, "shotPhases", shotPhases, n2, nshots_, "n2 x nShots");
        require_finite(name, "shotPhases", shotPhases.memptr(), shotPhases.n_elem);
        this->set_sizes(nData, n2);
        this->name_sizes("n2", "samplesPerShot * nShots * nc");
        shots_.reserve(nshots_);
    }

    // Adds shot s (in order): its operator A_s, preceded by the diagonal exp(-i P_s).
    void add_shot(const ShotOp& A) {
        const uword s = shots_.size(), n2 = this->domain_size();
        ArmaVec e(n2);
        for (uword k = 0; k < n2; ++k) {
            const double p = double(phases_(k, s));
            e[k] = complex_type(T1(std::cos(p)), T1(-std::sin(p)));
        }
        auto shot = std::make_shared<ShotOp>(A);
        shots_.push_back(shot);
        shotPhase_.push_back(std::make_shared<StackedDiagonal<T1>>(e, 1, "shot phase"));
        blocks_.push_back(chain<T1>(shotPhase_.back(), shot));
    }
    // Assembles the operator once every shot is added.
    void finish() {
        this->set_domain_shape(shots_.at(0)->domain_shape());  // the image is the shot operators'
        coils_ = std::make_shared<StackedDiagonal<T1>>(maps_, nc_, "coil maps");
        assemble(std::move(blocks_));
        maps_.reset();
        phases_.reset();
    }

    const LinearOperator<T1>& parts() const override { return batching_ ? *batched_ : *coilByCoil_; }

private:
    void assemble(std::vector<OperatorPtr<T1>> blocks) {
        auto stack = std::make_shared<VerticalStack<T1>>(std::move(blocks), "shot stack");
        batched_ = chain<T1>(coils_, std::make_shared<Batched<T1>>(stack, nc_));
        coilByCoil_ = chain<T1>(coils_, std::make_shared<Batched<T1>>(stack, nc_, true));
    }

    uword nsamp_, nshots_, nc_;
    ArmaVec maps_;          // until finish()
    arma::Mat<T1> phases_;  // until finish()
    std::vector<std::shared_ptr<const ShotOp>> shots_;
    std::vector<std::shared_ptr<const StackedDiagonal<T1>>> shotPhase_;  // diag(exp(-i P_s))
    std::vector<OperatorPtr<T1>> blocks_;                                // until finish()
    std::shared_ptr<const StackedDiagonal<T1>> coils_;
    OperatorPtr<T1> batched_, coilByCoil_;
    bool batching_ = true;
};

}  // namespace forge
