// bench_gdft: times Gdft and GdftR2 forward/adjoint on the CPU, for each instruction-set build of the CPU
// loops (forge::cpu_kernel_isas(): native, avx512, avx2, sse2 as built and supported) in float and double,
// and prints a Markdown table: ISA, precision, operator, pixels, samples, seconds per call, pair
// evaluations per second (samples x pixels / wall time), pairs per second per core (per CPU-second of the
// process: close to an unloaded core's rate when other work shares the machine), the fraction of the
// bound the FMA units set, and the relative error against a float64 brute force on 64 outputs.
//
//   bench_gdft [--sizes small|large] [--threads N] [--subset S] [--ops gdft,gdftr2] [--isa LIST]
//              [--precision float,double]
//
// --sizes small   a few problems that run in seconds on a laptop (default)
// --sizes large   64x64x16 pixels with 131072 samples; the CPU times a subset of S samples
//                 (default 4096: the same operator restricted to those samples) and reports the rate,
//                 plus the time the full problem would take at that rate.
// --threads 1     gives per-core numbers; the "per core" column divides by CPU time in any case.
//
// FMA bound: the float Gdft loop issues 20 multiplies or fused multiply-adds per pair and vector lane
// (phase 4, r^2 1, sine polynomial 5, cosine polynomial 4, half-angle 2, complex accumulation 4). With two
// FMA pipes of B bits at f GHz a core evaluates at most 2 (B / 32) f / 20 pairs per ns; the table uses the
// clock /proc/cpuinfo reports (the nominal one on most virtual machines; boost clocks raise the bound).
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <armadillo>

#include "BenchCommon.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/CpuKernelIsa.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

namespace {

using forge::uword;
constexpr double kPi = 3.14159265358979323846;

enum class Kind { Gdft, GdftR2 };
enum class Op { Forward, Adjoint };
const char* kind_name(Kind k) { return k == Kind::Gdft ? "Gdft" : "GdftR2"; }
const char* op_name(Op o) { return o == Op::Forward ? "forward" : "adjoint"; }

// One benchmark problem in float: a random 3D trajectory over the grid's k-space extent with readout
// times over 20 ms, a smooth field map (a +-100 Hz bump plus a linear ramp, in rad/s) and a random
// complex image and k-space vector. n1 is the number of samples actually used (a subset of n1_full
// when the full problem is too large for the path); the first n1 samples are that subset.
struct Problem {
    uword nx, ny, nz, n1_full, n1;
    arma::fvec kx, ky, kz, t, ix, iy, iz, field_map, gx, gy, gz;
    arma::cx_fvec image, kdata;
    uword n2() const { return nx * ny * nz; }
    std::string pixels() const {
        return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " = " + std::to_string(n2());
    }
};

Problem make_problem(uword nx, uword ny, uword nz, uword n1_full, uword n1) {
    Problem p{nx, ny, nz, n1_full, std::min(n1, n1_full), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    std::mt19937_64 rng(20260322);  // fixed: the same problem every run
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    std::normal_distribution<double> g(0.0, 1.0);
    const uword n2 = p.n2();
    p.kx.set_size(p.n1);
    p.ky.set_size(p.n1);
    p.kz.set_size(p.n1);
    p.t.set_size(p.n1);
    for (uword j = 0; j < p.n1; ++j) {
        p.kx[j] = float(u(rng) * nx);
        p.ky[j] = float(u(rng) * ny);
        p.kz[j] = float(u(rng) * nz);
        p.t[j] = float((u(rng) + 0.5) * 20e-3);
    }
    p.ix.set_size(n2);
    p.iy.set_size(n2);
    p.iz.set_size(n2);
    p.field_map.set_size(n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                const double rx = (double(x) - double(nx / 2)) / double(nx);
                const double ry = (double(y) - double(ny / 2)) / double(ny);
                const double rz = (double(z) - double(nz / 2)) / double(nz);
                p.ix[i] = float(rx);
                p.iy[i] = float(ry);
                p.iz[i] = float(rz);
                const double hz = 100.0 * std::exp(-(rx * rx + ry * ry + rz * rz) / 0.05) + 30.0 * rx - 20.0 * ry;
                p.field_map[i] = float(2 * kPi * hz);
            }
    forge::GdftR2<float>::field_map_gradients(p.field_map, nx, ny, nz, p.gx, p.gy, p.gz);
    p.image.set_size(n2);
    for (auto& v : p.image) v = std::complex<float>(float(g(rng)), float(g(rng)));
    p.kdata.set_size(p.n1);
    for (auto& v : p.kdata) v = std::complex<float>(float(g(rng)), float(g(rng)));
    return p;
}

double sinc_pg(double x) { return x == 0.0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

// exp(-i phase) [* B] for sample j and pixel k in float64, from the float inputs.
std::complex<double> entry(const Problem& p, Kind kind, uword j, uword k) {
    const double ph = 2 * kPi * (double(p.kx[j]) * p.ix[k] + double(p.ky[j]) * p.iy[k] + double(p.kz[j]) * p.iz[k]) +
                      double(p.field_map[k]) * p.t[j];
    std::complex<double> e(std::cos(ph), -std::sin(ph));
    if (kind == Kind::GdftR2) {
        const double tj = p.t[j];
        e *= sinc_pg(p.kx[j] / double(p.nx) + double(p.gx[k]) * tj) *
             sinc_pg(p.ky[j] / double(p.ny) + double(p.gy[k]) * tj) *
             sinc_pg(p.kz[j] / double(p.nz) + double(p.gz[k]) * tj);
    }
    return e;
}

// ||out - ref|| / ||ref|| over 64 evenly spaced outputs, ref by float64 brute force. 'out' is the
// path's full output (n1 entries forward, n2 adjoint), in double.
double subset_error(const Problem& p, Kind kind, Op op, const std::complex<double>* out) {
    const uword nout = op == Op::Forward ? p.n1 : p.n2();
    const uword nsub = std::min<uword>(64, nout);
    double num = 0, den = 0;
#pragma omp parallel for reduction(+ : num, den) schedule(dynamic)
    for (long long s = 0; s < (long long)nsub; ++s) {
        const uword o = uword(s) * nout / nsub;
        std::complex<double> ref = 0;
        if (op == Op::Forward) {
            for (uword k = 0; k < p.n2(); ++k) ref += entry(p, kind, o, k) * std::complex<double>(p.image[k]);
        } else {
            for (uword j = 0; j < p.n1; ++j) ref += std::conj(entry(p, kind, j, o)) * std::complex<double>(p.kdata[j]);
        }
        num += std::norm(out[o] - ref);
        den += std::norm(ref);
    }
    return std::sqrt(num / den);
}

struct PathResult {
    double seconds;      // wall, per call
    double cpu_seconds;  // CPU time of all threads, per call
    double rel_error;    // vs float64 on the subset
};

// The operators' host (OpenMP) loops on forgeCol data in host memory, in precision T (the problem's float
// inputs converted).
template <typename T>
PathResult run_cpu(const Problem& p, Kind kind, Op op) {
    using V = forgeCol<forgeComplex<T>>;
    using Vec = arma::Col<T>;
    auto c = [](const arma::fvec& v) { return arma::conv_to<Vec>::from(v); };
    std::unique_ptr<forge::DftOperator<T>> G;
    if (kind == Kind::Gdft) {
        G = std::make_unique<forge::Gdft<T>>(p.n1, p.n2(), c(p.kx), c(p.ky), c(p.kz), c(p.ix), c(p.iy), c(p.iz),
                                             c(p.field_map), c(p.t));
    } else {
        G = std::make_unique<forge::GdftR2<T>>(p.n1, p.n2(), c(p.kx), c(p.ky), c(p.kz), c(p.ix), c(p.iy), c(p.iz),
                                               c(p.field_map), c(p.t), c(p.gx), c(p.gy), c(p.gz), p.nx, p.ny, p.nz);
    }
    const arma::cx_fvec& src = op == Op::Forward ? p.image : p.kdata;
    const V in(arma::conv_to<arma::Col<std::complex<T>>>::from(src));
    V out;
    const forge_bench::WallCpu t =
        forge_bench::time_call_wall_cpu([&] { out = op == Op::Forward ? (*G * in) : (*G / in); });
    const arma::cx_vec res = arma::conv_to<arma::cx_vec>::from(out.to_arma());
    return {t.wall, t.cpu, subset_error(p, kind, op, res.memptr())};
}

// Nominal clock from /proc/cpuinfo, in GHz (0 when unknown).
double cpu_ghz() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("cpu MHz", 0) == 0) return std::atof(line.substr(line.find(':') + 1).c_str()) / 1000.0;
    return 0.0;
}

struct Size {
    uword nx, ny, nz, n1;
};

void usage() {
    std::fprintf(stderr,
                 "usage: bench_gdft [--sizes small|large] [--threads N] [--subset S] [--ops gdft,gdftr2]\n"
                 "                  [--isa LIST] [--precision float,double]\n"
                 "  --sizes small  a few small problems (default)\n"
                 "  --sizes large  64x64x16 pixels, 131072 samples (times a subset of S samples)\n"
                 "  --threads N    OpenMP threads (default: all; 1 for per-core numbers)\n"
                 "  --subset S     samples timed per problem (default 4096 for large, all for small)\n"
                 "  --ops LIST     operators to time: gdft, gdftr2 or both (default both)\n"
                 "  --isa LIST     CPU loop builds to time (default: all this CPU runs: %s)\n"
                 "  --precision L  float, double or both (default both)\n",
                 [] {
                     std::string s;
                     for (const auto& i : forge::cpu_kernel_isas()) s += (s.empty() ? "" : ",") + i;
                     return s;
                 }()
                     .c_str());
}

std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> v;
    std::string rest = list + ",";
    for (size_t pos; (pos = rest.find(',')) != std::string::npos; rest.erase(0, pos + 1))
        if (pos > 0) v.push_back(rest.substr(0, pos));
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    std::string sizes = "small";
    std::string ops = "gdft,gdftr2";
    std::string precisions = "float,double";
    std::vector<std::string> isas = forge::cpu_kernel_isas();
    long subset = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_gdft: %s needs a value\n", a.c_str());
                usage();
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--sizes") {
            sizes = value();
        } else if (a == "--threads") {
            const int n = std::atoi(value().c_str());
            if (n < 1) {
                std::fprintf(stderr, "bench_gdft: --threads must be at least 1\n");
                return 2;
            }
            forge_bench::set_threads(n);
        } else if (a == "--subset") {
            subset = std::atol(value().c_str());
            if (subset < 1) {
                std::fprintf(stderr, "bench_gdft: --subset must be at least 1\n");
                return 2;
            }
        } else if (a == "--ops") {
            ops = value();
        } else if (a == "--isa") {
            isas = split(value());
        } else if (a == "--precision") {
            precisions = value();
        } else if (a == "-h" || a == "--help") {
            usage();
            return 0;
        } else {
            std::fprintf(stderr, "bench_gdft: unknown option '%s'\n", a.c_str());
            usage();
            return 2;
        }
    }
    std::vector<Size> list;
    uword default_subset = 0;
    if (sizes == "small") {
        list = std::vector<Size>{{32, 32, 1, 2048}, {64, 64, 1, 8192}, {32, 32, 8, 16384}};
        default_subset = 1u << 30;  // all samples
    } else if (sizes == "large") {
        list = std::vector<Size>{{64, 64, 16, 131072}};
        default_subset = 4096;
    } else {
        std::fprintf(stderr, "bench_gdft: --sizes must be small or large, got '%s'\n", sizes.c_str());
        return 2;
    }
    std::vector<Kind> kinds;
    for (const std::string& tok : split(ops)) {
        if (tok == "gdft") {
            kinds.push_back(Kind::Gdft);
        } else if (tok == "gdftr2") {
            kinds.push_back(Kind::GdftR2);
        } else {
            std::fprintf(stderr, "bench_gdft: unknown operator '%s' in --ops\n", tok.c_str());
            return 2;
        }
    }
    std::vector<bool> doubles;  // false: float
    for (const std::string& tok : split(precisions)) {
        if (tok == "float" || tok == "double") {
            doubles.push_back(tok == "double");
        } else {
            std::fprintf(stderr, "bench_gdft: --precision takes float and/or double, got '%s'\n", tok.c_str());
            return 2;
        }
    }
    if (kinds.empty() || doubles.empty() || isas.empty()) {
        std::fprintf(stderr, "bench_gdft: --ops, --precision and --isa need at least one entry each\n");
        return 2;
    }
    const std::string default_isa = forge::cpu_kernel_isa();
    for (const std::string& isa : isas) {
        try {
            forge::set_cpu_kernel_isa(isa);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_gdft: --isa: %s\n", e.what());
            return 2;
        }
    }
    const uword cpu_subset = subset > 0 ? uword(subset) : default_subset;
    const double ghz = cpu_ghz();

    std::printf(
        "bench_gdft: --sizes %s; %s at start; CPU clock %.3f GHz (/proc/cpuinfo); loop builds this CPU "
        "runs: %s (default: %s)\n"
        "error = ||y - y64|| / ||y64|| over 64 outputs (float64 brute force); s per call = fastest of >= 3 "
        "calls; pairs/s per core = pairs per CPU-second of the process; FMA bound (float Gdft) = 2 FMA pipes "
        "x lanes x clock / 20 FMA per pair\n\n",
        sizes.c_str(), forge_bench::machine_line().c_str(), ghz,
        [] {
            std::string s;
            for (const auto& i : forge::cpu_kernel_isas()) s += (s.empty() ? "" : ", ") + i;
            return s;
        }()
            .c_str(),
        default_isa.c_str());
    forge_bench::Table table({"ISA", "precision", "operator", "pixels", "samples timed (of total)", "s per call",
                              "pairs/s", "pairs/s per core", "of FMA bound", "full problem s (est.)", "rel. error"});
    for (const Size& sz : list) {
        const uword n1 = std::min(sz.n1, cpu_subset);
        const Problem p = make_problem(sz.nx, sz.ny, sz.nz, sz.n1, n1);
        for (const std::string& isa : isas) {
            forge::set_cpu_kernel_isa(isa);
            const int bits = forge::cpu_kernel_vector_bits();
            for (bool dbl : doubles)
                for (Kind kind : kinds)
                    for (Op op : {Op::Forward, Op::Adjoint}) {
                        const PathResult r = dbl ? run_cpu<double>(p, kind, op) : run_cpu<float>(p, kind, op);
                        const double pairs = double(p.n1) * double(p.n2());
                        const double rate = pairs / r.seconds;
                        const double per_core = pairs / r.cpu_seconds;
                        const double full = double(p.n1_full) * double(p.n2()) / rate;
                        // Only the float Gdft loop has the 20-FMA count the bound assumes.
                        const double bound = 2.0 * (bits / 32) * ghz * 1e9 / 20.0;
                        const std::string frac = (!dbl && kind == Kind::Gdft && ghz > 0)
                                                     ? forge_bench::fmt("%.0f%%", 100.0 * per_core / bound)
                                                     : "-";
                        table.add({isa + " (" + std::to_string(bits) + "-bit)", dbl ? "double" : "float",
                                   std::string(kind_name(kind)) + " " + op_name(op), p.pixels(),
                                   p.n1 == p.n1_full ? std::to_string(p.n1)
                                                     : std::to_string(p.n1) + " (of " + std::to_string(p.n1_full) + ")",
                                   forge_bench::fmt("%.4g", r.seconds), forge_bench::fmt("%.3g", rate),
                                   forge_bench::fmt("%.3g", per_core), frac, forge_bench::fmt("%.3g", full),
                                   forge_bench::fmt("%.2e", r.rel_error)});
                        std::fprintf(stderr, "  done: %s %s %s %s %s\n", isa.c_str(), dbl ? "double" : "float",
                                     kind_name(kind), op_name(op), p.pixels().c_str());
                    }
        }
    }
    table.print();
    std::printf("\nload average at end: %.2f\n", forge_bench::load_average());
    return 0;
}
