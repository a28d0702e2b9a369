#pragma once
// SENSE<T1, Tobj>: multi-coil sensitivity encoding around any single-coil encoding operator G.
//
//   forward  y_c = G (S_c .* x)                 for c = 0 .. nc-1, data coil-major: y_c at [c*n1, (c+1)*n1)
//   adjoint  x   = sum_c conj(S_c) .* (G / y_c)
//
//   SENSE<float, Gdft<float>> S(G, maps, nc);   y = S * x;   x = S / y;
//
//   G     the encoding operator (its n1 = samples per coil, n2 = pixels); SENSE stores a copy (copies of
//         Gdft/GdftR2 share their GPU pipeline, so this is cheap)
//   maps  nc sensitivity maps of n2 pixels back to back: coil c at [c*n2, (c+1)*n2)
//   nc    number of coils
//
// Tobj needs operator* and operator/ on forgeCol<forgeComplex<T1>> and n1()/n2(). When it also has
// forward_batch/adjoint_batch (Gdft, GdftR2) SENSE by default evaluates all coils in one batched call:
// on the GPU each sample-pixel phase is then computed once for all coils. set_coil_batching(false) selects
// the coil-by-coil path (one G * / G / per coil), kept for comparisons and for operators without batching.
//
// Residency: host input runs on the host; device input runs on the GPU (coil expansion and combination
// in CUDA kernels, results stay on the device). The maps are uploaded once, on first device use or by
// prepare_device().
#include <complex>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <utility>

#include <armadillo>

#include "forge/CUDA/SenseKernels.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Core/forgeCol.h"

namespace forge {

namespace sense_detail {
template <typename Op, typename V, typename = void>
struct has_batch : std::false_type {};
template <typename Op, typename V>
struct has_batch<Op, V,
                 std::void_t<decltype(std::declval<const Op&>().forward_batch(std::declval<const V&>(), uword(1))),
                             decltype(std::declval<const Op&>().adjoint_batch(std::declval<const V&>(), uword(1)))>>
    : std::true_type {};

// Copies n elements from src + so to dst + doff, both on the host or both on the device.
template <typename T>
void copy_block(const forgeCol<T>& src, uword so, forgeCol<T>& dst, uword doff, uword n) {
    if (n == 0) return;
    if (src.on_gpu()) {
        device::copy_on_device(dst.device_memptr() + doff, src.device_memptr() + so, n * sizeof(T));
    } else {
        std::memcpy(dst.memptr() + doff, src.memptr() + so, n * sizeof(T));
    }
}

template <typename T1>
void host_expand(const forgeComplex<T1>* x, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2, uword nc) {
    const long long total = static_cast<long long>(n2 * nc);
#pragma omp parallel for if (detail::parallel_elementwise(uword(total), 3 * sizeof(forgeComplex<T1>)))
    for (long long i = 0; i < total; ++i) out[i] = maps[i] * x[uword(i) % n2];
}
template <typename T1>
void host_combine(const forgeComplex<T1>* imgs, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2, uword nc,
                  bool accumulate) {
#pragma omp parallel for if (detail::parallel_elementwise(n2, (2 * nc + 1) * sizeof(forgeComplex<T1>)))
    for (long long k = 0; k < static_cast<long long>(n2); ++k) {
        forgeComplex<T1> s = accumulate ? out[k] : forgeComplex<T1>(0, 0);
        for (uword c = 0; c < nc; ++c) s += conj(maps[c * n2 + k]) * imgs[c * n2 + k];
        out[k] = s;
    }
}
}  // namespace sense_detail

template <typename T1, typename Tobj>
class SENSE {
    static_assert(std::is_same<T1, float>::value || std::is_same<T1, double>::value, "T1 must be float or double");

public:
    using complex_type = std::complex<T1>;
    using ArmaVec = arma::Col<complex_type>;
    using ForgeVec = forgeCol<forgeComplex<T1>>;
    static constexpr bool can_batch = sense_detail::has_batch<Tobj, ForgeVec>::value;

    SENSE(const Tobj& G, const ArmaVec& maps, uword nc)
        : G_(G), n1_(G.n1()), n2_(G.n2()), nc_(nc), maps_(maps), dev_(std::make_shared<DeviceMaps>()) {
        if (nc == 0) throw invalid_argument("SENSE: nc (number of coils) must be at least 1, got 0");
        const uword nmaps = checked_product("SENSE", {{"G.n2()", n2_}, {"nc", nc}});
        nData_ = checked_product("SENSE", {{"G.n1()", n1_}, {"nc", nc}});
        if (maps.n_elem != nmaps) {
            std::ostringstream m;
            m << "SENSE: maps has " << maps.n_elem << " entries, expected G.n2() * nc = " << n2_ << " * " << nc
              << " = " << nmaps << " (coil c's map at [c*n2, (c+1)*n2))";
            throw invalid_argument(m.str());
        }
    }

    // y = S * x (image of n2 pixels -> n1*nc samples, coil-major)
    ForgeVec operator*(const ForgeVec& x) const {
        check_len(x.n_elem, n2_, "operator*", "x", "n2");
        return (batching_ && can_batch) ? forward_batched(x) : forward_coil_by_coil(x);
    }
    // x = S / y (adjoint: n1*nc samples -> n2 pixels)
    ForgeVec operator/(const ForgeVec& y) const {
        check_len(y.n_elem, nData_, "operator/", "y", "n1 * nc");
        return (batching_ && can_batch) ? adjoint_batched(y) : adjoint_coil_by_coil(y);
    }
    ArmaVec operator*(const ArmaVec& x) const { return (*this * ForgeVec(x)).getArma(); }
    ArmaVec operator/(const ArmaVec& y) const { return (*this / ForgeVec(y)).getArma(); }

    // Coil-by-coil transforms (always available): one G * or G / per coil.
    ForgeVec forward_coil_by_coil(const ForgeVec& x) const {
        check_len(x.n_elem, n2_, "forward_coil_by_coil", "x", "n2");
        ForgeVec out = ForgeVec::same_place(x, nData_);
        ForgeVec tmp = ForgeVec::same_place(x, n2_);
        for (uword c = 0; c < nc_; ++c) {
            expand(x, tmp, c, 1);
            ForgeVec yc = G_ * tmp;
            sense_detail::copy_block(yc, 0, out, c * n1_, n1_);
        }
        return out;
    }
    ForgeVec adjoint_coil_by_coil(const ForgeVec& y) const {
        check_len(y.n_elem, nData_, "adjoint_coil_by_coil", "y", "n1 * nc");
        ForgeVec out = ForgeVec::same_place(y, n2_);
        ForgeVec yc = ForgeVec::same_place(y, n1_);
        for (uword c = 0; c < nc_; ++c) {
            sense_detail::copy_block(y, c * n1_, yc, 0, n1_);
            ForgeVec img = G_ / yc;
            combine(img, out, c, 1, c > 0);
        }
        return out;
    }

    // Batched transforms through G.forward_batch / G.adjoint_batch (when Tobj has them; otherwise the
    // coil-by-coil path): all coil images S_c .* x are built in one n2*nc vector and transformed at once.
    ForgeVec forward_batched(const ForgeVec& x) const {
        check_len(x.n_elem, n2_, "forward_batched", "x", "n2");
        if constexpr (can_batch) {
            ForgeVec big = ForgeVec::same_place(x, maps_.n_elem);
            expand(x, big, 0, nc_);
            return G_.forward_batch(big, nc_);
        } else {
            return forward_coil_by_coil(x);
        }
    }
    ForgeVec adjoint_batched(const ForgeVec& y) const {
        check_len(y.n_elem, nData_, "adjoint_batched", "y", "n1 * nc");
        if constexpr (can_batch) {
            ForgeVec imgs = G_.adjoint_batch(y, nc_);
            ForgeVec out = ForgeVec::same_place(y, n2_);
            combine(imgs, out, 0, nc_, false);
            return out;
        } else {
            return adjoint_coil_by_coil(y);
        }
    }

    // Batched (default) or coil-by-coil for operator* and operator/.
    void set_coil_batching(bool on) { batching_ = on; }
    bool coil_batching() const { return batching_ && can_batch; }

    // Uploads the maps to the GPU now (otherwise done on the first device apply).
    void prepare_device() const { (void)device_maps(); }

    uword n1() const { return n1_; }           // samples per coil
    uword n2() const { return n2_; }           // pixels
    uword n_coils() const { return nc_; }
    uword n_data() const { return nData_; }  // length of S * x: n1 * nc
    const Tobj& encoding_operator() const { return G_; }
    const ForgeVec& maps() const { return maps_; }

private:
    struct DeviceMaps {
        std::mutex m;
        ForgeVec maps;
        bool ready = false;
    };
    const ForgeVec& device_maps() const {
        std::lock_guard<std::mutex> lock(dev_->m);
        if (!dev_->ready) {
            ForgeVec d(maps_);
            d.putOnGPU();
            dev_->maps = std::move(d);
            dev_->ready = true;
        }
        return dev_->maps;
    }
    // out[j*n2 + k] = S_{c0+j}[k] * x[k] for j < ncoils
    void expand(const ForgeVec& x, ForgeVec& out, uword c0, uword ncoils) const {
        if (x.on_gpu()) {
            cuda::sense_expand<T1>(x.device_memptr(), device_maps().device_memptr() + c0 * n2_, out.device_memptr(),
                                   n2_, ncoils);
        } else {
            sense_detail::host_expand<T1>(x.memptr(), maps_.memptr() + c0 * n2_, out.memptr(), n2_, ncoils);
        }
    }
    // out[k] (+)= sum_j conj(S_{c0+j}[k]) imgs[j*n2 + k]
    void combine(const ForgeVec& imgs, ForgeVec& out, uword c0, uword ncoils, bool accumulate) const {
        if (imgs.on_gpu()) {
            cuda::sense_combine<T1>(imgs.device_memptr(), device_maps().device_memptr() + c0 * n2_,
                                    out.device_memptr(), n2_, ncoils, accumulate);
        } else {
            sense_detail::host_combine<T1>(imgs.memptr(), maps_.memptr() + c0 * n2_, out.memptr(), n2_, ncoils,
                                           accumulate);
        }
    }
    void check_len(uword actual, uword expected, const char* what, const char* arg, const char* name) const {
        if (actual != expected) {
            std::ostringstream m;
            m << "SENSE::" << what << ": " << arg << " has " << actual << " entries, expected " << name << " = "
              << expected;
            throw invalid_argument(m.str());
        }
    }

    Tobj G_;
    uword n1_, n2_, nc_;
    uword nData_ = 0;  // n1 * nc, checked once
    ForgeVec maps_;
    std::shared_ptr<DeviceMaps> dev_;
    bool batching_ = true;
};

}  // namespace forge

#ifndef FORGE_NO_GLOBAL_NAMES
using forge::SENSE;
#endif
