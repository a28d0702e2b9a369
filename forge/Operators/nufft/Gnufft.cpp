// Gnufft's plan: the Kaiser-Bessel kernel and its polynomials, the grid sizes and deapodization, the sample
// positions sorted for gridding (constructor and set_points), the FFT plans and the GPU plan, and the device
// apply. The host transforms (spreading, interpolation, pad and crop) are in cpu/Gridding.cpp.
#include "forge/Operators/nufft/Gnufft.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Operators/nufft/cpu/HostPlan.h"

namespace forge {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr uword kMaxWidth = 16;
constexpr int kTaps = 16;  // Gnufft<T1>::kMaxTaps: stride of the coefficient table

// Fourier transform of the (K(0) = 1 normalised) Kaiser-Bessel kernel at nu cycles per grid cell.
// i0beta: I0(beta), the normaliser (one Bessel function per kernel, not per call).
double kb_ft(double nu, double W, double beta, double i0beta) {
    const double a = kPi * W * nu;
    const double s = beta * beta - a * a;
    double v;
    if (s > 1e-12) {
        const double r = std::sqrt(s);
        v = W * std::sinh(r) / r;
    } else if (s < -1e-12) {
        const double r = std::sqrt(-s);
        v = W * std::sin(r) / r;
    } else {
        v = W;
    }
    return v / i0beta;
}
double kb_ft(double nu, double W, double beta) { return kb_ft(nu, W, beta, std::cyl_bessel_i(0.0, beta)); }

double kb(double t, double W, double beta) {
    const double r = 2 * t / W;
    return std::abs(r) <= 1 ? std::cyl_bessel_i(0.0, beta * std::sqrt(1 - r * r)) / std::cyl_bessel_i(0.0, beta) : 0.0;
}

// Monomial coefficients (in y in [-1, 1]) of the Chebyshev interpolant of degree p of tap a's weight
// K(s + W/2 - 1 - a), s = (y + 1) / 2: out[k * kTaps + a].
void fit_kernel(int W, double beta, int p, std::vector<double>& out) {
    out.assign(std::size_t(p + 1) * kTaps, 0.0);
    const int n = p + 1;
    std::vector<double> cheb(n), mono(n), Tprev(n), Tcur(n), Tnext(n);
    std::vector<double> node(n);  // the kernel at the Chebyshev nodes (Bessel functions: once per node, not per m)
    for (int a = 0; a < W; ++a) {
        for (int k = 0; k < n; ++k) {
            const double th = kPi * (k + 0.5) / n, y = std::cos(th);
            node[k] = kb((y + 1) / 2 + W / 2.0 - 1 - a, W, beta);
        }
        for (int m = 0; m < n; ++m) {
            double c = 0;
            for (int k = 0; k < n; ++k) {
                const double th = kPi * (k + 0.5) / n;
                c += node[k] * std::cos(m * th);
            }
            cheb[m] = c * 2.0 / n * (m == 0 ? 0.5 : 1.0);
        }
        // sum_m cheb[m] T_m(y) in monomials: T_0 = 1, T_1 = y, T_{m+1} = 2 y T_m - T_{m-1}.
        std::fill(mono.begin(), mono.end(), 0.0);
        std::fill(Tprev.begin(), Tprev.end(), 0.0);
        std::fill(Tcur.begin(), Tcur.end(), 0.0);
        Tprev[0] = 1;
        mono[0] += cheb[0];
        if (n > 1) {
            Tcur[1] = 1;
            mono[1] += cheb[1];
        }
        for (int m = 2; m < n; ++m) {
            for (int k = 0; k < n; ++k) Tnext[k] = (k ? 2 * Tcur[k - 1] : 0.0) - Tprev[k];
            for (int k = 0; k < n; ++k) mono[k] += cheb[m] * Tnext[k];
            Tprev.swap(Tcur);
            Tcur.swap(Tnext);
        }
        for (int k = 0; k < n; ++k) out[std::size_t(k) * kTaps + a] = mono[k];
    }
}

// Measured at oversampling 2 (docs/nufft.md, tolerance table): the largest relative error over 2D/3D,
// random and spiral trajectories, forward and adjoint, Gnufft<double>, rounded up (about 10%); index W.
constexpr double kExpectedError[kMaxWidth + 1] = {1,       1,       9e-2,    8e-3,    9e-4,   9e-5,
                                                  9e-6,    9e-7,    9e-8,    1.1e-8,  1.1e-9, 1.3e-10,
                                                  1.5e-11, 1.6e-12, 1.7e-13, 2.2e-14, 1.2e-14};
// Gnufft<float>'s own rounding (FFT, sums, kernel in float), measured the same way: added to the above.
constexpr double kFloatFloor = 5e-7;
constexpr double kMaxTolerance = 1e-1;
}  // namespace

double NufftOptions::expected_error(uword W) {
    if (W < 2 || W > kMaxWidth) {
        throw invalid_argument("NufftOptions::expected_error: W = " + std::to_string(W) + "; expected 2..16");
    }
    return kExpectedError[W];
}

uword NufftOptions::width_for_tolerance(double tol, bool singlePrecision) {
    const double lo = singlePrecision ? 1e-6 : 1e-12;
    if (!(tol >= lo && tol <= kMaxTolerance)) {
        std::ostringstream m;
        m << "NufftOptions: tolerance = " << tol << "; expected a relative error in [" << lo << ", 1e-1]"
          << (singlePrecision ? " for float" : " (float: [1e-6, 1e-1])");
        throw invalid_argument(m.str());
    }
    const double floor = singlePrecision ? kFloatFloor : 0.0;
    for (uword W = 2; W <= kMaxWidth; ++W)
        if (kExpectedError[W] + floor <= tol) return W;
    return kMaxWidth;
}

NufftOptions NufftOptions::for_tolerance(double tol) {
    NufftOptions o;
    o.kernel_width = width_for_tolerance(tol);
    o.oversampling = 2.0;
    o.tolerance = tol;
    return o;
}

template <typename T1>
Gnufft<T1>::Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, NufftOptions options)
    : Gnufft(GridOnly{}, n1, Nx, Ny, Nz, options) {
    const char* where = "Gnufft";
    require_length(where, "kx", kx.n_elem, n1, "n1");
    require_length(where, "ky", ky.n_elem, n1, "n1");
    require_length(where, "kz", kz.n_elem, n1, "n1");
    load_points(where, kx, ky, kz);
    if (!pipeline_) (void)host_fft();  // a host operator plans its FFTs now (a GPU one on its first host transform)
}

template <typename T1>
Gnufft<T1>::Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const forgeCol<T1>& kx, const forgeCol<T1>& ky,
                   const forgeCol<T1>& kz, NufftOptions options)
    : Gnufft(GridOnly{}, n1, Nx, Ny, Nz, options) {
    const char* where = "Gnufft";
    require_length(where, "kx", kx.n_elem, n1, "n1");
    require_length(where, "ky", ky.n_elem, n1, "n1");
    require_length(where, "kz", kz.n_elem, n1, "n1");
    load_points(where, kx, ky, kz);
    if (!pipeline_) (void)host_fft();
}

template <typename T1>
Gnufft<T1>::Gnufft(GridOnly, uword n1, uword Nx, uword Ny, uword Nz, NufftOptions options)
    : LinearOperator<T1>("Gnufft", n1, 0), n1_(n1), n2_(0), N_{Nx, Ny, Nz}, W_(options.kernel_width),
      alpha_(options.oversampling), stream_(options.stream), device_(options.device) {
    const char* where = "Gnufft";
    require_positive(where, "n1 (number of k-space samples)", n1);
    n2_ = detail::require_centred_grid(where, Nx, Ny, Nz);
    this->set_sizes(n1, n2_);
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));
    if (options.tolerance != 0) {
        // float's rounding (FFT, sums) sits near 1e-6 of the result; double reaches 1e-12 with W <= 14.
        const double lo = std::is_same<T1, float>::value ? 1e-6 : 1e-12;
        if (!(options.tolerance >= lo && options.tolerance <= kMaxTolerance)) {
            std::ostringstream m;
            m << where << ": tolerance = " << options.tolerance << "; expected a relative error in [" << lo << ", "
              << kMaxTolerance << "] for " << (std::is_same<T1, float>::value ? "float" : "double")
              << " (or 0 for the explicit oversampling and kernel_width)";
            throw invalid_argument(m.str());
        }
        tol_ = options.tolerance;
        alpha_ = 2.0;
        W_ = NufftOptions::width_for_tolerance(tol_, std::is_same<T1, float>::value);
    }
    if (!(alpha_ >= 1.25 && alpha_ <= 8.0)) {
        std::ostringstream m;
        m << where << ": oversampling = " << alpha_ << "; expected a value in [1.25, 8]";
        throw invalid_argument(m.str());
    }
    if (W_ < 2 || W_ > kMaxWidth) {
        std::ostringstream m;
        m << where << ": kernel_width = " << W_ << "; expected an integer in [2, " << kMaxWidth << "]";
        throw invalid_argument(m.str());
    }
    const double b2 = (double(W_) / alpha_) * (double(W_) / alpha_) * (alpha_ - 0.5) * (alpha_ - 0.5) - 0.8;
    beta_ = kPi * std::sqrt(std::max(b2, 0.0));

    const char* gridName[3] = {"oversampled grid size along x", "oversampled grid size along y",
                               "oversampled grid size along z"};
    dims_ = 0;
    for (int d = 0; d < 3; ++d) {
        if (N_[d] > 1) {
            ++dims_;
            uword g = uword(std::ceil(alpha_ * double(N_[d]) - 1e-9));
            G_[d] = g + (g & 1);
            checked_product(where, {{gridName[d], G_[d]}}, detail::kMaxFftAxis, "FFTW and cuFFT take int dimensions");
            if (G_[d] < W_) {
                std::ostringstream m;
                m << where << ": the oversampled grid along "
                  << "xyz"[d] << " has " << G_[d] << " cells, fewer than kernel_width = " << W_
                  << "; use a larger image or a narrower kernel";
                throw invalid_argument(m.str());
            }
        } else {
            G_[d] = 1;
        }
    }

    checked_product(where, {{"oversampled grid x", G_[0]}, {"y", G_[1]}, {"z", G_[2]}});

    // Kernel polynomials (Chebyshev interpolants, degree W + 3: within 5% of the kernel's own error).
    degree_ = int(W_) + 3;
    std::vector<double> coef;
    fit_kernel(int(W_), beta_, degree_, coef);
    coef_.assign(coef.begin(), coef.end());
    // Deapodization multipliers 1/D(p), p = x - N/2.
    const double i0beta = std::cyl_bessel_i(0.0, beta_);
    for (int d = 0; d < 3; ++d) {
        deapod_[d].assign(N_[d], T1(1));
        if (N_[d] == 1) continue;
        for (uword x = 0; x < N_[d]; ++x) {
            const double p = double(x) - double(N_[d] / 2);
            deapod_[d][x] = T1(1.0 / kb_ft(p / double(G_[d]), double(W_), beta_, i0beta));
        }
    }

    fft_ = std::make_shared<HostFft>();
}

template <typename T1>
void Gnufft<T1>::set_points(const Trajectory<T1>& k) {
    set_points(k.kx, k.ky, k.kz);
}

template <typename T1>
void Gnufft<T1>::set_points(const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz) {
    const char* where = "Gnufft::set_points";
    const uword n1 = kx.n_elem;
    require_positive(where, "n1 (number of k-space samples: the length of kx)", n1);
    require_length(where, "ky", ky.n_elem, n1, "the length of kx");
    require_length(where, "kz", kz.n_elem, n1, "the length of kx");
    load_points(where, kx, ky, kz);
}

template <typename T1>
void Gnufft<T1>::set_points(const forgeCol<T1>& kx, const forgeCol<T1>& ky, const forgeCol<T1>& kz) {
    const char* where = "Gnufft::set_points";
    const uword n1 = kx.n_elem;
    require_positive(where, "n1 (number of k-space samples: the length of kx)", n1);
    require_length(where, "ky", ky.n_elem, n1, "the length of kx");
    require_length(where, "kz", kz.n_elem, n1, "the length of kx");
    load_points(where, kx, ky, kz);
}

template <typename T1>
void Gnufft<T1>::load_points(const char* where, const forgeCol<T1>& kx, const forgeCol<T1>& ky,
                             const forgeCol<T1>& kz) {
    const uword n1 = kx.n_elem;
    if (!kx.on_gpu() && !ky.on_gpu() && !kz.on_gpu()) {
        load_points(where, kx.to_arma(), ky.to_arma(), kz.to_arma());
        return;
    }
    if (!kx.on_gpu() || !ky.on_gpu() || !kz.on_gpu()) {
        throw residency_error(std::string(where) + ": kx, ky and kz must all be on the GPU or all on the host");
    }
    // The samples stay on the device; only a refusal copies them back, to name the first bad one.
    const T1* k[3] = {kx.device_memptr(), ky.device_memptr(), kz.device_memptr()};
    auto host_check = [&] {
        forgeCol<T1> h[3] = {kx, ky, kz};
        for (forgeCol<T1>& v : h) v.get_from_gpu();
        check_points(where, h[0].to_arma(), h[1].to_arma(), h[2].to_arma());
    };
    std::string refusal;
    if (!load_points_gpu(where, n1, k, true, host_check, refusal)) {
        throw residency_error(std::string(where) + ": the samples are on the GPU but the operator has no GPU plan" +
                              (refusal.empty() ? std::string(" (Gnufft<float> on a CUDA device only)")
                                               : " (" + refusal + ")") +
                              "; call get_from_gpu() on them first");
    }
    adopt_gpu_points(n1);
}

template <typename T1>
void Gnufft<T1>::adopt_gpu_points(uword n1) {
    // The host data follow from the GPU plan's copy of the trajectory when a host transform needs them.
    auto hp = std::make_shared<HostPoints>();
    hp->source = pipeline_.get();
    points_ = std::move(hp);
    n1_ = n1;
    this->set_sizes(n1_, n2_);
}

template <typename T1>
void Gnufft<T1>::load_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                             const arma::Col<T1>& kz) {
    const uword n1 = kx.n_elem;
    std::string refusal;
    const T1* k[3] = {kx.memptr(), ky.memptr(), kz.memptr()};
    if (load_points_gpu(where, n1, k, false, [&] { check_points(where, kx, ky, kz); }, refusal)) {
        adopt_gpu_points(n1);
        return;
    }
    auto hp = std::make_shared<HostPoints>();
    hp->points = sort_points(where, kx, ky, kz);  // throws before anything of the operator changes
    std::call_once(hp->once, [] {});              // made
    hp->ready.store(true, std::memory_order_release);
    if (!refusal.empty()) {
        // Sizes the GPU kernels cannot index leave the operator host-only; device input then gets this reason.
        pipeline_.reset();
        gpuRefusal_ = refusal;
    }
    points_ = std::move(hp);
    times_.upload = times_.device_sort = times_.gpu_plan = 0;
    n1_ = n1;
    this->set_sizes(n1_, n2_);
}

template <typename T1>
bool Gnufft<T1>::load_points_gpu(const char* where, uword n1, const T1* const k[3], bool onDevice,
                                 const std::function<void()>& host_check, std::string& refusal) {
    if constexpr (std::is_same<T1, float>::value) {
        if (!device::available()) return false;
        const auto t0 = std::chrono::steady_clock::now();
        cuda::NufftGeometry g{};
        for (int d = 0; d < 3; ++d) {
            g.N[d] = N_[d];
            g.G[d] = G_[d];
            g.deapod[d] = deapod_[d].data();
            g.first[d] = nullptr;
            g.offset[d] = nullptr;
        }
        g.W = W_;
        g.n1 = n1;
        g.k[0] = k[0];
        g.k[1] = k[1];
        g.k[2] = k[2];
        g.k_on_device = onDevice;
        g.coef = coef_.data();
        g.degree = degree_;
        try {
            cuda::CudaNufftPipeline::check_sizes(where, g);
        } catch (const invalid_argument& e) {
            refusal = e.what();
            return false;
        }
        if (pipeline_ && pipeline_.use_count() == 1) {
            // The plan is this operator's alone: new points, same FFT plan, deapodization and workspace. A refused
            // trajectory leaves it as it was; the host check names the first bad component.
            if (!pipeline_->set_trajectory(g.n1, g.k, onDevice)) {
                host_check();
                throw invalid_argument(std::string(where) + ": the GPU plan refused a sample as not finite or outside "
                                                            "the band");
            }
            const cuda::CudaNufftPipeline::SortTimes st = pipeline_->sort_times();
            times_.upload = st.upload;
            times_.device_sort = st.sort;
            times_.gpu_plan = 0;
        } else {
            // First plan, or one shared with copies of the operator (which keep their points): a plan of its own.
            if (stream_ && !cuda::stream_is_blocking(stream_)) {
                throw invalid_argument(std::string(where) +
                                       ": options.stream was made with cudaStreamNonBlocking; the operator's "
                                       "input comes from forgeCol arithmetic on the legacy default stream, which "
                                       "such a stream does not wait for (use a stream made by cudaStreamCreate)");
            }
            cuda::PlanOptions options;
            options.stream = stream_;
            options.device = device_;
            std::shared_ptr<cuda::CudaNufftPipeline> plan;
            try {
                plan = std::make_shared<cuda::CudaNufftPipeline>(g, options);
            } catch (const invalid_argument&) {
                host_check();  // a bad sample: its own message
                throw;
            }
            const cuda::CudaNufftPipeline::SortTimes st = plan->sort_times();
            times_.upload = st.upload;
            times_.device_sort = st.sort;
            times_.gpu_plan =
                std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() -
                                  st.upload - st.sort);
            pipeline_ = std::move(plan);
        }
        gpuRefusal_.clear();
        return true;
    } else {
        (void)where, (void)n1, (void)k, (void)onDevice, (void)host_check, (void)refusal;
        return false;
    }
}

template <typename T1>
const typename Gnufft<T1>::Points& Gnufft<T1>::host_points() const {
    HostPoints& hp = *points_;
    std::call_once(hp.once, [&] {
        // Only operators with a GPU plan get here: the trajectory comes back from the device, already checked.
        const uword n1 = hp.source->n1();
        arma::Col<T1> k[3] = {arma::Col<T1>(n1), arma::Col<T1>(n1), arma::Col<T1>(n1)};
        if constexpr (std::is_same<T1, float>::value) {
            float* const kp[3] = {k[0].memptr(), k[1].memptr(), k[2].memptr()};
            hp.source->copy_trajectory(kp);
        }
        hp.points = sort_points("Gnufft", k[0], k[1], k[2]);
        hp.ready.store(true, std::memory_order_release);
    });
    return hp.points;
}

template <typename T1>
const FftPlan<T1>& Gnufft<T1>::host_fft() const {
    HostFft& f = *fft_;
    std::call_once(f.once, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        f.plan = std::make_shared<FftPlan<T1>>(G_[0], G_[1], G_[2]);
        f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        f.ready.store(true, std::memory_order_release);
    });
    return *f.plan;
}

template <typename T1>
const std::vector<T1>& Gnufft<T1>::grid_positions(int axis) const {
    if (axis < 0 || axis > 2) {
        throw invalid_argument("Gnufft::grid_positions: axis = " + std::to_string(axis) + "; expected 0, 1 or 2");
    }
    return host_points().u[axis];
}

template <typename T1>
typename Gnufft<T1>::PlanTimes Gnufft<T1>::plan_times() const {
    PlanTimes t = times_;
    // The host entries once made (ready is set at the end of their call_once).
    if (points_->ready.load(std::memory_order_acquire)) {
        t.host_check = points_->points.checkSeconds;
        t.host_sort = points_->points.sortSeconds;
    }
    if (fft_->ready.load(std::memory_order_acquire)) t.fft_plan = fft_->seconds;
    return t;
}

template <typename T1>
double Gnufft<T1>::kernel_integral() const {
    return kb_ft(0.0, double(W_), beta_);
}

template <typename T1>
void Gnufft<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    if constexpr (std::is_same<T1, float>::value) {
        if (!pipeline_ && !gpuRefusal_.empty())
            throw invalid_argument(gpuRefusal_ + "; the operator runs on host data only");
        if (!pipeline_) {
            throw cuda_error("Gnufft: input is on the GPU but the operator has no CUDA pipeline (no CUDA device "
                             "was available when it was constructed)");
        }
        // One plan execution for the whole batch: every kernel takes the vector in blockIdx.y, one cuFFT
        // plan-many transforms the pass's grids.
        pipeline_->execute(forward ? cuda::Direction::forward : cuda::Direction::adjoint,
                           reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), nbatch);
        return;
    }
    (void)in, (void)out, (void)nbatch, (void)forward;
    throw residency_error("Gnufft: input is on the GPU, but the GPU path exists only for Gnufft<float> on CUDA "
                          "builds; call get_from_gpu() first");
}

template class Gnufft<float>;
template class Gnufft<double>;

}  // namespace forge
