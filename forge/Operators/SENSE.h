#pragma once
// SENSE<T1, Tobj>: multi-coil sensitivity encoding around any single-coil encoding operator G.
//
//   forward  y_c = G (S_c .* x)                 for c = 0 .. nc-1, data coil-major: y_c at [c*n1, (c+1)*n1)
//   adjoint  x   = sum_c conj(S_c) .* (G / y_c)
//
//   SENSE<float, Gdft<float>> S(G, maps, nc);   y = S * x;   x = S / y;
//
//   G     the encoding operator, any LinearOperator<T1> (its codomain = samples per coil n1, domain = pixels
//         n2); SENSE keeps a copy (copies of Gdft/GdftR2 share their GPU plan, so this is cheap), or shares
//         the operator given as an OperatorPtr<T1> (Tobj = LinearOperator<T1>)
//   maps  nc sensitivity maps of n2 pixels back to back: coil c at [c*n2, (c+1)*n2); an Armadillo vector (copied)
//         or a forgeCol (taken, on the host or the GPU)
//   nc    number of coils
//
// Built from parts (Composition.h): Chain(StackedDiagonal(maps, nc), Batched(G, nc)), so all coil images
// S_c .* x go to G as one batch (on the GPU each sample-pixel phase of Gdft is then computed once for all
// coils), and the adjoint follows by construction. set_coil_batching(false) hands G one coil at a time
// (kept for comparisons). Host input runs on the host; device input on the GPU, results staying there; the
// maps are uploaded once, on first device use or by prepare_device().
#include <memory>
#include <sstream>
#include <type_traits>
#include <utility>

#include "forge/Operators/Composition.h"

namespace forge {

template <typename T1, typename Tobj = LinearOperator<T1>>
class SENSE : public ComposedOperator<T1> {
    static_assert(std::is_base_of<LinearOperator<T1>, Tobj>::value,
                  "SENSE: the encoding operator must be a forge::LinearOperator<T1>");

public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;

    SENSE(const Tobj& G, const ArmaVec& maps, uword nc) : SENSE(std::make_shared<Tobj>(G), maps, nc) {}
    SENSE(std::shared_ptr<const Tobj> G, const ArmaVec& maps, uword nc)
        : ComposedOperator<T1>("SENSE", 0, 0), G_(std::move(G)) {
        check_sizes(maps.n_elem, nc);
        set_maps(std::make_shared<StackedDiagonal<T1>>(maps, nc, "SENSE coil maps"), nc);
    }
    // The maps as a forgeCol, taken without a copy: on the GPU too (maps uploaded or made there, never copied to
    // the host unless maps() is read).
    SENSE(std::shared_ptr<const Tobj> G, ForgeVec&& maps, uword nc)
        : ComposedOperator<T1>("SENSE", 0, 0), G_(std::move(G)) {
        check_sizes(maps.n_elem, nc);
        set_maps(std::make_shared<StackedDiagonal<T1>>(std::move(maps), nc, "SENSE coil maps"), nc);
    }

    // One batch of all coils through G (the default), or one coil per call of G.
    ForgeVec forward_batched(const ForgeVec& x) const { return batched_->forward(x); }
    ForgeVec adjoint_batched(const ForgeVec& y) const { return batched_->adjoint(y); }
    ForgeVec forward_coil_by_coil(const ForgeVec& x) const { return coilByCoil_->forward(x); }
    ForgeVec adjoint_coil_by_coil(const ForgeVec& y) const { return coilByCoil_->adjoint(y); }
    void set_coil_batching(bool on) { batching_ = on; }
    bool coil_batching() const { return batching_; }

    uword n1() const { return n1_; }  // samples per coil
    uword n_coils() const { return coils_->copies(); }
    uword n_data() const { return this->codomain_size(); }  // length of S * x: n1 * nc
    const Tobj& encoding_operator() const { return *G_; }
    const ForgeVec& maps() const { return coils_->weights(); }

protected:
    const LinearOperator<T1>& parts() const override { return batching_ ? *batched_ : *coilByCoil_; }

private:
    void check_sizes(uword nmapsGiven, uword nc) {
        if (!G_) throw invalid_argument("SENSE: G is a null operator");
        if (nc == 0) throw invalid_argument("SENSE: nc (number of coils) must be at least 1, got 0");
        n1_ = G_->codomain_size();
        const uword n2 = G_->domain_size();
        const uword nmaps = checked_product("SENSE", {{"G.n2()", n2}, {"nc", nc}});
        const uword nData = checked_product("SENSE", {{"G.n1()", n1_}, {"nc", nc}});
        if (nmapsGiven != nmaps) {
            std::ostringstream m;
            m << "SENSE: maps has " << nmapsGiven << " entries, expected G.n2() * nc = " << n2 << " * " << nc
              << " = " << nmaps << " (coil c's map at [c*n2, (c+1)*n2))";
            throw invalid_argument(m.str());
        }
        this->set_sizes(nData, n2);
        this->set_domain_shape(G_->domain_shape());  // the image is G's
        this->name_sizes("n2", "n1 * nc");
    }
    void set_maps(std::shared_ptr<StackedDiagonal<T1>> coils, uword nc) {
        coils_ = std::move(coils);
        batched_ = std::make_shared<Chain<T1>>(coils_, std::make_shared<Batched<T1>>(G_, nc));
        coilByCoil_ = std::make_shared<Chain<T1>>(coils_, std::make_shared<Batched<T1>>(G_, nc, true));
    }

    std::shared_ptr<const Tobj> G_;
    uword n1_ = 0;
    std::shared_ptr<StackedDiagonal<T1>> coils_;
    OperatorPtr<T1> batched_, coilByCoil_;
    bool batching_ = true;
};

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::SENSE;
#endif
