#include "forge/Operators/dft/DftOperator.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/cpu/DftCpuKernels.h"
#include "forge/Operators/dft/cuda/CudaMultiDft.h"

namespace forge {

namespace {
template <typename T1>
double max_abs(const arma::Col<T1>& v) {
    return v.is_empty() ? 0.0 : double(arma::max(arma::abs(v)));
}

// Refuses a phase (or sinc argument) bound beyond what T1 evaluates accurately. 'what' names the quantity
// and how the bound was formed.
template <typename T1>
void require_phase_bound(const char* name, const char* what, double turns) {
    if (turns <= DftOperator<T1>::kMaxPhaseTurns) return;
    std::ostringstream m;
    m.precision(3);
    m << name << "<" << (std::is_same<T1, float>::value ? "float" : "double") << ">: " << what << " can reach " << turns
      << " turns, beyond the " << (std::is_same<T1, float>::value ? "4096 (2^12)" : "2199023255552 (2^41)")
      << " turns that " << (std::is_same<T1, float>::value ? "float" : "double")
      << " evaluates accurately (relative error a few 1e-4 there, growing in proportion); check the units (k in "
         "cycles/FOV, positions in FOV units, field_map in rad/s, t in s)";
    if (std::is_same<T1, float>::value) m << " or use double (up to 2^41 turns)";
    throw invalid_argument(m.str());
}

// What can be checked of the options without a GPU (the plans check the rest: the kernel against the device,
// the device numbers against the machine).
template <typename T1>
void check_options(const char* name, const DftOptions& options) {
    const std::string w(name);
    cuda::CudaDftPipeline::check_kernel((w + ": options.kernel (DftOptions::kernel)").c_str(), options.kernel);
    if (options.devices.empty()) return;
    if (!std::is_same<T1, float>::value)
        throw invalid_argument(w + ": options.devices: the GPU path exists only for float operators (this one is "
                                   "double); leave the device list empty");
    for (std::size_t i = 0; i < options.devices.size(); ++i)
        if (options.devices[i] < 0)
            throw invalid_argument(w + ": options.devices[" + std::to_string(i) + "] = " +
                                   std::to_string(options.devices[i]) + "; expected a CUDA device number (0 or more)");
    if (options.stream)
        throw invalid_argument(w + ": options.stream and options.devices: give one or the other (the transform over "
                                   "several devices runs on streams of its own, one per device)");
}
}  // namespace

template <typename T1>
DftOperator<T1>::DftOperator(const char* name, uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                             const arma::Col<T1>& kz, const arma::Col<T1>& ix, const arma::Col<T1>& iy,
                             const arma::Col<T1>& iz, const arma::Col<T1>& field_map, const arma::Col<T1>& t,
                             const DftOptions& options)
    : LinearOperator<T1>(name, n1, n2), name_(name), n1_(n1), n2_(n2), options_(options) {
    check_options<T1>(name, options);
    require_positive(name, "n1 (number of k-space samples)", n1);
    require_positive(name, "n2 (number of pixels)", n2);
    require_length(name, "kx", kx.n_elem, n1, "n1");
    require_length(name, "ky", ky.n_elem, n1, "n1");
    require_length(name, "kz", kz.n_elem, n1, "n1");
    require_length(name, "t", t.n_elem, n1, "n1");
    require_length(name, "ix", ix.n_elem, n2, "n2");
    require_length(name, "iy", iy.n_elem, n2, "n2");
    require_length(name, "iz", iz.n_elem, n2, "n2");
    require_length(name, "field_map", field_map.n_elem, n2, "n2");
    require_finite(name, "kx", kx.memptr(), n1);
    require_finite(name, "ky", ky.memptr(), n1);
    require_finite(name, "kz", kz.memptr(), n1);
    require_finite(name, "t", t.memptr(), n1);
    require_finite(name, "ix", ix.memptr(), n2);
    require_finite(name, "iy", iy.memptr(), n2);
    require_finite(name, "iz", iz.memptr(), n2);
    require_finite(name, "field_map", field_map.memptr(), n2);
    // In double, so that an overflow of the bound itself becomes inf (and is refused).
    require_phase_bound<T1>(
        name,
        "the phase 2 pi k.r + field_map t (bound: sum over axes of max|k| max|r|, plus max|field_map| "
        "max|t| / 2 pi)",
        max_abs(kx) * max_abs(ix) + max_abs(ky) * max_abs(iy) + max_abs(kz) * max_abs(iz) +
            max_abs(field_map) * max_abs(t) / dftcpu::kTwoPi);
    kx_ = kx;
    ky_ = ky;
    kz_ = kz;
    t_ = t;
    ix_ = ix;
    iy_ = iy;
    iz_ = iz;
    FM_ = field_map;
    // The CPU loops work in turns: field_map [rad/s] * t [s] / (2 pi) [rad/turn].
    fmTurns_ = arma::conv_to<arma::Col<T1>>::from(arma::conv_to<arma::vec>::from(field_map) / dftcpu::kTwoPi);
}

namespace {
// The length of k (checked against pixels): the geometry constructors' n1.
template <typename T1>
uword checked_samples(const char* name, const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, bool times_required) {
    k.check(name, times_required);
    pixels.check(name);
    return k.n_samples();
}
}  // namespace

template <typename T1>
DftOperator<T1>::DftOperator(const char* name, const Trajectory<T1>& k, const PixelGeometry<T1>& pixels,
                             bool times_required, const DftOptions& options)
    : DftOperator(name, checked_samples(name, k, pixels, times_required), pixels.n_pixels(), k.kx, k.ky, k.kz, pixels.x,
                  pixels.y, pixels.z, pixels.field_map_or_zeros(), k.times_or_zeros(), options) {}

template <typename T1>
void DftOperator<T1>::set_gradients(const char* name, const arma::Col<T1>& Gx, const arma::Col<T1>& Gy,
                                    const arma::Col<T1>& Gz, uword numX, uword numY, uword numZ,
                                    const char* const (&names)[3]) {
    // The grid (numX*numY*numZ == n2) was checked by the caller before the gradients were formed.
    require_length(name, names[0], Gx.n_elem, n2_, "n2");
    require_length(name, names[1], Gy.n_elem, n2_, "n2");
    require_length(name, names[2], Gz.n_elem, n2_, "n2");
    require_finite(name, names[0], Gx.memptr(), n2_);
    require_finite(name, names[1], Gy.memptr(), n2_);
    require_finite(name, names[2], Gz.memptr(), n2_);
    // sincPG(x) = sin(pi x) / (pi x): its phase is x / 2 turns.
    const double tmax = max_abs(t_);
    require_phase_bound<T1>(name, "the sinc phase pi (kx/numX + Gx t) (bound: (max|kx|/numX + max|Gx| max|t|) / 2)",
                            (max_abs(kx_) / double(numX) + max_abs(Gx) * tmax) / 2);
    require_phase_bound<T1>(name, "the sinc phase pi (ky/numY + Gy t) (bound: (max|ky|/numY + max|Gy| max|t|) / 2)",
                            (max_abs(ky_) / double(numY) + max_abs(Gy) * tmax) / 2);
    require_phase_bound<T1>(name, "the sinc phase pi (kz/numZ + Gz t) (bound: (max|kz|/numZ + max|Gz| max|t|) / 2)",
                            (max_abs(kz_) / double(numZ) + max_abs(Gz) * tmax) / 2);
    hasGradients_ = true;
    Gx_ = Gx;
    Gy_ = Gy;
    Gz_ = Gz;
    numX_ = numX;
    numY_ = numY;
    numZ_ = numZ;
}

template <typename T1>
DftOperator<T1>::DftOperator(const char* name, const DftOperator& pixels, uword n1, const arma::Col<T1>& kx,
                             const arma::Col<T1>& ky, const arma::Col<T1>& kz, const arma::Col<T1>& t)
    : DftOperator(name, n1, pixels.n2_, kx, ky, kz, pixels.ix_, pixels.iy_, pixels.iz_, pixels.FM_, t,
                  pixels.options_) {
    if (pixels.hasGradients_) {
        set_gradients(name, pixels.Gx_, pixels.Gy_, pixels.Gz_, pixels.numX_, pixels.numY_, pixels.numZ_);
    }
}

namespace {
template <typename T1>
uword checked_samples(const char* name, const Trajectory<T1>& k, bool times_required) {
    k.check(name, times_required);
    return k.n_samples();
}
}  // namespace

template <typename T1>
DftOperator<T1>::DftOperator(const char* name, const DftOperator& pixels, const Trajectory<T1>& k)
    : DftOperator(name, pixels, checked_samples(name, k, pixels.needs_times()), k.kx, k.ky, k.kz, k.times_or_zeros()) {}

template <typename T1>
bool DftOperator<T1>::needs_times() const {
    auto nonzero = [](const arma::Col<T1>& v) { return arma::any(v != T1(0)); };
    return nonzero(FM_) || (hasGradients_ && (nonzero(Gx_) || nonzero(Gy_) || nonzero(Gz_)));
}

template <typename T1>
void DftOperator<T1>::fill_geometry(cuda::DftGeometry& g) const {
    if constexpr (std::is_same<T1, float>::value) {
        g.ix = ix_.memptr();
        g.iy = iy_.memptr();
        g.iz = iz_.memptr();
        g.fm_turns = fmTurns_.memptr();  // the plan takes the field map in turns per second
        if (hasGradients_) {
            g.Gx = Gx_.memptr();
            g.Gy = Gy_.memptr();
            g.Gz = Gz_.memptr();
            g.nx = numX_;
            g.ny = numY_;
            g.nz = numZ_;
        }
        g.kx = kx_.memptr();
        g.ky = ky_.memptr();
        g.kz = kz_.memptr();
        g.t = t_.memptr();
        g.n1 = n1_;
        g.n2 = n2_;
    } else {
        (void)g;
    }
}

template <typename T1>
void DftOperator<T1>::make_pipeline() {
    if constexpr (std::is_same<T1, float>::value) {
        // Only when a device is present: a CUDA build must still work on a machine without a GPU (and a CPU-only
        // build has none).
        if (device::available()) {
            // Sizes the kernels cannot index leave the operator host-only; device input then gets this reason.
            try {
                cuda::CudaDftPipeline::check_sizes(name_, n1_, n2_);
            } catch (const invalid_argument& e) {
                gpuRefusal_ = e.what();
            }
            if (gpuRefusal_.empty()) {
                cuda::DftGeometry g;
                fill_geometry(g);
                cuda::PlanOptions o;
                o.stream = options_.stream;
                o.dft_kernel = options_.kernel;
                pipeline_ = std::make_shared<cuda::CudaDftPipeline>(g, o);
                points_ = pipeline_->points();
            }
        }
    }
    // Without a device too: the list then gets "no CUDA device" (or "built without CUDA").
    use_devices(std::string(name_) + ": options.devices", options_.devices);
}

template <typename T1>
void DftOperator<T1>::use_devices(const std::string& where, const std::vector<int>& devices) {
    if (devices.empty()) {
        multi_.reset();
        options_.devices.clear();
        return;
    }
    if (!std::is_same<T1, float>::value)
        throw invalid_argument(where + ": the GPU path exists only for float operators (this one is double)");
    cuda::CudaMultiDft::check_devices(where.c_str(), devices);  // CPU builds: throws "built without CUDA"
    if (!gpuRefusal_.empty()) throw invalid_argument(gpuRefusal_ + "; the operator runs on host data only");
    cuda::DftGeometry g;
    fill_geometry(g);
    multi_ = std::make_shared<cuda::CudaMultiDft>(g, devices, options_.kernel);
    options_.devices = devices;
}

template <typename T1>
void DftOperator<T1>::set_devices(const std::vector<int>& devices) {
    use_devices(std::string(name_) + "::set_devices", devices);
}

template <typename T1>
void DftOperator<T1>::share_pipeline(const DftOperator& pixels) {
    if constexpr (std::is_same<T1, float>::value) {
        if (!pixels.pipeline_) {  // no device, or pixel counts the kernels cannot index: same outcome here
            make_pipeline();
            return;
        }
        try {
            cuda::CudaDftPipeline::check_sizes(name_, n1_, n2_);
        } catch (const invalid_argument& e) {
            gpuRefusal_ = e.what();
        }
        if (gpuRefusal_.empty()) {
            pipeline_ = pixels.pipeline_;
            points_ = pipeline_->upload_points(kx_.memptr(), ky_.memptr(), kz_.memptr(), t_.memptr(), n1_);
        }
        // The pixels' devices, for this operator's samples.
        use_devices(std::string(name_) + ": options.devices", options_.devices);
    } else {
        (void)pixels;
    }
}

template <typename T1>
dftcpu::DftGeometryView<T1> DftOperator<T1>::cpu_view() const {
    return {kx_.memptr(),
            ky_.memptr(),
            kz_.memptr(),
            t_.memptr(),
            ix_.memptr(),
            iy_.memptr(),
            iz_.memptr(),
            fmTurns_.memptr(),
            hasGradients_ ? Gx_.memptr() : nullptr,
            hasGradients_ ? Gy_.memptr() : nullptr,
            hasGradients_ ? Gz_.memptr() : nullptr,
            T1(1) / T1(numX_),
            T1(1) / T1(numY_),
            T1(1) / T1(numZ_),
            (long long)n1_,
            (long long)n2_};
}

namespace {
// The kernel's padded structure-of-arrays inputs for one direction: inner arrays (pixels forward, samples
// adjoint) padded with zeros to a multiple of kInnerPad, so the vector loops need no remainder.
template <typename T1>
struct HostDftBuffers {
    std::vector<T1> ix, iy, iz, iw, i0, i1, i2, o0, o1, o2, re, im;
};

template <typename T1>
void pad_copy(std::vector<T1>& dst, const T1* src, long long n, long long npad, T1 scale = T1(1)) {
    dst.assign(npad, T1(0));
    for (long long i = 0; i < n; ++i) dst[i] = src[i] * scale;
}

template <typename T1>
void run_kernel(const dftcpu::DftKernelArgs<T1>& a) {
    if constexpr (std::is_same<T1, float>::value)
        dftcpu::kernel_float()(a);
    else
        dftcpu::kernel_double()(a);
}
}  // namespace

template <typename T1>
void DftOperator<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    const dftcpu::DftGeometryView<T1> g = cpu_view();
    const long long nin = forward ? g.n2 : g.n1, nout = forward ? g.n1 : g.n2;
    const long long npad = (nin + dftcpu::kInnerPad - 1) / dftcpu::kInnerPad * dftcpu::kInnerPad;
    HostDftBuffers<T1> buf;
    dftcpu::DftKernelArgs<T1> a{};
    a.n_in = npad;
    a.n_out = nout;
    a.forward = forward;
    a.grad = hasGradients_;
    if (forward) {  // outer samples, inner pixels
        a.ox = g.kx, a.oy = g.ky, a.oz = g.kz, a.ow = g.t;
        pad_copy(buf.ix, g.ix, nin, npad);
        pad_copy(buf.iy, g.iy, nin, npad);
        pad_copy(buf.iz, g.iz, nin, npad);
        pad_copy(buf.iw, g.fmTurns, nin, npad);
        if (hasGradients_) {
            pad_copy(buf.i0, g.gx, nin, npad);
            pad_copy(buf.i1, g.gy, nin, npad);
            pad_copy(buf.i2, g.gz, nin, npad);
            pad_copy(buf.o0, g.kx, nout, nout, g.invNx);
            pad_copy(buf.o1, g.ky, nout, nout, g.invNy);
            pad_copy(buf.o2, g.kz, nout, nout, g.invNz);
            a.ig[0] = buf.i0.data(), a.ig[1] = buf.i1.data(), a.ig[2] = buf.i2.data();
            a.oa[0] = buf.o0.data(), a.oa[1] = buf.o1.data(), a.oa[2] = buf.o2.data();
        }
    } else {  // outer pixels, inner samples
        a.ox = g.ix, a.oy = g.iy, a.oz = g.iz, a.ow = g.fmTurns;
        pad_copy(buf.ix, g.kx, nin, npad);
        pad_copy(buf.iy, g.ky, nin, npad);
        pad_copy(buf.iz, g.kz, nin, npad);
        pad_copy(buf.iw, g.t, nin, npad);
        if (hasGradients_) {
            pad_copy(buf.i0, g.kx, nin, npad, g.invNx);
            pad_copy(buf.i1, g.ky, nin, npad, g.invNy);
            pad_copy(buf.i2, g.kz, nin, npad, g.invNz);
            a.ia[0] = buf.i0.data(), a.ia[1] = buf.i1.data(), a.ia[2] = buf.i2.data();
            a.og[0] = g.gx, a.og[1] = g.gy, a.og[2] = g.gz;
        }
    }
    a.ix = buf.ix.data(), a.iy = buf.iy.data(), a.iz = buf.iz.data(), a.iw = buf.iw.data();
    // Up to 8 vectors per pass share each phase and its sine and cosine.
    for (uword b = 0; b < nbatch;) {
        const uword left = nbatch - b;
        const int nb = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        buf.re.assign(size_t(nb) * npad, T1(0));
        buf.im.assign(size_t(nb) * npad, T1(0));
        const forgeComplex<T1>* inB = in + b * uword(nin);
        for (int v = 0; v < nb; ++v)
            for (long long i = 0; i < nin; ++i) {
                buf.re[v * npad + i] = inB[v * nin + i].re;
                buf.im[v * npad + i] = inB[v * nin + i].im;
            }
        a.in_re = buf.re.data();
        a.in_im = buf.im.data();
        a.out = reinterpret_cast<T1*>(out + b * uword(nout));
        a.nb = nb;
        run_kernel(a);
        b += uword(nb);
    }
}

template <typename T1>
void DftOperator<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch,
                                   bool forward) const {
    if constexpr (std::is_same<T1, float>::value) {
        // Reached only with device-resident input, which needs a CUDA build and a device.
        if (multi_) {
            multi_->execute(forward ? cuda::Direction::forward : cuda::Direction::adjoint,
                            reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), nbatch);
            return;
        }
        if (!pipeline_ && !gpuRefusal_.empty())
            throw invalid_argument(gpuRefusal_ + "; the operator runs on host data only");
        if (!pipeline_) {
            throw cuda_error(std::string(name_) + ": input is on the GPU but the operator has no CUDA pipeline "
                                                  "(no CUDA device was available when it was constructed)");
        }
        pipeline_->execute(*points_, forward ? cuda::Direction::forward : cuda::Direction::adjoint,
                           reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), nbatch);
    } else {
        (void)in, (void)out, (void)nbatch, (void)forward;
        throw residency_error(std::string(name_) + ": input is on the GPU, but the GPU path exists only for float "
                                                   "operators; call get_from_gpu() first");
    }
}

template class DftOperator<float>;
template class DftOperator<double>;

}  // namespace forge
