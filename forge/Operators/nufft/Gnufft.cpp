// Gnufft's plan: the Kaiser-Bessel kernel and its polynomials, the grid sizes and deapodization, the sample
// positions sorted for gridding (constructor and set_points), the FFT plans and the GPU plan, and the device
// apply. The host transforms (spreading, interpolation, pad and crop) are in cpu/Gridding.cpp.
#include "forge/Operators/nufft/Gnufft.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "forge/CUDA/CudaFft.h"
#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"

namespace forge {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr uword kMaxWidth = 16;
constexpr int kTaps = 16;  // Gnufft<T1>::kMaxTaps: stride of the coefficient table

// Fourier transform of the (K(0) = 1 normalised) Kaiser-Bessel kernel at nu cycles per grid cell.
double kb_ft(double nu, double W, double beta) {
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
    return v / std::cyl_bessel_i(0.0, beta);
}

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
    for (int a = 0; a < W; ++a) {
        for (int m = 0; m < n; ++m) {
            double c = 0;
            for (int k = 0; k < n; ++k) {
                const double th = kPi * (k + 0.5) / n, y = std::cos(th);
                c += kb((y + 1) / 2 + W / 2.0 - 1 - a, W, beta) * std::cos(m * th);
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

// Sample positions in the forms the transforms read (see the members of the same names in Gnufft.h).
template <typename T1>
struct Gnufft<T1>::Points {
    uword n1 = 0;
    std::vector<T1> u[3];
    std::vector<uword> order, slabStart;
    std::vector<int> first[3];
    std::vector<T1> offset[3];
};

template <typename T1>
Gnufft<T1>::Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, NufftOptions options)
    : LinearOperator<T1>("Gnufft", n1, 0), n1_(n1), n2_(0), N_{Nx, Ny, Nz}, W_(options.kernel_width),
      alpha_(options.oversampling), stream_(options.stream), device_(options.device) {
    const char* where = "Gnufft";
    require_positive(where, "n1 (number of k-space samples)", n1);
    n2_ = detail::require_centred_grid(where, Nx, Ny, Nz);
    this->set_sizes(n1, n2_);
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));
    require_length(where, "kx", kx.n_elem, n1, "n1");
    require_length(where, "ky", ky.n_elem, n1, "n1");
    require_length(where, "kz", kz.n_elem, n1, "n1");
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

    const arma::Col<T1>* k[3] = {&kx, &ky, &kz};
    const char* kn[3] = {"kx", "ky", "kz"};
    const char* gridName[3] = {"oversampled grid size along x", "oversampled grid size along y",
                               "oversampled grid size along z"};
    dims_ = 0;
    for (int d = 0; d < 3; ++d) {
        require_finite(where, kn[d], k[d]->memptr(), n1);
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
    for (int d = 0; d < 3; ++d) {
        deapod_[d].assign(N_[d], T1(1));
        if (N_[d] == 1) continue;
        for (uword x = 0; x < N_[d]; ++x) {
            const double p = double(x) - double(N_[d] / 2);
            deapod_[d][x] = T1(1.0 / kb_ft(p / double(G_[d]), double(W_), beta_));
        }
    }

    Points points = sort_points(where, kx, ky, kz);
    plan_ = std::make_shared<FftPlan<T1>>(G_[0], G_[1], G_[2]);
    update_gpu_plan(where, points);
    take_points(std::move(points));
}

template <typename T1>
typename Gnufft<T1>::Points Gnufft<T1>::sort_points(const char* where, const arma::Col<T1>& kx,
                                                    const arma::Col<T1>& ky, const arma::Col<T1>& kz) const {
    const uword n1 = kx.n_elem;
    Points P;
    P.n1 = n1;
    const arma::Col<T1>* k[3] = {&kx, &ky, &kz};
    const char* kn[3] = {"kx", "ky", "kz"};
    for (int d = 0; d < 3; ++d) {
        require_finite(where, kn[d], k[d]->memptr(), n1);
        // Both band edges are accepted: the image grid is periodic in k with period N (the pixels sit at
        // integer multiples of 1/N), so k = +N/2 and k = -N/2 are the same sample and land on the same
        // grid position u = G/2 below (radial spokes from SigPy and BART end at +N/2).
        const double lo = N_[d] > 1 ? -double(N_[d] / 2) : -0.5, hi = N_[d] > 1 ? double(N_[d] / 2) : 0.5;
        P.u[d].resize(n1);
        for (uword j = 0; j < n1; ++j) {
            const double v = double((*k[d])[j]);
            if (!(v >= lo && v <= hi)) {
                std::ostringstream m;
                m << where << ": " << kn[d] << "[" << j << "] = " << v << " is outside [" << lo << ", " << hi
                  << "] cycles/FOV (grid size "
                  << "xyz"[d] << " = " << N_[d] << ")";
                throw invalid_argument(m.str());
            }
            if (N_[d] > 1) {
                double u = v * double(G_[d]) / double(N_[d]);
                if (u < 0) u += double(G_[d]);
                T1 uf = T1(u);
                if (uf >= T1(G_[d])) uf = T1(0);  // rounding of tiny negative positions
                P.u[d][j] = uf;
            } else {
                P.u[d][j] = T1(0);
            }
        }
    }

    // Presort samples into slabs along the slowest non-trivial axis (race-free gridding) and, inside a
    // slab, by 8-cell tiles of the other axes (cache locality for both directions).
    const int sa = N_[2] > 1 ? 2 : (N_[1] > 1 ? 1 : 0);
    const uword Gs = G_[sa];
    uword nslab = Gs / W_;
    nslab -= nslab & 1;
    if (nslab < 2) nslab = 1;
    P.slabStart.assign(nslab + 1, 0);
    std::vector<std::pair<unsigned long long, uword>> key(n1);
    const int a1 = sa == 2 ? 1 : 0;  // middle axis (y in 3D, x in 2D)
    const int a0 = 0;
    const unsigned long long t1n = G_[a1] / 8 + 1, t0n = G_[a0] / 8 + 1;
    for (uword j = 0; j < n1; ++j) {
        uword s = uword(double(P.u[sa][j]) * double(nslab) / double(Gs));
        if (s >= nslab) s = nslab - 1;
        // Slab s covers [floor(s*Gs/nslab), floor((s+1)*Gs/nslab)); fix rounding at the borders.
        while (s > 0 && double(P.u[sa][j]) < double((s * Gs) / nslab)) --s;
        while (s + 1 < nslab && double(P.u[sa][j]) >= double(((s + 1) * Gs) / nslab)) ++s;
        const unsigned long long t1 = sa == a1 ? 0 : (unsigned long long)(P.u[a1][j] / 8);
        const unsigned long long t0 = sa == a0 ? 0 : (unsigned long long)(P.u[a0][j] / 8);
        key[j] = {(s * t1n + t1) * t0n + t0, j};
        P.slabStart[s + 1]++;
    }
    P.order.resize(n1);
    const unsigned long long nkeys = nslab * t1n * t0n;
    if (nkeys <= 4 * (unsigned long long)n1 + (1u << 20)) {
        // Counting sort (linear; stable, so samples keep their order inside a tile).
        std::vector<uword> count(nkeys + 1, 0);
        for (uword j = 0; j < n1; ++j) count[key[j].first + 1]++;
        for (unsigned long long q = 0; q < nkeys; ++q) count[q + 1] += count[q];
        for (uword j = 0; j < n1; ++j) P.order[count[key[j].first]++] = j;
    } else {
        std::sort(key.begin(), key.end());
        for (uword j = 0; j < n1; ++j) P.order[j] = key[j].second;
    }
    std::vector<uword> pos(n1);  // sample j's place in slab order
    for (uword idx = 0; idx < n1; ++idx) pos[P.order[idx]] = idx;
    for (uword s = 0; s < nslab; ++s) P.slabStart[s + 1] += P.slabStart[s];

    // Stencil starts and offsets in slab order, from the positions in double (u < 2^31 cells, so the
    // float offset keeps its full precision however large the grid).
    for (int d = 0; d < 3; ++d) {
        P.first[d].assign(n1, 0);
        P.offset[d].assign(n1, T1(0));
        if (N_[d] == 1) continue;
        // Read in sample order, written in slab order (scattered stores do not stall like scattered loads).
        for (uword j = 0; j < n1; ++j) {
            double u = double((*k[d])[j]) * double(G_[d]) / double(N_[d]);
            if (u < 0) u += double(G_[d]);
            if (u >= double(G_[d])) u = 0;
            const double f = std::ceil(u - double(W_) / 2);
            P.first[d][pos[j]] = int(f);
            P.offset[d][pos[j]] = T1(std::min(1.0, std::max(-1.0, 2 * (u - f) - double(W_ - 1))));
        }
    }

    return P;
}

template <typename T1>
void Gnufft<T1>::take_points(Points&& p) {
    n1_ = p.n1;
    for (int d = 0; d < 3; ++d) {
        u_[d] = std::move(p.u[d]);
        first_[d] = std::move(p.first[d]);
        offset_[d] = std::move(p.offset[d]);
    }
    order_ = std::move(p.order);
    slabStart_ = std::move(p.slabStart);
    this->set_sizes(n1_, n2_);
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
    Points points = sort_points(where, kx, ky, kz);
    update_gpu_plan(where, points);
    take_points(std::move(points));
}

template <typename T1>
void Gnufft<T1>::update_gpu_plan(const char* where, const Points& P) {
    if constexpr (std::is_same<T1, float>::value) {
        if (!device::available()) return;
        cuda::NufftGeometry g{};
        for (int d = 0; d < 3; ++d) {
            g.N[d] = N_[d];
            g.G[d] = G_[d];
            g.deapod[d] = deapod_[d].data();
        }
        g.W = W_;
        g.n1 = P.n1;
        // Stencil starts and offsets in sample order (the pipeline sorts them into its own sectors).
        std::vector<int> first[3];
        std::vector<float> offset[3];
        for (int d = 0; d < 3; ++d) {
            first[d].resize(P.n1);
            offset[d].resize(P.n1);
            for (uword idx = 0; idx < P.n1; ++idx) {
                first[d][P.order[idx]] = P.first[d][idx];
                offset[d][P.order[idx]] = float(P.offset[d][idx]);
            }
            g.first[d] = first[d].data();
            g.offset[d] = offset[d].data();
        }
        std::vector<float> coef(coef_.begin(), coef_.end());
        g.coef = coef.data();
        g.degree = degree_;
        // Sizes the kernels cannot index leave the operator host-only; device input then gets this reason.
        std::string refusal;
        try {
            cuda::CudaNufftPipeline::check_sizes(where, g);
        } catch (const invalid_argument& e) {
            refusal = e.what();
        }
        if (!refusal.empty()) {
            pipeline_.reset();
            gpuRefusal_ = refusal;
            return;
        }
        if (pipeline_ && pipeline_.use_count() == 1) {
            // The plan is this operator's alone: new points, same FFT plan, deapodization and workspace.
            pipeline_->set_points(P.n1, g.first, g.offset);
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
            pipeline_ = std::make_shared<cuda::CudaNufftPipeline>(g, options);
        }
        gpuRefusal_.clear();
    } else {
        (void)where, (void)P;
    }
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
