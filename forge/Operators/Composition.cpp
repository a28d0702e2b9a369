#include "forge/Operators/Composition.h"

#include <cstring>
#include <mutex>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/DeviceOps.h"
#include "forge/Core/Parallel.h"
#include "forge/Operators/cuda/SenseKernels.h"

namespace forge {

namespace {
template <typename T1>
const LinearOperator<T1>& require_part(const OperatorPtr<T1>& A, const char* where, const char* which) {
    if (!A) throw invalid_argument(std::string(where) + ": " + which + " is a null operator");
    return *A;
}
// An operator whose domain_shape() is an image grid of its own, not the domain_size() x 1 x 1 of scattered pixels.
template <typename T1>
bool has_grid(const LinearOperator<T1>& A) {
    return A.domain_shape() != ImageGrid(A.domain_size());
}

// Copies n elements, both pointers in 'where'.
template <typename E>
void copy_elems(E* dst, const E* src, uword n, Residency where) {
    if (n == 0) return;
    if (where == Residency::Device) {
        device::copy_on_device(dst, src, n * sizeof(E));
    } else {
        std::memcpy(static_cast<void*>(dst), src, n * sizeof(E));
    }
}
// y += x over n elements, both in 'where'.
template <typename T1>
void accumulate(forgeComplex<T1>* y, const forgeComplex<T1>* x, uword n, Residency where) {
    if (where == Residency::Device) {
        device::axpby(forgeComplex<T1>(1), x, forgeComplex<T1>(1), y, n);
        return;
    }
    constexpr std::size_t elemBytes = sizeof(forgeComplex<T1>);
#pragma omp parallel for if (detail::parallel_elementwise(n, 3 * elemBytes))
    for (long long i = 0; i < static_cast<long long>(n); ++i) y[i] += x[i];
}
}  // namespace

// ------------------------------------------------------------------ Chain
template <typename T1>
Chain<T1>::Chain(OperatorPtr<T1> first, OperatorPtr<T1> then)
    : LinearOperator<T1>("Chain", require_part(then, "Chain", "then").codomain_size(),
                         require_part(first, "Chain", "first").domain_size()),
      first_(std::move(first)), then_(std::move(then)) {
    if (first_->codomain_size() != then_->domain_size()) {
        std::ostringstream m;
        m << "Chain: " << first_->name() << " (first) gives " << first_->codomain_size() << " entries but "
          << then_->name() << " (then) takes " << then_->domain_size();
        throw invalid_argument(m.str());
    }
    this->set_domain_shape(first_->domain_shape());  // the chain's image is first's
}
template <typename T1>
void Chain<T1>::prepare_device() const {
    first_->prepare_device();
    then_->prepare_device();
}
template <typename T1>
void Chain<T1>::run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const {
    auto mid =
        this->scratch(where,
                      checked_product("Chain", {{"intermediate size", first_->codomain_size()}, {"nbatch", nbatch}}));
    if (forward) {
        first_->apply(in, mid.data_ptr(), nbatch, true, where);
        then_->apply(mid.data_ptr(), out, nbatch, true, where);
    } else {
        then_->apply(in, mid.data_ptr(), nbatch, false, where);
        first_->apply(mid.data_ptr(), out, nbatch, false, where);
    }
}
template <typename T1>
void Chain<T1>::apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Host);
}
template <typename T1>
void Chain<T1>::apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Device);
}
template <typename T1>
void Chain<T1>::normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const {
    const uword n = checked_product("Chain", {{"intermediate size", first_->codomain_size()}, {"nbatch", nbatch}});
    auto a = this->scratch(where, n), b = this->scratch(where, n);
    first_->apply(in, a.data_ptr(), nbatch, true, where);
    then_->apply_normal(a.data_ptr(), b.data_ptr(), nbatch, where);
    first_->apply(b.data_ptr(), out, nbatch, false, where);
}

// ------------------------------------------------------------------ Batched
template <typename T1>
Batched<T1>::Batched(OperatorPtr<T1> A, uword copies, bool oneAtATime)
    : LinearOperator<T1>("Batched", 0, 0), A_(std::move(A)), copies_(copies), oneAtATime_(oneAtATime) {
    const LinearOperator<T1>& a = require_part(A_, "Batched", "A");
    require_positive("Batched", "copies", copies);
    this->set_sizes(checked_product("Batched", {{"A's codomain size", a.codomain_size()}, {"copies", copies}}),
                    checked_product("Batched", {{"A's domain size", a.domain_size()}, {"copies", copies}}));
    if (copies == 1) this->set_domain_shape(a.domain_shape());  // more copies: images back to back, no one grid
}
template <typename T1>
void Batched<T1>::run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const {
    const uword total = checked_product("Batched", {{"copies", copies_}, {"nbatch", nbatch}});
    if (!oneAtATime_) return A_->apply(in, out, total, forward, where);
    const uword nin = forward ? A_->domain_size() : A_->codomain_size();
    const uword nout = forward ? A_->codomain_size() : A_->domain_size();
    for (uword b = 0; b < total; ++b) A_->apply(in + b * nin, out + b * nout, 1, forward, where);
}
template <typename T1>
void Batched<T1>::apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Host);
}
template <typename T1>
void Batched<T1>::apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Device);
}
template <typename T1>
void Batched<T1>::normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const {
    const uword total = checked_product("Batched", {{"copies", copies_}, {"nbatch", nbatch}});
    if (!oneAtATime_) return A_->apply_normal(in, out, total, where);
    const uword n = A_->domain_size();
    for (uword b = 0; b < total; ++b) A_->apply_normal(in + b * n, out + b * n, 1, where);
}

// ------------------------------------------------------------------ StackedDiagonal
template <typename T1>
struct StackedDiagonal<T1>::DeviceCopy {
    std::mutex m;
    ForgeVec weights;
    bool ready = false;
    ForgeVec host;  // weights made on the GPU: their host copy, on first host use
    bool hostReady = false;
};

template <typename T1>
StackedDiagonal<T1>::StackedDiagonal(const ArmaVec& weights, uword copies, std::string name)
    : LinearOperator<T1>(std::move(name), weights.n_elem, 0), n_(0), copies_(copies), host_(weights),
      dev_(std::make_shared<DeviceCopy>()) {
    check_weights(host_.n_elem);
    require_finite(this->name().c_str(), "weights", reinterpret_cast<const T1*>(host_.host_data()), 2 * host_.n_elem);
}
template <typename T1>
StackedDiagonal<T1>::StackedDiagonal(ForgeVec&& weights, uword copies, std::string name)
    : LinearOperator<T1>(std::move(name), weights.n_elem, 0), n_(0), copies_(copies),
      dev_(std::make_shared<DeviceCopy>()) {
    const uword n = weights.n_elem;
    check_weights(n);
    if (!weights.on_gpu()) {
        host_ = std::move(weights);
        require_finite(this->name().c_str(), "weights", reinterpret_cast<const T1*>(host_.host_data()), 2 * n);
        return;
    }
    // On the GPU: w - w sums to 0 exactly when every entry is finite (NaN or Inf make it NaN).
    if (n > 0) {
        ForgeVec diff = ForgeVec::device_uninitialized(n);
        device::binary(device::BinOp::Sub, weights.device_memptr(), weights.device_memptr(), diff.device_memptr(), n);
        const Elem s = device::sum(diff.device_memptr(), n);
        if (!(s.real() == 0 && s.imag() == 0))
            throw invalid_argument(this->name() + ": weights (on the GPU) hold NaN or Inf; they must be finite");
    }
    onDevice_ = true;
    dev_->weights = std::move(weights);
    dev_->ready = true;
}
template <typename T1>
void StackedDiagonal<T1>::check_weights(uword n) {
    const char* where = this->name().c_str();
    require_positive(where, "copies", copies_);
    if (n % copies_ != 0) {
        std::ostringstream m;
        m << where << ": weights has " << n << " entries, not a multiple of copies = " << copies_;
        throw invalid_argument(m.str());
    }
    n_ = n / copies_;
    this->set_sizes(n, n_);
}
template <typename T1>
const typename StackedDiagonal<T1>::ForgeVec& StackedDiagonal<T1>::weights() const {
    if (!onDevice_) return host_;
    std::lock_guard<std::mutex> lock(dev_->m);
    if (!dev_->hostReady) {
        ForgeVec h(dev_->weights.n_elem);
        device::copy_to_host(h.memptr(), dev_->weights.device_memptr(), h.n_elem * sizeof(Elem));
        dev_->host = std::move(h);
        dev_->hostReady = true;
    }
    return dev_->host;
}
template <typename T1>
const typename StackedDiagonal<T1>::ForgeVec& StackedDiagonal<T1>::device_weights() const {
    std::lock_guard<std::mutex> lock(dev_->m);
    if (!dev_->ready) {  // straight from host_ (phase maps are tens of MB: no second host copy first)
        ForgeVec d = ForgeVec::device_uninitialized(host_.n_elem);
        device::copy_to_device(d.device_memptr(), host_.host_data(), host_.n_elem * sizeof(Elem));
        dev_->weights = std::move(d);
        dev_->ready = true;
    }
    return dev_->weights;
}
template <typename T1>
void StackedDiagonal<T1>::apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    const Elem* w = weights().host_data();
    const uword n = n_, m = copies_;
    for (uword b = 0; b < nbatch; ++b) {
        if (forward) {  // out_j = w_j .* x
            const Elem* x = in + b * n;
            Elem* y = out + b * n * m;
            const long long total = static_cast<long long>(n * m);
#pragma omp parallel for if (detail::parallel_elementwise(uword(total), 3 * sizeof(Elem)))
            for (long long i = 0; i < total; ++i) y[i] = w[i] * x[uword(i) % n];
        } else {  // x = sum_j conj(w_j) .* y_j
            const Elem* y = in + b * n * m;
            Elem* x = out + b * n;
#pragma omp parallel for if (detail::parallel_elementwise(n, (2 * m + 1) * sizeof(Elem)))
            for (long long k = 0; k < static_cast<long long>(n); ++k) {
                Elem s(0, 0);
                for (uword j = 0; j < m; ++j) s += conj(w[j * n + uword(k)]) * y[j * n + uword(k)];
                x[k] = s;
            }
        }
    }
}
template <typename T1>
void StackedDiagonal<T1>::apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    const Elem* w = device_weights().device_memptr();
    for (uword b = 0; b < nbatch; ++b) {
        if (forward) {
            cuda::sense_expand<T1>(in + b * n_, w, out + b * n_ * copies_, n_, copies_);
        } else {
            cuda::sense_combine<T1>(in + b * n_ * copies_, w, out + b * n_, n_, copies_, false);
        }
    }
}

// ------------------------------------------------------------------ AdjointOf
template <typename T1>
AdjointOf<T1>::AdjointOf(OperatorPtr<T1> A)
    : LinearOperator<T1>("AdjointOf", require_part(A, "AdjointOf", "A").domain_size(), A->codomain_size()),
      A_(std::move(A)) {}

// ------------------------------------------------------------------ VerticalStack
template <typename T1>
VerticalStack<T1>::VerticalStack(std::vector<OperatorPtr<T1>> blocks, std::string name)
    : LinearOperator<T1>(std::move(name), 0, 0), blocks_(std::move(blocks)) {
    const char* where = this->name().c_str();
    if (blocks_.empty()) throw invalid_argument(std::string(where) + ": needs at least one block");
    const uword n2 = require_part(blocks_[0], where, "block 0").domain_size();
    uword total = 0;
    for (uword j = 0; j < blocks_.size(); ++j) {
        const LinearOperator<T1>& A = require_part(blocks_[j], where, "a block");
        if (A.domain_size() != n2) {
            std::ostringstream m;
            m << where << ": block " << j << " (" << A.name() << ") takes " << A.domain_size()
              << " entries, block 0 takes " << n2 << "; all blocks must share the domain";
            throw invalid_argument(m.str());
        }
        offset_.push_back(total);
        total = checked_product(where, {{"codomain size", total + A.codomain_size()}});
    }
    this->set_sizes(total, n2);
    // The blocks share one image: the grid of the first block that has one.
    for (const auto& A : blocks_) {
        if (has_grid(*A)) {
            this->set_domain_shape(A->domain_shape());
            break;
        }
    }
}
template <typename T1>
void VerticalStack<T1>::prepare_device() const {
    for (const auto& A : blocks_) A->prepare_device();
}
template <typename T1>
void VerticalStack<T1>::run(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const {
    const uword n1 = this->codomain_size(), n2 = this->domain_size();
    const uword nblocks = blocks_.size();
    for (uword j = 0; j < nblocks; ++j) {
        const LinearOperator<T1>& A = *blocks_[j];
        const uword m = A.codomain_size();
        auto part = this->scratch(where, checked_product("VerticalStack", {{"block size", m}, {"nbatch", nbatch}}));
        if (forward) {
            A.apply(in, part.data_ptr(), nbatch, true, where);
            for (uword b = 0; b < nbatch; ++b) copy_elems(out + b * n1 + offset_[j], part.data_ptr() + b * m, m, where);
        } else {
            for (uword b = 0; b < nbatch; ++b) copy_elems(part.data_ptr() + b * m, in + b * n1 + offset_[j], m, where);
            if (j == 0) {
                A.apply(part.data_ptr(), out, nbatch, false, where);
            } else {
                auto img = this->scratch(where, checked_product("VerticalStack", {{"n2", n2}, {"nbatch", nbatch}}));
                A.apply(part.data_ptr(), img.data_ptr(), nbatch, false, where);
                accumulate<T1>(out, img.data_ptr(), n2 * nbatch, where);
            }
        }
    }
}
// sum_j A_j^H A_j through each block's own normal (fast normals of the blocks, e.g. per-shot Toeplitz, are used).
template <typename T1>
void VerticalStack<T1>::normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const {
    const uword n2 = this->domain_size();
    blocks_[0]->apply_normal(in, out, nbatch, where);
    if (blocks_.size() == 1) return;
    auto img = this->scratch(where, checked_product("VerticalStack", {{"n2", n2}, {"nbatch", nbatch}}));
    for (uword j = 1; j < blocks_.size(); ++j) {
        blocks_[j]->apply_normal(in, img.data_ptr(), nbatch, where);
        accumulate<T1>(out, img.data_ptr(), n2 * nbatch, where);
    }
}
template <typename T1>
void VerticalStack<T1>::apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Host);
}
template <typename T1>
void VerticalStack<T1>::apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const {
    run(in, out, nbatch, forward, Residency::Device);
}

template <typename T1>
WithNormal<T1>::WithNormal(OperatorPtr<T1> A, OperatorPtr<T1> N)
    : LinearOperator<T1>("WithNormal", 0, 0), A_(std::move(A)), N_(std::move(N)) {
    if (!A_ || !N_) throw invalid_argument("WithNormal: A and N must not be null operators");
    if (N_->domain_size() != A_->domain_size() || N_->codomain_size() != A_->domain_size()) {
        std::ostringstream m;
        m << "WithNormal: N (" << N_->name() << ") maps " << N_->domain_size() << " to " << N_->codomain_size()
          << " entries; the normal of A (" << A_->name() << ") maps its domain of " << A_->domain_size()
          << " entries to itself";
        throw invalid_argument(m.str());
    }
    this->set_sizes(A_->codomain_size(), A_->domain_size());
    this->set_domain_shape(A_->domain_shape());
}

template <typename T1>
NormalOf<T1>::NormalOf(OperatorPtr<T1> A) : LinearOperator<T1>("NormalOf", 0, 0), A_(std::move(A)) {
    if (!A_) throw invalid_argument("NormalOf: A must not be a null operator");
    this->set_sizes(A_->domain_size(), A_->domain_size());
    this->set_domain_shape(A_->domain_shape());
}

template class Chain<float>;
template class Chain<double>;
template class Batched<float>;
template class Batched<double>;
template class StackedDiagonal<float>;
template class StackedDiagonal<double>;
template class AdjointOf<float>;
template class AdjointOf<double>;
template class VerticalStack<float>;
template class VerticalStack<double>;
template class WithNormal<float>;
template class WithNormal<double>;
template class NormalOf<float>;
template class NormalOf<double>;

}  // namespace forge
