// bench_toeplitz: 10 PCG iterations of field-corrected SENSE, exact path (every iteration applies G and G^H,
// solve_pwls_pcg) against the Toeplitz path (kernels and the right-hand side G^H W y built once, then every
// iteration applies the normal operator by FFTs, solve_pwls_pcg_normal), in one run. The Toeplitz path is
// forge-recon's: the kernels are the normal of a time-segmented NUFFT (its segments shared), which also gives the
// right-hand side.
//
// Problem (SpiralProblem.h): 8 coils, stack of spirals with 10 ms readouts, +-100 Hz field map, QuadPenalty.
// Columns: time segments L chosen for a normal-operator error of 1e-3 (min-max), kernels and the DFTs that
// built them, kernel memory, kernel build and right-hand side times, time per iteration of each path, the
// 10-iteration totals (Toeplitz: build + right-hand side + iterations), and the NRMSE between the two solutions.
// The exact path is timed on 'exactIters' iterations where ten would take minutes; its 10-iteration total is
// then extrapolated (marked ~) and the solutions are compared after that many iterations.
// A second table times one apply of the Toeplitz normal operator to the nc coil images alone (the batch SENSE's
// normal hands it), with the bytes that apply moves at least (docs/toeplitz.md, "Memory traffic of an apply") and
// the rate they imply; on the GPU against the rate of a device-to-device copy measured here and the memory's
// datasheet peak (known devices, or --peak-tbs).
// Usage: bench_toeplitz [cpu|quick|apply] [--threads N] [--repeats R] [--cpu-size NX,NY,NZ,SAMPLES] [--peak-tbs B]
//   cpu: only the CPU table, as without a GPU; quick: no 2,000,000-sample row; apply: only the apply table of the
//   128x128x32 8-coil problem (on the GPU when present; with cpu, on the host), for profilers and sanitizers;
//   --threads: OpenMP threads (default: all); --repeats: each path's solve timed R times, the median reported
//   (default 1; for a shared machine);
//   --cpu-size: the CPU row's grid and samples per coil (default 96,96,1,16384); --peak-tbs: the GPU memory's
//   peak in TB/s for the fraction column when the device is not one the program knows.
// The first line names the CPU, the threads and the load average, the last the load average at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <armadillo>

#include "BenchCommon.h"
#include "SpiralProblem.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"  // device_chunk_bytes()
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

namespace {

using FVec = forgeCol<forgeComplex<float>>;
using forge_bench::fmt;

double seconds(const std::function<void()>& f) {
    forge::device::synchronize();
    const forge_bench::CpuTimer t;
    f();
    forge::device::synchronize();
    return t.seconds();
}

int g_repeats = 1;      // --repeats
double g_peak_tbs = 0;  // --peak-tbs (0: from the device name)

// Median of g_repeats timings of f.
double median_seconds(const std::function<void()>& f) {
    std::vector<double> t;
    for (int r = 0; r < g_repeats; ++r) t.push_back(seconds(f));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Bytes one device apply of T to nv vectors moves: each stage reads and writes its data once, cuFFT one pass per
// axis it transforms (docs/toeplitz.md, "Memory traffic of an apply", has the table per stage). The host apply
// keeps the padded slabs in cache and is not bound by this count.
double apply_bytes(const forge::ToeplitzNormal<float>& T, arma::uword nv) {
    const double c = sizeof(std::complex<float>), n2 = double(T.domain_size()), S = double(T.segments() + 1);
    const double P = double(T.padded_size(0)) * double(T.padded_size(1)) * double(T.padded_size(2));
    const double G = double(nv) * S, grids = G * P * c, kernels = double(T.kernel_count()) * P * c;
    // The column axis: z in 3D, y in 2D (the device apply runs an Nx x Ny grid as Nx x 1 x Ny); none in 1D.
    const bool zAxis = T.padded_size(2) > 1, column = zAxis || T.padded_size(1) > 1;
    const double h = column ? 0.5 : 1.0;                      // the planes the image reaches
    const double phases = T.segments() > 0 ? S * n2 * c : 0;  // b_l, read by the pad and by the crop
    const double pad = double(nv) * n2 * c + phases + h * grids;
    const double axes = double(T.padded_size(0) > 1) + double(zAxis && T.padded_size(1) > 1);
    const double planes = axes * 2 * h * grids;     // forward over the plane: a pass per axis, read and write
    const double columns = column ? 2 * grids : 0;  // forward along the column axis, out of place
    // The kernels are read once per chunk of vectors (DeviceApply.cpp: at most device_chunk_bytes() of grids).
    const double most = std::max(1.0, std::floor(forge::toeplitz::device_chunk_bytes() / (S * P * c)));
    const double chunks = std::ceil(double(nv) / std::min(double(nv), most));
    const double mix = chunks * kernels + 2 * grids;
    const double crop = G * n2 * c + phases + double(nv) * n2 * c;
    return pad + planes + columns + mix + columns + planes + crop;
}

// The GPU memory's datasheet peak in bytes/s for known devices (0: unknown), with where the figure comes from.
double datasheet_peak(const std::string& name, std::string& source) {
    struct Known {
        const char* match;
        double tbs;
        const char* source;
    };
    // Longest matches first: "H100 PCIe" before "H100".
    const Known known[] = {{"H100 PCIe", 2.0, "NVIDIA H100 datasheet (PCIe: 2.0 TB/s)"},
                           {"H100 NVL", 3.9, "NVIDIA H100 datasheet (NVL: 3.9 TB/s)"},
                           {"H100", 3.35, "NVIDIA H100 datasheet (SXM5, 80 GB HBM3: 3.35 TB/s)"},
                           {"H200", 4.8, "NVIDIA H200 datasheet (141 GB HBM3e: 4.8 TB/s)"},
                           {"A100-SXM4-80GB", 2.039, "NVIDIA A100 datasheet (SXM4 80 GB: 2.039 TB/s)"}};
    if (g_peak_tbs > 0) {
        source = "--peak-tbs";
        return g_peak_tbs * 1e12;
    }
    for (const Known& k : known)
        if (name.find(k.match) != std::string::npos) {
            source = k.source;
            return k.tbs * 1e12;
        }
    source = "unknown device: pass --peak-tbs";
    return 0;
}

// Bytes per second of a device-to-device copy of 1 GiB (read and write counted): the memory's practical limit.
double copy_rate() {
    const arma::uword n = arma::uword(1) << 27;  // complex floats: 1 GiB
    FVec a = FVec::device_uninitialized(n), b = FVec::device_uninitialized(n);
    forge::device::copy_on_device(b.device_memptr(), a.device_memptr(), n * sizeof(forgeComplex<float>));
    const int reps = 10;
    const double t = seconds([&] {
        for (int r = 0; r < reps; ++r)
            forge::device::copy_on_device(b.device_memptr(), a.device_memptr(), n * sizeof(forgeComplex<float>));
    });
    return 2.0 * double(n) * sizeof(forgeComplex<float>) * reps / t;
}

// One apply of T to nc random images (median over g_repeats timings of 10 applies, after one untimed).
void time_apply(forge_bench::Table& table, const forge::ToeplitzNormal<float>& T, arma::uword nc, bool gpu) {
    const arma::uword n2 = T.domain_size();
    FVec x(arma::cx_fvec(arma::randn<arma::cx_fvec>(n2 * nc)));
    if (gpu) x.put_on_gpu();
    FVec y = T.forward(x, nc);
    const int applies = 10;
    const double t = median_seconds([&] {
                         for (int r = 0; r < applies; ++r) y = T.forward(x, nc);
                     }) /
                     applies;
    const double bytes = apply_bytes(T, nc), rate = bytes / t;
    std::string bytesCol = "-", rateCol = "-", copy = "-", peak = "-";  // the host apply is not bound by them
    if (gpu) {
        bytesCol = fmt("%.2f", bytes / 1e9);
        rateCol = fmt("%.0f", rate / 1e9);
        std::string source;
        const double c = copy_rate(), p = datasheet_peak(forge::device::device_name(), source);
        copy = fmt("%.0f%% of %.2f TB/s", 100 * rate / c, c / 1e12);
        peak = p > 0 ? fmt("%.0f%% of %.2f TB/s (", 100 * rate / p, p / 1e12) + source + ")" : source;
    }
    const forge::ImageGrid g = T.domain_shape();
    table.add({fmt("%llux%llux%llu", (unsigned long long)g.nx, (unsigned long long)g.ny, (unsigned long long)g.nz),
               fmt("%llu", (unsigned long long)nc), fmt("%llu", (unsigned long long)T.segments()), fmt("%.3f", 1e3 * t),
               bytesCol, rateCol, copy, peak});
}

std::vector<std::string> apply_header() {
    return {"pixels",           "coils", "L", "apply [ms]", "bytes (model) [GB]", "rate [GB/s]", "of copy rate",
            "of datasheet peak"};
}

void run(forge_bench::Table& table, forge_bench::Table& applyTable, arma::uword Nx, arma::uword Ny, arma::uword Nz,
         arma::uword n1, arma::uword nc, arma::uword exactIters, bool gpu) {
    const forge_bench::Problem p = forge_bench::make_problem(Nx, Ny, Nz, n1, nc);
    auto G = std::make_shared<forge::Gdft<float>>(n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.field_map, p.t);
    const forge::SENSE<float> S(G, p.maps, nc);
    const arma::uword niter = 10;
    const forge::QuadPenalty<float> R(Nx, Ny, Nz, 1e-3f * float(n1));
    FVec x0(arma::cx_fvec(p.n2, arma::fill::zeros)), image(p.image);
    forgeCol<float> W(arma::fvec(n1 * nc, arma::fill::ones));
    if (gpu) {
        x0.put_on_gpu();
        image.put_on_gpu();
        W.put_on_gpu();
        S.prepare_device();
    }
    const FVec y = S * image;

    // Exact path.
    FVec exact;
    const double tExact = median_seconds([&] { exact = forge::solve_pwls_pcg<float>(x0, S, W, y, R, exactIters); });
    const double perExact = tExact / double(exactIters);

    // Toeplitz path as forge-recon takes it: a time-segmented NUFFT and the Toeplitz normal of it (sharing its
    // segments), the right-hand side by that NUFFT's adjoint, then the iterations on the normal.
    const arma::uword L = forge::ToeplitzNormal<float>::choose_segments(p.field_map, p.t, 1e-3);
    using SegmentedNufft = forge::TimeSegmentation<float, forge::Gnufft<float>>;
    std::shared_ptr<const SegmentedNufft> Gts;
    std::shared_ptr<forge::ToeplitzNormal<float>> T;
    FVec b, fast, fastAtExactIters;
    double tBuild = seconds([&] {
        forge::ToeplitzOptions o;
        o.build = gpu ? forge::KernelBuild::Auto : forge::KernelBuild::Host;
        Gts = std::make_shared<const SegmentedNufft>(std::make_shared<const forge::Gnufft<float>>(n1, Nx, Ny, Nz, p.kx,
                                                                                                  p.ky, p.kz),
                                                     p.field_map, p.t, L, forge::TSInterp::MinMax);
        T = std::make_shared<forge::ToeplitzNormal<float>>(forge::ImageGrid(Nx, Ny, Nz),
                                                           forge::Trajectory<float>(p.kx, p.ky, p.kz, p.t),
                                                           arma::fvec(), *Gts, o);
        if (gpu) {
            T->prepare_device();
            Gts->prepare_device();
        }
    });
    const forge::SENSE<float> St(forge::with_normal<float>(Gts, T), p.maps, nc);
    const forge::NormalOf<float> N(forge::share(St));
    if (gpu) N.prepare_device();
    const double tRhs = seconds([&] { b = St.adjoint(y); });  // W = 1: b = S^H y by the time-segmented NUFFT
    forge::device::reset_transfer_stats();
    const double tIter = median_seconds([&] { fast = forge::solve_pwls_pcg_normal<float>(x0, N, b, R, niter); });
    const auto st = forge::device::transfer_stats();
    time_apply(applyTable, *T, nc, gpu);
    if (exactIters != niter) fastAtExactIters = forge::solve_pwls_pcg_normal<float>(x0, N, b, R, exactIters);
    const double perFast = tIter / double(niter);
    const double totalFast = tBuild + tRhs + tIter;
    const double totalExact = perExact * double(niter);

    FVec a = exact, c = exactIters == niter ? fast : fastAtExactIters;
    if (gpu) {
        a.get_from_gpu();
        c.get_from_gpu();
    }
    const double nrmse = arma::norm(c.to_arma() - a.to_arma()) / arma::norm(a.to_arma());
    const std::string approx = exactIters == niter ? "" : "~";
    table.add(
        {fmt("%llux%llux%llu", (unsigned long long)Nx, (unsigned long long)Ny, (unsigned long long)Nz),
         fmt("%llu x %llu", (unsigned long long)nc, (unsigned long long)n1), fmt("%llu", (unsigned long long)L),
         fmt("%llu / %llu", (unsigned long long)T->kernel_count(), (unsigned long long)T->dft_count()),
         fmt("%.2f", T->kernel_bytes() / double(1 << 30)),
         fmt("%.3f (%.3f / %.3f / %.3f)", tBuild, T->build_times().total, T->build_times().pair_data,
             T->build_times().dft),
         fmt("%.3f", tRhs), fmt("%.4f", perExact), fmt("%.4f", perFast), fmt("%.0fx", perExact / perFast),
         approx + fmt("%.2f", totalExact), fmt("%.2f", totalFast), approx + fmt("%.1fx", totalExact / totalFast),
         fmt("%.1e (%llu it)", nrmse, (unsigned long long)exactIters),
         fmt("%llu/%llu", (unsigned long long)st.host_to_device_count, (unsigned long long)st.device_to_host_count)});
}

// Only the operator and its apply (the 'apply' mode: for profilers and sanitizers, no exact path, no solve).
void run_apply_only(forge_bench::Table& applyTable, arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1,
                    arma::uword nc, bool gpu) {
    const forge_bench::Problem p = forge_bench::make_problem(Nx, Ny, Nz, n1, nc);
    const arma::uword L = forge::ToeplitzNormal<float>::choose_segments(p.field_map, p.t, 1e-3);
    forge::ToeplitzOptions o;
    o.build = gpu ? forge::KernelBuild::Auto : forge::KernelBuild::Host;
    const forge::ToeplitzNormal<float> T(forge::ImageGrid(Nx, Ny, Nz), forge::Trajectory<float>(p.kx, p.ky, p.kz, p.t),
                                         arma::fvec(), p.field_map, L, forge::TSInterp::MinMax, o);
    if (gpu) T.prepare_device();
    time_apply(applyTable, T, nc, gpu);
}

std::vector<std::string> header() {
    return {"pixels",
            "coils x samples",
            "L",
            "kernels / DFTs",
            "kernels [GiB]",
            "build (kernels / pair data / DFTs) [s]",
            "G^H W y (NUFFT) [s]",
            "exact / iter [s]",
            "Toeplitz / iter [s]",
            "per iter",
            "exact 10 it [s]",
            "Toeplitz 10 it [s]",
            "end to end",
            "NRMSE solutions",
            "H2D/D2H in solve"};
}

}  // namespace

int usage(int code) {
    std::fprintf(code ? stderr : stdout,
                 "usage: bench_toeplitz [cpu|quick|apply] [--threads N] [--repeats R] [--cpu-size NX,NY,NZ,SAMPLES] "
                 "[--peak-tbs B]\n");
    return code;
}

int main(int argc, char** argv) {
    bool cpuOnly = false, quick = false, applyOnly = false;
    unsigned long long cpuSize[4] = {96, 96, 1, 16384};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "cpu") {
            cpuOnly = true;
        } else if (a == "quick") {
            quick = true;
        } else if (a == "apply") {
            applyOnly = true;
        } else if (a == "--threads" && value) {
            const int n = std::atoi(value);
            if (n < 1) {
                std::fprintf(stderr, "bench_toeplitz: --threads must be at least 1, got '%s'\n", value);
                return 2;
            }
            forge_bench::set_threads(n);
            ++i;
        } else if (a == "--repeats" && value) {
            g_repeats = std::atoi(value);
            if (g_repeats < 1) {
                std::fprintf(stderr, "bench_toeplitz: --repeats must be at least 1, got '%s'\n", value);
                return 2;
            }
            ++i;
        } else if (a == "--cpu-size" && value) {
            if (std::sscanf(value, "%llu,%llu,%llu,%llu", &cpuSize[0], &cpuSize[1], &cpuSize[2], &cpuSize[3]) != 4 ||
                !cpuSize[0] || !cpuSize[1] || !cpuSize[2] || !cpuSize[3]) {
                std::fprintf(stderr, "bench_toeplitz: --cpu-size takes NX,NY,NZ,SAMPLES (each >= 1), got '%s'\n",
                             value);
                return 2;
            }
            ++i;
        } else if (a == "--peak-tbs" && value) {
            g_peak_tbs = std::atof(value);
            if (!(g_peak_tbs > 0)) {
                std::fprintf(stderr, "bench_toeplitz: --peak-tbs must be a positive number of TB/s, got '%s'\n", value);
                return 2;
            }
            ++i;
        } else if (a == "-h" || a == "--help") {
            return usage(0);
        } else {
            std::fprintf(stderr, "bench_toeplitz: unknown or incomplete argument '%s'\n", a.c_str());
            return usage(2);
        }
    }
    const std::string repeats = g_repeats > 1 ? ", median of " + std::to_string(g_repeats) + " solves per path" : "";
    std::printf("bench_toeplitz: field-corrected SENSE, exact vs Toeplitz normal operator; %s%s\n",
                forge_bench::machine_line().c_str(), repeats.c_str());
    const bool gpuPresent = forge::device::built_with_cuda() && forge::device::available();
    if (applyOnly) {
        forge_bench::Table t(apply_header());
        if (gpuPresent) std::printf("device: %s\n", forge::device::device_name());
        run_apply_only(t, 128, 128, 32, 131072, 8, gpuPresent && !cpuOnly);
        std::printf("one Toeplitz apply to the coil images (%s)\n", gpuPresent && !cpuOnly ? "GPU" : "CPU");
        t.print();
        return 0;
    }
    if (!cpuOnly && gpuPresent) {
        std::printf("device: %s\n", forge::device::device_name());
        forge_bench::Table gpu(header()), gpuApply(apply_header());
        run(gpu, gpuApply, 128, 128, 32, 131072, 8, 10, true);
        gpu.print();
        if (!quick) {
            run(gpu, gpuApply, 128, 128, 64, 2000000, 8, 2, true);
            std::printf("\n");
            gpu.print();
        }
        std::printf("\nGPU: one Toeplitz apply to the coil images\n");
        gpuApply.print();
    } else if (!cpuOnly) {
        std::printf("bench_toeplitz: SKIPPED the GPU table (%s)\n",
                    forge::device::built_with_cuda() ? "no CUDA device present" : "forge built without CUDA");
    }
    std::printf("\nCPU (%d OpenMP threads)\n", forge_bench::max_threads());
    forge_bench::Table cpu(header()), cpuApply(apply_header());
    run(cpu, cpuApply, cpuSize[0], cpuSize[1], cpuSize[2], cpuSize[3], 8, 10, false);
    cpu.print();
    std::printf("\nCPU: one Toeplitz apply to the coil images\n");
    cpuApply.print();
    std::printf("load average at the end %.2f\n", forge_bench::load_average());
    return 0;
}
