#include "forge/Operators/Gnufft.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/Gfft.h"

#ifdef FORGE_HAS_CUDA
#include "forge/CUDA/CudaNufftPipeline.h"
#endif

namespace forge {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr int kLutPerCell = 2048;  // kernel table samples per grid cell (linear interpolation error ~1e-7)
constexpr uword kMaxWidth = 16;

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
}  // namespace

template <typename T1>
Gnufft<T1>::Gnufft(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, NufftOptions options)
    : LinearOperator<T1>("Gnufft", n1, 0), n1_(n1), n2_(0), N_{Nx, Ny, Nz}, W_(options.kernelWidth),
      alpha_(options.oversampling) {
    const char* where = "Gnufft";
    require_positive(where, "n1 (number of k-space samples)", n1);
    n2_ = detail::require_centred_grid(where, Nx, Ny, Nz);
    this->set_sizes(n1, n2_);
    require_length(where, "kx", kx.n_elem, n1, "n1");
    require_length(where, "ky", ky.n_elem, n1, "n1");
    require_length(where, "kz", kz.n_elem, n1, "n1");
    if (!(alpha_ >= 1.25 && alpha_ <= 8.0)) {
        std::ostringstream m;
        m << where << ": oversampling = " << alpha_ << "; expected a value in [1.25, 8]";
        throw invalid_argument(m.str());
    }
    if (W_ < 2 || W_ > kMaxWidth) {
        std::ostringstream m;
        m << where << ": kernelWidth = " << W_ << "; expected an integer in [2, " << kMaxWidth << "]";
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
                  << "xyz"[d] << " has " << G_[d] << " cells, fewer than kernelWidth = " << W_
                  << "; use a larger image or a narrower kernel";
                throw invalid_argument(m.str());
            }
        } else {
            G_[d] = 1;
        }
        const double lo = N_[d] > 1 ? -double(N_[d] / 2) : -0.5, hi = N_[d] > 1 ? double(N_[d] / 2) : 0.5;
        u_[d].resize(n1);
        for (uword j = 0; j < n1; ++j) {
            const double v = double((*k[d])[j]);
            if (!(v >= lo && v < hi)) {
                std::ostringstream m;
                m << where << ": " << kn[d] << "[" << j << "] = " << v << " is outside [" << lo << ", " << hi
                  << ") cycles/FOV (grid size "
                  << "xyz"[d] << " = " << N_[d] << ")";
                throw invalid_argument(m.str());
            }
            if (N_[d] > 1) {
                double u = v * double(G_[d]) / double(N_[d]);
                if (u < 0) u += double(G_[d]);
                T1 uf = T1(u);
                if (uf >= T1(G_[d])) uf = T1(0);  // rounding of tiny negative positions
                u_[d][j] = uf;
            } else {
                u_[d][j] = T1(0);
            }
        }
    }

    checked_product(where, {{"oversampled grid x", G_[0]}, {"y", G_[1]}, {"z", G_[2]}});

    // Kernel table over |t| in [0, W/2] (two zero guard entries past the end).
    lutScale_ = T1(kLutPerCell);
    const uword nl = uword(double(W_) / 2 * kLutPerCell) + 3;
    lut_.assign(nl, T1(0));
    const double i0b = std::cyl_bessel_i(0.0, beta_);
    for (uword i = 0; i + 2 < nl; ++i) {
        const double t = double(i) / kLutPerCell, r = 2 * t / double(W_);
        lut_[i] = r <= 1 ? T1(std::cyl_bessel_i(0.0, beta_ * std::sqrt(1 - r * r)) / i0b) : T1(0);
    }
    // Deapodization multipliers 1/D(p), p = x - N/2.
    for (int d = 0; d < 3; ++d) {
        deapod_[d].assign(N_[d], T1(1));
        if (N_[d] == 1) continue;
        for (uword x = 0; x < N_[d]; ++x) {
            const double p = double(x) - double(N_[d] / 2);
            deapod_[d][x] = T1(1.0 / kb_ft(p / double(G_[d]), double(W_), beta_));
        }
    }

    // Presort samples into slabs along the slowest non-trivial axis (race-free gridding) and, inside a
    // slab, by 8-cell tiles of the other axes (cache locality for both directions).
    const int sa = N_[2] > 1 ? 2 : (N_[1] > 1 ? 1 : 0);
    const uword Gs = G_[sa];
    uword nslab = Gs / W_;
    nslab -= nslab & 1;
    if (nslab < 2) nslab = 1;
    slabStart_.assign(nslab + 1, 0);
    std::vector<std::pair<unsigned long long, uword>> key(n1);
    const int a1 = sa == 2 ? 1 : 0;  // middle axis (y in 3D, x in 2D)
    const int a0 = 0;
    const unsigned long long t1n = G_[a1] / 8 + 1, t0n = G_[a0] / 8 + 1;
    for (uword j = 0; j < n1; ++j) {
        uword s = uword(double(u_[sa][j]) * double(nslab) / double(Gs));
        if (s >= nslab) s = nslab - 1;
        // Slab s covers [floor(s*Gs/nslab), floor((s+1)*Gs/nslab)); fix rounding at the borders.
        while (s > 0 && double(u_[sa][j]) < double((s * Gs) / nslab)) --s;
        while (s + 1 < nslab && double(u_[sa][j]) >= double(((s + 1) * Gs) / nslab)) ++s;
        const unsigned long long t1 = sa == a1 ? 0 : (unsigned long long)(u_[a1][j] / 8);
        const unsigned long long t0 = sa == a0 ? 0 : (unsigned long long)(u_[a0][j] / 8);
        key[j] = {(s * t1n + t1) * t0n + t0, j};
        slabStart_[s + 1]++;
    }
    std::sort(key.begin(), key.end());
    order_.resize(n1);
    for (uword j = 0; j < n1; ++j) order_[j] = key[j].second;
    for (uword s = 0; s < nslab; ++s) slabStart_[s + 1] += slabStart_[s];

    plan_ = std::make_shared<detail::FftwPlan<T1>>(G_[0], G_[1], G_[2]);

#ifdef FORGE_HAS_CUDA
    if constexpr (std::is_same<T1, float>::value) {
        if (device::available()) {
            cuda::NufftGeometry g{};
            for (int d = 0; d < 3; ++d) {
                g.N[d] = N_[d];
                g.G[d] = G_[d];
                g.u[d] = u_[d].data();
                g.deapod[d] = deapod_[d].data();
            }
            g.W = W_;
            g.n1 = n1_;
            g.lut = lut_.data();
            g.lutSize = lut_.size();
            g.lutScale = lutScale_;
            // Sizes the kernels cannot index leave the operator host-only; device input then gets this reason.
            try {
                cuda::CudaNufftPipeline::check_sizes(where, g);
            } catch (const invalid_argument& e) {
                gpuRefusal_ = e.what();
            }
            if (gpuRefusal_.empty()) pipeline_ = std::make_shared<cuda::CudaNufftPipeline>(g);
        }
    }
#endif
}

template <typename T1>
double Gnufft<T1>::kernel_integral() const {
    return kb_ft(0.0, double(W_), beta_);
}

template <typename T1>
inline void Gnufft<T1>::weights(int axis, T1 u, T1* w, long long& first) const {
    if (N_[axis] == 1) {
        w[0] = T1(1);
        first = 0;
        return;
    }
    const T1 half = T1(W_) / 2;
    first = (long long)std::ceil(u - half);
    const T1* lut = lut_.data();
    const T1 lmax = T1(lut_.size() - 2);
    for (uword t = 0; t < W_; ++t) {
        T1 x = std::abs(u - T1(first + (long long)t)) * lutScale_;
        if (x > lmax) x = lmax;
        const long long i = (long long)x;
        const T1 f = x - T1(i);
        w[t] = lut[i] + f * (lut[i + 1] - lut[i]);
    }
}

namespace {
inline long long wrap(long long g, long long G) { return g < 0 ? g + G : (g >= G ? g - G : g); }
}  // namespace

template <typename T1>
inline void Gnufft<T1>::stencil(uword j, T1* wx, T1* wy, T1* wz, long long* ix, long long* iy, long long* iz) const {
    const long long Gx = (long long)G_[0], Gy = (long long)G_[1], Gz = (long long)G_[2];
    const int tx = N_[0] > 1 ? int(W_) : 1, ty = N_[1] > 1 ? int(W_) : 1, tz = N_[2] > 1 ? int(W_) : 1;
    long long fx, fy, fz;
    weights(0, u_[0][j], wx, fx);
    weights(1, u_[1][j], wy, fy);
    weights(2, u_[2][j], wz, fz);
    for (int t = 0; t < tx; ++t) ix[t] = wrap(fx + t, Gx);
    for (int t = 0; t < ty; ++t) iy[t] = wrap(fy + t, Gy) * Gx;
    for (int t = 0; t < tz; ++t) iz[t] = wrap(fz + t, Gz) * Gx * Gy;
}

template <typename T1>
void Gnufft<T1>::interpolate(const std::complex<T1>* grid, std::complex<T1>* samples) const {
    const int tx = N_[0] > 1 ? int(W_) : 1, ty = N_[1] > 1 ? int(W_) : 1, tz = N_[2] > 1 ? int(W_) : 1;
#pragma omp parallel for schedule(dynamic, 1024)
    for (long long idx = 0; idx < (long long)n1_; ++idx) {
        const uword j = order_[idx];
        T1 wx[kMaxWidth], wy[kMaxWidth], wz[kMaxWidth];
        long long ix[kMaxWidth], iy[kMaxWidth], iz[kMaxWidth];
        stencil(j, wx, wy, wz, ix, iy, iz);
        T1 re = 0, im = 0;
        for (int c = 0; c < tz; ++c)
            for (int b = 0; b < ty; ++b) {
                const T1 wzy = wz[c] * wy[b];
                const std::complex<T1>* row = grid + iz[c] + iy[b];
                T1 rr = 0, ri = 0;
                for (int a = 0; a < tx; ++a) {
                    const std::complex<T1> v = row[ix[a]];
                    rr += wx[a] * v.real();
                    ri += wx[a] * v.imag();
                }
                re += wzy * rr;
                im += wzy * ri;
            }
        samples[j] = std::complex<T1>(re, im);
    }
}

template <typename T1>
void Gnufft<T1>::spread(const std::complex<T1>* samples, std::complex<T1>* grid) const {
    const long long Gx = (long long)G_[0], Gy = (long long)G_[1], Gz = (long long)G_[2];
    const int tx = N_[0] > 1 ? int(W_) : 1, ty = N_[1] > 1 ? int(W_) : 1, tz = N_[2] > 1 ? int(W_) : 1;
    std::fill(grid, grid + Gx * Gy * Gz, std::complex<T1>(0));
    const long long nslab = (long long)slabStart_.size() - 1;
    auto do_slab = [&](long long s) {
        for (uword idx = slabStart_[s]; idx < slabStart_[s + 1]; ++idx) {
            const uword j = order_[idx];
            T1 wx[kMaxWidth], wy[kMaxWidth], wz[kMaxWidth];
            long long ix[kMaxWidth], iy[kMaxWidth], iz[kMaxWidth];
            stencil(j, wx, wy, wz, ix, iy, iz);
            const T1 sr = samples[j].real(), si = samples[j].imag();
            for (int c = 0; c < tz; ++c)
                for (int b = 0; b < ty; ++b) {
                    const T1 wzy = wz[c] * wy[b];
                    const T1 vr = wzy * sr, vi = wzy * si;
                    T1* row = reinterpret_cast<T1*>(grid + iz[c] + iy[b]);
                    for (int a = 0; a < tx; ++a) {
                        row[2 * ix[a]] += wx[a] * vr;
                        row[2 * ix[a] + 1] += wx[a] * vi;
                    }
                }
        }
    };
    if (nslab < 2) {
        do_slab(0);
        return;
    }
    // Slabs are >= W cells thick, so slabs of the same parity never touch the same grid cell.
    for (long long colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(dynamic, 1)
        for (long long s = colour; s < nslab; s += 2) do_slab(s);
    }
}

template <typename T1>
void Gnufft<T1>::forward_host(const std::complex<T1>* image, std::complex<T1>* kdata) const {
    const uword Gx = G_[0], Gy = G_[1];
    std::vector<std::complex<T1>> grid(grid_elems(), std::complex<T1>(0));
    constexpr std::size_t elemBytes = sizeof(std::complex<T1>);
#pragma omp parallel for collapse(2) if (detail::parallel_elementwise(n2_, 2 * elemBytes))
    for (long long z = 0; z < (long long)N_[2]; ++z)
        for (long long y = 0; y < (long long)N_[1]; ++y) {
            const long long gz = wrap(z - (long long)(N_[2] / 2), (long long)G_[2]);
            const long long gy = wrap(y - (long long)(N_[1] / 2), (long long)G_[1]);
            const T1 dzy = deapod_[2][z] * deapod_[1][y];
            const std::complex<T1>* in = image + N_[0] * (y + N_[1] * z);
            std::complex<T1>* out = grid.data() + Gx * (gy + Gy * gz);
            for (long long x = 0; x < (long long)N_[0]; ++x) {
                const long long gx = wrap(x - (long long)(N_[0] / 2), (long long)Gx);
                out[gx] = in[x] * (dzy * deapod_[0][x]);
            }
        }
    plan_->forward(grid.data());
    interpolate(grid.data(), kdata);
}

template <typename T1>
void Gnufft<T1>::adjoint_host(const std::complex<T1>* kdata, std::complex<T1>* image) const {
    const uword Gx = G_[0], Gy = G_[1];
    std::vector<std::complex<T1>> grid(grid_elems());
    spread(kdata, grid.data());
    plan_->backward(grid.data());
    constexpr std::size_t elemBytes = sizeof(std::complex<T1>);
#pragma omp parallel for collapse(2) if (detail::parallel_elementwise(n2_, 2 * elemBytes))
    for (long long z = 0; z < (long long)N_[2]; ++z)
        for (long long y = 0; y < (long long)N_[1]; ++y) {
            const long long gz = wrap(z - (long long)(N_[2] / 2), (long long)G_[2]);
            const long long gy = wrap(y - (long long)(N_[1] / 2), (long long)G_[1]);
            const T1 dzy = deapod_[2][z] * deapod_[1][y];
            const std::complex<T1>* in = grid.data() + Gx * (gy + Gy * gz);
            std::complex<T1>* out = image + N_[0] * (y + N_[1] * z);
            for (long long x = 0; x < (long long)N_[0]; ++x) {
                const long long gx = wrap(x - (long long)(N_[0] / 2), (long long)Gx);
                out[x] = in[gx] * (dzy * deapod_[0][x]);
            }
        }
}

template <typename T1>
void Gnufft<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
#ifdef FORGE_HAS_CUDA
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
#endif
    (void)in, (void)out, (void)nbatch, (void)forward;
    throw residency_error("Gnufft: input is on the GPU, but the GPU path exists only for Gnufft<float> on CUDA "
                          "builds; call getFromGPU() first");
}

template <typename T1>
void Gnufft<T1>::apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const {
    const uword nin = forward ? n2_ : n1_, nout = forward ? n1_ : n2_;
    const auto* pin = reinterpret_cast<const std::complex<T1>*>(in);
    auto* pout = reinterpret_cast<std::complex<T1>*>(out);
    detail::for_each_in_batch(nbatch, [&](std::size_t b) {
        if (forward) {
            forward_host(pin + b * nin, pout + b * nout);
        } else {
            adjoint_host(pin + b * nin, pout + b * nout);
        }
    });
}

template class Gnufft<float>;
template class Gnufft<double>;

}  // namespace forge
