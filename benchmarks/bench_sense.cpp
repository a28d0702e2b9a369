// bench_sense: exact field-corrected SENSE on the GPU.
//
// For 8 coils and 131072 samples per coil (a stack of spirals, 10 ms readouts, smooth +/-100 Hz field map)
// at 64x64x16 and 128x128x32 pixels it measures
//   1. SENSE forward + adjoint, coil-batched (one forward_batch/adjoint_batch over all coils) versus
//      coil-by-coil (one Gdft apply per coil), with the batched speed-up;
//   2. 10 PCG iterations (solve_pwls_pcg, QuadPenalty) end to end on device-resident data, with the
//      host<->device copies counted inside the solve;
//   3. accuracy: batched GPU forward of 24 random samples vs a float64 brute-force sum on the host.
// Usage: bench_sense            (no arguments; the GPU parts are skipped with a message without a device)
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>

#include <omp.h>
#include <random>
#include <string>

#include <armadillo>

#include "BenchCommon.h"
#include "SpiralProblem.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

namespace {

constexpr double kPi = 3.14159265358979323846;
using FVec = forgeCol<forgeComplex<float>>;
using Clock = std::chrono::steady_clock;
using forge_bench::make_problem;
using forge_bench::Problem;

template <typename F>
double time_s(F&& f, int reps) {
    forge::device::synchronize();
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) f();
    forge::device::synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count() / reps;
}

void run_size(arma::uword Nx, arma::uword Ny, arma::uword Nz) {
    const arma::uword n1 = 131072, nc = 8;
    Problem p = make_problem(Nx, Ny, Nz, n1, nc);
    Gdft<float> G(n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.field_map, p.t);
    SENSE<float, Gdft<float>> S(G, p.maps, nc);
    S.prepare_device();
    FVec x(p.image);
    x.put_on_gpu();
    FVec y = S.forward_batched(x);  // also the warm-up
    (void)S.adjoint_batched(y);
    const double pairs = 2.0 * double(n1) * double(p.n2) * double(nc);  // forward + adjoint, all coils

    const bool big = p.n2 > 100000;
    const int reps_b = big ? 2 : 5, reps_c = big ? 1 : 3;
    const double tb = time_s(
        [&] {
            FVec a = S.forward_batched(x);
            FVec b = S.adjoint_batched(y);
        },
        reps_b);
    const double tc = time_s(
        [&] {
            FVec a = S.forward_coil_by_coil(x);
            FVec b = S.adjoint_coil_by_coil(y);
        },
        reps_c);

    // Accuracy: 24 random samples of coil 0..nc-1 against a float64 brute-force sum.
    FVec yh = y;
    yh.get_from_gpu();
    std::mt19937 rng(12345);
    double err2 = 0, ref2 = 0;
    for (int s = 0; s < 24; ++s) {
        const arma::uword c = rng() % nc, j = rng() % n1;
        std::complex<double> acc = 0;
        for (arma::uword k = 0; k < p.n2; ++k) {
            const double ph =
                2 * kPi * (double(p.kx(j)) * p.ix(k) + double(p.ky(j)) * p.iy(k) + double(p.kz(j)) * p.iz(k)) +
                double(p.field_map(k)) * double(p.t(j));
            acc += std::complex<double>(p.maps(c * p.n2 + k)) * std::complex<double>(p.image(k)) * std::polar(1.0, -ph);
        }
        const std::complex<double> got(yh[c * n1 + j].re, yh[c * n1 + j].im);
        err2 += std::norm(got - acc);
        ref2 += std::norm(acc);
    }

    // 10 PCG iterations end to end on device data (x0, W, y uploaded before; the solve copies nothing).
    QuadPenalty<float> R(Nx, Ny, Nz, 1e-3f * float(n1));
    FVec x0(arma::cx_fvec(p.n2, arma::fill::zeros));
    forgeCol<float> W(arma::fvec(n1 * nc, arma::fill::ones));
    x0.put_on_gpu();
    W.put_on_gpu();
    forge::device::reset_transfer_stats();
    FVec xhat;
    const double tp = time_s([&] { xhat = solve_pwls_pcg<float>(x0, S, W, y, R, 10); }, 1);
    const auto st = forge::device::transfer_stats();
    xhat.get_from_gpu();
    const double nrmse = arma::norm(xhat.to_arma() - p.image) / arma::norm(p.image);

    std::printf("| %ux%ux%u | %u | %u | %.3f | %.3f | %.2fx | %.3g | %.1e | %.2f | %llu/%llu | %.3f |\n", unsigned(Nx),
                unsigned(Ny), unsigned(Nz), unsigned(nc), unsigned(n1), tb, tc, tc / tb, pairs / tb,
                std::sqrt(err2 / ref2), tp, (unsigned long long)st.host_to_device_count,
                (unsigned long long)st.device_to_host_count, nrmse);
    std::fflush(stdout);
}

// The CPU path at a size it can do in seconds: 64x64 pixels, 8 coils, 8192 samples per coil.
void run_cpu() {
    const arma::uword Nx = 64, Ny = 64, Nz = 1, n1 = 8192, nc = 8;
    Problem p = make_problem(Nx, Ny, Nz, n1, nc);
    Gdft<float> G(n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.field_map, p.t);
    SENSE<float, Gdft<float>> S(G, p.maps, nc);
    const FVec x(p.image);
    const FVec y = S.forward_batched(x);
    const double pairs = 2.0 * double(n1) * double(p.n2) * double(nc);
    const double tb = time_s(
        [&] {
            FVec a = S.forward_batched(x);
            FVec b = S.adjoint_batched(y);
        },
        3);
    const double tc = time_s(
        [&] {
            FVec a = S.forward_coil_by_coil(x);
            FVec b = S.adjoint_coil_by_coil(y);
        },
        3);
    std::printf(
        "\nCPU path (%d OpenMP threads): batched transforms share each phase and its sine/cosine across coils\n",
        omp_get_max_threads());
    std::printf("| pixels | coils | samples/coil | batched fwd+adj [s] | coil-by-coil fwd+adj [s] | speed-up | pairs/s "
                "batched (x coils) |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    std::printf("| %llux%llu | %llu | %llu | %.3f | %.3f | %.2fx | %.3g |\n", (unsigned long long)Nx,
                (unsigned long long)Ny, (unsigned long long)nc, (unsigned long long)n1, tb, tc, tc / tb, pairs / tb);
}

}  // namespace

int main() {
    std::printf("bench_sense: exact field-corrected SENSE, 8 coils, 131072 samples/coil (stack of spirals); %s\n",
                forge_bench::machine_line().c_str());
    if (!forge::device::built_with_cuda() || !forge::device::available()) {
        std::printf("bench_sense: SKIPPED the GPU measurements (%s); the CPU cannot do these sizes in reasonable time "
                    "(one 128x128x32 SENSE apply is 5.5e11 sample-pixel pairs)\n",
                    forge::device::built_with_cuda() ? "no CUDA device present" : "forge built without CUDA");
        run_cpu();
        return 0;
    }
    std::printf("device: %s\n", forge::device::device_name());
    std::printf("| pixels | coils | samples/coil | batched fwd+adj [s] | coil-by-coil fwd+adj [s] | speed-up | "
                "pairs/s batched (x coils) | rel. error vs float64 | 10 PCG iters [s] | H2D/D2H copies in solve | "
                "NRMSE after 10 iters |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    run_size(64, 64, 16);
    run_size(128, 128, 32);
    run_cpu();
    return 0;
}
