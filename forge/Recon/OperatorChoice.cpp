#include "forge/Recon/OperatorChoice.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Solvers/SolverCommon.h"

namespace forge {
namespace recon {

namespace {

double padded_cells(std::size_t Nx, std::size_t Ny, std::size_t Nz) {
    return double(Nx * Ny * Nz) * (Nz > 1 ? 8.0 : 4.0);
}
double padded_cells(const ReconProblem& P) { return padded_cells(P.Nx, P.Ny, P.Nz); }
double fft_flops(double cells) { return 5 * cells * std::log2(std::max(cells, 2.0)); }
double taps_per_sample(std::size_t Nz) { return std::pow(5.0, Nz > 1 ? 3 : 2); }
double nufft_taps(const ReconProblem& P, double n1) { return n1 * taps_per_sample(P.Nz); }

// Time segments of 'op' the estimates assume: the given L, else typical choices (timeseg at 1%: L ~ 8;
// toeplitz at 1e-3: L ~ 6); 1 without field correction.
double segment_count(const ReconProblem& P, const ReconSettings& S, EncodingOperator op, bool fieldCorrection) {
    if (!fieldCorrection || P.field_map.empty()) return 1;
    if (S.segments > 0) return S.segments + 1.0;
    return op == EncodingOperator::Toeplitz ? 7 : 9;
}

double dft_rate(const ReconProblem& P, bool fieldCorrection, const CostRates& r) {
    return fieldCorrection && !P.field_map.empty() ? r.dft_field : r.dft;
}

// One NUFFT apply (forward or adjoint) of n1 samples for one coil: an FFT of the 2x grid and the interpolation.
double nufft_apply_seconds(const ReconProblem& P, double n1, const CostRates& r) {
    return fft_flops(padded_cells(P)) / r.fft + nufft_taps(P, n1) / r.taps;
}

// A Toeplitz kernel build on an Nx x Ny x Nz grid with 'basis' basis kernels and 'pairs' pair kernels, without its
// fixed cost: the basis kernels' transforms priced by ToeplitzNormal's own rule for the source it will choose
// (scaled by the measured r.kernels), then an FFT of every pair kernel.
double kernel_build_seconds(double n1, std::size_t Nx, std::size_t Ny, std::size_t Nz, double basis, double pairs,
                            bool gpu, const CostRates& r) {
    return r.kernels * ToeplitzNormal<float>::estimate_kernel_seconds(uword(n1), Nx, Ny, Nz, uword(basis), gpu) +
           pairs * fft_flops(padded_cells(Nx, Ny, Nz)) / r.fft;
}

// The Toeplitz kernels of one frame of n1 samples with 'segs' = L + 1 segments: about half of the (L+1)(L+2)/2
// pair kernels (their numerical rank) as basis kernels, each an adjoint DFT or NUFFT of the n1 samples on the
// padded grid.
double toeplitz_kernel_seconds(const ReconProblem& P, double n1, double segs, bool gpu, const CostRates& r) {
    const double basis = std::max(1.0, std::round(segs * (segs + 1) / 4)), pairs = segs * (segs + 1) / 2;
    return r.kernel_fixed + (segs > 1 ? n1 / r.segmentation + n1 * pairs / r.pairs : 0.0) +
           kernel_build_seconds(n1, P.Nx, P.Ny, P.Nz, basis, pairs, gpu, r);
}

// The right-hand side G^H y of one frame (every coil): exact DFT, or NUFFT adjoints (time-segmented: segs of them).
double rhs_exact_seconds(const ReconProblem& P, double n1, double rate) {
    return n1 * double(P.n2()) * double(P.nc) / rate;
}
// (its plan is the operator's set-up, priced apart)
double rhs_nufft_seconds(const ReconProblem& P, double n1, double segs, const CostRates& r) {
    return r.apply + segs * double(P.nc) * nufft_apply_seconds(P, n1, r);
}

// One Toeplitz iteration of one frame: per coil 2 (L+1) FFTs of the padded grid; one (batched) apply's overhead.
double toeplitz_iteration_seconds(const ReconProblem& P, double segs, const CostRates& r) {
    return double(P.nc) * 2 * segs * fft_flops(padded_cells(P)) / r.fft + r.apply;
}

// The work of one iteration every operator shares: SENSE's products with the nc coil maps (forward and adjoint),
// PCG's vector updates and the penalty (about two coils' worth of pixel-wise work more), and its fixed overhead.
double shared_iteration_seconds(const ReconProblem& P, const CostRates& r) {
    return r.iteration + (double(P.nc) + 2) * double(P.n2()) / r.vector;
}

// Whether frames a and b hold the same samples (and, with 'times', readout times) but for at most 1% of them left out
// of one or the other (remove_spikes()): priced as one operator, as a stream's first slice prices its later ones.
bool same_but_spikes(const ReconFrame& a, const ReconFrame& b, bool times) {
    const auto shared = [](const arma::fvec& u, const arma::fvec& v) {
        return u.n_elem == v.n_elem && (u.n_elem == 0 || u.memptr() == v.memptr());
    };
    // views of one memory (a stream's whole-stream proxy): the same samples without reading them
    if (shared(a.kx, b.kx) && shared(a.ky, b.ky) && shared(a.kz, b.kz) && (!times || shared(a.t, b.t))) return true;
    const std::size_t na = a.kx.n_elem, nb = b.kx.n_elem, most = std::max(na, nb) / 100;
    if ((na > nb ? na - nb : nb - na) > most) return false;
    const auto at = [times](const ReconFrame& f, std::size_t i) {
        return std::array<float, 4>{f.kx[i], f.ky.n_elem ? f.ky[i] : 0.0f, f.kz.n_elem ? f.kz[i] : 0.0f,
                                    times && f.t.n_elem ? f.t[i] : 0.0f};
    };
    std::size_t i = 0, j = 0, skipped = 0;
    while (i < na && j < nb) {
        if (at(a, i) == at(b, j)) {
            ++i, ++j;
            continue;
        }
        if (++skipped > most) return false;
        (na - i > nb - j ? i : j) += 1;  // the one with more left lost a sample here
    }
    return skipped + (na - i) + (nb - j) <= most;
}

// ---------------------------------------------------------------- calibration
std::mutex& calibration_mutex() {
    static std::mutex m;
    return m;
}
// -1: FORGE_COST_MODEL decides; 0 off; 1 on
int& calibration_override() {
    static int v = -1;
    return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The least of 'repeats' timings of f() (the device synchronised around each).
template <typename F>
double best_of(int repeats, F&& f) {
    double best = 1e300;
    for (int i = 0; i < repeats; ++i) {
        device::synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        device::synchronize();
        best = std::min(best, seconds_since(t0));
    }
    return best;
}

// t = fixed + units / rate through two timings (units u0 < u1): the fixed part of the small one's time and the
// throughput of the difference. Timings that do not grow with the units (noise at sizes too close) give the large
// one's rate with no fixed part.
struct FixedAndRate {
    double fixed = 0, rate = 0;
};
FixedAndRate fit_fixed_and_rate(double u0, double t0, double u1, double t1) {
    FixedAndRate f;
    if (u1 > u0 && t1 > t0) {
        f.rate = (u1 - u0) / (t1 - t0);
        f.fixed = std::max(0.0, t0 - u0 / f.rate);
    } else {
        f.rate = u1 / t1;
    }
    return f;
}

using FVec = forgeCol<forgeComplex<float>>;

FVec random_image(std::size_t n, bool gpu, std::mt19937& rng) {
    std::normal_distribution<float> g;
    arma::cx_fvec x(n);
    for (auto& v : x) v = std::complex<float>(g(rng), g(rng));
    FVec f(x);
    if (gpu) f.put_on_gpu();
    return f;
}

// n1 samples uniform over an N x N grid's k-space (cycles per FOV), readout times over 5 ms.
struct Samples {
    arma::fvec kx, ky, kz, t;
};
Samples random_samples(std::size_t n1, std::size_t N, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-0.5f * float(N), 0.5f * float(N) - 1e-3f);
    Samples s;
    s.kx.set_size(n1), s.ky.set_size(n1), s.kz.zeros(n1), s.t.set_size(n1);
    for (std::size_t i = 0; i < n1; ++i)
        s.kx[i] = u(rng), s.ky[i] = u(rng), s.t[i] = float(5e-3 * double(i) / double(n1));
    return s;
}

std::string cpu_model_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto c = line.find(':');
            if (c != std::string::npos) return line.substr(c + 1);
        }
    return "unknown-cpu";
}

int thread_count() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

bool usable(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

CostRates fixed_cost_rates(bool gpu) {
    CostRates r;
    r.source = "fixed";
    r.segmentation = 1e6;  // on the host either way: 25 ms for 24576 samples on 2 cores
    r.pairs = 3e7;         // 24576 samples and 36 pairs in 30 ms
    if (gpu) {
        // Rounded from measure_cost_rates() on an H200 (2026-12-02), the DFT's below the coil batches' 1e13 of an
        // H100 at 8 coils
        r.dft = r.dft_field = 5e12;
        r.fft = 5e12;
        r.taps = 2e11;
        r.plan = 4e7;
        r.kernels = 2;
        r.vector = 1e11;
        r.apply = 5e-5;
        r.iteration = 3.5e-4;  // a PCG iteration's launches and reductions
        r.kernel_fixed = 1e-3;
        r.pairs = 1e7;  // the host's pair data (16 busy cores)
        return r;
    }
    // Measured with forge-recon --report on the 2-core AMD EPYC development machine under load: Gdft 4.5e8 (with
    // a field map) to 3.8e9 (without); FFTs of 256^2 in 2.6 ms (inside the Toeplitz apply); radial NUFFT (25856
    // samples, W = 5: 25 taps in 2D, 256^2 grid) 6.4 ms each way, its plan 0.02 to 0.03 s.
    r.dft = r.dft_field = 1e9;
    r.fft = 2e9;
    r.taps = 1.7e8;
    r.plan = 1e6;
    // coil products and apply overhead: conservative round figures (the calibration measured 5e8 coil-pixels/s and
    // 6 us per apply of a 64-sample NUFFT on this CPU at load 1.6)
    r.vector = 3e8;
    r.apply = 1e-4;
    r.iteration = 1e-5;
    r.kernel_fixed = 2e-3;
    return r;
}

CostRates measure_cost_rates(bool gpu) {
    if (gpu && !device::available())
        throw cuda_error("measure_cost_rates: no usable GPU to measure (" +
                         std::string(device::built_with_cuda() ? "none found" : "built without CUDA") + ")");
    const CostRates fixed = fixed_cost_rates(gpu);
    CostRates r = fixed;
    r.source = "measured";
    std::mt19937 rng(20261201u);
    // Two sizes of each micro-run: the small one mostly fixed costs (a GPU's launches and reductions), the large one
    // mostly throughput, both a few ms on a 2-core CPU. Batches of nb images, as SENSE hands
    // its coils (and time segmentation its segments) to one apply.
    const std::size_t nb = gpu ? 8 : 2;
    const std::array<std::size_t, 2> N = {gpu ? 64u : 32u, gpu ? 256u : 128u};  // Toeplitz applies, NUFFT grids
    const std::array<std::size_t, 2> n1 = {gpu ? 4096u : 512u, gpu ? 65536u : 8192u};
    const std::size_t Nd = gpu ? 128 : 64, n1d = gpu ? 16384 : 128;  // DFT block, a batch of 8 coil images
    const ToeplitzOptions topts = [&] {
        ToeplitzOptions o;
        o.build = gpu ? Device::GPU : Device::Host;
        return o;
    }();
    // The FFT pairs of the 2x grid (field-free Toeplitz applies), then the NUFFT's forward and adjoint.
    std::array<double, 2> toeplitzSeconds{}, nufftSeconds{};
    for (int i = 0; i < 2; ++i) {
        const Samples s = random_samples(n1[i], N[i], rng);
        const ToeplitzNormal<float> T(N[i], N[i], 1, s.kx, s.ky, s.kz, arma::fvec(), topts);
        const FVec x = random_image(N[i] * N[i] * nb, gpu, rng);
        FVec y = T.normal(x, nb);
        toeplitzSeconds[i] = best_of(3, [&] { y = T.normal(x, nb); });
        // its plan: construction and the first applies' extra time, at the large size
        const auto t0 = std::chrono::steady_clock::now();
        const Gnufft<float> G(n1[i], N[i], N[i], 1, s.kx, s.ky, s.kz);
        double plan = seconds_since(t0);
        const double first = best_of(1, [&] { y = G.adjoint(G.forward(x, nb), nb); });
        nufftSeconds[i] = best_of(3, [&] { y = G.adjoint(G.forward(x, nb), nb); });
        plan += std::max(0.0, first - nufftSeconds[i]);
        if (i == 1) r.plan = double(n1[i]) / std::max(plan, 1e-6);
    }
    const auto fftUnits = [&](int i) { return double(nb) * 2 * fft_flops(padded_cells(N[i], N[i], 1)); };
    const FixedAndRate toeplitzFit =
        fit_fixed_and_rate(fftUnits(0), toeplitzSeconds[0], fftUnits(1), toeplitzSeconds[1]);
    r.fft = toeplitzFit.rate;
    // The NUFFT's time less its FFTs at that rate: two applies' overhead and 2 nb n1 interpolations.
    std::array<double, 2> tapSeconds{};
    for (int i = 0; i < 2; ++i) tapSeconds[i] = std::max(nufftSeconds[i] - fftUnits(i) / r.fft, 0.25 * nufftSeconds[i]);
    const auto tapUnits = [&](int i) { return double(nb) * 2 * double(n1[i]) * taps_per_sample(1); };
    const FixedAndRate nufftFit = fit_fixed_and_rate(tapUnits(0), tapSeconds[0], tapUnits(1), tapSeconds[1]);
    r.taps = nufftFit.rate;
    r.apply = 0.5 * (toeplitzFit.fixed + 0.5 * nufftFit.fixed);
    // The per-iteration vector work: SENSE's coil products with 8 coils (a product with the map, one with its
    // conjugate, the sum), as the operators' forward and adjoint form them, and three of PCG's reductions (a GPU's
    // waits for their results belong to every iteration's fixed cost).
    {
        const std::size_t nc = 8;
        std::array<double, 2> units{}, seconds{};
        for (int i = 0; i < 2; ++i) {
            const std::size_t n2 = N[i] * N[i];
            std::vector<FVec> maps;
            for (std::size_t c = 0; c < nc; ++c) maps.push_back(random_image(n2, gpu, rng));
            const FVec x = random_image(n2, gpu, rng);
            FVec acc = x;
            double sink = 0;
            const auto iteration = [&] {
                acc.zeros();
                for (std::size_t c = 0; c < nc; ++c) {
                    const FVec t = maps[c] % x;
                    acc += conj(maps[c]) % t;
                }
                for (int k = 0; k < 3; ++k) sink += solver_detail::re_dot<float>(acc, x);
            };
            iteration();
            units[i] = double(nc * n2);
            seconds[i] = best_of(3, iteration);
            (void)sink;
        }
        const FixedAndRate fit = fit_fixed_and_rate(units[0], seconds[0], units[1], seconds[1]);
        r.vector = fit.rate;
        r.iteration = fit.fixed;
    }
    // The exact DFT, without and with a field map, on a batch of 8 coil images as SENSE applies it: the batch shares
    // the phases (the host's special functions) and runs on tensor cores (the GPU's coil batches), so its rate per
    // coil is several times a single image's (10 times on an H200).
    {
        const std::size_t nbd = 8;
        const Samples s = random_samples(n1d, Nd, rng);
        ReconProblem grid;
        grid.Nx = grid.Ny = Nd;
        set_pixel_grid(grid);
        arma::fvec fm(Nd * Nd);
        std::uniform_real_distribution<float> u(-600.0f, 600.0f);
        for (auto& v : fm) v = u(rng);
        const double products = 2 * double(n1d) * double(Nd * Nd) * double(nbd);
        const FVec x = random_image(Nd * Nd * nbd, gpu, rng);
        for (bool field : {false, true}) {
            const Gdft<float> G(n1d, Nd * Nd, s.kx, s.ky, s.kz, grid.ix, grid.iy, grid.iz,
                                field ? fm : arma::fvec(Nd * Nd, arma::fill::zeros), s.t);
            FVec y = G.adjoint(G.forward(x, nbd), nbd);
            const double t = best_of(2, [&] { y = G.adjoint(G.forward(x, nbd), nbd); });
            (field ? r.dft_field : r.dft) = products / t;
        }
    }
    // Toeplitz kernel builds (one basis kernel, field-free) at the two sizes against ToeplitzNormal's own estimate
    // of them, after one build that is not timed: the first build in a process also loads modules and makes plans.
    {
        std::array<double, 2> est{}, seconds{};
        const auto build = [&](std::size_t Nk, const Samples& s) {
            const ToeplitzNormal<float> T(Nk, Nk, 1, s.kx, s.ky, s.kz, arma::fvec(), topts);
            device::synchronize();
        };
        build(N[0], random_samples(n1[0], N[0], rng));
        for (int i = 0; i < 2; ++i) {
            const Samples s = random_samples(n1[i], N[i], rng);
            const double t = best_of(2, [&] { build(N[i], s); });
            // less the kernel's FFT, priced at the rate above
            seconds[i] = std::max(t - fft_flops(padded_cells(N[i], N[i], 1)) / r.fft, 0.25 * t);
            est[i] = ToeplitzNormal<float>::estimate_kernel_seconds(uword(n1[i]), N[i], N[i], 1, 1, gpu);
        }
        const FixedAndRate fit = fit_fixed_and_rate(est[0], seconds[0], est[1], seconds[1]);
        r.kernels = 1 / fit.rate;
        r.kernel_fixed = fit.fixed;
    }
    // Time segmentation's set-up (on the host): L for a smooth map of +-100 Hz over a 20 ms readout at the
    // reconstruction's 1% error, then its interpolators; then a field-corrected Toeplitz build for the map's band,
    // whose time beyond the field-free build's at the rates above is its host work on the pair data.
    {
        const std::size_t Nf = gpu ? 128 : 32, n1f = gpu ? 24576 : 2048;
        arma::fvec fm(Nf * Nf);
        for (std::size_t y = 0; y < Nf; ++y)
            for (std::size_t x = 0; x < Nf; ++x)
                fm[x + Nf * y] = float(2 * M_PI * 100 * std::sin(M_PI * double(x + 2 * y) / double(Nf)));
        Samples s = random_samples(n1f, Nf, rng);
        s.t = arma::linspace<arma::fvec>(0, 0.02f, n1f);
        const double ts = best_of(2, [&] {
            const TSErrorReport e = TimeSegmentationCore<float>::choose_segments(fm, s.t, 1e-2, TSInterp::MinMax, 64);
            (void)TimeSegmentationCore<float>::segment_factors(fm, s.t, e.L, TSInterp::MinMax);
        });
        r.segmentation = double(n1f) / ts;
        const FieldBand band = ToeplitzNormal<float>::field_band(fm);
        const Trajectory<float> k(s.kx, s.ky, s.kz, s.t);
        uword basis = 1, pairs = 1;
        const double tb = best_of(2, [&] {
            const uword L = ToeplitzNormal<float>::choose_segments(s.t, band, 1e-3);
            const ToeplitzNormal<float> T(ImageGrid(Nf, Nf, 1), k, arma::fvec(), fm, band, L, topts);
            basis = T.dft_count();
            pairs = T.kernel_count();
        });
        const double modeled = r.kernel_fixed + double(n1f) / r.segmentation +
                               kernel_build_seconds(double(n1f), Nf, Nf, 1, double(basis), double(pairs), gpu, r);
        r.pairs = tb > modeled ? double(n1f) * double(pairs) / (tb - modeled) : 1e12;
    }
    // Anything not measurable keeps its fixed rate.
    for (auto pr :
         {std::make_pair(&r.dft, fixed.dft), std::make_pair(&r.dft_field, fixed.dft_field),
          std::make_pair(&r.fft, fixed.fft), std::make_pair(&r.taps, fixed.taps), std::make_pair(&r.plan, fixed.plan),
          std::make_pair(&r.kernels, 1.0), std::make_pair(&r.vector, fixed.vector),
          std::make_pair(&r.segmentation, fixed.segmentation), std::make_pair(&r.pairs, fixed.pairs)})
        if (!usable(*pr.first)) *pr.first = pr.second;
    for (double* v : {&r.apply, &r.iteration, &r.kernel_fixed})
        if (!(std::isfinite(*v) && *v >= 0)) *v = 0;
    return r;
}

std::string cost_model_key(bool gpu) {
    std::string key = gpu ? "gpu-" + std::string(device::device_name())
                          : "cpu-" + cpu_model_name() + "-" + std::to_string(thread_count()) + "t";
    std::string safe;
    for (char c : key) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                        c == '.' || c == '_';
        if (ok)
            safe += c;
        else if (!safe.empty() && safe.back() != '_')
            safe += '_';
    }
    return safe;
}

std::string cost_model_file(bool gpu) {
    std::string dir;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        dir = x;
    else if (const char* h = std::getenv("HOME"); h && *h)
        dir = std::string(h) + "/.cache";
    else
        return "";
    return dir + "/forge/cost-model-" + cost_model_key(gpu) + ".txt";
}

// The micro-runs' definition: a file written by earlier ones (2: the DFT rate of a coil batch, but the other rates
// from one size, cold, with launches and set-up counted as throughput) is measured again rather than read.
constexpr int kCostModelVersion = 3;

bool write_cost_rates(const std::string& path, const CostRates& r) {
    // written beside and renamed: a reader sees the old file or the whole new one
    std::error_code ec;
    const std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    const std::string tmp = path + ".tmp" + std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
    {
        std::ofstream f(tmp);
        if (!f) return false;
        f.precision(6);
        f << "# forge cost model: rates per second measured by forge::recon::measure_cost_rates()"
          << "\n";
        f << "version " << kCostModelVersion << "\n";
        f << "dft " << r.dft << "\ndft_field " << r.dft_field << "\nfft " << r.fft << "\ntaps " << r.taps << "\nplan "
          << r.plan << "\nkernels " << r.kernels << "\nvector " << r.vector << "\napply " << r.apply << "\niteration "
          << r.iteration << "\nkernel_fixed " << r.kernel_fixed << "\nsegmentation " << r.segmentation << "\npairs "
          << r.pairs << "\n";
        if (!f) return false;
    }
    std::filesystem::rename(tmp, p, ec);
    if (ec) std::filesystem::remove(tmp, ec);
    return !ec;
}

bool read_cost_rates(const std::string& path, CostRates& r) {
    std::ifstream f(path);
    if (!f) return false;
    std::map<std::string, double> v;
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream is(line);
        std::string name;
        double x;
        if (is >> name >> x) v[name] = x;
    }
    if (v.find("version") == v.end() || v["version"] != kCostModelVersion) return false;
    CostRates out;
    const std::pair<const char*, double*> fields[] = {{"dft", &out.dft},       {"dft_field", &out.dft_field},
                                                      {"fft", &out.fft},       {"taps", &out.taps},
                                                      {"plan", &out.plan},     {"kernels", &out.kernels},
                                                      {"vector", &out.vector}, {"segmentation", &out.segmentation},
                                                      {"pairs", &out.pairs}};
    for (const auto& fd : fields) {
        const auto it = v.find(fd.first);
        if (it == v.end() || !usable(it->second)) return false;
        *fd.second = it->second;
    }
    // fixed costs: zero is a measurement too
    const std::pair<const char*, double*> fixedCosts[] = {{"apply", &out.apply},
                                                          {"iteration", &out.iteration},
                                                          {"kernel_fixed", &out.kernel_fixed}};
    for (const auto& fd : fixedCosts) {
        const auto it = v.find(fd.first);
        if (it == v.end() || !std::isfinite(it->second) || it->second < 0) return false;
        *fd.second = it->second;
    }
    out.source = "cached " + path;
    r = out;
    return true;
}

void set_cost_calibration(bool on) {
    std::lock_guard<std::mutex> lock(calibration_mutex());
    calibration_override() = on ? 1 : 0;
}

bool cost_calibration() {
    {
        std::lock_guard<std::mutex> lock(calibration_mutex());
        if (calibration_override() >= 0) return calibration_override() == 1;
    }
    const char* e = std::getenv("FORGE_COST_MODEL");
    return !(e && std::string(e) == "fixed");
}

CostRates cost_rates(bool gpu) {
    if (!cost_calibration()) return fixed_cost_rates(gpu);
    std::lock_guard<std::mutex> lock(calibration_mutex());
    static std::map<std::string, CostRates> measured;  // per process and device
    const std::string key = cost_model_key(gpu) + (gpu ? "#" + std::to_string(device::current_device()) : "");
    const auto it = measured.find(key);
    if (it != measured.end()) return it->second;
    CostRates r;
    const std::string file = cost_model_file(gpu);
    if (file.empty() || !read_cost_rates(file, r)) {
        try {
            r = measure_cost_rates(gpu);
            if (!file.empty()) write_cost_rates(file, r);
        } catch (const std::exception& e) {
            r = fixed_cost_rates(gpu);
            r.source = std::string("fixed (calibration failed: ") + e.what() + ")";
        }
    }
    measured[key] = r;
    return r;
}

int expected_iterations(int iterations, double tolerance) {
    return tolerance > 0 ? std::min(iterations, kExpectedIterations) : iterations;
}

double estimate_seconds(const ReconProblem& P, const ReconSettings& S, EncodingOperator op, bool fieldCorrection) {
    return estimate_seconds(P, S, op, fieldCorrection, cost_rates(S.gpu));
}

double estimate_seconds(const ReconProblem& P, const ReconSettings& S, EncodingOperator op, bool fieldCorrection,
                        const CostRates& r) {
    const double iterations = double(S.iterations);
    const double dftRate = dft_rate(P, fieldCorrection, r);
    // every operator: the shared vector work of each iteration, every frame
    const double shared = iterations * double(P.frames.size()) * shared_iteration_seconds(P, r);
    if (op == EncodingOperator::Dft)
        return dft_cost(P, S.iterations) / dftRate + shared + iterations * double(P.frames.size()) * 2 * r.apply;
    const double segs = segment_count(P, S, op, fieldCorrection);
    const bool correct = fieldCorrection && !P.field_map.empty() && op != EncodingOperator::Nufft;
    // Set-up is paid once per operator the frames share (OperatorCache): a frame whose samples (and, where the
    // operator corrects with them, times and field map) are an earlier frame's reuses its operator; a Toeplitz frame
    // of another map in the same band (toeplitz_band) takes the kernels and builds its right-hand side only.
    const auto same = [](const arma::fvec& a, const arma::fvec& b) {
        return a.n_elem == b.n_elem && std::equal(a.begin(), a.end(), b.begin());
    };
    const auto sameSamples = [&](const ReconFrame& a, const ReconFrame& b) { return same_but_spikes(a, b, correct); };
    const auto sameOperator = [&](const ReconFrame& a, const ReconFrame& b) {
        return sameSamples(a, b) &&
               (!correct || a.slice == b.slice || same(P.field_map[a.slice], P.field_map[b.slice]));
    };
    std::vector<double> bands;
    if (correct && op == EncodingOperator::Toeplitz)
        for (const auto& fm : P.field_map) bands.push_back(toeplitz_band(fm).half_width);
    std::vector<std::size_t> kernels;    // a frame of each Toeplitz kernel set built so far
    std::vector<std::size_t> operators;  // a frame of each operator built so far
    double t = shared;
    for (std::size_t i = 0; i < P.frames.size(); ++i) {
        const ReconFrame& fr = P.frames[i];
        const double n1 = double(fr.kx.n_elem);
        bool reused = false;
        for (std::size_t j : operators) reused = reused || sameOperator(fr, P.frames[j]);
        if (!reused) operators.push_back(i);
        if (op == EncodingOperator::Toeplitz) {
            const bool byNufft = toeplitz_rhs_by_nufft(P, i, S, fieldCorrection);
            const double rhs = byNufft ? rhs_nufft_seconds(P, n1, segs + 1, r)  // the rhs's L: for half the error
                                       : rhs_exact_seconds(P, n1, dftRate);
            t += rhs + iterations * toeplitz_iteration_seconds(P, segs, r);
            if (reused) continue;
            if (byNufft) t += n1 / r.plan + (correct ? n1 / r.segmentation : 0.0);  // the rhs's NUFFT, segmented
            bool haveKernels = false;
            for (std::size_t j : kernels)
                haveKernels = haveKernels || (sameSamples(fr, P.frames[j]) &&
                                              (!correct || bands[fr.slice] == bands[P.frames[j].slice]));
            if (haveKernels) continue;
            kernels.push_back(i);
            t += toeplitz_kernel_seconds(P, n1, segs, S.gpu, r);
        } else if (op == EncodingOperator::Fft) {
            const double grid = double(P.fft_grid[0] * P.fft_grid[1] * P.fft_grid[2]);
            t += iterations * 2 * (segs * double(P.nc) * (fft_flops(grid) / r.fft + 2 * n1 / r.taps) + r.apply);
        } else {  // nufft, timeseg: the plan, then forward and adjoint per iteration, every coil and segment
            const double s = op == EncodingOperator::TimeSeg ? segs : 1;
            const double setup = n1 / r.plan + (op == EncodingOperator::TimeSeg && correct ? n1 / r.segmentation : 0.0);
            t += (reused ? 0 : setup) + iterations * 2 * (s * double(P.nc) * nufft_apply_seconds(P, n1, r) + r.apply);
        }
    }
    return t;
}

bool toeplitz_rhs_by_nufft(const ReconProblem& P, std::size_t frame, const ReconSettings& S, bool fieldCorrection) {
    if (S.toeplitz_rhs != ToeplitzRhs::Auto) return S.toeplitz_rhs == ToeplitzRhs::Nufft;
    if (frame >= P.frames.size())
        throw invalid_argument("toeplitz_rhs_by_nufft: frame is " + std::to_string(frame) + " but the problem has " +
                               std::to_string(P.frames.size()) + " frames");
    const CostRates r = fixed_cost_rates(S.gpu);  // the image's precision does not depend on the machine
    const double n1 = double(P.frames[frame].kx.n_elem);
    const double segs = segment_count(P, S, EncodingOperator::Toeplitz, fieldCorrection);
    // exact where it is cheap anyway (under 50 ms): small problems keep G^H y to rounding
    const double exact = rhs_exact_seconds(P, n1, dft_rate(P, fieldCorrection, r));
    return exact > 0.05 &&
           n1 / r.plan + rhs_nufft_seconds(P, n1, fieldCorrection && !P.field_map.empty() ? segs + 1 : 1, r) < exact;
}

OperatorChoice choose_operator(const ReconProblem& P, int iterations, bool gpu, bool fieldCorrection,
                               double tolerance) {
    // on an FFT grid the FFT is exact and needs no model to win: no rates to measure
    if (P.fft_grid[0] > 0)
        return choose_operator(P, iterations, gpu, fieldCorrection, fixed_cost_rates(gpu), tolerance);
    return choose_operator(P, iterations, gpu, fieldCorrection, cost_rates(gpu), tolerance);
}

OperatorChoice choose_operator(const ReconProblem& P, int iterations, bool gpu, bool fieldCorrection,
                               const CostRates& r, double tolerance) {
    // On an FFT grid the FFT is the exact model at the NUFFT's cost without its interpolation: no estimate needed.
    if (P.fft_grid[0] > 0)
        return {EncodingOperator::Fft, "the samples lie on the " + std::to_string(P.fft_grid[0]) + "x" +
                                           std::to_string(P.fft_grid[1]) + "x" + std::to_string(P.fft_grid[2]) +
                                           " FFT grid"};
    const bool correct = fieldCorrection && !P.field_map.empty();
    // Without a field map to correct, time segmentation would be plain Gnufft: name it so.
    const EncodingOperator nufft = correct ? EncodingOperator::TimeSeg : EncodingOperator::Nufft;
    const std::string why = P.field_map.empty() ? ", no field map" : !fieldCorrection ? ", no field correction" : "";
    ReconSettings S;
    S.iterations = expected_iterations(iterations, tolerance);
    S.gpu = gpu;
    const double tDft = estimate_seconds(P, S, EncodingOperator::Dft, fieldCorrection, r);
    const double tNufft = estimate_seconds(P, S, nufft, fieldCorrection, r);
    const double tToeplitz = estimate_seconds(P, S, EncodingOperator::Toeplitz, fieldCorrection, r);
    const bool toeplitz = tToeplitz < tNufft;
    const EncodingOperator approx = toeplitz ? EncodingOperator::Toeplitz : nufft;
    const double tApprox = std::min(tToeplitz, tNufft);
    const bool exact = tDft <= kExactPreference * tApprox || tDft <= kExactFloorSeconds;
    const EncodingOperator op = exact ? EncodingOperator::Dft : approx;
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "non-Cartesian; estimated for %d of at most %d iterations (%s rates): dft %.2g s, %s %.2g s, "
                  "toeplitz %.2g s (kernels included); %s",
                  S.iterations, iterations, r.source.rfind("cached", 0) == 0 ? "measured" : r.source.c_str(), tDft,
                  operator_name(nufft), tNufft, tToeplitz,
                  exact
                      ? (tDft <= tApprox              ? "dft the fastest"
                         : tDft <= kExactFloorSeconds ? "dft under 0.01 s"
                                                      : "dft within 1.2x of the fastest")
                      : (toeplitz ? "toeplitz the fastest"
                                  : (nufft == EncodingOperator::Nufft ? "nufft the fastest" : "timeseg the fastest")));
    return {op, std::string(buf) + why};
}

}  // namespace recon
}  // namespace forge
