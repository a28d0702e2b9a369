// bench_maps: map estimation stage by stage (docs/map-estimation.md), on the host and on the device.
//
// The problem is forge-recon --demo's field-map scan: a fully sampled 2-echo Cartesian gradient echo (TE 2.0 and
// 4.5 ms) of the smooth multi-slice Shepp-Logan phantom with ring coil maps and the two-blob field map
// (forge/Sim), simulated here by FFT of the echo images (the field's evolution during the 4 us-dwell readout is
// left out: the timing does not depend on it) plus 1% complex Gaussian noise. forge-recon estimates the maps of
// such a scan as timed here:
//   1. coil maps from the first echo (estimate_coil_maps):
//        a. low-resolution coil images (low_resolution_coil_images: Gnufft adjoint of the calibration samples),
//        b. per-pixel covariance window sums, leading eigenvectors and mask (coil_maps_from_images);
//   2. the field map (estimate_field_map(scan, settings)):
//        c. the echo images: SENSE reconstructions of both echoes with the estimated maps (reconstruct, operator
//           fft, forge-recon's default stopping rule),
//        d. the penalized estimate from the echo images (estimate_field_map(echoes, ...): start window sums and
//           200 SQS iterations);
//   and the whole of 1 + 2 as forge-recon runs it. "host CPU-s" is the CPU time of every thread: on a shared
//   machine it stays near what unloaded cores need while the wall time grows with the load.
// Each stage is timed on the host (ReconDevice::Host) and, where a device is usable, on it (ReconDevice::GPU);
// the device's maps are compared with the host's: max |S_gpu - S_cpu| inside both masks; the field map from the
// host's echo images on the device against the host's (every pixel: the same arithmetic), and from each side's
// own echo images inside both coil-map masks (RMS and max) and over every pixel. Outside the masks the echoes
// vanish or hold only the reconstructions' rounding: the start's angle there is that rounding's, the penalty
// carries it on, so two reconstructions equal to float rounding give maps there that differ by up to pi / dt.
//
// Usage: bench_maps [N slices coils] ...     (default: 128 16 8 and 256 4 16, forge-recon --demo's and the
//                                             256x256 x 4-slice x 16-coil spiral's sizes)
//        bench_maps --host-only ...           (skip the device even when one is usable)
//        bench_maps --write-cfl PREFIX N slices coils   (writes the first echo's k-space of each slice as BART's
//                                             PREFIX_<slice>.cfl/.hdr, N x N x 1 x coils, and exits: the input of
//                                             benchmarks/bench_maps_bart.sh, which times BART's ecalib and caldir)
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <armadillo>

#include "BenchCommon.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Solvers/recon_solve.h"

namespace {

using cxf = std::complex<float>;
using forge::ReconDevice;
using forge::recon::ReconProblem;
using forge_bench::fmt;

struct Size {
    std::size_t N, slices, coils;
};

// The 2-echo Cartesian field-map scan of forge-recon --demo's phantom, maps and field (see above).
ReconProblem fieldmap_scan(const Size& z) {
    const std::size_t N = z.N, n2 = N * N, nc = z.coils;
    const double te[2] = {2.0e-3, 4.5e-3}, dwell = 4e-6;
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.Nz = 1;
    P.nslices = z.slices;
    P.nframes = 2;
    P.nc = nc;
    P.source = "bench_maps field-map scan";
    forge::recon::set_pixel_grid(P);
    std::mt19937 rng(12345);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    for (std::size_t e = 0; e < 2; ++e)
        for (std::size_t s = 0; s < z.slices; ++s) {
            const arma::fvec truth = forge::sim::smooth_shepp_logan_slice(N, s, z.slices);
            const arma::fvec fm = forge::sim::two_blob_field_map(N, s);
            const arma::cx_fvec maps = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc, s), nc);
            forge::recon::ReconFrame f;
            f.slice = s;
            f.frame = e;
            f.contrast = e;
            f.echo_time = te[e];
            f.kx.set_size(n2);
            f.ky.set_size(n2);
            f.kz.zeros(n2);
            f.t.set_size(n2);
            for (std::size_t b = 0; b < N; ++b)  // line (k_y), then sample (k_x)
                for (std::size_t a = 0; a < N; ++a) {
                    f.kx[a + N * b] = float(double(a) - double(N / 2));
                    f.ky[a + N * b] = float(double(b) - double(N / 2));
                    f.t[a + N * b] = float(te[e] + (double(a) - double(N / 2)) * dwell);
                }
            f.y.set_size(n2 * nc);
            double rms = 0;
            for (std::size_t c = 0; c < nc; ++c) {
                arma::cx_fmat img(N, N);  // rows x, columns y
                for (std::size_t k = 0; k < n2; ++k)
                    img[k] = maps[c * n2 + k] * truth[k] * std::polar(1.0f, float(-double(fm[k]) * te[e]));
                const arma::cx_fmat F = arma::fft2(img);
                // pixel x at (x - N/2)/N: the centred DFT is the plain one times (-1)^(kx + ky)
                for (std::size_t b = 0; b < N; ++b)
                    for (std::size_t a = 0; a < N; ++a) {
                        const long kx = long(a) - long(N / 2), ky = long(b) - long(N / 2);
                        const cxf v = F((kx + long(N)) % long(N), (ky + long(N)) % long(N));
                        f.y[c * n2 + a + N * b] = ((kx + ky) % 2 != 0) ? -v : v;
                        rms += std::norm(v);
                    }
            }
            const float sigma = float(0.01 * std::sqrt(rms / double(n2 * nc)));
            for (auto& v : f.y) v += cxf(sigma * gauss(rng), sigma * gauss(rng));
            P.frames.push_back(std::move(f));
        }
    P.fft_grid = forge::recon::fft_grid(P);
    return P;
}

// The echo reconstructions' settings as forge-recon makes them (apps/forge-recon/Maps.cpp).
forge::recon::ReconSettings echo_settings(const ReconProblem& P, bool gpu) {
    forge::recon::ReconSettings R;
    R.op = forge::recon::choose_operator(P, forge::recon::kDefaultIterations, gpu).op;
    R.gpu = gpu;
    return R;
}

struct Time {
    double wall = 0, cpu = 0;  // seconds; CPU: every thread of the process
};

struct StageResult {
    Time lowres, eig, echoes, sqs, total;
    std::vector<arma::cx_fvec> smaps;
    std::vector<arma::uvec> masks;
    std::vector<arma::fvec> fieldmaps;
    std::vector<arma::cx_fvec> echoImages;  // stage c's images, echo-major then slice
    std::size_t pcgIterations = 0;
    double echoSetup = 0, echoSolve = 0;  // ReconResult::setup_seconds, solve_seconds of stage c
};

template <typename F>
Time seconds(F&& f) {
    forge::device::synchronize();
    const double c0 = forge_bench::cpu_seconds();
    forge_bench::CpuTimer t;
    f();
    forge::device::synchronize();
    return {t.seconds(), forge_bench::cpu_seconds() - c0};
}

StageResult run_stages(const ReconProblem& scan, ReconDevice where) {
    const bool gpu = where == ReconDevice::GPU;
    forge::recon::CoilMapOptions co;
    co.device = where;
    forge::recon::FieldMapOptions fo;
    fo.device = where;
    StageResult r;
    // stage by stage, as estimate_coil_maps and estimate_field_map(scan, settings) run them
    std::vector<arma::cx_fmat> lowres(scan.nslices);
    r.lowres = seconds([&] {
        for (std::size_t s = 0; s < scan.nslices; ++s)
            lowres[s] = forge::recon::low_resolution_coil_images(scan, scan.frames[s], co);
    });
    r.smaps.resize(scan.nslices);
    r.masks.resize(scan.nslices);
    r.eig = seconds([&] {
        for (std::size_t s = 0; s < scan.nslices; ++s)
            r.smaps[s] = forge::recon::coil_maps_from_images(lowres[s], scan.Nx, scan.Ny, scan.Nz, co, &r.masks[s]);
    });
    ReconProblem E = scan;
    E.smaps = r.smaps;
    forge::recon::ReconSettings R = echo_settings(E, gpu);
    R.on_solve_end = [&](const std::string&, const forge::SolverReport& rep, std::size_t) {
        r.pcgIterations += rep.iterations;
    };
    forge::recon::ReconResult echoes;
    r.echoes = seconds([&] { echoes = forge::recon::reconstruct(E, false, R, "field map echo"); });
    r.echoSetup = echoes.setup_seconds;
    r.echoSolve = echoes.solve_seconds;
    r.echoImages = echoes.complex_image;
    r.fieldmaps.resize(scan.nslices);
    r.sqs = seconds([&] {
        for (std::size_t s = 0; s < scan.nslices; ++s)
            r.fieldmaps[s] =
                forge::recon::estimate_field_map({echoes.complex_image[s], echoes.complex_image[scan.nslices + s]},
                                                 {scan.frames[0].echo_time, scan.frames[scan.nslices].echo_time},
                                                 scan.Nx, scan.Ny, scan.Nz, fo);
    });
    // the whole, as forge-recon runs it
    r.total = seconds([&] {
        ReconProblem PF = scan;
        PF.smaps = forge::recon::estimate_coil_maps(PF, co);
        R.on_solve_end = nullptr;
        (void)forge::recon::estimate_field_map(PF, echo_settings(PF, gpu), fo);
    });
    return r;
}

// max |a - b| over the pixels inside both masks, every coil.
double max_map_difference(const StageResult& a, const StageResult& b, std::size_t n2, std::size_t nc,
                          std::size_t* maskDiffer) {
    double d = 0;
    *maskDiffer = 0;
    for (std::size_t s = 0; s < a.smaps.size(); ++s)
        for (std::size_t k = 0; k < n2; ++k) {
            if (a.masks[s][k] != b.masks[s][k]) ++*maskDiffer;
            if (!a.masks[s][k] || !b.masks[s][k]) continue;
            for (std::size_t c = 0; c < nc; ++c)
                d = std::max(d, double(std::abs(a.smaps[s][c * n2 + k] - b.smaps[s][c * n2 + k])));
        }
    return d;
}

void run_size(const Size& z, bool device) {
    std::printf("\n%zux%zu x %zu slices x %zu coils (field-map scan: 2 echoes, %zu samples per coil and echo)\n", z.N,
                z.N, z.slices, z.coils, z.N * z.N);
    const ReconProblem scan = fieldmap_scan(z);
    const StageResult host = run_stages(scan, ReconDevice::Host);
    StageResult gpu;
    double gpuFirst = 0;
    if (device) {  // the first run in the process also pays for the CUDA context, cuFFT plans and kernel loading
        gpuFirst = run_stages(scan, ReconDevice::GPU).total.wall;
        gpu = run_stages(scan, ReconDevice::GPU);
    }
    forge_bench::Table t({"stage", "host s", "host CPU-s", device ? "device s" : "device s (no device)", "speed-up"});
    auto row = [&](const char* name, Time h, Time g) {
        t.add({name, fmt("%.3f", h.wall), fmt("%.3f", h.cpu), device ? fmt("%.3f", g.wall) : "-",
               device && g.wall > 0 ? fmt("%.1fx", h.wall / g.wall) : "-"});
    };
    row("a. low-resolution coil images (Gnufft adjoint)", host.lowres, gpu.lowres);
    row("b. covariance window sums + eigenvectors + mask", host.eig, gpu.eig);
    row("c. echo reconstructions (SENSE, PCG)", host.echoes, gpu.echoes);
    row("d. field map: start + 200 SQS iterations", host.sqs, gpu.sqs);
    row("coil maps + field map, as forge-recon runs them", host.total, gpu.total);
    t.print();
    std::printf("echo reconstructions (c): %zu solves; host %zu PCG iterations, operator set-up %.3f s, solves %.3f s",
                2 * z.slices, host.pcgIterations, host.echoSetup, host.echoSolve);
    if (device)
        std::printf("; device %zu PCG iterations, set-up %.3f s, solves %.3f s", gpu.pcgIterations, gpu.echoSetup,
                    gpu.echoSolve);
    std::printf("\n");
    if (device)
        std::printf("device: the table's second run in this process; the first (CUDA context, plans) took %.3f s "
                    "for the whole\n",
                    gpuFirst);
    if (device) {
        std::size_t maskDiffer = 0;
        const double dS = max_map_difference(host, gpu, z.N * z.N, z.coils, &maskDiffer);
        // Hz: the device's map from the host's echo images; each side's own inside both masks and everywhere
        double same = 0, inMax = 0, inSq = 0, allMax = 0;
        std::size_t inCount = 0;
        forge::recon::FieldMapOptions fo;
        fo.device = ReconDevice::GPU;
        for (std::size_t s = 0; s < z.slices; ++s) {
            const arma::fvec wd =
                forge::recon::estimate_field_map({host.echoImages[s], host.echoImages[z.slices + s]},
                                                 {scan.frames[0].echo_time, scan.frames[z.slices].echo_time}, z.N, z.N,
                                                 1, fo);
            same = std::max(same, double(arma::abs(wd - host.fieldmaps[s]).max()) / (2 * M_PI));
            for (std::size_t k = 0; k < z.N * z.N; ++k) {
                const double d = std::fabs(double(gpu.fieldmaps[s][k]) - double(host.fieldmaps[s][k])) / (2 * M_PI);
                allMax = std::max(allMax, d);
                if (!host.masks[s][k] || !gpu.masks[s][k]) continue;
                inMax = std::max(inMax, d);
                inSq += d * d;
                ++inCount;
            }
        }
        std::printf("device vs host: coil maps max |S_gpu - S_cpu| %.2e (mask differs at %zu pixels)\n", dS,
                    maskDiffer);
        std::printf("device vs host: field map from the host's echo images max |w_gpu - w_cpu| %.2e Hz (every "
                    "pixel); from each side's own echo images, inside both coil-map masks, RMS %.2e Hz max %.2e Hz "
                    "(every pixel: max %.2e Hz, where the echoes vanish)\n",
                    same, std::sqrt(inSq / double(std::max<std::size_t>(inCount, 1))), inMax, allMax);
    }
}

}  // namespace

// BART's .hdr/.cfl pair of the first echo's k-space of every slice (centred: k = 0 at index N/2, as the frames'
// sample order already is).
int write_cfl(const std::string& prefix, const Size& z) {
    const ReconProblem scan = fieldmap_scan(z);
    for (std::size_t s = 0; s < z.slices; ++s) {
        const std::string name = prefix + "_" + std::to_string(s);
        std::FILE* h = std::fopen((name + ".hdr").c_str(), "w");
        std::FILE* d = std::fopen((name + ".cfl").c_str(), "wb");
        if (!h || !d) {
            std::fprintf(stderr, "bench_maps: cannot write %s.hdr/.cfl\n", name.c_str());
            if (h) std::fclose(h);
            if (d) std::fclose(d);
            return 1;
        }
        std::fprintf(h, "# Dimensions\n%zu %zu 1 %zu 1 1 1 1 1 1 1 1 1 1 1 1\n", z.N, z.N, z.coils);
        const arma::cx_fvec& y = scan.frames[s].y;  // echo 0, slice s: coil-major, x fastest
        const bool ok = std::fwrite(y.memptr(), sizeof(cxf), y.n_elem, d) == y.n_elem;
        std::fclose(h);
        if (std::fclose(d) != 0 || !ok) {
            std::fprintf(stderr, "bench_maps: writing %s.cfl failed\n", name.c_str());
            return 1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    bool hostOnly = false;
    std::string cflPrefix;
    std::vector<std::size_t> nums;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--host-only") {
            hostOnly = true;
        } else if (a == "--write-cfl" && i + 1 < argc) {
            cflPrefix = argv[++i];
        } else {
            char* end = nullptr;
            const unsigned long v = std::strtoul(argv[i], &end, 10);
            if (!end || *end || v == 0) {
                std::fprintf(stderr,
                             "bench_maps: '%s' is not a positive size (usage: bench_maps [--host-only] "
                             "[N slices coils] ...)\n",
                             argv[i]);
                return 2;
            }
            nums.push_back(v);
        }
    }
    if (nums.size() % 3 != 0) {
        std::fprintf(stderr, "bench_maps: sizes come in threes: N slices coils\n");
        return 2;
    }
    if (nums.empty()) nums = {128, 16, 8, 256, 4, 16};
    if (!cflPrefix.empty()) return write_cfl(cflPrefix, {nums[0], nums[1], nums[2]});
    const bool device = !hostOnly && forge::device::available();
    std::printf("bench_maps: %s; device: %s\n", forge_bench::machine_line().c_str(),
                device ? forge::device::device_name() : (hostOnly ? "not used (--host-only)" : "none"));
    for (std::size_t i = 0; i < nums.size(); i += 3) run_size({nums[i], nums[i + 1], nums[i + 2]}, device);
    return 0;
}
