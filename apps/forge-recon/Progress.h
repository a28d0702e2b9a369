#pragma once
// Progress reporting for forge-recon's solver runs: a one-line progress bar (iteration, cost, ETA)
// redrawn in place when stderr is a terminal, plain lines (one per iteration) otherwise; and the steps of a
// Toeplitz kernel build, which comes before its solve's first iteration.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace forge_recon {

class Progress {
public:
    // total_iterations: over all solves of the job (for the ETA). quiet: print nothing.
    Progress(std::size_t total_iterations, bool quiet)
        : total_(total_iterations ? total_iterations : 1), quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1),
          t0_(std::chrono::steady_clock::now()) {}

    bool is_terminal() const { return tty_; }

    // One solver iteration finished: 'it' of 'niter' in the solve called 'label'.
    void iteration(const std::string& label, std::size_t it, std::size_t niter, double cost, double gradnorm) {
        ++done_;
        if (quiet_) return;
        const double elapsed = seconds(), left = eta();
        if (tty_) {
            const int width = 24;
            const int filled =
                static_cast<int>(width * static_cast<double>(std::min(done_, total_)) / static_cast<double>(total_));
            std::string bar(static_cast<std::size_t>(filled), '#');
            bar.append(static_cast<std::size_t>(width - filled), '.');
            std::fprintf(stderr, "\r%-28.28s [%s] it %3zu/%-3zu cost %10.4e  ETA %6.1fs ", label.c_str(), bar.c_str(),
                         it, niter, cost, left);
            if (it == niter) std::fprintf(stderr, "\n");
            std::fflush(stderr);
        } else {
            std::fprintf(stderr, "forge-recon: %s: iteration %zu/%zu cost %.6e gradient %.3e elapsed %.1fs ETA %.1fs\n",
                         label.c_str(), it, niter, cost, gradnorm, elapsed, left);
        }
    }
    // A step of the Toeplitz kernel build for the solve 'label': 'done' of 'total' (0 when it starts, total when it
    // ends), 'build_seconds' since it started. Printed when it starts and ends and at most once a second between
    // (on a terminal redrawn in place). Its time is left out of the ETA: the ETA extrapolates the iterations.
    void build(const std::string& label, std::size_t done, std::size_t total, double build_seconds) {
        const auto now = std::chrono::steady_clock::now();
        if (done == 0) buildStart_ = now;
        const bool last = done >= total;
        if (last) buildSeconds_ += std::chrono::duration<double>(now - buildStart_).count();
        if (quiet_) return;
        if (!last && done > 0 && std::chrono::duration<double>(now - lastBuildLine_).count() < 1.0) return;
        lastBuildLine_ = now;
        if (tty_) {
            std::fprintf(stderr, "\r%-28.28s Toeplitz kernels: step %zu/%zu, %.1fs ", label.c_str(), done, total,
                         build_seconds);
            if (last) std::fprintf(stderr, "\n");
            std::fflush(stderr);
        } else {
            std::fprintf(stderr, "forge-recon: %s: Toeplitz kernels: step %zu/%zu, %.1fs\n", label.c_str(), done, total,
                         build_seconds);
        }
    }
    // A solve stopped early (converged): finish its line on a terminal and count its skipped iterations.
    void finish_solve(std::size_t it, std::size_t niter) {
        if (it < niter) {
            done_ += niter - it;
            if (tty_ && !quiet_) std::fprintf(stderr, "\n");
        }
    }
    // A solve stopped by its tolerance after 'it' iterations, at relative gradient 'rel' <= 'tol'.
    void converged(const std::string& label, std::size_t it, double rel, double tol) {
        if (quiet_) return;
        std::fprintf(stderr,
                     "forge-recon: %s: converged after %zu iterations (relative gradient %.3e <= tolerance %g)\n",
                     label.c_str(), it, rel, tol);
    }
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
    // Seconds left: the time so far less the kernel builds, per iteration done, times the iterations left.
    double eta() const {
        if (!done_) return 0.0;
        const double iterating = std::max(0.0, seconds() - buildSeconds_);
        return iterating / static_cast<double>(done_) * static_cast<double>(total_ - std::min(done_, total_));
    }

private:
    std::size_t total_, done_ = 0;
    bool quiet_, tty_;
    std::chrono::steady_clock::time_point t0_, buildStart_ = t0_, lastBuildLine_ = t0_;
    double buildSeconds_ = 0;  // kernel builds finished so far
};

}  // namespace forge_recon
