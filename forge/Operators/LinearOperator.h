#pragma once
// LinearOperator<T1>: the contract every forge operator implements (Gdft, GdftR2, Gnufft, Gfft, GfftSampled,
// TimeSegmentation, SENSE, pcSENSE, pcSenseTimeSeg, the composition operators, and operators users write).
//
//   A maps a domain of domain_size() complex values (an image of n2() pixels) to a codomain of codomain_size()
//   values (k-space data).
//   A.forward(x, nbatch)   nbatch images stored back to back       -> nbatch data vectors back to back
//   A.adjoint(y, nbatch)   the adjoint A^H, batch for batch
//   A.normal(x, nbatch)    A^H A x; by default adjoint after forward, overridable (a faster normal, e.g. by
//                          Toeplitz embedding, plugs in here without touching the solvers)
//   A * x, A / y           forward and adjoint of one vector (forgeCol, or arma::Col at the API boundary)
//
// The size checks and the host/device decision are made once, here: forward/adjoint/normal check the length
// against domain or codomain size times nbatch, allocate the result where the input lives (host, or GPU for a
// forgeCol on the device) and call the implementation with raw pointers of that residency. An implementation
// overrides apply_host (required) and apply_device (optional: without it, device input throws
// forge::residency_error naming the operator) and may override apply_normal. The public apply() with raw
// pointers and an explicit Residency is what composite operators call on their parts.
//
// Writing an operator (it then works with solve_pwls_pcg, recon_solve, SENSE, TimeSegmentation, chain(), ...):
//
//   class Scale : public forge::LinearOperator<float> {
//   public:
//       explicit Scale(arma::uword n) : LinearOperator("Scale", n, n) {}
//   protected:
//       void apply_host(const Elem* in, Elem* out, arma::uword nbatch, bool forward) const override {
//           for (arma::uword i = 0; i < nbatch * domain_size(); ++i) out[i] = in[i] * 2.0f;
//       }
//   };
//
// Elem (forgeComplex<T1>) converts to and from std::complex<T1> value by value; arma_view(p, n) sees n entries of
// apply_host's buffers as an arma::Col<std::complex<T1>> without copying (docs/operators.md: a dense matrix). An
// operator on an image grid calls set_domain_shape(grid) in its constructor.
#include <complex>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include <armadillo>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Geometry.h"
#include "forge/Core/Validation.h"
#include "forge/Core/forgeCol.h"

namespace forge {

// Where the data of one apply() lives.
enum class Residency { Host, Device };

template <typename T1>
class LinearOperator {
    static_assert(std::is_same<T1, float>::value || std::is_same<T1, double>::value, "T1 must be float or double");

public:
    using real_type = T1;
    using complex_type = std::complex<T1>;
    using Elem = forgeComplex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<Elem>;

    virtual ~LinearOperator() = default;

    uword domain_size() const { return domain_; }      // image entries of one vector (pixels)
    uword codomain_size() const { return codomain_; }  // data entries of one vector (samples, all coils)
    uword n2() const { return domain_; }               // pixels, as every operator names them
    // The image grid of the domain (nx x ny x nz = domain_size()): the grid of a grid operator (Gfft, Gnufft,
    // ToeplitzNormal) and of composites built on one; domain_size() x 1 x 1 for operators on scattered pixels.
    // Penalties take it: QuadPenalty<float> R(A.domain_shape(), beta).
    ImageGrid domain_shape() const { return shape_.n_pixels() == domain_ ? shape_ : ImageGrid(domain_); }
    const std::string& name() const { return name_; }

    ForgeVec forward(const ForgeVec& x, uword nbatch = 1) const { return run(x, nbatch, Direction::Forward); }
    ForgeVec adjoint(const ForgeVec& y, uword nbatch = 1) const { return run(y, nbatch, Direction::Adjoint); }
    ForgeVec normal(const ForgeVec& x, uword nbatch = 1) const { return run(x, nbatch, Direction::Normal); }

    ForgeVec operator*(const ForgeVec& x) const { return forward(x); }
    ForgeVec operator/(const ForgeVec& y) const { return adjoint(y); }
    // arma::Col at the API boundary: one conversion in, one out (host only).
    ArmaVec operator*(const ArmaVec& x) const { return forward(ForgeVec(x)).to_arma(); }
    ArmaVec operator/(const ArmaVec& y) const { return adjoint(ForgeVec(y)).to_arma(); }
    ArmaVec normal(const ArmaVec& x) const { return normal(ForgeVec(x)).to_arma(); }
    // Names kept from the operators' first batched interface.
    ForgeVec forward_batch(const ForgeVec& x, uword nbatch) const { return forward(x, nbatch); }
    ForgeVec adjoint_batch(const ForgeVec& y, uword nbatch) const { return adjoint(y, nbatch); }

    // Raw entry point for composite operators: nbatch vectors at in (domain or codomain sized), written to
    // out, both in 'where'. No checks beyond nbatch == 0 doing nothing: the caller sized the buffers.
    void apply(const Elem* in, Elem* out, uword nbatch, bool forward, Residency where) const {
        if (nbatch == 0) return;
        if (where == Residency::Device) {
            apply_device(in, out, nbatch, forward);
        } else {
            apply_host(in, out, nbatch, forward);
        }
    }
    void apply_normal(const Elem* in, Elem* out, uword nbatch, Residency where) const {
        if (nbatch == 0) return;
        normal_impl(in, out, nbatch, where);
    }

    // Uploads what the operator keeps for the GPU now rather than on its first device apply.
    virtual void prepare_device() const {}

protected:
    LinearOperator(std::string name, uword codomainSize, uword domainSize)
        : name_(std::move(name)), codomain_(codomainSize), domain_(domainSize) {}
    LinearOperator(const LinearOperator&) = default;
    LinearOperator(LinearOperator&&) = default;
    LinearOperator& operator=(const LinearOperator&) = default;
    LinearOperator& operator=(LinearOperator&&) = default;

    virtual void apply_host(const Elem* in, Elem* out, uword nbatch, bool forward) const = 0;
    virtual void apply_device(const Elem* in, Elem* out, uword nbatch, bool forward) const {
        (void)in, (void)out, (void)nbatch, (void)forward;
        throw residency_error(name_ + ": the input is on the GPU, but this operator runs on host data only; call "
                                      "get_from_gpu() first");
    }
    // A^H A; the default goes through a codomain-sized temporary.
    virtual void normal_impl(const Elem* in, Elem* out, uword nbatch, Residency where) const {
        ForgeVec tmp =
            scratch(where, checked_product(name_.c_str(), {{"codomain size", codomain_}, {"nbatch", nbatch}}));
        apply(in, tmp.data_ptr(), nbatch, true, where);
        apply(tmp.data_ptr(), out, nbatch, false, where);
    }

    // The n entries at p (host memory, e.g. vector b of apply_host's batch at in + b * domain_size()) as an
    // Armadillo column that shares their memory: forgeComplex<T1> and std::complex<T1> have one layout. Assigning
    // an expression of n entries to the view writes p (the view cannot be resized); the const view only reads.
    static const ArmaVec arma_view(const Elem* p, uword n) {
        return ArmaVec(const_cast<complex_type*>(reinterpret_cast<const complex_type*>(p)), n, false, true);
    }
    static ArmaVec arma_view(Elem* p, uword n) { return ArmaVec(reinterpret_cast<complex_type*>(p), n, false, true); }

    // An uninitialised vector of n entries in 'where', for intermediate results.
    static ForgeVec scratch(Residency where, uword n) {
        return where == Residency::Device ? ForgeVec::device_uninitialized(n) : ForgeVec(n);
    }
    void set_sizes(uword codomainSize, uword domainSize) {
        codomain_ = codomainSize;
        domain_ = domainSize;
    }
    // The domain's image grid (its pixel count must be domain_size(); set after set_sizes).
    void set_domain_shape(const ImageGrid& shape) {
        if (shape.n_pixels() != domain_)
            throw invalid_argument(name_ + ": domain shape " + shape.to_string() + " does not hold the " +
                                   std::to_string(domain_) + " domain entries");
        shape_ = shape;
    }
    // How error messages name the sizes (defaults "n2" and "n1"), e.g. "n1 * nc" for SENSE.
    void name_sizes(std::string domain, std::string codomain) {
        domainName_ = std::move(domain);
        codomainName_ = std::move(codomain);
    }

private:
    enum class Direction { Forward, Adjoint, Normal };

    ForgeVec run(const ForgeVec& in, uword nbatch, Direction d) const {
        const bool fwd = d != Direction::Adjoint;
        const char* what = d == Direction::Forward ? " forward" : d == Direction::Adjoint ? " adjoint" : " normal";
        const std::string where = name_ + what;
        if (nbatch == 0) throw invalid_argument(where + ": nbatch must be at least 1, got 0");
        const std::string& inName = fwd ? domainName_ : codomainName_;
        const std::string& outName = d == Direction::Forward ? codomainName_ : domainName_;
        const uword inLen =
            checked_product(where.c_str(), {{inName.c_str(), fwd ? domain_ : codomain_}, {"nbatch", nbatch}});
        const uword outLen =
            checked_product(where.c_str(),
                            {{outName.c_str(), d == Direction::Forward ? codomain_ : domain_}, {"nbatch", nbatch}});
        if (in.n_elem != inLen) {
            std::ostringstream m;
            m << where << ": " << (fwd ? "image" : "k-space data") << " has " << in.n_elem << " entries, expected "
              << inName << " = " << (fwd ? domain_ : codomain_);
            if (nbatch > 1) m << " times nbatch = " << nbatch << ", " << inLen;
            throw invalid_argument(m.str());
        }
        const Residency r = in.on_gpu() ? Residency::Device : Residency::Host;
        ForgeVec out = scratch(r, outLen);
        if (d == Direction::Normal) {
            apply_normal(in.data_ptr(), out.data_ptr(), nbatch, r);
        } else {
            apply(in.data_ptr(), out.data_ptr(), nbatch, fwd, r);
        }
        return out;
    }

    std::string name_;
    uword codomain_, domain_;
    ImageGrid shape_{0, 0, 0};  // unset: domain_shape() is domain_size() x 1 x 1
    std::string domainName_ = "n2", codomainName_ = "n1";
};

// Operators are shared, immutable after construction: composites hold their parts by this pointer.
template <typename T1>
using OperatorPtr = std::shared_ptr<const LinearOperator<T1>>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::LinearOperator;
#endif
