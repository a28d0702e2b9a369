#include "forge/Recon/OperatorChoice.h"

#include <algorithm>
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

// The Toeplitz kernels of one frame of n1 samples with 'segs' = L + 1 segments: about half of the (L+1)(L+2)/2
// pair kernels (their numerical rank) as basis kernels, each an adjoint DFT or NUFFT of the n1 samples on the
// padded grid, priced by ToeplitzNormal's own rule for the source it will choose (scaled by the measured
// r.kernels); then an FFT of every pair kernel.
double toeplitz_kernel_seconds(const ReconProblem& P, double n1, double segs, bool gpu, const CostRates& r) {
    const double basis = std::max(1.0, std::round(segs * (segs + 1) / 4)), pairs = segs * (segs + 1) / 2;
    return r.kernels * ToeplitzNormal<float>::estimate_kernel_seconds(uword(n1), P.Nx, P.Ny, P.Nz, uword(basis), gpu) +
           pairs * fft_flops(padded_cells(P)) / r.fft;
}

// The right-hand side G^H y of one frame (every coil): exact DFT, or NUFFT adjoints (time-segmented: segs of them).
double rhs_exact_seconds(const ReconProblem& P, double n1, double rate) {
    return n1 * double(P.n2()) * double(P.nc) / rate;
}
double rhs_nufft_seconds(const ReconProblem& P, double n1, double segs, const CostRates& r) {
    return n1 / r.plan + segs * double(P.nc) * nufft_apply_seconds(P, n1, r);
}

// One Toeplitz iteration of one frame: per coil 2 (L+1) FFTs of the padded grid and one apply's overhead.
double toeplitz_iteration_seconds(const ReconProblem& P, double segs, const CostRates& r) {
    return double(P.nc) * (2 * segs * fft_flops(padded_cells(P)) / r.fft + r.apply);
}

// The work of one iteration every operator shares: SENSE's products with the nc coil maps (forward and adjoint),
// PCG's vector updates and the penalty (about two coils' worth of pixel-wise work more).
double shared_iteration_seconds(const ReconProblem& P, const CostRates& r) {
    return (double(P.nc) + 2) * double(P.n2()) / r.vector;
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
    if (gpu) {
        // the H100's Gdft rate and rough FFT and interpolation rates
        r.dft = r.dft_field = 1.85e12;
        r.fft = r.taps = 1e12;
        r.plan = 5e6;
        r.vector = 2e10;
        r.apply = 2e-5;
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
    // Sizes: small enough for a few tens of ms on a 2-core CPU, large enough that a GPU's launches do not dominate.
    const std::size_t N = gpu ? 256 : 128, n1 = gpu ? 65536 : 8192;   // NUFFT and Toeplitz apply
    const std::size_t Nd = gpu ? 128 : 64, n1d = gpu ? 16384 : 128;   // DFT block, a batch of 8 coil images
    const std::size_t Nk = gpu ? 128 : 32, n1k = gpu ? 16384 : 1024;  // Toeplitz kernel build
    const ToeplitzOptions topts = [&] {
        ToeplitzOptions o;
        o.build = gpu ? Device::GPU : Device::Host;
        return o;
    }();
    // The FFT pair of the 2x grid: a field-free Toeplitz apply.
    {
        const Samples s = random_samples(n1, N, rng);
        const ToeplitzNormal<float> T(N, N, 1, s.kx, s.ky, s.kz, arma::fvec(), topts);
        const FVec x = random_image(N * N, gpu, rng);
        FVec y = T.normal(x);
        const double t = best_of(3, [&] { y = T.normal(x); });
        r.fft = 2 * fft_flops(padded_cells(N, N, 1)) / t;
        // The NUFFT: its plan (construction and the first applies' extra time), then forward and adjoint.
        const auto t0 = std::chrono::steady_clock::now();
        const Gnufft<float> G(n1, N, N, 1, s.kx, s.ky, s.kz);
        double plan = seconds_since(t0);
        const double first = best_of(1, [&] { y = G.adjoint(G.forward(x)); });
        const double apply = best_of(4, [&] { y = G.adjoint(G.forward(x)); });
        plan += std::max(0.0, first - apply);
        r.plan = double(n1) / std::max(plan, 1e-6);
        // The fixed overhead of one apply: a NUFFT of 64 samples on a 16x16 grid, forward and adjoint.
        {
            const std::size_t Ns = 16, n1s = 64;
            const Samples s0 = random_samples(n1s, Ns, rng);
            const Gnufft<float> g(n1s, Ns, Ns, 1, s0.kx, s0.ky, s0.kz);
            const FVec xs = random_image(Ns * Ns, gpu, rng);
            FVec ys = g.adjoint(g.forward(xs));
            r.apply = 0.5 * best_of(5, [&] { ys = g.adjoint(g.forward(xs)); });
        }
        const double ffts = 2 * fft_flops(padded_cells(N, N, 1)) / r.fft;
        const double work = apply - ffts - 2 * r.apply;
        r.taps = 2 * double(n1) * taps_per_sample(1) / std::max(work, 0.25 * apply);
    }
    // The per-iteration vector work: SENSE's coil products on 64x64 images with 8 coils (a product with the map,
    // one with its conjugate, the sum), as the operators' forward and adjoint form them.
    {
        const std::size_t Nv = 64, nc = 8;
        std::vector<FVec> maps;
        for (std::size_t c = 0; c < nc; ++c) maps.push_back(random_image(Nv * Nv, gpu, rng));
        const FVec x = random_image(Nv * Nv, gpu, rng);
        FVec acc = x;
        const auto products = [&] {
            acc.zeros();
            for (std::size_t c = 0; c < nc; ++c) {
                const FVec t = maps[c] % x;
                acc += conj(maps[c]) % t;
            }
        };
        products();
        r.vector = double(nc * Nv * Nv) / best_of(3, products);
    }
    // The exact DFT, without and with a field map, on a batch of 8 coil images as SENSE applies it: the batch shares
    // the phases (the host's special functions) and runs on tensor cores (the GPU's coil batches), so its rate per
    // coil is several times a single image's (10 times on an H200).
    {
        const std::size_t nb = 8;
        const Samples s = random_samples(n1d, Nd, rng);
        ReconProblem grid;
        grid.Nx = grid.Ny = Nd;
        set_pixel_grid(grid);
        arma::fvec fm(Nd * Nd);
        std::uniform_real_distribution<float> u(-600.0f, 600.0f);
        for (auto& v : fm) v = u(rng);
        const double products = 2 * double(n1d) * double(Nd * Nd) * double(nb);
        const FVec x = random_image(Nd * Nd * nb, gpu, rng);
        for (bool field : {false, true}) {
            const Gdft<float> G(n1d, Nd * Nd, s.kx, s.ky, s.kz, grid.ix, grid.iy, grid.iz,
                                field ? fm : arma::fvec(Nd * Nd, arma::fill::zeros), s.t);
            FVec y = G.adjoint(G.forward(x, nb), nb);
            const double t = best_of(2, [&] { y = G.adjoint(G.forward(x, nb), nb); });
            (field ? r.dft_field : r.dft) = products / t;
        }
    }
    // A Toeplitz kernel build (one basis kernel, field-free) against ToeplitzNormal's own estimate of it.
    {
        const Samples s = random_samples(n1k, Nk, rng);
        const auto t0 = std::chrono::steady_clock::now();
        {
            const ToeplitzNormal<float> T(Nk, Nk, 1, s.kx, s.ky, s.kz, arma::fvec(), topts);
            device::synchronize();
        }
        const double t = seconds_since(t0);
        const double est = ToeplitzNormal<float>::estimate_kernel_seconds(n1k, Nk, Nk, 1, 1, gpu) +
                           fft_flops(padded_cells(Nk, Nk, 1)) / r.fft;
        r.kernels = t / est;
    }
    // Anything not measurable keeps its fixed rate.
    for (auto pr : {std::make_pair(&r.dft, fixed.dft), std::make_pair(&r.dft_field, fixed.dft_field),
                    std::make_pair(&r.fft, fixed.fft), std::make_pair(&r.taps, fixed.taps),
                    std::make_pair(&r.plan, fixed.plan), std::make_pair(&r.kernels, 1.0),
                    std::make_pair(&r.vector, fixed.vector), std::make_pair(&r.apply, fixed.apply)})
        if (!usable(*pr.first)) *pr.first = pr.second;
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

// The micro-runs' definition: a file written by others (the DFT rate of one image, not of a coil batch) is measured
// again rather than read.
constexpr int kCostModelVersion = 2;

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
          << r.plan << "\nkernels " << r.kernels << "\nvector " << r.vector << "\napply " << r.apply << "\n";
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
                                                      {"vector", &out.vector}, {"apply", &out.apply}};
    for (const auto& fd : fields) {
        const auto it = v.find(fd.first);
        if (it == v.end() || !usable(it->second)) return false;
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
        return dft_cost(P, S.iterations) / dftRate + shared + iterations * double(P.frames.size() * P.nc) * 2 * r.apply;
    const double segs = segment_count(P, S, op, fieldCorrection);
    double t = shared;
    for (std::size_t i = 0; i < P.frames.size(); ++i) {
        const double n1 = double(P.frames[i].kx.n_elem);
        if (op == EncodingOperator::Toeplitz) {
            const double rhs = toeplitz_rhs_by_nufft(P, i, S, fieldCorrection)
                                   ? rhs_nufft_seconds(P, n1, segs + 1, r)  // the rhs's L: for half the error
                                   : rhs_exact_seconds(P, n1, dftRate);
            t += toeplitz_kernel_seconds(P, n1, segs, S.gpu, r) + rhs +
                 iterations * toeplitz_iteration_seconds(P, segs, r);
        } else if (op == EncodingOperator::Fft) {
            const double grid = double(P.fft_grid[0] * P.fft_grid[1] * P.fft_grid[2]);
            t += iterations * segs * double(P.nc) * 2 * (fft_flops(grid) / r.fft + 2 * n1 / r.taps + r.apply);
        } else {  // nufft, timeseg: the plan, then forward and adjoint per iteration, every coil and segment
            const double s = op == EncodingOperator::TimeSeg ? segs : 1;
            t += n1 / r.plan + iterations * s * double(P.nc) * 2 * (nufft_apply_seconds(P, n1, r) + r.apply);
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
    return exact > 0.05 && rhs_nufft_seconds(P, n1, fieldCorrection && !P.field_map.empty() ? segs + 1 : 1, r) < exact;
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
                         : tDft <= kExactFloorSeconds ? "dft under 0.05 s"
                                                      : "dft within 1.2x of the fastest")
                      : (toeplitz ? "toeplitz the fastest"
                                  : (nufft == EncodingOperator::Nufft ? "nufft the fastest" : "timeseg the fastest")));
    return {op, std::string(buf) + why};
}

}  // namespace recon
}  // namespace forge
