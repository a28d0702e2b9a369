#pragma once
// Operators built from operators. Each is a LinearOperator whose adjoint (and normal) follows from its parts',
// so a composite is right once its parts are right:
//
//   Chain(first, then)          x -> then(first(x));            adjoint first^H(then^H(y));
//                               normal first^H(then.normal(first(x))), so a fast normal of 'then' is used
//   Batched(A, copies)          block diagonal of 'copies' copies of A: 'copies' vectors back to back, handed
//                               to A as one batch (A's own batching, e.g. one phase evaluation for all coils)
//   StackedDiagonal(w, copies)  x (n) -> [w_0 .* x; ...; w_{copies-1} .* x] (n * copies); the adjoint sums
//                               conj(w_j) .* y_j. One copy is a plain diagonal (a fixed multiplier).
//   AdjointOf(A)                A^H as an operator (the adjoint of a StackedDiagonal is a weighted sum)
//   VerticalStack({A_0, ...})   x -> [A_0 x; A_1 x; ...] (equal domains); the adjoint sums A_j^H y_j, the normal
//                               sums the blocks' normals
//   WithNormal(A, N)            A with normal() = N (a faster normal of A, e.g. ToeplitzNormal)
//   NormalOf(A)                 A.normal() as a square operator of its own (for solve_pwls_pcg_normal)
//
// The MRI operators are these parts put together:
//   SENSE            Chain(StackedDiagonal(coil maps, nc), Batched(G, nc))                  (coil stack)
//   TimeSegmentation Chain(StackedDiagonal(exp(-i field_map tau_l), L+1), Batched(G, L+1),
//                          AdjointOf(StackedDiagonal(conj(a_l), L+1)))                      (segment sum)
//   pcSENSE          Chain(StackedDiagonal(coil maps, nc),
//                          Batched(VerticalStack_s(Chain(Diagonal(exp(-i P_s)), G_s)), nc)) (shot stack)
//
// Data layout of a batch: vector b of a batch at [b * size, (b+1) * size); a stacked codomain holds block j of
// vector b at [(b * blocks + j) * blockSize, ...).
//
// domain_shape() (the image grid a penalty takes) comes from the parts: Chain's is first's, WithNormal's and
// NormalOf's A's, VerticalStack's that of its first block with a grid, Batched's A's for one copy (more copies
// are images back to back, no one grid); SENSE, TimeSegmentation, pcSENSE and pcSenseTimeSeg report their
// encoding operator's.
#include <vector>

#include "forge/Operators/LinearOperator.h"

namespace forge {

template <typename T1>
class Chain : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    // first's codomain must be then's domain.
    Chain(OperatorPtr<T1> first, OperatorPtr<T1> then);
    const LinearOperator<T1>& first() const { return *first_; }
    const LinearOperator<T1>& then() const { return *then_; }
    void prepare_device() const override;

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const override;

private:
    void run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const;
    OperatorPtr<T1> first_, then_;
};

template <typename T1>
class Batched : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    // oneAtATime: apply A to one vector per call instead of one batch (for comparisons, and to bound the
    // memory of A's batched path).
    Batched(OperatorPtr<T1> A, uword copies, bool oneAtATime = false);
    const LinearOperator<T1>& block() const { return *A_; }
    uword copies() const { return copies_; }
    bool one_at_a_time() const { return oneAtATime_; }
    void prepare_device() const override { A_->prepare_device(); }

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const override;

private:
    void run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const;
    OperatorPtr<T1> A_;
    uword copies_;
    bool oneAtATime_;
};

template <typename T1>
class StackedDiagonal : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    // weights: 'copies' vectors of n entries back to back (n = weights.n_elem / copies); finite values.
    StackedDiagonal(const ArmaVec& weights, uword copies, std::string name = "StackedDiagonal");
    // The same from a forgeCol, taken without a copy (large stacks: time-segment phase maps); on the GPU too
    // (weights made there), when the host copy is made on first host use.
    StackedDiagonal(ForgeVec&& weights, uword copies, std::string name = "StackedDiagonal");
    uword copies() const { return copies_; }
    // The weights on the host.
    const ForgeVec& weights() const;
    void prepare_device() const override { (void)device_weights(); }
    // The weights on the GPU (uploaded on first use, on the then current device; kept while the operator lives).
    const ForgeVec& device_weights() const;

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override;

private:
    void check_weights(uword n);
    struct DeviceCopy;
    uword n_, copies_;
    ForgeVec host_;          // empty when the weights were given on the GPU
    bool onDevice_ = false;  // the weights were given on the GPU
    std::shared_ptr<DeviceCopy> dev_;
};

template <typename T1>
class AdjointOf : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    explicit AdjointOf(OperatorPtr<T1> A);
    void prepare_device() const override { A_->prepare_device(); }

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        A_->apply(in, out, nbatch, !forward, Residency::Host);
    }
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        A_->apply(in, out, nbatch, !forward, Residency::Device);
    }

private:
    OperatorPtr<T1> A_;
};

template <typename T1>
class VerticalStack : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    // All blocks share one domain size; the codomain is their codomains one after another.
    explicit VerticalStack(std::vector<OperatorPtr<T1>> blocks, std::string name = "VerticalStack");
    uword n_blocks() const { return blocks_.size(); }
    const LinearOperator<T1>& block(uword j) const { return *blocks_.at(j); }
    void prepare_device() const override;

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override;
    void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const override;

private:
    void run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const;
    std::vector<OperatorPtr<T1>> blocks_;
    std::vector<uword> offset_;  // start of block j within one codomain vector
};

// An operator defined by a composite of parts (SENSE, TimeSegmentation, the multi-shot operators): forward,
// adjoint, normal and prepare_device go to parts().
template <typename T1>
class ComposedOperator : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    void prepare_device() const override { parts().prepare_device(); }

protected:
    using LinearOperator<T1>::LinearOperator;
    virtual const LinearOperator<T1>& parts() const = 0;
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        parts().apply(in, out, nbatch, forward, Residency::Host);
    }
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        parts().apply(in, out, nbatch, forward, Residency::Device);
    }
    void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const override {
        parts().apply_normal(in, out, nbatch, where);
    }
};

// A as an operator whose normal() is N (an operator of A's domain, e.g. a ToeplitzNormal of A's trajectory,
// weights included): forward and adjoint are A's. Composites built on it (SENSE, Chain, Batched,
// VerticalStack) then use N in their own normal().
template <typename T1>
class WithNormal : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    WithNormal(OperatorPtr<T1> A, OperatorPtr<T1> N);
    const LinearOperator<T1>& op() const { return *A_; }
    const LinearOperator<T1>& normal_operator() const { return *N_; }
    void prepare_device() const override {
        A_->prepare_device();
        N_->prepare_device();
    }

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        A_->apply(in, out, nbatch, forward, Residency::Host);
    }
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const override {
        A_->apply(in, out, nbatch, forward, Residency::Device);
    }
    void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const override {
        N_->apply(in, out, nbatch, true, where);
    }

private:
    OperatorPtr<T1> A_, N_;
};

// A's normal operator A^H A (A.normal()) as an operator of its own: square, Hermitian; its forward and adjoint
// are both A.normal(). What solve_pwls_pcg_normal takes for an operator A.
template <typename T1>
class NormalOf : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    explicit NormalOf(OperatorPtr<T1> A);
    void prepare_device() const override { A_->prepare_device(); }

protected:
    void apply_host(const Elem* in, Elem* out, uword nbatch, bool) const override {
        A_->apply_normal(in, out, nbatch, Residency::Host);
    }
    void apply_device(const Elem* in, Elem* out, uword nbatch, bool) const override {
        A_->apply_normal(in, out, nbatch, Residency::Device);
    }

private:
    OperatorPtr<T1> A_;
};

template <typename T1>
OperatorPtr<T1> with_normal(OperatorPtr<T1> A, OperatorPtr<T1> N) {
    return std::make_shared<WithNormal<T1>>(std::move(A), std::move(N));
}

// Shorthands returning shared operators.
template <typename T1>
OperatorPtr<T1> chain(OperatorPtr<T1> first, OperatorPtr<T1> then) {
    return std::make_shared<Chain<T1>>(std::move(first), std::move(then));
}
template <typename T1>
OperatorPtr<T1> chain(OperatorPtr<T1> first, OperatorPtr<T1> second, OperatorPtr<T1> third) {
    return chain<T1>(chain<T1>(std::move(first), std::move(second)), std::move(third));
}
// A copy of an operator held by value, as a shared part.
template <typename Op>
OperatorPtr<typename Op::real_type> share(const Op& A) {
    return std::make_shared<Op>(A);
}

extern template class Chain<float>;
extern template class Chain<double>;
extern template class Batched<float>;
extern template class Batched<double>;
extern template class StackedDiagonal<float>;
extern template class StackedDiagonal<double>;
extern template class AdjointOf<float>;
extern template class AdjointOf<double>;
extern template class VerticalStack<float>;
extern template class VerticalStack<double>;
extern template class WithNormal<float>;
extern template class WithNormal<double>;
extern template class NormalOf<float>;
extern template class NormalOf<double>;

}  // namespace forge
