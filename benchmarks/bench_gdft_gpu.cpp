// GPU benchmark of the exact DFT: Gdft and GdftR2 forward/adjoint on device-resident data through the
// CudaDftPipeline, the CPU path on the same machine (timed on a subset of samples; its rate per pair is
// what a full run would see), and errors against float64 brute-force sums on a subset of outputs.
//
// A second table, "coil batches", times Gdft<float>::forward_batch / adjoint_batch on nb coils of
// device-resident data at once (same geometries), with the float64 error of the batch's first and last
// vector (the larger is printed) and the kernel that ran (CudaDftPipeline::batch_kernel; 1-3 coils always
// run on the FP32 kernel). Where the plan picks wgmma, the batches of 4 or more are timed a second time
// on a plan made with DftOptions::kernel = DftKernel::mma_sync, for the ratio between the two tensor-core kernels.
//
//   bench_gdft_gpu [--sizes large|small] [--samples N] [--reps R] [--cpu-samples M]
//                  [--coils LIST] [--no-batches]
//
//   --coils LIST   comma-separated coil counts of the batch table (default 1,2,4,8,16,32)
//   --no-batches   skip the batch table
//
// Prints two tables; docs/benchmarks.md records the output.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>

#include "BenchCommon.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

using namespace forge;
using cvec = forgeCol<forgeComplex<float>>;
using forge_bench::median_seconds;

namespace {

struct Geometry {
    uword nx, ny, nz, n1, n2;
    arma::fvec kx, ky, kz, t, ix, iy, iz, field_map;
};

// A stack-of-spirals-like random trajectory over the grid's k-space extent, 25 ms readouts,
// and a smooth field map of +-150 Hz (rad/s).
Geometry make_geometry(uword nx, uword ny, uword nz, uword n1) {
    Geometry g{nx, ny, nz, n1, nx * ny * nz, {}, {}, {}, {}, {}, {}, {}, {}};
    arma::arma_rng::set_seed(1234);
    g.kx = (arma::randu<arma::fvec>(n1) - 0.5f) * float(nx);
    g.ky = (arma::randu<arma::fvec>(n1) - 0.5f) * float(ny);
    g.kz = (arma::randu<arma::fvec>(n1) - 0.5f) * float(nz);
    g.t = arma::linspace<arma::fvec>(0.f, 0.025f, n1);
    g.ix.set_size(g.n2);
    g.iy.set_size(g.n2);
    g.iz.set_size(g.n2);
    g.field_map.set_size(g.n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                g.ix[i] = (float(x) - nx / 2.0f) / nx;
                g.iy[i] = (float(y) - ny / 2.0f) / ny;
                g.iz[i] = (float(z) - nz / 2.0f) / nz;
                g.field_map[i] = float(2 * M_PI * 150.0 * std::sin(2.0 * g.ix[i]) * std::cos(3.0 * g.iy[i] + g.iz[i]));
            }
    return g;
}

double sinc_pg(double x) { return x == 0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x); }

// Float64 brute-force reference for 'rows' evenly spaced outputs; returns ||out - ref|| / ||ref||.
double error_vs_float64(const Geometry& g, bool r2, bool forward, const arma::cx_fvec& in, const arma::cx_fvec& out,
                        uword rows) {
    arma::fvec Gx, Gy, Gz;
    if (r2) GdftR2<float>::field_map_gradients(g.field_map, g.nx, g.ny, g.nz, Gx, Gy, Gz);
    const uword nOut = forward ? g.n1 : g.n2, nIn = forward ? g.n2 : g.n1;
    double num = 0, den = 0;
#pragma omp parallel for reduction(+ : num, den)
    for (long long r = 0; r < (long long)rows; ++r) {
        const uword o = uword(r) * (nOut / rows);
        std::complex<double> s = 0;
        for (uword i = 0; i < nIn; ++i) {
            const uword j = forward ? o : i, k = forward ? i : o;
            const double ph =
                2 * M_PI * (double(g.kx[j]) * g.ix[k] + double(g.ky[j]) * g.iy[k] + double(g.kz[j]) * g.iz[k]) +
                double(g.field_map[k]) * g.t[j];
            double b = 1.0;
            if (r2) {
                b = sinc_pg(double(g.kx[j]) / g.nx + double(Gx[k]) * g.t[j]) *
                    sinc_pg(double(g.ky[j]) / g.ny + double(Gy[k]) * g.t[j]) *
                    sinc_pg(double(g.kz[j]) / g.nz + double(Gz[k]) * g.t[j]);
            }
            s += b * std::complex<double>(in[i]) * std::polar(1.0, forward ? -ph : ph);
        }
        num += std::norm(s - std::complex<double>(out[o]));
        den += std::norm(s);
    }
    return std::sqrt(num / den);
}

struct Row {
    std::string op, dir;
    uword n2, n1;
    double gpuSeconds, gpuRate, gpuErr, cpuRate, cpuErr;
};

template <typename Op>
Op build(const Geometry& g, uword n1, const DftOptions& options = {}) {
    const arma::span s(0, n1 - 1);
    if constexpr (std::is_same<Op, GdftR2<float>>::value) {
        return Op(n1, g.n2, g.kx(s), g.ky(s), g.kz(s), g.ix, g.iy, g.iz, g.field_map, g.t(s), g.nx, g.ny, g.nz,
                  options);
    } else {
        return Op(n1, g.n2, g.kx(s), g.ky(s), g.kz(s), g.ix, g.iy, g.iz, g.field_map, g.t(s), options);
    }
}

template <typename Op>
void bench_op(const char* name, const Geometry& g, int reps, uword cpuSamples, uword errRows, std::vector<Row>& rows) {
    const bool r2 = std::is_same<Op, GdftR2<float>>::value;
    const Op G = build<Op>(g, g.n1);
    arma::arma_rng::set_seed(99);
    const arma::cx_fvec x = arma::randn<arma::cx_fvec>(g.n2), y = arma::randn<arma::cx_fvec>(g.n1);
    cvec dx(x), dy(y);
    dx.put_on_gpu();
    dy.put_on_gpu();
    // CPU path on the same machine, on the first cpuSamples samples (forward: those outputs; adjoint:
    // all pixels summed over those samples), so the pair count is cpuSamples * n2 either way.
    const uword m = std::min(cpuSamples, g.n1);
    const Op Gsub = build<Op>(g, m);
    const arma::cx_fvec ysub = y.subvec(0, m - 1);
    for (int dir = 0; dir < 2; ++dir) {
        const bool fwd = dir == 0;
        cvec out;
        const double t = median_seconds(reps, [&] {
            out = fwd ? G * dx : G / dy;
            device::synchronize();
        });
        out.get_from_gpu();
        const double err = error_vs_float64(g, r2, fwd, fwd ? x : y, out.to_arma(), errRows);
        arma::cx_fvec cpuOut;
        const double tc =
            median_seconds(1, [&] { cpuOut = fwd ? arma::cx_fvec(Gsub * x) : arma::cx_fvec(Gsub / ysub); });
        Geometry gs = g;  // the subset's reference uses the same arrays, truncated
        gs.n1 = m;
        const double errc = error_vs_float64(gs, r2, fwd, fwd ? x : ysub, cpuOut, std::min<uword>(errRows, 32));
        rows.push_back({name, fwd ? "forward" : "adjoint", g.n2, g.n1, t, double(g.n1) * g.n2 / t, err,
                        double(m) * g.n2 / tc, errc});
    }
}

struct BatchRow {
    std::string op, dir, kernel;
    uword n2, n1, nb;
    double gpuSeconds, gpuRate, gpuErr;
};

// Gdft<float> on nb vectors at once (images n2*nb <-> k-space n1*nb), device-resident, fresh random data
// per coil count. Error: float64 reference on 'errRows' outputs of the first and of the last vector of
// the batch (vector b occupies [b*len, (b+1)*len)); the larger of the two is kept.
// kernel: the DftOptions::kernel to make the plan with (automatic: the plan's choice).
void bench_batches(const Geometry& g, int reps, const std::vector<uword>& coils, uword errRows,
                   std::vector<BatchRow>& rows, DftKernel kernel = DftKernel::automatic) {
    DftOptions options;
    options.kernel = kernel;
    const Gdft<float> G = build<Gdft<float>>(g, g.n1, options);
    const std::string batchKernel = G.gpu_plan()->batch_kernel();
    for (const uword nb : coils) {
        arma::arma_rng::set_seed(99 + nb);
        const arma::cx_fvec x = arma::randn<arma::cx_fvec>(g.n2 * nb), y = arma::randn<arma::cx_fvec>(g.n1 * nb);
        cvec dx(x), dy(y);
        dx.put_on_gpu();
        dy.put_on_gpu();
        for (int dir = 0; dir < 2; ++dir) {
            const bool fwd = dir == 0;
            cvec out;
            const double t = median_seconds(reps, [&] {
                out = fwd ? G.forward_batch(dx, nb) : G.adjoint_batch(dy, nb);
                device::synchronize();
            });
            out.get_from_gpu();
            const arma::cx_fvec res = out.to_arma();
            const arma::cx_fvec& in = fwd ? x : y;
            const uword inLen = fwd ? g.n2 : g.n1, outLen = fwd ? g.n1 : g.n2;
            double err = 0;
            for (const uword b : {uword(0), nb - 1}) {
                const arma::cx_fvec inB = in.subvec(b * inLen, (b + 1) * inLen - 1);
                const arma::cx_fvec outB = res.subvec(b * outLen, (b + 1) * outLen - 1);
                err = std::max(err, error_vs_float64(g, false, fwd, inB, outB, errRows));
                if (nb == 1) break;
            }
            rows.push_back({"Gdft", fwd ? "forward" : "adjoint", nb >= 4 ? batchKernel : "fp32", g.n2, g.n1, nb, t,
                            double(nb) * g.n1 * g.n2 / t, err});
        }
    }
}

// "1,2,4" -> {1, 2, 4}; every entry a positive integer, else an empty list.
std::vector<uword> parse_coils(const std::string& list) {
    std::vector<uword> out;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, comma - pos);
        if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return {};
        const unsigned long v = std::strtoul(item.c_str(), nullptr, 10);
        if (v == 0) return {};
        out.push_back(uword(v));
        pos = comma + 1;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string sizes = "large";
    uword samples = 131072, cpuSamples = 2048;
    int reps = 10;
    std::vector<uword> coils = {1, 2, 4, 8, 16, 32};
    bool batches = true;
    const char* usage = "usage: bench_gdft_gpu [--sizes large|small] [--samples N] [--reps R] [--cpu-samples M]\n"
                        "                      [--coils LIST] [--no-batches]\n";
    for (int a = 1; a < argc; ++a) {
        const std::string s = argv[a];
        auto next = [&]() -> std::string {
            if (a + 1 >= argc) {
                std::fprintf(stderr, "bench_gdft_gpu: %s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++a];
        };
        if (s == "--sizes")
            sizes = next();
        else if (s == "--samples")
            samples = std::stoul(next());
        else if (s == "--reps")
            reps = std::max(1, std::stoi(next()));
        else if (s == "--cpu-samples")
            cpuSamples = std::stoul(next());
        else if (s == "--coils") {
            const std::string list = next();
            coils = parse_coils(list);
            if (coils.empty()) {
                std::fprintf(stderr, "bench_gdft_gpu: --coils needs positive integers separated by commas, got '%s'\n",
                             list.c_str());
                return 2;
            }
        } else if (s == "--no-batches")
            batches = false;
        else {
            std::fprintf(stderr, "%s", usage);
            return 2;
        }
    }
    if (!device::available()) {
        std::printf("bench_gdft_gpu: no CUDA device (%s); nothing to measure\n",
                    device::built_with_cuda() ? "none present" : "forge built without CUDA");
        return 0;
    }
    std::vector<std::array<uword, 3>> grids = {{64, 64, 16}, {128, 128, 32}};
    if (sizes == "small") grids = {{32, 32, 8}};
    std::vector<Row> rows;
    std::vector<Geometry> geometries;
    for (const auto& gr : grids) {
        geometries.push_back(make_geometry(gr[0], gr[1], gr[2], samples));
        const Geometry& g = geometries.back();
        const uword errRows = g.n2 > 100000 ? 48 : 128;
        bench_op<Gdft<float>>("Gdft", g, reps, cpuSamples, errRows, rows);
        bench_op<GdftR2<float>>("GdftR2", g, reps, cpuSamples, errRows, rows);
    }
    std::printf("\nGPU: %s | %s | float32 | median of %d runs after a warm-up\n", device::device_name(),
                forge_bench::machine_line().c_str(), reps);
    std::printf("%-7s %-8s %9s %8s %10s %14s %10s %14s %10s %9s\n", "op", "dir", "pixels", "samples", "GPU ms",
                "GPU pairs/s", "GPU err", "CPU pairs/s", "CPU err", "GPU/CPU");
    for (const Row& r : rows) {
        std::printf("%-7s %-8s %9llu %8llu %10.3f %14.3e %10.2e %14.3e %10.2e %9.0f\n", r.op.c_str(), r.dir.c_str(),
                    (unsigned long long)r.n2, (unsigned long long)r.n1, r.gpuSeconds * 1e3, r.gpuRate, r.gpuErr,
                    r.cpuRate, r.cpuErr, r.gpuRate / r.cpuRate);
    }
    std::fflush(stdout);
    if (!batches) return 0;

    // Coil batches: run after the table above is printed, so its timings are those of the one-table run.
    std::vector<BatchRow> brows;
    for (const Geometry& g : geometries) {
        const uword errRows = g.n2 > 100000 ? 48 : 128;
        bench_batches(g, reps, coils, std::max<uword>(8, errRows / 2), brows);
        if (!brows.empty() && brows.back().kernel == "wgmma") {
            std::vector<uword> tensorCoils;
            for (const uword nb : coils)
                if (nb >= 4) tensorCoils.push_back(nb);
            bench_batches(g, reps, tensorCoils, std::max<uword>(8, errRows / 2), brows, DftKernel::mma_sync);
        }
    }
    std::printf("\nCoil batches: Gdft<float> forward_batch / adjoint_batch on nb device-resident vectors | median of "
                "%d runs after a warm-up | err: larger of first and last vector vs float64\n",
                reps);
    std::printf("%-7s %-8s %9s %8s %6s %-9s %10s %14s %10s\n", "op", "dir", "pixels", "samples", "coils", "kernel",
                "GPU ms", "coil-pairs/s", "GPU err");
    for (const BatchRow& r : brows) {
        std::printf("%-7s %-8s %9llu %8llu %6llu %-9s %10.3f %14.3e %10.2e\n", r.op.c_str(), r.dir.c_str(),
                    (unsigned long long)r.n2, (unsigned long long)r.n1, (unsigned long long)r.nb, r.kernel.c_str(),
                    r.gpuSeconds * 1e3, r.gpuRate, r.gpuErr);
    }
    return 0;
}
