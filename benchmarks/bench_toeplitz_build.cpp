// bench_toeplitz_build: the Toeplitz normal operator's kernel build by either source, the exact DFT (grouped along a
// Cartesian axis where the trajectory has one) and the NUFFT, on the host or on the GPU, for
//   stack     a stack of spirals (Cartesian along z), +-100 Hz field map (SpiralProblem.h)
//   radial3d  a 3D radial kooshball, N samples per spoke over a 4 ms readout, +-80 Hz field map
//   radial2d  a 2D radial acquisition as BART simulates it (2N samples per spoke), no field map
// field-free (L = 0) and with the field map (L for a normal-operator error of 1e-3). Per build: the source Auto chose
// ("auto:") and the other one, build time and its DFT part (the basis kernels' transforms), and the relative
// difference to the exact-source operator (the kernels' own error: both share the segmentation) and, with
// --reference, to the exact field-corrected G^H W G (brute-force Gdft: double on the host, float on the GPU).
//
// Usage: bench_toeplitz_build [cpu|gpu] [CASE [sizes]]... [--no-exact] [--reference] [--full-dft]
//   stack [Nx Ny Nz n1]   (default 48 48 16 24576; H100: stack 128 128 32 131072)
//   radial3d [N n1]       (default 24 12000; H100: radial3d 96 1500000 and radial3d 64 512000)
//   radial2d [N spokes]   (default 256 101)
//   no CASE: stack and radial3d at their defaults; bare sizes "Nx Ny Nz n1": a stack. --no-exact skips the exact
//   builds where Auto took the NUFFT (hours on a CPU at the full sizes); --full-dft adds the exact build without
//   grouping (stack).
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
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

namespace {
using arma::uword;
using forge_bench::fmt;
using TN = forge::ToeplitzNormal<float>;
using FVec = forgeCol<forgeComplex<float>>;
constexpr double kPi = 3.14159265358979323846;

struct Geometry {
    std::string name;
    uword Nx = 1, Ny = 1, Nz = 1;
    arma::fvec kx, ky, kz, t, field_map, ix, iy, iz;
    bool has_field_map = true;
    uword n2() const { return Nx * Ny * Nz; }
};

void set_pixels(Geometry& g, double peakHz) {
    g.ix.set_size(g.n2());
    g.iy.set_size(g.n2());
    g.iz.set_size(g.n2());
    g.field_map.set_size(g.n2());
    for (uword z = 0; z < g.Nz; ++z)
        for (uword y = 0; y < g.Ny; ++y)
            for (uword x = 0; x < g.Nx; ++x) {
                const uword k = x + g.Nx * (y + g.Ny * z);
                const double fx = (double(x) - double(g.Nx / 2)) / double(g.Nx),
                             fy = (double(y) - double(g.Ny / 2)) / double(g.Ny),
                             fz = g.Nz > 1 ? (double(z) - double(g.Nz / 2)) / double(g.Nz) : 0.0;
                g.ix[k] = float(fx), g.iy[k] = float(fy), g.iz[k] = float(fz);
                g.field_map[k] = float(2 * kPi * peakHz * std::sin(kPi * fx) * std::cos(kPi * fy) * std::cos(kPi * fz));
            }
}

Geometry stack(uword Nx, uword Ny, uword Nz, uword n1) {
    const forge_bench::Problem p = forge_bench::make_problem(Nx, Ny, Nz, n1, 1);
    Geometry g;
    g.name = "stack of spirals";
    g.Nx = Nx, g.Ny = Ny, g.Nz = Nz;
    g.kx = p.kx, g.ky = p.ky, g.kz = p.kz, g.t = p.t;
    set_pixels(g, 100);
    g.field_map = p.field_map;
    return g;
}

// Spokes through the centre along directions spread evenly over the sphere (Fibonacci lattice), N samples each
// from -N/2, 4 ms readout.
Geometry radial3d(uword N, uword n1) {
    Geometry g;
    g.name = "3D radial";
    g.Nx = g.Ny = g.Nz = N;
    const uword spokes = std::max<uword>(1, n1 / N), n = spokes * N;
    g.kx.set_size(n), g.ky.set_size(n), g.kz.set_size(n), g.t.set_size(n);
    const double golden = kPi * (3 - std::sqrt(5.0));
    for (uword s = 0; s < spokes; ++s) {
        const double z = 1 - (s + 0.5) / double(spokes), r = std::sqrt(1 - z * z), phi = golden * double(s);
        for (uword j = 0; j < N; ++j) {
            const double k = double(j) - double(N) / 2;
            g.kx[s * N + j] = float(k * r * std::cos(phi));
            g.ky[s * N + j] = float(k * r * std::sin(phi));
            g.kz[s * N + j] = float(k * z);
            g.t[s * N + j] = float(4e-3 * double(j) / double(N));
        }
    }
    set_pixels(g, 80);
    return g;
}

// BART's radial simulation: 2N samples per spoke (readout oversampled twice), spokes over 180 degrees.
Geometry radial2d(uword N, uword spokes) {
    Geometry g;
    g.name = "2D radial";
    g.Nx = g.Ny = N;
    const uword ns = 2 * N, n = spokes * ns;
    g.kx.set_size(n), g.ky.set_size(n), g.kz.zeros(n), g.t.set_size(n);
    for (uword s = 0; s < spokes; ++s)
        for (uword j = 0; j < ns; ++j) {
            const double k = (double(j) - double(N)) / 2, a = kPi * double(s) / double(spokes);
            g.kx[s * ns + j] = float(k * std::cos(a));
            g.ky[s * ns + j] = float(k * std::sin(a));
            g.t[s * ns + j] = float(2e-3 * double(j) / double(ns));
        }
    set_pixels(g, 0);
    g.has_field_map = false;
    return g;
}

struct Settings {
    bool gpu = false, exact = true, reference = false, fullDft = false;
};

TN make(const Geometry& g, uword L, forge::KernelSource source, const Settings& s,
        forge::AxisGrouping grouping = forge::AxisGrouping::Auto) {
    forge::ToeplitzOptions o;
    o.build = s.gpu ? forge::KernelBuild::Auto : forge::KernelBuild::Host;
    o.grouping = grouping;
    o.source = source;
    const forge::ImageGrid grid(g.Nx, g.Ny, g.Nz);
    const forge::Trajectory<float> k(g.kx, g.ky, g.kz, g.t);
    if (L == 0) return TN(grid, k, arma::fvec(), o);
    return TN(grid, k, arma::fvec(), g.field_map, L, forge::TSInterp::MinMax, o);
}

arma::cx_vec apply(const TN& N, const arma::cx_fvec& x, bool gpu) {
    FVec v(x);
    if (gpu) v.put_on_gpu();
    FVec y = N.forward(v);
    if (y.on_gpu()) y.get_from_gpu();
    return arma::conv_to<arma::cx_vec>::from(y.to_arma());
}

// The exact G^H W G x (W = ones) of the field map (L > 0) or field-free: Gdft<float> on the GPU, Gdft<double> on
// the host.
arma::cx_vec exact_normal(const Geometry& g, uword L, const arma::cx_fvec& x, bool gpu) {
    const uword n1 = g.kx.n_elem, n2 = g.n2();
    const arma::fvec fm = L > 0 ? g.field_map : arma::fvec(n2, arma::fill::zeros);
    const arma::fvec t = L > 0 ? g.t : arma::fvec(n1, arma::fill::zeros);
    if (gpu) {
        const forge::Gdft<float> G(n1, n2, g.kx, g.ky, g.kz, g.ix, g.iy, g.iz, fm, t);
        FVec v(x);
        v.put_on_gpu();
        FVec y = G.adjoint(G.forward(v));
        y.get_from_gpu();
        return arma::conv_to<arma::cx_vec>::from(y.to_arma());
    }
    const auto d = [](const arma::fvec& v) { return arma::conv_to<arma::vec>::from(v); };
    const forge::Gdft<double> G(n1, n2, d(g.kx), d(g.ky), d(g.kz), d(g.ix), d(g.iy), d(g.iz), d(fm), d(t));
    return G / arma::cx_vec(G * arma::conv_to<arma::cx_vec>::from(x));
}

std::string source_name(forge::KernelSource s) { return s == forge::KernelSource::Nufft ? "nufft" : "exact"; }

void rows(forge_bench::Table& table, const Geometry& g, uword L, const Settings& s) {
    arma::arma_rng::set_seed(7);
    const arma::cx_fvec x = arma::randn<arma::cx_fvec>(g.n2());
    struct Built {
        std::string label;
        TN N;
    };
    std::vector<Built> built;
    built.push_back({"auto: ", make(g, L, forge::KernelSource::Auto, s)});
    const forge::KernelSource chosen = built[0].N.kernel_source();
    const bool nufftChosen = chosen == forge::KernelSource::Nufft;
    if (!nufftChosen) {
        try {
            built.push_back({"", make(g, L, forge::KernelSource::Nufft, s)});
        } catch (const forge::invalid_argument& e) {
            std::printf("  (no NUFFT build: %s)\n", e.what());
        }
    } else if (s.exact) {
        built.push_back({"", make(g, L, forge::KernelSource::Exact, s)});
    }
    if (s.fullDft && built[0].N.grouped_axis() < 3)
        built.push_back({"full DFT: ", make(g, L, forge::KernelSource::Exact, s, forge::AxisGrouping::Off)});
    // The exact-source operator (if built) is the reference of the kernels' error.
    const TN* exactN = nullptr;
    for (const Built& b : built)
        if (b.N.kernel_source() == forge::KernelSource::Exact && !exactN) exactN = &b.N;
    const arma::cx_vec ye = exactN ? apply(*exactN, x, s.gpu) : arma::cx_vec();
    const arma::cx_vec yr = s.reference ? exact_normal(g, L, x, s.gpu) : arma::cx_vec();
    for (const Built& b : built) {
        const arma::cx_vec y = apply(b.N, x, s.gpu);
        const std::string vsExact =
            exactN && &b.N != exactN ? fmt("%.1e", arma::norm(y - ye) / arma::norm(ye)) : std::string("-");
        const std::string vsRef = s.reference ? fmt("%.1e", arma::norm(y - yr) / arma::norm(yr)) : std::string("-");
        const forge::ToeplitzNormal<float>::BuildTimes& t = b.N.build_times();
        table.add({g.name, b.N.kernels_built_on_gpu() ? "GPU" : "CPU",
                   fmt("%llux%llux%llu", (unsigned long long)g.Nx, (unsigned long long)g.Ny, (unsigned long long)g.Nz),
                   fmt("%llu", (unsigned long long)g.kx.n_elem), fmt("%llu", (unsigned long long)L),
                   fmt("%llu", (unsigned long long)b.N.dft_count()), b.label + source_name(b.N.kernel_source()),
                   b.N.grouped_axis() < 3 ? fmt("%llu", (unsigned long long)b.N.grouped_axis()) : std::string("-"),
                   fmt("%.3f (%.3f)", t.total, t.dft), vsExact, vsRef});
    }
}

bool is_number(const char* a) { return a && *a >= '0' && *a <= '9'; }

}  // namespace

int main(int argc, char** argv) {
    Settings s;
    std::vector<Geometry> cases;
    for (int i = 1; i < argc; ++i) {
        // Sizes with no case name before them: a stack (the benchmark's first form, Nx Ny Nz n1).
        const bool bare = is_number(argv[i]);
        if (bare) --i;
        const std::string a = bare ? "stack" : argv[i];
        // The sizes that follow a case name (as many as given, the rest default).
        auto sizes = [&](std::vector<uword> v) {
            for (uword& x : v)
                if (i + 1 < argc && is_number(argv[i + 1])) x = std::strtoull(argv[++i], nullptr, 10);
            return v;
        };
        if (a == "cpu" || a == "gpu") {
            s.gpu = a == "gpu";
        } else if (a == "--no-exact") {
            s.exact = false;
        } else if (a == "--reference") {
            s.reference = true;
        } else if (a == "--full-dft") {
            s.fullDft = true;
        } else if (a == "stack") {
            const auto v = sizes({48, 48, 16, 24576});
            cases.push_back(stack(v[0], v[1], v[2], v[3]));
        } else if (a == "radial3d") {
            const auto v = sizes({24, 12000});
            cases.push_back(radial3d(v[0], v[1]));
        } else if (a == "radial2d") {
            const auto v = sizes({256, 101});
            cases.push_back(radial2d(v[0], v[1]));
        } else {
            std::fprintf(stderr, "bench_toeplitz_build: unknown argument '%s' (see the usage at the top of %s)\n",
                         a.c_str(), __FILE__);
            return 2;
        }
    }
    if (cases.empty()) {
        cases.push_back(stack(48, 48, 16, 24576));
        cases.push_back(radial3d(24, 12000));
    }
    if (s.gpu && !forge::device::available()) {
        std::fprintf(stderr, "bench_toeplitz_build: 'gpu' needs a CUDA build and a device\n");
        return 2;
    }
    std::printf("bench_toeplitz_build: Toeplitz kernels by the exact DFT and by NUFFT, float; %s%s%s\n",
                forge_bench::machine_line().c_str(), s.gpu ? "; GPU " : "", s.gpu ? forge::device::device_name() : "");
    forge_bench::Table table({"case", "built on", "pixels", "samples", "L", "basis kernels", "source", "grouped axis",
                              "build (DFT) [s]", "vs exact kernels", "vs G^H W G"});
    for (const Geometry& g : cases) {
        rows(table, g, 0, s);
        if (g.has_field_map) rows(table, g, TN::choose_segments(g.field_map, g.t, 1e-3), s);
    }
    table.print();
    std::printf("load average after: %.2f\n", forge_bench::load_average());
    return 0;
}
