#pragma once
// Small helpers shared by forge's benchmark programs: a wall-clock timer, a repeat-until-stable
// timing loop, the CPU's description for the table's device column, and table formatting.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace forge_bench {

// Wall-clock timer (steady clock), in seconds.
class CpuTimer {
public:
    CpuTimer() : start_(clock::now()) {}
    void reset() { start_ = clock::now(); }
    double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

private:
    using clock = std::chrono::steady_clock;
    clock::time_point start_;
};

// Median wall time of 'reps' runs of f (reps >= 1) after one warm-up run.
template <typename F>
double median_seconds(int reps, F&& f) {
    f();
    std::vector<double> ts;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

// Seconds per call of fn: one untimed warm-up call, then repeats until at least min_reps calls and
// min_seconds of total time; returns the fastest call (least disturbed by other load on the machine).
inline double time_call(const std::function<void()>& fn, int min_reps = 3, double min_seconds = 0.3,
                        int max_reps = 1000) {
    fn();
    double best = 1e300, total = 0;
    int reps = 0;
    while (reps < max_reps && (reps < min_reps || total < min_seconds)) {
        CpuTimer t;
        fn();
        const double s = t.seconds();
        best = std::min(best, s);
        total += s;
        ++reps;
    }
    return best;
}

// Process CPU time (all threads), in seconds.
inline double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// As time_call, but also the CPU time (all threads) of the call that used the least of it: on a machine
// shared with other work, pairs per CPU-second stay close to what an unloaded core delivers, while the
// wall time grows with the load.
struct WallCpu {
    double wall, cpu;
};
inline WallCpu time_call_wall_cpu(const std::function<void()>& fn, int min_reps = 3, double min_seconds = 0.3,
                                  int max_reps = 1000) {
    fn();
    WallCpu best{1e300, 1e300};
    double total = 0;
    int reps = 0;
    while (reps < max_reps && (reps < min_reps || total < min_seconds)) {
        const double c0 = cpu_seconds();
        CpuTimer t;
        fn();
        const double s = t.seconds();
        best.cpu = std::min(best.cpu, cpu_seconds() - c0);
        best.wall = std::min(best.wall, s);
        total += s;
        ++reps;
    }
    return best;
}

inline int max_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
inline void set_threads(int n) {
#ifdef _OPENMP
    if (n > 0) omp_set_num_threads(n);
#else
    (void)n;
#endif
}

// "model name" from /proc/cpuinfo ("unknown CPU" elsewhere).
inline std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string m = line.substr(colon + 1);
                m.erase(0, m.find_first_not_of(" \t"));
                return m;
            }
        }
    }
    return "unknown CPU";
}
// The 1-minute load average from /proc/loadavg (-1 when unknown): a loaded machine times slower.
inline double load_average() {
    std::ifstream f("/proc/loadavg");
    double l = -1;
    if (!(f >> l)) l = -1;
    return l;
}
// "CPU <model> (N online), T OpenMP threads, load average L": the machine a table was measured on,
// printed by every benchmark (development machines and GPU hosts differ from session to session).
inline std::string machine_line() {
    char load[32];
    std::snprintf(load, sizeof load, "%.2f", load_average());
    return "CPU " + cpu_model() + " (" + std::to_string(std::thread::hardware_concurrency()) + " online), " +
           std::to_string(max_threads()) + " OpenMP threads, load average " + load;
}
// "CPU <model>, N threads" for the device column.
inline std::string cpu_device_string() {
    return "CPU " + cpu_model() + ", " + std::to_string(max_threads()) + " threads";
}

// A plain-text table printed as Markdown (so it can be pasted into docs/benchmarks.md as is).
class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    void print(std::FILE* out = stdout) const {
        std::vector<size_t> w(header_.size(), 0);
        auto widen = [&](const std::vector<std::string>& r) {
            for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
        };
        widen(header_);
        for (const auto& r : rows_) widen(r);
        auto line = [&](const std::vector<std::string>& r) {
            std::fputs("|", out);
            for (size_t i = 0; i < w.size(); ++i) {
                const std::string& c = i < r.size() ? r[i] : std::string();
                std::fprintf(out, " %-*s |", int(w[i]), c.c_str());
            }
            std::fputs("\n", out);
        };
        line(header_);
        std::fputs("|", out);
        for (size_t i = 0; i < w.size(); ++i) std::fprintf(out, "%s|", std::string(w[i] + 2, '-').c_str());
        std::fputs("\n", out);
        for (const auto& r : rows_) line(r);
        std::fflush(out);
    }

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

// printf-style formatting into a std::string.
template <typename... A>
std::string fmt(const char* f, A... a) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a...);
    return buf;
}

}  // namespace forge_bench
