// bench_threads: OpenMP on a shared CPU. Times (1) one element-wise complex float multiply, c = a % b, as
// a raw loop forced onto 1 or N threads (where threads pay off: the source of forge's element-wise
// threshold, forge/Core/Parallel.h) and as forgeCol's operator% (forge's policy), and (2) the
// time-segmented operator TimeSegmentation<float, Gnufft<float>> (forward + adjoint, 128x128 spiral,
// 65536 samples) with 1 and N threads (N = 2 unless --threads), each on an idle machine and next to a
// competing load: a child process that spins on the last CPU for the duration of the measurement. A
// first line reports how long an idle OpenMP thread spins after a region under the wait policy in effect.
//   bench_threads [--quick] [--part elementwise|timeseg] [--threads N]
//   (--quick: fewer sizes, shorter timings; --part: one table only; --threads: compare 1 thread with N,
//   default 2)
// Prints the CPU model and /proc/loadavg; the variants of a row are called in turn (so that they see the
// same background load) and reported as medians (a loaded machine makes the typical call slow, not the
// fastest one), with the process CPU time per call (threads spinning while they wait show up there).
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "BenchCommon.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/TimeSegmentation.h"

using namespace forge;
using namespace forge_bench;
using FVec = forgeCol<forgeComplex<float>>;

namespace {
constexpr double kPi = 3.14159265358979323846;
int g_threads = 2;  // the team size compared with 1 thread (--threads)

std::string loadavg_line() {
    std::ifstream f("/proc/loadavg");
    std::string s;
    std::getline(f, s);
    return s.empty() ? "unknown" : s;
}

double cpu_seconds() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return double(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * double(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

// A process spinning on one CPU while it lives (the competing load).
class BusyProcess {
public:
    explicit BusyProcess(int cpu) {
        pid_ = fork();
        if (pid_ == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
            volatile unsigned long long x = 0;
            for (;;) x = x + 1;
        }
    }
    ~BusyProcess() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    BusyProcess(const BusyProcess&) = delete;
    BusyProcess& operator=(const BusyProcess&) = delete;

private:
    pid_t pid_ = -1;
};

struct Timing {
    double median, cpu;  // wall seconds per call (median), process CPU seconds per call (mean)
};
// Calls the functions in turn (one warm-up round, then rounds until min_seconds and min_rounds), so
// that each sees the same background load; the median wall time and the mean CPU time of each.
std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& fns, double min_seconds,
                                     int min_rounds) {
    for (const auto& f : fns) f();
    std::vector<std::vector<double>> wall(fns.size());
    std::vector<double> cpu(fns.size(), 0.0);
    CpuTimer total;
    int rounds = 0;
    while (rounds < min_rounds || total.seconds() < min_seconds) {
        for (size_t i = 0; i < fns.size(); ++i) {
            const double c0 = cpu_seconds();
            CpuTimer one;
            fns[i]();
            wall[i].push_back(one.seconds());
            cpu[i] += cpu_seconds() - c0;
        }
        ++rounds;
    }
    std::vector<Timing> out;
    for (size_t i = 0; i < fns.size(); ++i) {
        auto& w = wall[i];
        std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
        out.push_back({w[w.size() / 2], cpu[i] / rounds});
    }
    return out;
}

// c = a % b as a raw OpenMP loop on 'threads' threads (no threshold): what a forked loop costs.
void forced_multiply(const FVec& a, const FVec& b, FVec& c, int threads) {
    const forgeComplex<float>* pa = a.memptr();
    const forgeComplex<float>* pb = b.memptr();
    forgeComplex<float>* pc = c.memptr();
    const long long n = (long long)a.n_elem;
#pragma omp parallel for num_threads(threads)
    for (long long i = 0; i < n; ++i) pc[i] = pa[i] * pb[i];
}

FVec random_vec(arma::uword n, std::mt19937_64& rng) {
    std::normal_distribution<float> d;
    FVec v(n);
    for (arma::uword i = 0; i < n; ++i) v[i] = forgeComplex<float>(d(rng), d(rng));
    return v;
}

void elementwise_table(bool quick, int load_cpu) {
    std::mt19937_64 rng(7);
    std::vector<arma::uword> sizes;
    for (int p = 10; p <= (quick ? 20 : 22); p += (quick ? 2 : 1)) sizes.push_back(arma::uword(1) << p);
    const std::string m = std::to_string(g_threads) + " thr";
    Table t({"n", "bytes", "load", "forced 1 thr (us)", "forced " + m + " (us)", m + " / 1 thr",
             "forgeCol % , " + m + " (us)", "CPU/call (us)"});
    for (int loaded = 0; loaded < 2; ++loaded) {
        for (arma::uword n : sizes) {
            const FVec a = random_vec(n, rng), b = random_vec(n, rng);
            FVec c(n);
            BusyProcess* busy = loaded ? new BusyProcess(load_cpu) : nullptr;
            const std::vector<Timing> tm =
                time_interleaved({[&] { forced_multiply(a, b, c, 1); }, [&] { forced_multiply(a, b, c, g_threads); },
                                  [&] {
                                      set_threads(g_threads);
                                      c = a % b;
                                  }},
                                 quick ? 0.1 : 0.5, 20);
            delete busy;
            const Timing &t1 = tm[0], &t2 = tm[1], &tf = tm[2];
            t.add({std::to_string(n), fmt("%.2g", double(3 * n * sizeof(forgeComplex<float>))),
                   loaded ? "1 spinning process" : "none", fmt("%.1f", 1e6 * t1.median), fmt("%.1f", 1e6 * t2.median),
                   fmt("%.2f", t2.median / t1.median), fmt("%.1f", 1e6 * tf.median), fmt("%.1f", 1e6 * tf.cpu)});
        }
    }
    t.print();
}

// CPU time the process burns while its master thread sleeps 100 ms after a region: how long
// the idle OpenMP thread spins before it sleeps (libgomp: OMP_WAIT_POLICY, GOMP_SPINCOUNT).
void spin_line() {
    set_threads(g_threads);
    volatile double sink = 0;
    double burnt = 0;
    const int rounds = 10;
    for (int r = 0; r <= rounds; ++r) {
#pragma omp parallel
        { sink = sink + 1; }
        const double c0 = cpu_seconds();
        usleep(100000);
        if (r > 0) burnt += cpu_seconds() - c0;  // the first region also starts the thread
    }
    std::printf("idle OpenMP threads after a region of the team: %.2f ms of CPU per 100 ms sleep of the master "
                "(mean of %d)\n",
                1e3 * burnt / rounds, rounds);
}

void timeseg_table(bool quick, int load_cpu) {
    // 2D 128x128, 16-interleave spiral, 25 ms readouts, field map up to +-120 Hz (as bench_nufft).
    const arma::uword N = 128, il = 16, per = 4096, n1 = il * per;
    arma::fvec kx(n1), ky(n1), kz(n1, arma::fill::zeros), tv(n1);
    for (arma::uword j = 0; j < n1; ++j) {
        const double f = double(j % per) / per, th = 2 * kPi * (12 * f + double(j / per) / il);
        kx(j) = float(f * (N / 2 - 1) * std::cos(th));
        ky(j) = float(f * (N / 2 - 1) * std::sin(th));
        tv(j) = float(25e-3 * f);
    }
    arma::fvec fm(N * N);
    for (arma::uword y = 0; y < N; ++y)
        for (arma::uword x = 0; x < N; ++x) {
            const double u = (double(x) - N / 2.0) / N, v = (double(y) - N / 2.0) / N;
            fm(x + N * y) = float(2 * kPi * 120 * std::exp(-(u * u + (v - 0.1) * (v - 0.1)) * 12) - 2 * kPi * 30 * u);
        }
    Gnufft<float> G(n1, N, N, 1, kx, ky, kz);
    using TS = TimeSegmentation<float, Gnufft<float>>;
    const TSErrorReport rep = TS::choose_segments(fm, tv, 1e-3, TSInterp::MinMax);
    TS A(G, fm, tv, rep.L, TSInterp::MinMax);
    std::mt19937_64 rng(11);
    const FVec x = random_vec(N * N, rng), yk = random_vec(n1, rng);
    Table t({"case", "load", "threads", "forward+adjoint (ms)", "CPU/call (ms)", "vs 1 thread"});
    for (int loaded = 0; loaded < 2; ++loaded) {
        auto call = [&](int threads) {
            return [&, threads] {
                set_threads(threads);
                FVec y = A * x;
                FVec z = A / yk;
            };
        };
        BusyProcess* busy = loaded ? new BusyProcess(load_cpu) : nullptr;
        const std::vector<Timing> tm = time_interleaved({call(1), call(g_threads)}, quick ? 1.0 : 4.0, 5);
        delete busy;
        for (int threads : {1, g_threads}) {
            const Timing& r = tm[threads == 1 ? 0 : 1];
            t.add({fmt("TS(Gnufft) 128x128, %llu samples, L=%llu", (unsigned long long)n1, (unsigned long long)rep.L),
                   loaded ? "1 spinning process" : "none", std::to_string(threads), fmt("%.2f", 1e3 * r.median),
                   fmt("%.2f", 1e3 * r.cpu), fmt("%.2f", r.median / tm[0].median)});
        }
    }
    t.print();
}
}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string part = "all";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) >= 2) {
            g_threads = std::atoi(argv[++i]);
        } else if (std::strcmp(argv[i], "--part") == 0 && i + 1 < argc &&
                   (std::strcmp(argv[i + 1], "elementwise") == 0 || std::strcmp(argv[i + 1], "timeseg") == 0)) {
            part = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_threads [--quick] [--part elementwise|timeseg] [--threads N]\n");
            return 2;
        }
    }
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const int load_cpu = int(std::max(1L, ncpu) - 1);
    const char* wp = std::getenv("OMP_WAIT_POLICY");
    std::printf("bench_threads: CPU %s, %ld CPUs online, OMP_WAIT_POLICY=%s\n", cpu_model().c_str(), ncpu,
                wp ? wp : "(unset)");
    std::printf("/proc/loadavg at start: %s; competing load: one process spinning on CPU %d while each loaded row "
                "is measured\n\n",
                loadavg_line().c_str(), load_cpu);
    spin_line();
    std::printf("\n");
    if (part != "timeseg") elementwise_table(quick, load_cpu);
    if (part == "all") std::printf("\n");
    if (part != "elementwise") timeseg_table(quick, load_cpu);
    std::printf("\n/proc/loadavg at end: %s\n", loadavg_line().c_str());
    return 0;
}
