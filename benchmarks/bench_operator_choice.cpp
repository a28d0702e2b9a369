// bench_operator_choice: forge-recon's --operator auto against the time of every operator that reproduces the
// problem's model. Each row reconstructs one problem (SENSE, the default penalty and stopping rule:
// forge::recon::reconstruct with kDefaultIterations and kDefaultTolerance) with dft, nufft (timeseg with a field
// map to correct) and toeplitz, and prints each one's wall time (set-up included), auto's choice from the cost
// model calibrated on this machine (forge::recon::cost_rates) and from the fixed rates, and auto's time over the
// fastest's.
// Problems: a BART-like radial (128x128 smooth Shepp-Logan, 101 spokes x 256 samples, 8 ring coils, simulated by
// the NUFFT, 1% noise; BART's phantom -k -s 8 on traj -r -x 256 -y 101 has these sizes); the demo's spirals
// (forge::sim::demo_acquisition, one slice) at each --sizes N, with its field map corrected and without one.
// Usage: bench_operator_choice [--device cpu|gpu] [--sizes 64,128,256] [--coils C] [--max-dft-seconds S]
//                              [--threads N]
//   --max-dft-seconds: the DFT is not run where the calibrated model puts it over S seconds (default 60); its
//   column then shows the estimate in brackets.
// The first lines name the machine (CPU model, threads, load) and the calibrated rates; the last the load at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <armadillo>

#include "BenchCommon.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Recon/OperatorChoice.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/DemoAcquisition.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

namespace {

using forge::recon::EncodingOperator;
using forge::recon::ReconProblem;

ReconProblem radial(std::size_t N, std::size_t nc, std::size_t spokes) {
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    const forge::sim::Trajectory2D k = forge::sim::radial_spokes(spokes, 2 * N, double(N));
    forge::recon::ReconFrame fr;
    fr.kx = arma::conv_to<arma::fvec>::from(k.kx);
    fr.ky = arma::conv_to<arma::fvec>::from(k.ky);
    const std::size_t n1 = fr.kx.n_elem;
    fr.kz = arma::fvec(n1, arma::fill::zeros);
    fr.t = arma::fvec(n1, arma::fill::zeros);
    const arma::fvec truth = forge::sim::smooth_shepp_logan_slice(N, 0, 1);
    const arma::cx_fvec maps = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc), nc);
    forge::Gnufft<float> G(n1, N, N, 1, fr.kx, fr.ky, fr.kz);
    const forge::SENSE<float, forge::Gnufft<float>> E(G, maps, nc);
    fr.y = E * arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(truth));
    arma::arma_rng::set_seed(7);
    fr.y += float(0.01 * arma::norm(fr.y) / std::sqrt(2.0 * fr.y.n_elem)) *
            arma::cx_fvec(arma::randn<arma::cx_fvec>(fr.y.n_elem));
    P.frames.push_back(fr);
    P.smaps.push_back(maps);
    P.n1total = P.n1max = n1;
    return P;
}

// One slice of the demo's spiral scan at its first echo, with the true coil maps (and field map).
ReconProblem spiral(std::size_t N, std::size_t nc, bool fieldmap) {
    forge::sim::DemoOptions o;
    o.size = N;
    o.slices = 1;
    o.coils = nc;
    const forge::sim::DemoAcquisition A = forge::sim::demo_acquisition(o);
    ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    const forge::sim::SimulatedFrame& f = A.spiral.frames.front();
    forge::recon::ReconFrame fr;
    fr.kx = f.k.kx, fr.ky = f.k.ky;
    fr.kz = f.k.kz.n_elem ? f.k.kz : arma::fvec(f.k.kx.n_elem, arma::fill::zeros);
    fr.t = f.k.t, fr.y = f.y, fr.echo_time = f.echo_time;
    P.frames.push_back(fr);
    P.smaps.push_back(A.smaps.front());
    if (fieldmap) P.field_map.push_back(A.field_map.front());
    P.n1total = P.n1max = fr.kx.n_elem;
    return P;
}

std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    bool gpu = false;
    std::vector<std::size_t> sizes{64, 128, 256};
    std::size_t coils = 8;
    double maxDft = 60;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool more = i + 1 < argc;
        if (a == "--device" && more)
            gpu = std::string(argv[++i]) == "gpu";
        else if (a == "--sizes" && more) {
            sizes.clear();
            std::stringstream ss(argv[++i]);
            std::string s;
            while (std::getline(ss, s, ',')) sizes.push_back(std::size_t(std::stoul(s)));
        } else if (a == "--coils" && more)
            coils = std::size_t(std::stoul(argv[++i]));
        else if (a == "--max-dft-seconds" && more)
            maxDft = std::stod(argv[++i]);
        else if (a == "--threads" && more)
            forge_bench::set_threads(std::stoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: bench_operator_choice [--device cpu|gpu] [--sizes 64,128,256] [--coils C] "
                                 "[--max-dft-seconds S] [--threads N]\n");
            return 2;
        }
    }
    if (gpu && !forge::device::available()) {
        std::fprintf(stderr, "bench_operator_choice: --device gpu but no usable GPU\n");
        return 77;
    }
    std::printf("%s\n", forge_bench::machine_line().c_str());
    if (gpu) std::printf("GPU %s\n", forge::device::device_name());
    forge::recon::set_cost_calibration(true);
    const auto t0 = std::chrono::steady_clock::now();
    const forge::recon::CostRates r = forge::recon::measure_cost_rates(gpu);
    const double calib = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const forge::recon::CostRates fixed = forge::recon::fixed_cost_rates(gpu);
    std::printf("calibration %.0f ms: dft %.3g (field map %.3g) products/s, fft %.3g flop/s, taps %.3g/s, plan %.3g "
                "samples/s, kernels %.3g ms + x%.3g of ToeplitzNormal's estimate, vector %.3g coil-pixels/s + %.3g ms "
                "per iteration, apply %.3g ms, time segmentation %.3g samples/s, pair data %.3g sample-pairs/s\n\n",
                1e3 * calib, r.dft, r.dft_field, r.fft, r.taps, r.plan, 1e3 * r.kernel_fixed, r.kernels, r.vector,
                1e3 * r.iteration, 1e3 * r.apply, r.segmentation, r.pairs);

    struct Case {
        std::string name;
        ReconProblem P;
    };
    std::vector<Case> cases;
    cases.push_back({"radial 128x128, 101 spokes, 8 coils", radial(128, 8, 101)});
    for (std::size_t N : sizes)
        for (bool fm : {true, false}) {
            ReconProblem P = spiral(N, coils, fm);
            const std::string name = "spiral " + std::to_string(N) + "x" + std::to_string(N) + ", " +
                                     std::to_string(P.frames.front().kx.n_elem) + " samples, " + std::to_string(coils) +
                                     " coils, " + (fm ? "field map" : "no field map");
            cases.push_back({name, std::move(P)});
        }

    forge_bench::Table table({"problem", "device", "dft s", "nufft/timeseg s", "toeplitz s", "auto (calibrated)",
                              "auto/fastest", "auto (fixed rates)", "fixed/fastest"});
    for (const Case& c : cases) {
        const ReconProblem& P = c.P;
        const bool correct = !P.field_map.empty();
        forge::recon::ReconSettings S;
        S.gpu = gpu;
        const EncodingOperator nufft = correct ? EncodingOperator::TimeSeg : EncodingOperator::Nufft;
        const EncodingOperator ops[3] = {EncodingOperator::Dft, nufft, EncodingOperator::Toeplitz};
        double t[3] = {-1, -1, -1};
        std::string cell[3];
        for (int k = 0; k < 3; ++k) {
            S.op = ops[k];
            if (ops[k] == EncodingOperator::Dft) {
                const double est = forge::recon::estimate_seconds(P, S, ops[k], correct, r);
                if (est > maxDft) {
                    cell[k] = "(est. " + fmt("%.3g", est) + ")";
                    continue;
                }
            }
            forge::device::synchronize();
            const auto a = std::chrono::steady_clock::now();
            const forge::recon::ReconResult res = forge::recon::reconstruct(P, correct, S, "bench");
            forge::device::synchronize();
            t[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
            // where the time went, against the model's estimate at the iterations run
            if (!res.solves.empty()) {
                const forge::recon::SolveRecord& sr = res.solves.front();
                forge::recon::ReconSettings E = S;
                E.iterations = int(sr.report.iterations);
                std::fprintf(stderr,
                             "  %s %s: %.3f s (set-up %.3f, rhs %.3f, %d iterations %.3f, L %zu); estimated %.3f s\n",
                             c.name.c_str(), forge::recon::operator_name(ops[k]), t[k], res.setup_seconds,
                             sr.rhs_seconds, int(sr.report.iterations), sr.iteration_seconds, sr.segments,
                             forge::recon::estimate_seconds(P, E, ops[k], correct, r));
            }
            cell[k] = fmt("%.3f", t[k]);
        }
        double best = 1e300;
        for (double v : t)
            if (v > 0) best = std::min(best, v);
        auto time_of = [&](EncodingOperator op) {
            for (int k = 0; k < 3; ++k)
                if (ops[k] == op) return t[k];
            return -1.0;
        };
        const auto cal = forge::recon::choose_operator(P, S.iterations, gpu, correct, r);
        const auto fix = forge::recon::choose_operator(P, S.iterations, gpu, correct, fixed);
        auto ratio = [&](EncodingOperator op) {
            const double v = time_of(op);
            return v > 0 ? fmt("%.2f", v / best) : std::string("n/a (not run)");
        };
        table.add({c.name, gpu ? "GPU" : "CPU", cell[0],
                   std::string(forge::recon::operator_name(nufft)) + " " + cell[1], cell[2],
                   forge::recon::operator_name(cal.op), ratio(cal.op), forge::recon::operator_name(fix.op),
                   ratio(fix.op)});
        std::fprintf(stderr, "%s: auto %s (%s)\n", c.name.c_str(), forge::recon::operator_name(cal.op),
                     cal.reason.c_str());
    }
    table.print();
    std::printf("\nload average at the end %.2f\n", forge_bench::load_average());
    return 0;
}
