// bench_toeplitz_build: the Toeplitz normal operator's kernel build on the host for a stack of spirals (Cartesian
// along z: Nz distinct kz), the full DFT on the padded grid (AxisGrouping::Off) against the build grouped along z,
// field-free and with a +-100 Hz field map (L for a normal-operator error of 1e-3). Columns: grid, samples, L,
// DFTs of the build, build time and its DFT part for each, the speed-up, and the relative difference of the two
// operators on a random image.
// Usage: bench_toeplitz_build [Nx Ny Nz n1]   (default 48 48 16 24576)
#include <cstdio>
#include <cstdlib>

#include <armadillo>

#include "BenchCommon.h"
#include "SpiralProblem.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

namespace {
using forge_bench::fmt;
using TN = forge::ToeplitzNormal<float>;

void row(forge_bench::Table& table, const forge_bench::Problem& p, arma::uword L) {
    auto make = [&](forge::AxisGrouping g) {
        forge::ToeplitzOptions o;
        o.build = forge::KernelBuild::Host;
        o.grouping = g;
        const forge::ImageGrid grid(p.Nx, p.Ny, p.Nz);
        const forge::Trajectory<float> k(p.kx, p.ky, p.kz, p.t);
        if (L == 0) return TN(grid, k, arma::fvec(), o);
        return TN(grid, k, arma::fvec(), p.FM, L, forge::TSInterp::MinMax, o);
    };
    const TN full = make(forge::AxisGrouping::Off), grouped = make(forge::AxisGrouping::Auto);
    arma::arma_rng::set_seed(7);
    const arma::cx_fvec x = arma::randn<arma::cx_fvec>(p.n2);
    const arma::cx_vec a = arma::conv_to<arma::cx_vec>::from(arma::cx_fvec(full * x)),
                       b = arma::conv_to<arma::cx_vec>::from(arma::cx_fvec(grouped * x));
    table.add({fmt("%llux%llux%llu", (unsigned long long)p.Nx, (unsigned long long)p.Ny, (unsigned long long)p.Nz),
               fmt("%llu", (unsigned long long)p.n1), fmt("%llu", (unsigned long long)L),
               fmt("%llu", (unsigned long long)full.dft_count()),
               fmt("%.2f (%.2f)", full.build_times().total, full.build_times().dft),
               fmt("%.3f (%.3f)", grouped.build_times().total, grouped.build_times().dft),
               fmt("%llu", (unsigned long long)grouped.grouped_axis()),
               fmt("%.1fx", full.build_times().total / grouped.build_times().total),
               fmt("%.1e", arma::norm(b - a) / arma::norm(a))});
}
}  // namespace

int main(int argc, char** argv) {
    arma::uword Nx = 48, Ny = 48, Nz = 16, n1 = 24576;
    if (argc == 5) {
        Nx = std::strtoull(argv[1], nullptr, 10);
        Ny = std::strtoull(argv[2], nullptr, 10);
        Nz = std::strtoull(argv[3], nullptr, 10);
        n1 = std::strtoull(argv[4], nullptr, 10);
    }
    std::printf("bench_toeplitz_build: host kernel build, full DFT vs grouped along z; %s\n",
                forge_bench::machine_line().c_str());
    const forge_bench::Problem p = forge_bench::make_problem(Nx, Ny, Nz, n1, 1);
    forge_bench::Table table({"pixels", "samples", "L", "DFTs", "full build (DFT) [s]", "grouped build (DFT) [s]",
                              "grouped axis", "speed-up", "rel. difference"});
    row(table, p, 0);
    row(table, p, TN::choose_segments(p.FM, p.t, 1e-3));
    table.print();
    return 0;
}
