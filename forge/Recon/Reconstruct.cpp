#include "forge/Recon/Reconstruct.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <list>
#include <memory>
#include <vector>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"
#include "forge/Recon/cuda/MapKernels.h"
#include "forge/Solvers/CirculantPreconditioner.h"
#include "forge/Solvers/recon_solve.h"
#include "forge/Solvers/recon_solve_prox.h"

namespace forge {
namespace recon {

const char* operator_name(EncodingOperator op) {
    switch (op) {
        case EncodingOperator::Dft: return "dft";
        case EncodingOperator::Fft: return "fft";
        case EncodingOperator::Nufft: return "nufft";
        case EncodingOperator::TimeSeg: return "timeseg";
        case EncodingOperator::Toeplitz: return "toeplitz";
    }
    return "?";
}

namespace {

// How the solved problem relates to the caller's: the maps and the data are divided by powers of two (exact), so
// the solve's image is x / image and its cost Phi / cost (the image x = image * x', Phi(x) = cost * Phi'(x')).
struct Units {
    double image = 1, cost = 1;
};

// Where the records of one frame's solves go.
struct FrameSolves {
    std::size_t index = 0;  // into P.frames
    const ReconFrame* frame = nullptr;
    std::size_t segments = 0;  // L, once the operator is built
    std::vector<SolveRecord>* records = nullptr;
    const arma::cx_fvec* start = nullptr;  // the SENSE solve's starting image (ReconSettings::start); null: zeros
};

// The penalty of a solve: a smooth one (PCG) or a proximal one (POGM), the other null.
struct Penalty {
    std::unique_ptr<Robject<float>> smooth;
    std::unique_ptr<ProxPenalty<float>> prox;
};

// normal: A's normal() is fast (the Toeplitz path): recon_solve's normal-equations path on NormalOf(A), the
// right-hand side A^H y once with the exact operator. Otherwise recon_solve's path with A and A^H per iteration.
// A proximal penalty runs recon_solve_prox (POGM) on the same two paths.
// The callback and the report see the caller's units; the solve is recorded in 'fs' (coil -1: SENSE).
// dataScale: y is solved times this (ReconOptions::data_scale: on the GPU after the upload).
//
// Preconditioner (S.preconditioner, PCG with a quadratic penalty): the circulant of A^H A + R''/2 on the penalty's
// image grid (the reconstruction's: an operator such as Gdft knows only its pixel count) from its response to an
// impulse at the support pixel nearest the grid's centre, its data part scaled from that pixel's coil energy to the
// support's mean (SENSE on maps of varying energy). 'energy': sum_c |s_c|^2 per pixel, the support where it is not 0
// (null: every pixel, energy 1).
template <typename Op>
PcgOptions<float>::Preconditioner circulant_preconditioner(const Op& A, const QuadPenalty<float>& R, bool normal,
                                                           bool gpu, const std::vector<double>* energy) {
    const ImageGrid grid = R.grid();
    const std::size_t n = grid.n_pixels();
    arma::uvec support;
    double mean = 1, nearest = -1;
    std::size_t p = 0;
    if (energy) {
        support.set_size(n);
        double total = 0;
        std::size_t count = 0;
        for (std::size_t k = 0; k < n; ++k) {
            support[k] = (*energy)[k] > 0;
            total += (*energy)[k];
            count += support[k];
        }
        if (!count) return nullptr;  // no data term anywhere: nothing to precondition
        mean = total / double(count);
    }
    for (std::size_t k = 0; k < n; ++k) {
        if (energy && !support[k]) continue;
        const double dx = double(k % grid.nx) - double(grid.nx / 2),
                     dy = double((k / grid.nx) % grid.ny) - double(grid.ny / 2),
                     dz = double(k / (grid.nx * grid.ny)) - double(grid.nz / 2), d = dx * dx + dy * dy + dz * dz;
        if (nearest < 0 || d < nearest) {
            nearest = d;
            p = k;
        }
    }
    arma::cx_fvec impulse(n, arma::fill::zeros);
    impulse[p] = 1;
    forgeCol<forgeComplex<float>> e(impulse);
    if (gpu) e.put_on_gpu();
    forgeCol<forgeComplex<float>> h = normal ? A.normal(e) : forgeCol<forgeComplex<float>>(A / (A * e));
    if (energy) h *= forgeComplex<float>(float(mean / (*energy)[p]));
    forgeCol<forgeComplex<float>> hR = R.gradient(e);
    axpy(forgeComplex<float>(0.5f), hR, h);
    if (h.on_gpu()) h.get_from_gpu();
    return CirculantPreconditioner<float>(grid, h.to_arma(), p, kCirculantFloor, support);
}

template <typename Op>
arma::cx_fvec solve(const std::shared_ptr<const Op>& A, const arma::cx_fvec& y, const Penalty& R,
                    const ReconSettings& S, const std::string& label, bool normal, const Units& u, FrameSolves& fs,
                    long coil = -1, const arma::cx_fvec* start = nullptr, float dataScale = 1,
                    const std::vector<double>* energy = nullptr) {
    const auto t0 = std::chrono::steady_clock::now();
    ProxReport rep;
    const std::size_t niter = static_cast<std::size_t>(S.iterations);
    const double gradientUnit = u.cost / u.image;  // ||grad Phi|| per ||grad Phi'||
    ReconOptions<float> opts;
    opts.device = S.gpu ? ReconDevice::GPU : ReconDevice::Host;
    opts.pcg.tolerance = static_cast<float>(S.tolerance);
    opts.report = &rep;
    opts.data_scale = dataScale;
    if (start && !R.prox) {  // in the solve's units; the tolerance stays that of a start from zero
        opts.x0 = *start * float(1 / u.image);
        opts.pcg.tolerance_from_zero = true;
    }
    opts.pcg.callback_cost = S.iteration_cost;
    if (S.preconditioner && S.penalty == PenaltyKind::Quad)
        opts.pcg.preconditioner =
            circulant_preconditioner(*A, dynamic_cast<const QuadPenalty<float>&>(*R.smooth), normal, S.gpu, energy);
    if (S.on_iteration)
        opts.pcg.callback = [&](const PcgIterationInfo& i) {
            PcgIterationInfo c = i;
            c.cost *= u.cost;
            c.gradient_norm *= gradientUnit;
            S.on_iteration(label, c, niter);
        };
    arma::cx_fvec x;
    if (R.prox) {
        ReconProxOptions<float> po;  // POGM: one normal per iteration as PCG, fewer iterations than FISTA's
        po.method = ProxMethod::Pogm;
        po.device = opts.device;
        po.prox.tolerance = opts.pcg.tolerance;
        po.prox.callback = opts.pcg.callback;
        po.report = &rep;
        x = normal ? recon_solve_prox<float>(y, *A, NormalOf<float>(A), *R.prox, niter, po)
                   : recon_solve_prox<float>(y, *A, *R.prox, niter, po);
    } else {
        x = normal ? recon_solve<float>(y, *A, NormalOf<float>(A), *R.smooth, niter, opts)
                   : recon_solve<float>(y, *A, *R.smooth, niter, opts);
    }
    rep.initial_gradient_norm *= gradientUnit;
    rep.final_gradient_norm *= gradientUnit;
    rep.final_cost *= u.cost;
    SolveRecord rec;
    rec.label = label;
    rec.frame_index = fs.index;
    rec.slice = fs.frame->slice;
    rec.frame = fs.frame->frame;
    rec.coil = coil;
    rec.segments = fs.segments;
    rec.report = rep;
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rec.iteration_seconds = std::min(rep.elapsed_s, rec.seconds);
    rec.rhs_seconds = rec.seconds - rec.iteration_seconds;
    fs.records->push_back(rec);
    if (S.on_solve_end) S.on_solve_end(label, rep, niter);
    return x;
}

// The power of two nearest to the RMS of y. The squares of y's floats in blocks of 2^16, each summed in eight running
// sums (one per lane of the loop the compiler vectorises), the blocks on the threads for a slice's worth of data and
// added in block order: the same sum on any number of threads. (One running sum waited for each add: 1.6M values
// of a 256x256 x 16-coil slice took 2.5 ms; four sums of complex norms on one thread 1.7 to 2.2 ms on an H200's
// host, these on the solver's 8 threads 0.4 ms.)
// Their rounding does not reach the image: a data scale that is another power of two gives the solve's image times
// exactly that power.
double data_scale(const arma::cx_fvec& y) {
    constexpr std::size_t kLanes = 8, kBlock = std::size_t(1) << 16;
    const float* v = reinterpret_cast<const float*>(y.memptr());
    const std::size_t n = 2 * y.n_elem, nblocks = (n + kBlock - 1) / kBlock;
    std::vector<double> partial(nblocks);
    const bool fork = forge::detail::parallel_pass(y.n_elem, sizeof(y[0]));
#pragma omp parallel for schedule(static) if (fork)
    for (long long b = 0; b < static_cast<long long>(nblocks); ++b) {
        const std::size_t lo = std::size_t(b) * kBlock, hi = std::min(n, lo + kBlock), whole = hi - (hi - lo) % kLanes;
        double e[kLanes] = {};
        for (std::size_t i = lo; i < whole; i += kLanes)
            for (std::size_t k = 0; k < kLanes; ++k) e[k] += double(v[i + k]) * double(v[i + k]);
        for (std::size_t i = whole; i < hi; ++i) e[0] += double(v[i]) * double(v[i]);
        partial[std::size_t(b)] = ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]));
    }
    double total = 0;
    for (const double p : partial) total += p;
    return solver_detail::pow2_near<float>(y.n_elem ? std::sqrt(total / double(y.n_elem)) : 0.0);
}

// The power of two nearest to the largest root-sum-of-squares of the maps (nc maps of n2 pixels, coil-major), and
// the maps divided by it (the maps themselves, uncopied, when that is 1).
const arma::cx_fvec& scaled_maps(const arma::cx_fvec& maps, std::size_t nc, double& scale, arma::cx_fvec& storage) {
    const std::size_t n2 = nc ? maps.n_elem / nc : 0;
    double peak = 0;
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += std::norm(std::complex<double>(maps[c * n2 + k]));
        peak = std::max(peak, e);
    }
    scale = solver_detail::pow2_near<float>(std::sqrt(peak));
    if (scale == 1) return maps;
    storage = maps * float(1 / scale);
    return storage;
}

// scaled_maps() on the GPU: the maps uploaded once and divided there, as SENSE takes them (no host copy of 8 MB a
// 256x256 x 16-coil slice, twice); 'energy' is sum |maps / scale|^2, from the pixels' coil sums (cuda::coil_energy).
forgeCol<forgeComplex<float>> device_scaled_maps(const arma::cx_fvec& maps, std::size_t nc, double& scale,
                                                 double& energy, std::vector<double>& pixel) {
    const std::size_t n2 = nc ? maps.n_elem / nc : 0;
    forgeCol<forgeComplex<float>> d = forgeCol<forgeComplex<float>>::device_uninitialized(maps.n_elem);
    if (maps.n_elem) device::copy_to_device(d.device_memptr(), maps.memptr(), maps.n_elem * sizeof(maps[0]));
    pixel.assign(n2, 0.0);
    if (n2) {
        DeviceBuffer e(n2 * sizeof(double));
        cuda::coil_energy(d.device_memptr(), e.as<double>(), cuda::MapGrid{n2, 1, 1}, nc);
        device::copy_to_host(pixel.data(), e.get(), n2 * sizeof(double));
    }
    double peak = 0, total = 0;
    for (const double p : pixel) {
        peak = std::max(peak, p);
        total += p;
    }
    scale = solver_detail::pow2_near<float>(std::sqrt(peak));
    energy = total / (scale * scale);  // exact: a power of two
    for (double& p : pixel) p /= scale * scale;
    if (scale != 1) d *= forgeComplex<float>(float(1 / scale), 0.0f);
    return d;
}

// x times 'scale' (a power of two), refused when the image leaves the float range.
arma::cx_fvec unscaled(arma::cx_fvec x, double scale, const std::string& label) {
    if (scale == 1) return x;
    x *= float(scale);
    if (!x.is_finite()) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "reconstruct: %s: the image exceeds the float range (data scale / coil-map scale = %.3g): "
                      "the data and the coil maps cannot be of the same acquisition",
                      label.c_str(), scale);
        throw overflow_error(buf);
    }
    return x;
}

// The proximal penalties' lambda is relative to max |A^H y| = curvature * imageScale, so that it does not depend on
// the data's scale or size (an L1 weight of 2 max |A^H y| makes the image zero).
Penalty make_penalty(const ReconProblem& P, const ReconSettings& S, double dataCurvature, double imageScale) {
    const float beta = static_cast<float>(S.beta * dataCurvature);
    const float lambda = static_cast<float>(S.lambda * dataCurvature * imageScale);
    const ImageGrid grid(P.Nx, P.Ny, P.Nz);
    Penalty R;
    if (S.penalty == PenaltyKind::TV)
        R.smooth.reset(new TVPenalty<float>(P.Nx, P.Ny, P.Nz, beta, static_cast<float>(S.delta * imageScale)));
    else if (S.penalty == PenaltyKind::L1Wavelet)
        R.prox.reset(new WaveletL1Penalty<float>(grid, lambda));
    else if (S.penalty == PenaltyKind::TVExact)
        R.prox.reset(new ExactTVPenalty<float>(grid, lambda));
    else
        R.smooth.reset(new QuadPenalty<float>(P.Nx, P.Ny, P.Nz, beta));
    return R;
}

// Rough image scale for TV's delta and the proximal penalties' lambda: max |adjoint| / curvature.
template <typename Op>
double image_scale(const Op& A, const arma::cx_fvec& y, double curvature) {
    arma::cx_fvec back = A / y;
    return curvature > 0 ? double(arma::max(arma::abs(back))) / curvature : 1.0;
}

// One frame: SENSE when maps are there, otherwise coil by coil with root-sum-of-squares. normal: solve on G's fast
// normal() (see solve()).
//
// Scale: the maps are divided by a power of two near their largest root-sum-of-squares (as Gadgetron normalises
// them) and the data by one near their RMS, and the image is multiplied back at the end. The solver is already
// independent of the data's scale, but a SENSE operator with maps near 1e5 has a gain that overflows float in
// ||E d||^2, and G^H y of the Toeplitz path, TV's image scale and the root-sum-of-squares are formed here. Both
// factors are powers of two, so data and maps of the usual scale are solved unchanged, bit for bit; beta (relative
// to the curvature) and delta (relative to the image scale) scale with them, so the minimiser is the same.
template <typename Enc>
arma::cx_fvec recon_frame(const ReconProblem& P, const ReconFrame& fr, std::shared_ptr<const Enc> G,
                          const ReconSettings& S, const std::string& label, FrameSolves& fs, bool normal = false) {
    const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
    const bool tv = S.penalty != PenaltyKind::Quad;  // TV's delta and lambda need the image scale
    const double ys = data_scale(fr.y);
    // A SENSE solve by PCG on the GPU divides the data and the maps on the device (ReconOptions::data_scale,
    // device_scaled_maps()); otherwise copies are divided here (TV's image scale and the coils' solves read the data
    // on the host).
    const bool scaleOnDevice = S.gpu && !tv && !P.smaps.empty();
    arma::cx_fvec ystore;
    if (!scaleOnDevice && ys != 1) ystore = fr.y * float(1 / ys);
    const arma::cx_fvec& y = ystore.is_empty() ? fr.y : ystore;
    if (!P.smaps.empty()) {
        double ms = 1;
        std::shared_ptr<const SENSE<float, Enc>> E;
        double energy = 0;
        std::vector<double> pixel(n2, 0.0);  // sum_c |s_c|^2 per pixel
        if (scaleOnDevice) {
            E = std::make_shared<const SENSE<float, Enc>>(
                G, device_scaled_maps(P.smaps[fr.slice], P.nc, ms, energy, pixel), P.nc);
        } else {
            arma::cx_fvec mstore;  // freed once SENSE holds its copy
            const arma::cx_fvec& maps = scaled_maps(P.smaps[fr.slice], P.nc, ms, mstore);
            E = std::make_shared<const SENSE<float, Enc>>(G, maps, P.nc);
            for (std::size_t i = 0; i < maps.n_elem; ++i) pixel[i % n2] += std::norm(std::complex<double>(maps[i]));
            for (const double p : pixel) energy += p;
        }
        const double curvature = double(n1) * energy / double(n2);
        const double scale = tv ? image_scale(*E, y, curvature) : 1.0;
        const Penalty R = make_penalty(P, S, curvature, scale);
        const Units u{ys / ms, ys * ys};
        return unscaled(solve(E, y, R, S, label, normal, u, fs, -1, fs.start, scaleOnDevice ? float(1 / ys) : 1.0f,
                              &pixel),
                        u.image, label);
    }
    arma::fvec sos(n2, arma::fill::zeros);
    for (std::size_t c = 0; c < P.nc; ++c) {
        arma::cx_fvec yc = y.subvec(c * n1, (c + 1) * n1 - 1);
        const double curvature = double(n1);
        const double scale = tv ? image_scale(*G, yc, curvature) : 1.0;
        const Penalty R = make_penalty(P, S, curvature, scale);
        arma::cx_fvec xc =
            solve(G, yc, R, S, label + " coil " + std::to_string(c + 1), normal, Units{ys, ys * ys}, fs, long(c));
        sos += arma::square(arma::abs(xc));
    }
    return unscaled(arma::conv_to<arma::cx_fvec>::from(arma::sqrt(sos)), ys, label);
}

// An encoding operator built for one frame, kept by the static type that SENSE and the solvers see (SENSE batches
// the coils of a Gdft), with what the frame's solves record of it.
struct BuiltOperator {
    enum class Type { Generic, GfftSegmented, NufftSegmented, Dft } type = Type::Generic;
    std::shared_ptr<const void> op;
    std::size_t segments = 0;  // L of the time segmentation or of the Toeplitz kernels; 0: none
    std::string suffix;        // the solves' label: " (L=4)"
    bool normal = false;       // Toeplitz: the solve runs on the operator's fast normal()
    std::shared_ptr<const ToeplitzNormal<float>> toeplitz;  // Toeplitz: its normal, whose kernels others may take
};

using GfftSegmented = TimeSegmentation<float, GfftSampled<float>>;
using NufftSegmented = TimeSegmentation<float, Gnufft<float>>;

// Time-segmented field correction around the encoding operator G.
template <typename Base>
BuiltOperator time_segmented(const ReconProblem& P, const ReconFrame& fr, const Base& G, const ReconSettings& S,
                             BuiltOperator::Type type) {
    using TS = TimeSegmentation<float, Base>;
    const arma::fvec& fmap = P.field_map[fr.slice];
    uword L = static_cast<uword>(S.segments);
    if (L == 0) L = TS::choose_segments(fmap, fr.t, kTimeSegError, TSInterp::MinMax, kMaxSegments).L;
    BuiltOperator b;
    b.type = type;
    b.op = std::make_shared<const TS>(G, fmap, fr.t, L, TSInterp::MinMax);
    b.segments = L;
    b.suffix = " (L=" + std::to_string(L) + ")";
    return b;
}

template <typename Op>
BuiltOperator generic(const Op& G) {
    BuiltOperator b;
    b.op = share(G);
    return b;
}

// The encoding operator of a frame under S.op (the Toeplitz kernels' build reports to S.on_build as 'label');
// rhsByNufft and band: toeplitz_rhs_by_nufft() and toeplitz_band() of the frame, which the operator's key holds.
// kernels: a field-corrected Toeplitz normal of the same samples, settings and band, whose kernels this frame's takes
// (no build).
BuiltOperator build_operator(const ReconProblem& P, const ReconFrame& fr, bool rhsByNufft, FieldBand band,
                             bool fieldCorrection, const ReconSettings& S, const std::string& label,
                             const std::shared_ptr<const ToeplitzNormal<float>>& kernels = nullptr) {
    const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
    const bool correct = fieldCorrection && !P.field_map.empty();
    switch (S.op) {
        case EncodingOperator::Fft: {
            if (P.fft_grid[0] == 0)
                throw invalid_argument(
                    "reconstruct: EncodingOperator::Fft needs the problem's fft_grid (fft_grid() found "
                    "no FFT grid holding every sample)");
            GfftSampled<float> G(P.Nx, P.Ny, P.Nz, P.fft_grid[0], P.fft_grid[1], P.fft_grid[2], fr.kx, fr.ky, fr.kz);
            return correct ? time_segmented(P, fr, G, S, BuiltOperator::Type::GfftSegmented) : generic(G);
        }
        case EncodingOperator::Nufft: return generic(Gnufft<float>(n1, P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz));
        case EncodingOperator::TimeSeg: {
            Gnufft<float> G(n1, P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz);
            return correct ? time_segmented(P, fr, G, S, BuiltOperator::Type::NufftSegmented) : generic(G);
        }
        case EncodingOperator::Dft:
        case EncodingOperator::Toeplitz: break;
    }
    arma::fvec fm = correct ? P.field_map[fr.slice] : arma::fvec(n2, arma::fill::zeros);
    if (S.op == EncodingOperator::Dft) {
        BuiltOperator b;
        b.type = BuiltOperator::Type::Dft;
        b.op = std::make_shared<const Gdft<float>>(n1, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
        return b;
    }
    // Toeplitz: G's normal by FFTs on the 2x grid (P.ix etc. are the grid ToeplitzNormal assumes); G for the
    // right-hand side G^H y the exact Gdft, or where that costs more the NUFFT (time-segmented by the field map's own
    // min-max interpolators for half the normal operator's requested error: G^H y enters the solution once). Unit
    // weights, as recon_solve's.
    OperatorPtr<float> G;
    if (rhsByNufft) {
        Gnufft<float> Gn(n1, P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz);
        if (correct) {
            const uword L =
                ToeplitzNormal<float>::choose_segments(fm, fr.t, S.toeplitz_error, TSInterp::MinMax, kMaxSegments);
            G = std::make_shared<const NufftSegmented>(Gn, fm, fr.t, L, TSInterp::MinMax);
        } else {
            G = share(Gn);
        }
    } else {
        G = std::make_shared<const Gdft<float>>(n1, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
    }
    BuiltOperator b;
    b.normal = true;
    std::shared_ptr<ToeplitzNormal<float>> T;
    ToeplitzOptions options;
    if (S.on_build) options.progress = [&](uword d, uword n, double s) { S.on_build(label + b.suffix, d, n, s); };
    if (correct) {
        // Kernels for the map's band, which later slices of other maps in the band take.
        b.segments = kernels ? kernels->segments()
                     : S.segments > 0
                         ? uword(S.segments)
                         : ToeplitzNormal<float>::choose_segments(fr.t, band, S.toeplitz_error, kMaxSegments);
        b.suffix = " (L=" + std::to_string(b.segments) + ")";  // before the build, whose progress names it
        if (kernels)
            T = std::make_shared<ToeplitzNormal<float>>(kernels->with_field_map(fm));
        else
            T = std::make_shared<ToeplitzNormal<float>>(ImageGrid(P.Nx, P.Ny, P.Nz),
                                                        Trajectory<float>(fr.kx, fr.ky, fr.kz, fr.t), arma::fvec(), fm,
                                                        band, b.segments, options);
    } else {
        T = std::make_shared<ToeplitzNormal<float>>(P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz, arma::fvec(), options);
    }
    b.toeplitz = T;
    b.op = with_normal<float>(G, T);
    return b;
}

// The frame's solves with the operator B.
arma::cx_fvec solve_frame(const ReconProblem& P, const ReconFrame& fr, const BuiltOperator& B, const ReconSettings& S,
                          const std::string& label, FrameSolves& fs) {
    fs.segments = B.segments;
    const std::string l = label + B.suffix;
    switch (B.type) {
        case BuiltOperator::Type::GfftSegmented:
            return recon_frame(P, fr, std::static_pointer_cast<const GfftSegmented>(B.op), S, l, fs);
        case BuiltOperator::Type::NufftSegmented:
            return recon_frame(P, fr, std::static_pointer_cast<const NufftSegmented>(B.op), S, l, fs);
        case BuiltOperator::Type::Dft:
            return recon_frame(P, fr, std::static_pointer_cast<const Gdft<float>>(B.op), S, l, fs);
        case BuiltOperator::Type::Generic: break;
    }
    return recon_frame(P, fr, std::static_pointer_cast<const LinearOperator<float>>(B.op), S, l, fs, B.normal);
}

// What an operator of build_operator() depends on. Trajectory, grid and settings always; the sample times and the
// field map where the operator corrects with them (without field correction the exact DFT's map is zeros, the same
// for every frame); the pixel positions where the exact DFT is part of it.
struct OperatorKey {
    EncodingOperator op = EncodingOperator::Dft;
    bool correct = false, gpu = false, rhsByNufft = false;
    std::array<std::size_t, 3> grid{}, fft_grid{};
    int segments = 0;
    double toeplitz_error = 0;
    double band = 0;  // Toeplitz with field correction: toeplitz_band() of the map
    arma::fvec kx, ky, kz, t, fm, ix, iy, iz;

    OperatorKey(const ReconProblem& P, const ReconFrame& fr, std::size_t frameIndex, bool fieldCorrection,
                const ReconSettings& S)
        : op(S.op), correct(fieldCorrection && !P.field_map.empty()), gpu(S.gpu), grid{{P.Nx, P.Ny, P.Nz}},
          fft_grid(P.fft_grid), segments(S.segments), toeplitz_error(S.toeplitz_error), kx(fr.kx), ky(fr.ky),
          kz(fr.kz) {
        const bool exact = op == EncodingOperator::Dft || op == EncodingOperator::Toeplitz;
        if (op == EncodingOperator::Toeplitz) rhsByNufft = toeplitz_rhs_by_nufft(P, frameIndex, S, fieldCorrection);
        if (correct && op != EncodingOperator::Nufft) {
            t = fr.t;
            fm = P.field_map[fr.slice];
            if (op == EncodingOperator::Toeplitz) band = toeplitz_band(fm).half_width;
        }
        if (exact) {
            ix = P.ix;
            iy = P.iy;
            iz = P.iz;
        }
    }
    static bool same(const arma::fvec& a, const arma::fvec& b) {
        return a.n_elem == b.n_elem && std::equal(a.begin(), a.end(), b.begin());
    }
    bool operator==(const OperatorKey& o) const {
        return op == o.op && correct == o.correct && gpu == o.gpu && rhsByNufft == o.rhsByNufft && grid == o.grid &&
               fft_grid == o.fft_grid && segments == o.segments && toeplitz_error == o.toeplitz_error &&
               same(kx, o.kx) && same(ky, o.ky) && same(kz, o.kz) && same(t, o.t) && same(fm, o.fm) && same(ix, o.ix) &&
               same(iy, o.iy) && same(iz, o.iz);
    }
    // Whether a field-corrected Toeplitz operator of key o has the kernels this one's would build: all but the map.
    bool same_kernels(const OperatorKey& o) const {
        return op == EncodingOperator::Toeplitz && o.op == op && correct && o.correct && gpu == o.gpu &&
               grid == o.grid && segments == o.segments && toeplitz_error == o.toeplitz_error && band == o.band &&
               same(kx, o.kx) && same(ky, o.ky) && same(kz, o.kz) && same(t, o.t);
    }
};

}  // namespace

struct OperatorCache::Impl {
    std::size_t capacity;
    std::list<std::pair<OperatorKey, BuiltOperator>> entries;  // most recently used first
    std::size_t built = 0, reused = 0, kernelsShared = 0;

    // The operator of a frame: from the cache (moved to the front), else built and put there.
    const BuiltOperator& get(const ReconProblem& P, const ReconFrame& fr, std::size_t frameIndex, bool fieldCorrection,
                             const ReconSettings& S, const std::string& label, bool& found) {
        OperatorKey key(P, fr, frameIndex, fieldCorrection, S);
        for (auto it = entries.begin(); it != entries.end(); ++it)
            if (it->first == key) {
                entries.splice(entries.begin(), entries, it);
                ++reused;
                found = true;
                return entries.front().second;
            }
        found = false;
        std::shared_ptr<const ToeplitzNormal<float>> kernels;  // taken before an eviction may drop its holder
        for (const auto& e : entries)
            if (key.same_kernels(e.first) && e.second.toeplitz && e.second.toeplitz->built_for_band()) {
                kernels = e.second.toeplitz;
                break;
            }
        if (entries.size() >= capacity) entries.pop_back();  // before the build: never one more held at once
        BuiltOperator b =
            build_operator(P, fr, key.rhsByNufft, FieldBand{key.band}, fieldCorrection, S, label, kernels);
        ++built;
        kernelsShared += kernels ? 1 : 0;
        entries.emplace_front(std::move(key), std::move(b));
        return entries.front().second;
    }
};

OperatorCache::OperatorCache(std::size_t capacity) : impl_(new Impl{capacity < 1 ? 1 : capacity, {}, 0, 0}) {}
OperatorCache::~OperatorCache() = default;
std::size_t OperatorCache::size() const { return impl_->entries.size(); }
std::size_t OperatorCache::built() const { return impl_->built; }
std::size_t OperatorCache::reused() const { return impl_->reused; }
std::size_t OperatorCache::kernels_shared() const { return impl_->kernelsShared; }
void OperatorCache::clear() { impl_->entries.clear(); }

namespace {

// S.frames (all of P's when empty), checked: indices into P.frames, none twice. 'who' names the caller.
std::vector<std::size_t> frame_order(const ReconProblem& P, const ReconSettings& S, const char* who) {
    std::vector<std::size_t> order(S.frames);
    if (S.frames.empty()) {
        order.resize(P.frames.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    }
    std::vector<char> seen(P.frames.size(), 0);
    for (std::size_t i : order) {
        if (i >= P.frames.size())
            throw invalid_argument(std::string(who) + ": settings.frames names frame " + std::to_string(i) +
                                   " but the problem has " + std::to_string(P.frames.size()) + " (expected indices < " +
                                   std::to_string(P.frames.size()) + ")");
        if (seen[i]++)
            throw invalid_argument(std::string(who) + ": settings.frames names frame " + std::to_string(i) + " twice");
    }
    return order;
}

}  // namespace

std::size_t prepare_operators(const ReconProblem& P, bool fieldCorrection, const ReconSettings& S,
                              OperatorCache& operators) {
    std::size_t built = 0;
    for (std::size_t i : frame_order(P, S, "prepare_operators")) {
        bool found = false;
        operators.impl_->get(P, P.frames[i], i, fieldCorrection, S, "prepare", found);
        built += found ? 0 : 1;
    }
    return built;
}

ReconResult reconstruct(const ReconProblem& P, bool fieldCorrection, const ReconSettings& S, const std::string& tag,
                        OperatorCache* operators) {
    if (S.iterations < 1)
        throw invalid_argument("reconstruct: iterations is " + std::to_string(S.iterations) + " (expected >= 1)");
    ReconResult out;
    const auto t0 = std::chrono::steady_clock::now();
    out.complex_image.assign(P.nslices * P.nframes, arma::cx_fvec(P.n2(), arma::fill::zeros));
    const std::vector<std::size_t> order = frame_order(P, S, "reconstruct");
    // Each slice's starting image: S.start, then with S.warm_start the slice's latest image of this call.
    std::vector<arma::cx_fvec> start = S.start;
    for (std::size_t s = 0; s < start.size(); ++s)
        if (!start[s].is_empty() && start[s].n_elem != P.n2())
            throw invalid_argument("reconstruct: settings.start[" + std::to_string(s) + "] holds " +
                                   std::to_string(start[s].n_elem) +
                                   " values (expected n2 = " + std::to_string(P.n2()) + ", or none)");
    if (start.size() < P.nslices) start.resize(P.nslices);
    OperatorCache own(1);  // without the caller's: the frames of this call that share an operator
    OperatorCache& cache = operators ? *operators : own;
    for (std::size_t i : order) {
        const auto tFrame = std::chrono::steady_clock::now();
        const ReconFrame& fr = P.frames[i];
        std::string label = tag;
        if (P.nslices > 1) label += " slice " + std::to_string(fr.slice + 1) + "/" + std::to_string(P.nslices);
        if (P.nframes > 1) label += " frame " + std::to_string(fr.frame + 1) + "/" + std::to_string(P.nframes);
        const bool started = fr.slice < start.size() && !start[fr.slice].is_empty();
        FrameSolves fs{i, &fr, 0, &out.solves, started ? &start[fr.slice] : nullptr};
        const std::size_t first = out.solves.size();
        bool found = false;
        const BuiltOperator& B = cache.impl_->get(P, fr, i, fieldCorrection, S, label, found);
        out.operators_reused += found ? 1 : 0;
        out.operators_built += found ? 0 : 1;
        arma::cx_fvec& image = out.complex_image[fr.frame * P.nslices + fr.slice];
        image = solve_frame(P, fr, B, S, label, fs);
        if (S.warm_start && fr.slice < start.size()) start[fr.slice] = image;
        double solving = 0;
        for (std::size_t k = first; k < out.solves.size(); ++k) solving += out.solves[k].seconds;
        const double setup =
            std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - tFrame).count() - solving);
        if (first < out.solves.size()) out.solves[first].setup_seconds = setup;
        out.solve_seconds += solving;
        out.setup_seconds += setup;
    }
    for (const auto& c : out.complex_image) out.magnitude.push_back(arma::abs(c));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

FieldBand toeplitz_band(const arma::fvec& field_map) {
    const double half = ToeplitzNormal<float>::field_band(field_map).half_width;
    const double unit = 2 * M_PI;  // 1 Hz
    if (!(half > unit)) return FieldBand{unit};
    return FieldBand{unit * std::pow(2.0, std::ceil(4 * std::log2(half / unit) - 1e-9) / 4)};
}

std::size_t solves_per_reconstruction(const ReconProblem& P, const ReconSettings& S) {
    const std::size_t frames = S.frames.empty() ? P.frames.size() : S.frames.size();
    return frames * (P.smaps.empty() ? P.nc : 1) * static_cast<std::size_t>(S.iterations);
}

std::array<std::size_t, 3> fft_grid(const ReconProblem& P) {
    const std::size_t N[3] = {P.Nx, P.Ny, P.Nz};
    std::array<std::size_t, 3> M{{0, 0, 0}};
    for (int d = 0; d < 3; ++d) {
        std::vector<std::size_t> candidates{N[d]};
        const double enc = double(N[d]) / P.fov_ratio[d];
        const std::size_t Me = static_cast<std::size_t>(std::llround(enc));
        if (N[d] > 1 && std::fabs(enc - double(Me)) < 1e-6 && Me > N[d] && Me % 2 == 0) candidates.push_back(Me);
        for (std::size_t m : candidates) {
            std::size_t n[3] = {1, 1, 1}, g[3] = {1, 1, 1};  // this axis only: the others are ignored
            n[d] = N[d];
            g[d] = m;
            bool ok = true;
            for (const auto& fr : P.frames)
                if (!GfftSampled<float>::on_grid(n[0], n[1], n[2], g[0], g[1], g[2], fr.kx, fr.ky, fr.kz)) {
                    ok = false;
                    break;
                }
            if (ok) {
                M[d] = m;
                break;
            }
        }
        if (M[d] == 0) return {{0, 0, 0}};
    }
    return M;
}

double dft_cost(const ReconProblem& P, int iterations) {
    double c = 0;
    for (const auto& fr : P.frames) c += double(fr.kx.n_elem) * double(P.n2()) * double(P.nc);
    return 2.0 * double(iterations) * c;
}

std::size_t remove_spikes(ReconFrame& fr, std::size_t nc) {
    const std::size_t n1 = fr.kx.n_elem;
    if (fr.y.n_elem != n1 * nc)
        throw invalid_argument("remove_spikes: the frame holds " + std::to_string(fr.y.n_elem) +
                               " values (expected samples x coils = " + std::to_string(n1 * nc) + ")");
    const std::size_t most = n1 / 100;  // at most 1% of the samples; none of a frame under 100
    if (most == 0) return 0;
    std::vector<double> e(n1, 0.0);  // |y_j|^2 over the coils, in double (3e38^2 fits), summed in coil order
    const std::complex<float>* y = fr.y.memptr();
    constexpr long long kBlock = 4096;  // samples of a thread's share: whole coils' runs of them stay in cache
    const bool fork = forge::detail::parallel_pass(fr.y.n_elem, sizeof(y[0]));
#pragma omp parallel for schedule(static) if (fork)
    for (long long j0 = 0; j0 < static_cast<long long>(n1); j0 += kBlock) {
        const std::size_t lo = std::size_t(j0), hi = std::min(n1, lo + std::size_t(kBlock));
        for (std::size_t c = 0; c < nc; ++c)
            for (std::size_t j = lo; j < hi; ++j) e[j] += std::norm(std::complex<double>(y[c * n1 + j]));
    }
    std::vector<std::size_t> order(n1);
    for (std::size_t j = 0; j < n1; ++j) order[j] = j;
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(most), order.end(),
                      [&e](std::size_t a, std::size_t b) { return e[a] > e[b]; });
    // energy below the m-th largest, summed from the smallest up (exact beside a spike's 1e77)
    double below = 0;
    for (std::size_t i = most; i < n1; ++i) below += e[order[i]];
    const double f2 = kDataSpikeFactor * kDataSpikeFactor;
    std::size_t spikes = 0;
    for (std::size_t m = most; m-- > 0;) {
        if (below > 0 && e[order[m]] > f2 * below) {
            spikes = m + 1;
            break;
        }
        below += e[order[m]];
    }
    if (spikes == 0) return 0;
    std::vector<char> drop(n1, 0);
    for (std::size_t i = 0; i < spikes; ++i) drop[order[i]] = 1;
    std::vector<arma::uword> keep;
    keep.reserve(n1 - spikes);
    for (std::size_t j = 0; j < n1; ++j)
        if (!drop[j]) keep.push_back(j);
    const arma::uvec k(keep);
    arma::uvec ky(keep.size() * nc);
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t i = 0; i < keep.size(); ++i) ky[c * keep.size() + i] = c * n1 + keep[i];
    fr.y = arma::cx_fvec(fr.y.elem(ky));
    fr.kx = arma::fvec(fr.kx.elem(k));
    if (fr.ky.n_elem == n1) fr.ky = arma::fvec(fr.ky.elem(k));
    if (fr.kz.n_elem == n1) fr.kz = arma::fvec(fr.kz.elem(k));
    if (fr.t.n_elem == n1) fr.t = arma::fvec(fr.t.elem(k));
    return spikes;
}

std::vector<std::size_t> remove_spikes(ReconProblem& P) {
    std::vector<std::size_t> counts;
    P.n1total = P.n1max = 0;
    for (ReconFrame& fr : P.frames) {
        counts.push_back(remove_spikes(fr, P.nc));
        P.n1total += fr.kx.n_elem;
        P.n1max = std::max<std::size_t>(P.n1max, fr.kx.n_elem);
    }
    return counts;
}

double uncovered_energy(const ReconProblem& P, std::size_t slice, const CoilMapOptions& options) {
    if (slice >= P.smaps.size())
        throw invalid_argument("uncovered_energy: slice " + std::to_string(slice) + " but the problem has maps for " +
                               std::to_string(P.smaps.size()) + " slice(s)");
    const ReconFrame* first = nullptr;
    for (const ReconFrame& fr : P.frames)
        if (fr.slice == slice) {
            first = &fr;
            break;
        }
    if (!first) throw invalid_argument("uncovered_energy: the problem has no frame of slice " + std::to_string(slice));
    const std::size_t n2 = P.n2(), nc = P.nc;
    const arma::cx_fvec& S = P.smaps[slice];
    if (S.n_elem != n2 * nc)
        throw invalid_argument("uncovered_energy: the maps of slice " + std::to_string(slice) + " hold " +
                               std::to_string(S.n_elem) +
                               " values (expected pixels x coils = " + std::to_string(n2 * nc) + ")");
    // The frame's data scaled by a power of two near 1 / its largest value, so that the gridded images stay in
    // float's range whatever the data's units (the share does not depend on the scale).
    ReconProblem Q;
    Q.Nx = P.Nx, Q.Ny = P.Ny, Q.Nz = P.Nz, Q.nc = nc, Q.nslices = P.nslices, Q.nframes = 1;
    Q.ix = P.ix, Q.iy = P.iy, Q.iz = P.iz, Q.field_map = P.field_map, Q.fov_ratio = P.fov_ratio;
    Q.frames.push_back(*first);
    ReconFrame& fr = Q.frames.front();
    double peak = 0;
    for (const auto& v : fr.y) peak = std::max(peak, double(std::abs(v)));
    if (!(peak > 0)) return 0;
    fr.y *= float(1 / solver_detail::pow2_near<float>(peak));
    Q.n1total = Q.n1max = fr.kx.n_elem;
    const arma::cx_fmat X = low_resolution_coil_images(Q, fr, options);
    std::vector<double> m(n2, 0.0);
    double mmax = 0;
    for (std::size_t k = 0; k < n2; ++k) {
        for (std::size_t c = 0; c < nc; ++c) m[k] += std::norm(std::complex<double>(S[c * n2 + k]));
        mmax = std::max(mmax, m[k]);
    }
    double total = 0, outside = 0;
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += std::norm(std::complex<double>(X(k, c)));
        total += e;
        if (!(m[k] > 1e-6 * mmax)) outside += e;
    }
    return total > 0 ? outside / total : 0.0;
}

}  // namespace recon
}  // namespace forge
