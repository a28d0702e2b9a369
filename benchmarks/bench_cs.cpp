// bench_cs: compressed sensing quality and time on BART-simulated radial data and on forge's simulated field-corrected
// spiral (benchmarks/bench_cs.sh and bench_cs_spiral.sh make the data and run BART's pics and SigPy beside it;
// bench_cs_time.sh times forge against pics at equal iterations; docs/benchmarks.md, "Compressed sensing").
//
//   bench_cs solve DIR [--lambdas a,b,...] [-n ITER] [--methods fista,pogm,admm] [--penalties wavelet,tv]
//                      [--device cpu|gpu] [--shifts on|off] [--adaptive-rho on|off] [--wavelet haar|db2|db4]
//                      [--levels J] [--field on|off] [--max-error E] [--baseline on|off]
//       DIR holds BART files: traj (3 x samples x spokes, k in cycles/FOV), ksp (1 x samples x spokes x coils), sens
//       (N x N x 1 x coils), ref (N x N). SENSE over the NUFFT with a Toeplitz normal (ToeplitzNormal per coil);
//       b = E^H y once by the NUFFT. Each method runs on the normal form (N = E^H E, b) with lambda relative to
//       max |E^H y| (forge-recon's --lambda); CG-SENSE (solve_pwls_pcg_normal, no penalty) is the baseline
//       (--baseline off: left out). Prints one row per method and lambda: NRMSE of the magnitude after the
//       least-squares scale fit (forge's magnitude_quality, as forge-recon reports it), the solve's wall time and
//       time per iteration; then each method's best row. The wavelet penalty (WaveletL1Penalty's defaults unless
//       --wavelet, --levels) draws random shifts (BART's default) except under ADMM, which needs a fixed penalty;
//       --shifts off turns them off everywhere.
//       --field on (DIR from bench_cs spiral): the field-corrected operator, SENSE over a time-segmented NUFFT
//       (min-max interpolators, the fewest segments whose estimated error is below --max-error, default 1e-3) with
//       its field-corrected Toeplitz normal; --field off ignores the field map.
//   bench_cs spiral DIR [--size N] [--coils C] [--shots S] [--turns T] [--samples n] [--dwell-us d] [--max-hz f]
//                       [--noise s]
//       Simulates the field-corrected spiral data into DIR (CsSpiralData.h: forge's simulator, the exact
//       field-corrected DFT, BART's arrays).
//   bench_cs nrmse IMG REF
//       NRMSE of |IMG| (a BART .cfl, e.g. pics' output) against |REF| by the same metric.
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "BenchCommon.h"
#include "CsSpiralData.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Penalties/ExactTVPenalty.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/WaveletL1Penalty.h"
#include "forge/Recon/Metrics.h"
#include "forge/Solvers/solve_admm.h"
#include "forge/Solvers/solve_fista.h"
#include "forge/Solvers/solve_pogm.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge;
using forge_bench::CpuTimer;

namespace {

// BART's .hdr/.cfl pair: the dimensions, then interleaved complex float data.
struct Cfl {
    std::vector<long> dims;
    arma::cx_fvec data;
};
Cfl read_cfl(const std::string& base) {
    Cfl c;
    std::ifstream h(base + ".hdr");
    if (!h) throw std::runtime_error("bench_cs: cannot read " + base + ".hdr");
    std::string line;
    std::getline(h, line);  // "# Dimensions"
    std::getline(h, line);
    std::istringstream s(line);
    long d, n = 1;
    while (s >> d) {
        c.dims.push_back(d);
        n *= d;
    }
    c.data.set_size(arma::uword(n));
    std::ifstream f(base + ".cfl", std::ios::binary);
    if (!f.read(reinterpret_cast<char*>(c.data.memptr()), std::streamsize(n * sizeof(std::complex<float>))))
        throw std::runtime_error("bench_cs: " + base + ".cfl is shorter than its header says");
    return c;
}

std::vector<double> parse_list(const std::string& s) {
    std::vector<double> v;
    std::stringstream ss(s);
    std::string t;
    while (std::getline(ss, t, ',')) v.push_back(std::stod(t));
    return v;
}
std::vector<std::string> parse_words(const std::string& s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string t;
    while (std::getline(ss, t, ',')) v.push_back(t);
    return v;
}

double quality(const arma::cx_fvec& x, const arma::cx_fvec& ref) {
    return recon::magnitude_quality({arma::abs(x)}, {arma::abs(ref)}).nrmse;
}

int nrmse_mode(const std::string& img, const std::string& ref) {
    const Cfl a = read_cfl(img), r = read_cfl(ref);
    if (a.data.n_elem != r.data.n_elem) {
        std::fprintf(stderr, "bench_cs: %s and %s differ in size\n", img.c_str(), ref.c_str());
        return 2;
    }
    std::printf("%.6f\n", quality(a.data, r.data));
    return 0;
}

int spiral_mode(int argc, char** argv) {
    forge_bench::SpiralOptions o;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const double v = std::stod(argv[i + 1]);
        if (a == "--size")
            o.size = uword(v);
        else if (a == "--coils")
            o.coils = uword(v);
        else if (a == "--shots")
            o.shots = uword(v);
        else if (a == "--turns")
            o.turns = v;
        else if (a == "--samples")
            o.samples = uword(v);
        else if (a == "--dwell-us")
            o.dwell_us = v;
        else if (a == "--max-hz")
            o.max_hz = v;
        else if (a == "--noise")
            o.noise = v;
        else {
            std::fprintf(stderr, "bench_cs spiral: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    forge_bench::simulate_spiral(argv[2], o);
    return 0;
}

struct Row {
    std::string method, penalty;
    double lambda, nrmse, seconds;
    uword iterations;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "nrmse") return nrmse_mode(argv[2], argv[3]);
    if (argc >= 3 && std::string(argv[1]) == "spiral") return spiral_mode(argc, argv);
    if (argc < 3 || std::string(argv[1]) != "solve") {
        std::fprintf(stderr, "usage: bench_cs solve DIR [--lambdas a,b] [-n ITER] [--methods fista,pogm,admm] "
                             "[--penalties wavelet,tv] [--device cpu|gpu] | bench_cs nrmse IMG REF\n");
        return 2;
    }
    const std::string dir = argv[2];
    std::vector<double> lambdas{0.001, 0.002, 0.005, 0.01};
    std::vector<std::string> methods{"fista", "pogm", "admm"}, penalties{"wavelet", "tv"};
    uword niter = 50;
    bool gpu = false, shifts = true, adaptive_rho = true;
    WaveletFamily family = WaveletL1Options().family;
    uword levels = 0;
    bool field = false, baseline = true;
    double max_error = 1e-3;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--lambdas")
            lambdas = parse_list(v);
        else if (a == "-n")
            niter = uword(std::stoul(v));
        else if (a == "--methods")
            methods = parse_words(v);
        else if (a == "--penalties")
            penalties = parse_words(v);
        else if (a == "--device")
            gpu = v == "gpu";
        else if (a == "--shifts")
            shifts = v == "on";
        else if (a == "--wavelet")
            family = wavelet_family_from_name(v);
        else if (a == "--levels")
            levels = uword(std::stoul(v));
        else if (a == "--baseline")
            baseline = v == "on";
        else if (a == "--field")
            field = v == "on";
        else if (a == "--max-error")
            max_error = std::stod(v);
        else if (a == "--adaptive-rho")
            adaptive_rho = v == "on";
        else {
            std::fprintf(stderr, "bench_cs: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    const Cfl traj = read_cfl(dir + "/traj"), ksp = read_cfl(dir + "/ksp"), sens = read_cfl(dir + "/sens"),
              ref = read_cfl(dir + "/ref");
    const uword N = uword(sens.dims[0]), nc = sens.dims.size() > 3 ? uword(sens.dims[3]) : 1;
    const uword n1 = uword(traj.dims[1] * traj.dims[2]), n2 = N * N;
    arma::fvec kx(n1), ky(n1), kz(n1, arma::fill::zeros);
    for (uword j = 0; j < n1; ++j) {
        kx(j) = traj.data(3 * j).real();
        ky(j) = traj.data(3 * j + 1).real();
    }
    // Maps to a largest root-sum-of-squares of 1 and data to an RMS of 1 (as forge-recon scales them).
    arma::fvec rss(n2, arma::fill::zeros);
    for (uword c = 0; c < nc; ++c) rss += arma::square(arma::abs(sens.data.subvec(c * n2, (c + 1) * n2 - 1)));
    const arma::cx_fvec maps = sens.data / std::sqrt(rss.max());
    const arma::cx_fvec y = ksp.data / float(arma::norm(ksp.data) / std::sqrt(double(ksp.data.n_elem)));

    std::printf("bench_cs: %s\n", forge_bench::machine_line().c_str());
    std::printf("bench_cs: %s: %llux%llu image, %llu coils, %llu samples (%ld spokes), %llu iterations, %s\n",
                dir.c_str(), (unsigned long long)N, (unsigned long long)N, (unsigned long long)nc,
                (unsigned long long)n1, traj.dims[2], (unsigned long long)niter, gpu ? "GPU" : "CPU");
    CpuTimer tb;
    const auto Gn = std::make_shared<const Gnufft<float>>(n1, N, N, 1, kx, ky, kz);
    OperatorPtr<float> G;
    if (field) {
        arma::fvec fm = arma::real(read_cfl(dir + "/fmap").data), t = arma::real(read_cfl(dir + "/times").data);
        if (fm.n_elem != n2 || t.n_elem != n1)
            throw std::runtime_error("bench_cs: fmap must hold N*N values and times one per sample");
        const TSErrorReport ts = TimeSegmentationCore<float>::choose_segments(fm, t, max_error, TSInterp::MinMax);
        std::printf("bench_cs: field correction, %llu time segments (estimated RMS error %.2g)\n",
                    (unsigned long long)ts.L, ts.rms_error);
        const auto TS =
            std::make_shared<const TimeSegmentation<float, Gnufft<float>>>(Gn, fm, t, ts.L, TSInterp::MinMax);
        const auto T = std::make_shared<ToeplitzNormal<float>>(ImageGrid(N, N), Trajectory<float>(kx, ky, kz, t),
                                                               arma::fvec(), fm, ts.L, TSInterp::MinMax);
        G = with_normal<float>(TS, T);
    } else {
        G = with_normal<float>(Gn, std::make_shared<ToeplitzNormal<float>>(N, N, 1, kx, ky, kz, arma::fvec()));
    }
    const auto E = std::make_shared<const SENSE<float, LinearOperator<float>>>(G, maps, nc);
    const NormalOf<float> Nrm(E);
    using V = forgeCol<forgeComplex<float>>;
    V fy(y);
    if (gpu) {
        fy.put_on_gpu();
        E->prepare_device();
    }
    const V b = *E / fy;
    V x0 = V::same_place(b, n2);
    x0.zeros();
    arma::cx_fvec bh;
    {
        V c = b;
        if (c.on_gpu()) c.get_from_gpu();
        bh = c.to_arma();
    }
    const double bmax = double(arma::max(arma::abs(bh)));
    const double ynorm2 = std::pow(double(arma::norm(y)), 2);
    std::printf("bench_cs: set-up (NUFFT plan, Toeplitz kernels, E^H y) %.2f s; max |E^H y| = %.4g\n", tb.seconds(),
                bmax);
    auto host = [](V v) {
        if (v.on_gpu()) v.get_from_gpu();
        return v.to_arma();
    };

    std::vector<Row> rows;
    forge_bench::Table table({"method", "penalty", "lambda", "iterations", "NRMSE", "solve (s)", "per iteration (ms)"});
    auto add = [&](const Row& r) {
        rows.push_back(r);
        char l[32], q[32], s[32], it[32];
        std::snprintf(l, sizeof l, "%g", r.lambda);
        std::snprintf(q, sizeof q, "%.4f", r.nrmse);
        std::snprintf(s, sizeof s, "%.2f", r.seconds);
        std::snprintf(it, sizeof it, "%.1f", 1e3 * r.seconds / double(std::max<uword>(r.iterations, 1)));
        table.add({r.method, r.penalty, l, std::to_string(r.iterations), q, s, it});
        std::fprintf(stderr, "  %s %s lambda %g: NRMSE %.4f, %.2f s\n", r.method.c_str(), r.penalty.c_str(), r.lambda,
                     r.nrmse, r.seconds);
    };
    if (baseline) {  // CG-SENSE: no penalty, the same normal operator and iterations
        QuadPenalty<float> R0(N, N, 1, 0.0f);
        PcgOptions<float> po;
        po.data_norm2 = ynorm2;
        SolverReport rep;
        CpuTimer t;
        const V x = solve_pwls_pcg_normal<float>(x0, Nrm, b, R0, niter, po, &rep);
        add({"cg-sense", "none", 0, quality(host(x), ref.data), t.seconds(), rep.iterations});
    }
    for (const std::string& pen : penalties)
        for (const std::string& m : methods)
            for (double lam : lambdas) {
                const float l = float(lam * bmax);
                std::unique_ptr<ProxPenalty<float>> R;
                WaveletL1Options wo;
                wo.random_shift = shifts && m != "admm";  // ADMM needs a fixed penalty (solve_admm.h)
                wo.family = family;
                wo.levels = levels;
                if (pen == "wavelet")
                    R.reset(new WaveletL1Penalty<float>(ImageGrid(N, N), l, wo));
                else
                    R.reset(new ExactTVPenalty<float>(ImageGrid(N, N), l));
                ProxOptions<float> o;
                o.data_norm2 = ynorm2;
                o.adaptive_rho = adaptive_rho;
                ProxReport rep;
                CpuTimer t;
                V x = m == "fista"  ? solve_fista_normal<float>(x0, Nrm, b, *R, niter, o, &rep)
                      : m == "pogm" ? solve_pogm_normal<float>(x0, Nrm, b, *R, niter, o, &rep)
                                    : solve_admm_normal<float>(x0, Nrm, b, *R, niter, o, &rep);
                add({m, pen, lam, quality(host(x), ref.data), t.seconds(), rep.iterations});
            }
    std::printf("\nAll runs:\n\n");
    table.print();
    std::map<std::string, Row> best;
    for (const Row& r : rows) {
        const std::string k = r.method + " " + r.penalty;
        if (!best.count(k) || r.nrmse < best[k].nrmse) best[k] = r;
    }
    forge_bench::Table bt({"method", "penalty", "best lambda", "NRMSE", "solve (s)"});
    for (const auto& kv : best) {
        char l[32], q[32], s[32];
        std::snprintf(l, sizeof l, "%g", kv.second.lambda);
        std::snprintf(q, sizeof q, "%.4f", kv.second.nrmse);
        std::snprintf(s, sizeof s, "%.2f", kv.second.seconds);
        bt.add({kv.second.method, kv.second.penalty, l, q, s});
    }
    std::printf("\nBest lambda of each method:\n\n");
    bt.print();
    return 0;
}
