// bench_nufft: Gnufft forward/adjoint on the CPU and GPU (2D 256x256 with 131072 samples, 3D 128x128x64 with
// 2M) at requested tolerances 1e-3, 1e-4, 1e-5 (NufftOptions::for_tolerance), GPU Gdft on the same 3D problem,
// and Gdft vs TimeSegmentation(Gnufft) for one field-corrected spiral problem.
//   bench_nufft [--quick] [--no-gdft] [--tols 1e-3,1e-4,1e-5]
//   (--quick: 400000 3D samples; --no-gdft: skip the slow exact DFTs)
// Prints one table row per measurement: device, case, requested tolerance, kernel width, samples, plan
// seconds (constructor, including the GPU sort and upload; on the CPU row of a GPU operator "-", as its host plan is
// made by the first host transform: see its split row), seconds per transform, and the relative error of
// forward and adjoint against float64 exact sums (2000 samples forward, 256 pixels adjoint). The "set_points" rows:
// the same operator given new samples (the mirrored trajectory) by Gnufft::set_points, its plan column the seconds
// set_points took (host sort and GPU re-sort; the constructor's FFT plans and GPU workspace are kept); "set_points
// (k on GPU)": the same from forgeCols already on the GPU (no upload).
// "plan (k on GPU)": a new operator constructed from those forgeCols, its plan column the constructor's seconds (the
// mean of 3 after one more; its transform columns repeat the row above). "plan split" rows: Gnufft::plan_times() after
// the row above them (host check and sort, k upload, device sort, the rest of the GPU plan, FFTW plans). "normal loop
// incl. plan" rows: a fresh operator and 10 x (forward, adjoint), as a solver runs it (the GPU loop on device vectors;
// the CPU loop in 2D and only where there is no GPU).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "BenchCommon.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge;
using FVec = forgeCol<forgeComplex<float>>;
namespace {
constexpr double kPi = 3.14159265358979323846;
std::mt19937_64 rng(12345);

double seconds(const std::function<void()>& f, int reps) {
    if (reps > 1) f();  // warm-up
    device::synchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    device::synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}
double rel(const arma::cx_fvec& a, const arma::cx_fvec& b) {
    return arma::norm(arma::conv_to<arma::cx_vec>::from(a) - arma::conv_to<arma::cx_vec>::from(b)) /
           arma::norm(arma::conv_to<arma::cx_vec>::from(b));
}
arma::cx_fvec randn_c(arma::uword n) {
    std::normal_distribution<float> d;
    arma::cx_fvec v(n);
    for (auto& x : v) x = {d(rng), d(rng)};
    return v;
}
// Stack-of-stars-like / spiral-like sample cloud: radius distribution denser at the centre, like real trajectories.
void trajectory(arma::uword n1, arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::fvec& kx, arma::fvec& ky,
                arma::fvec& kz) {
    std::uniform_real_distribution<double> u(0, 1);
    kx.set_size(n1), ky.set_size(n1), kz.set_size(n1);
    for (arma::uword j = 0; j < n1; ++j) {
        const double r = u(rng), th = 2 * kPi * u(rng);
        kx(j) = float(r * (Nx / 2 - 0.5) * std::cos(th));
        ky(j) = float(r * (Ny / 2 - 0.5) * std::sin(th));
        kz(j) = Nz > 1 ? float((u(rng) - 0.5) * (Nz - 1)) : 0.f;
    }
}
// Where the plan's time went (Gnufft::plan_times), in ms: host check + conversion, host slab sort, k upload, device
// check + sort, the rest of the GPU plan, host FFTW plans. A GPU operator makes its host entries lazily ("-": not yet).
void plan_split(const char* dev, const std::string& what, double tol, arma::uword W, arma::uword n1,
                const Gnufft<float>::PlanTimes& t) {
    auto ms = [](double s) {
        char b[16];
        if (s > 0)
            std::snprintf(b, sizeof b, "%.3f", s * 1e3);
        else
            std::snprintf(b, sizeof b, "-");
        return std::string(b);
    };
    std::printf("| %-4s | %-36s | %5.0e | %2llu | %9llu | plan split [ms]: host check %s, host sort %s, upload %s, "
                "device sort %s, GPU plan rest %s, FFTW plan %s |\n",
                dev, what.c_str(), tol, (unsigned long long)W, (unsigned long long)n1, ms(t.host_check).c_str(),
                ms(t.host_sort).c_str(), ms(t.upload).c_str(), ms(t.device_sort).c_str(), ms(t.gpu_plan).c_str(),
                ms(t.fft_plan).c_str());
    std::fflush(stdout);
}

void row(const char* dev, const std::string& what, arma::uword n1, double fwd, double adj, double err,
         double errAdj = -1, double tol = 0, arma::uword W = 0, double plan = -1) {
    char t[16] = "-", w[24] = "-", p[16] = "-", ea[16] = "-";
    if (tol > 0) std::snprintf(t, sizeof t, "%.0e", tol);
    if (W > 0) std::snprintf(w, sizeof w, "%llu", (unsigned long long)W);
    if (plan >= 0) std::snprintf(p, sizeof p, "%.4f", plan);
    if (errAdj >= 0) std::snprintf(ea, sizeof ea, "%.2e", errAdj);
    char e[16] = "-";
    if (err >= 0) std::snprintf(e, sizeof e, "%.2e", err);
    std::printf("| %-4s | %-36s | %5s | %2s | %9llu | %8s | %10.5f | %10.5f | %9s | %9s |\n", dev, what.c_str(), t, w,
                (unsigned long long)n1, p, fwd, adj, e, ea);
    std::fflush(stdout);
}
std::vector<double> tolerances = {1e-3, 1e-4, 1e-5};

void nufft_case(arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1, bool gdft) {
    arma::fvec kx, ky, kz;
    trajectory(n1, Nx, Ny, Nz, kx, ky, kz);
    const std::string name = "Gnufft " + std::to_string(Nx) + "x" + std::to_string(Ny) + "x" + std::to_string(Nz);
    const arma::uword n2 = Nx * Ny * Nz;
    arma::cx_fvec x = randn_c(n2), y = randn_c(n1);
    // Exact float64 references: the forward on 2000 samples, the adjoint on 256 pixels.
    const arma::uword ns = std::min<arma::uword>(2000, n1), np = std::min<arma::uword>(256, n2);
    Gfft<double> cart(Nx, Ny, Nz);
    arma::mat r = cart.image_coords();
    arma::uvec sub = arma::regspace<arma::uvec>(0, n1 / ns, n1 - 1).head(ns);
    arma::uvec pix = arma::regspace<arma::uvec>(0, n2 / np, n2 - 1).head(np);
    const arma::vec kxd = arma::conv_to<arma::vec>::from(kx), kyd = arma::conv_to<arma::vec>::from(ky),
                    kzd = arma::conv_to<arma::vec>::from(kz);
    Gdft<double> refSub(ns, n2, kxd(sub), kyd(sub), kzd(sub), r.col(0), r.col(1), r.col(2),
                        arma::vec(n2, arma::fill::zeros), arma::vec(ns, arma::fill::zeros));
    const arma::mat rp = r.rows(pix);
    Gdft<double> refPix(n1, np, kxd, kyd, kzd, rp.col(0), rp.col(1), rp.col(2), arma::vec(np, arma::fill::zeros),
                        arma::vec(n1, arma::fill::zeros));
    const arma::cx_fvec exact = arma::conv_to<arma::cx_fvec>::from(refSub * arma::conv_to<arma::cx_vec>::from(x));
    const arma::cx_fvec exactAdj = arma::conv_to<arma::cx_fvec>::from(refPix / arma::conv_to<arma::cx_vec>::from(y));
    FVec dx(x), dy(y);
    double gpuFwd = 0, gpuAdj = 0;
    // A normal-equation loop as a solver runs it, its plan included: construct, then 10 x (forward, adjoint), on
    // the device (v a device forgeCol) or the host (an arma vector).
    auto normal_loop = [&](const char* dev, double tol, uword width, auto v) {
        decltype(v) w;
        const double loop = seconds(
            [&] {
                Gnufft<float> L(n1, Nx, Ny, Nz, kx, ky, kz, NufftOptions::for_tolerance(tol));
                for (int it = 0; it < 10; ++it) {
                    w = L * v;
                    v = L / w;
                }
            },
            1);
        std::printf("| %-4s | %-36s | %5.0e | %2llu | %9llu | normal loop incl. plan: %.2f ms (plan + 10 x "
                    "fwd+adj) |\n",
                    dev, name.c_str(), tol, (unsigned long long)width, (unsigned long long)n1, loop * 1e3);
    };
    for (double tol : tolerances) {
        auto t0 = std::chrono::steady_clock::now();
        Gnufft<float> G(n1, Nx, Ny, Nz, kx, ky, kz, NufftOptions::for_tolerance(tol));
        const double plan = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (G.gpu_enabled()) {
            plan_split("GPU", name, tol, G.kernel_width(), n1, G.plan_times());
            dx.put_on_gpu();
            normal_loop("GPU", tol, G.kernel_width(), FVec(dx));
        }
        arma::cx_fvec fc, ac;
        const double tf = seconds([&] { fc = G * x; }, 3), ta = seconds([&] { ac = G / y; }, 3);
        row("CPU", name, n1, tf, ta, rel(arma::cx_fvec(fc(sub)), exact), rel(arma::cx_fvec(ac(pix)), exactAdj), tol,
            G.kernel_width(), G.gpu_enabled() ? -1 : plan);
        plan_split("CPU", name, tol, G.kernel_width(), n1, G.plan_times());
        if (!G.gpu_enabled() && Nz == 1) {
            // The same loop on the host, 2D only (the 3D one takes minutes on a few cores).
            normal_loop("CPU", tol, G.kernel_width(), x);
        }
        if (G.gpu_enabled()) {
            dx.put_on_gpu();
            dy.put_on_gpu();
            FVec out, outA;
            const double gf = seconds([&] { out = G * dx; }, 20), ga = seconds([&] { outA = G / dy; }, 20);
            out.get_from_gpu();
            outA.get_from_gpu();
            const arma::cx_fvec fg = out.to_arma(), ag = outA.to_arma();
            row("GPU", name, n1, gf, ga, rel(arma::cx_fvec(fg(sub)), exact), rel(arma::cx_fvec(ag(pix)), exactAdj), tol,
                G.kernel_width(), plan);
            if (tol == 1e-4) gpuFwd = gf, gpuAdj = ga;
        }
        if (tol != tolerances.front()) continue;
        // New samples on the same operator: the mirrored trajectory (inside the band as the original).
        const arma::fvec mx = -kx, my = -ky, mz = -kz;
        const double sp = seconds([&] { G.set_points(mx, my, mz); }, 1);
        plan_split(G.gpu_enabled() ? "GPU" : "CPU", name + " set_points", tol, G.kernel_width(), n1, G.plan_times());
        const double sf = seconds([&] { fc = G * x; }, 3), sa = seconds([&] { ac = G / y; }, 3);
        row("CPU", name + " set_points", n1, sf, sa, -1, -1, tol, G.kernel_width(), sp);
        if (G.gpu_enabled()) {
            FVec out, outA;
            const double gf = seconds([&] { out = G * dx; }, 20), ga = seconds([&] { outA = G / dy; }, 20);
            row("GPU", name + " set_points", n1, gf, ga, -1, -1, tol, G.kernel_width(), sp);
            // The original samples back, from forgeCols already on the GPU (a per-frame trajectory made there): no
            // upload, the device sort alone.
            forgeCol<float> gkx(kx), gky(ky), gkz(kz);
            gkx.put_on_gpu();
            gky.put_on_gpu();
            gkz.put_on_gpu();
            const double sd = seconds([&] { G.set_points(gkx, gky, gkz); }, 1);
            plan_split("GPU", name + " set_points (k on GPU)", tol, G.kernel_width(), n1, G.plan_times());
            const double gf2 = seconds([&] { out = G * dx; }, 20), ga2 = seconds([&] { outA = G / dy; }, 20);
            row("GPU", name + " set_points (k on GPU)", n1, gf2, ga2, -1, -1, tol, G.kernel_width(), sd);
            // A whole new plan from those forgeCols (cufinufft's makeplan + setpts, whose points are on the device).
            std::vector<std::unique_ptr<Gnufft<float>>> plans;  // kept: their release is not part of the plan
            const double pd = seconds(
                [&] {
                    plans.push_back(std::make_unique<Gnufft<float>>(n1, Nx, Ny, Nz, gkx, gky, gkz,
                                                                    NufftOptions::for_tolerance(tol)));
                },
                3);
            row("GPU", name + " plan (k on GPU)", n1, gf2, ga2, -1, -1, tol, G.kernel_width(), pd);
        }
    }
    if (!gdft || gpuFwd == 0) return;
    arma::fvec field_map(n2, arma::fill::zeros), t(n1, arma::fill::zeros);
    arma::fmat rf = arma::conv_to<arma::fmat>::from(r);
    Gdft<float> D(n1, n2, kx, ky, kz, rf.col(0), rf.col(1), rf.col(2), field_map, t);
    if (!D.gpu_enabled()) return;
    dx.put_on_gpu();
    dy.put_on_gpu();
    FVec dout;
    const double df = seconds([&] { dout = D * dx; }, 1), da = seconds([&] { FVec a = D / dy; }, 1);
    dout.get_from_gpu();
    row("GPU", "Gdft (exact) same problem", n1, df, da, rel(arma::cx_fvec(dout.to_arma()(sub)), exact));
    std::printf("| GPU  | speed-up Gnufft (tolerance 1e-4) vs Gdft, forward+adjoint: %.0fx |\n",
                (df + da) / (gpuFwd + gpuAdj));
}

void field_case(bool gpu) {
    // 2D 128x128, 16-interleave spiral, 25 ms readouts, field map up to +-120 Hz.
    const arma::uword N = 128, il = 16, per = 4096, n1 = il * per;
    arma::fvec kx(n1), ky(n1), kz(n1, arma::fill::zeros), t(n1);
    for (arma::uword j = 0; j < n1; ++j) {
        const double f = double(j % per) / per, th = 2 * kPi * (12 * f + double(j / per) / il);
        kx(j) = float(f * (N / 2 - 1) * std::cos(th));
        ky(j) = float(f * (N / 2 - 1) * std::sin(th));
        t(j) = float(25e-3 * f);
    }
    arma::fvec fm(N * N);
    for (arma::uword y = 0; y < N; ++y)
        for (arma::uword x = 0; x < N; ++x) {
            const double u = (double(x) - N / 2.0) / N, v = (double(y) - N / 2.0) / N;
            fm(x + N * y) = float(2 * kPi * 120 * std::exp(-(u * u + (v - 0.1) * (v - 0.1)) * 12) - 2 * kPi * 30 * u);
        }
    Gfft<float> cart(N, N);
    arma::fmat r = cart.image_coords();
    Gdft<float> D(n1, N * N, kx, ky, kz, r.col(0), r.col(1), r.col(2), fm, t);
    arma::cx_fvec x = randn_c(N * N);
    arma::cx_fvec ref;
    const double tD = seconds([&] { ref = D * x; }, 1), tDa = seconds([&] { arma::cx_fvec a = D / ref; }, 1);
    row("CPU", "Gdft 128x128 field-corrected", n1, tD, tDa, 0.0);
    Gnufft<float> G(n1, N, N, 1, kx, ky, kz);
    using TS = TimeSegmentation<float, Gnufft<float>>;
    for (double target : {1e-2, 1e-3}) {
        TSErrorReport rep = TS::choose_segments(fm, t, target, TSInterp::MinMax);
        TS A(G, fm, t, rep.L, TSInterp::MinMax);
        arma::cx_fvec y;
        const double tf = seconds([&] { y = A * x; }, 1), ta = seconds([&] { arma::cx_fvec a = A / ref; }, 1);
        char name[96];
        std::snprintf(name, sizeof name, "TS(Gnufft) MinMax L=%llu (target %.0e)", (unsigned long long)rep.L, target);
        row("CPU", name, n1, tf, ta, rel(y, ref));
        if (gpu && G.gpu_enabled()) {
            FVec dx(x);
            dx.put_on_gpu();
            FVec out;
            const double gf = seconds([&] { out = A * dx; }, 5), ga = seconds([&] { FVec a = A / out; }, 5);
            out.get_from_gpu();
            row("GPU", name, n1, gf, ga, rel(out.to_arma(), ref));
        }
    }
    if (gpu && D.gpu_enabled()) {
        FVec dx(x);
        dx.put_on_gpu();
        FVec out;
        const double gf = seconds([&] { out = D * dx; }, 3), ga = seconds([&] { FVec a = D / out; }, 3);
        out.get_from_gpu();
        row("GPU", "Gdft 128x128 field-corrected", n1, gf, ga, rel(out.to_arma(), ref));
    }
}
}  // namespace

int main(int argc, char** argv) {
    bool quick = false, gdft = true;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick")) quick = true;
        if (!std::strcmp(argv[i], "--no-gdft")) gdft = false;
        if (!std::strcmp(argv[i], "--tols") && i + 1 < argc) {
            tolerances.clear();
            std::string list = argv[++i];
            for (size_t p = 0; p < list.size();) {
                size_t q = list.find(',', p);
                tolerances.push_back(std::stod(list.substr(p, q == std::string::npos ? q : q - p)));
                p = q == std::string::npos ? list.size() : q + 1;
            }
        }
    }
    const bool gpu = device::available();
    std::printf("bench_nufft: GPU %s; %s; Gnufft<float> at requested tolerances (oversampling 2)\n",
                gpu ? device::device_name() : "none", forge_bench::machine_line().c_str());
    std::printf(
        "| dev  | case                                 | tol   | W  |   samples | plan [s] |  fwd [s]   |  adj [s]   "
        "| fwd err   | adj err   |\n");
    std::printf(
        "|------|--------------------------------------|-------|----|-----------|----------|------------|-----------"
        "-|-----------|-----------|\n");
    nufft_case(256, 256, 1, 256 * 256 * 2, false);
    nufft_case(128, 128, 64, quick ? 400000 : 2000000, gdft);
    field_case(gpu);
    return 0;
}
