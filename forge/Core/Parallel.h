#pragma once
// forge's OpenMP policy for host loops (docs/conventions.md, "Threads").
//
// An element-wise loop (a multiply or an add per element) is memory-bound and short, and every parallel
// region ends in a barrier that waits for each thread of the team. On a loaded machine a team thread may
// wait for a CPU while its partner spins at the barrier (libgomp spins ~300000 times, milliseconds,
// before it sleeps): measured with benchmarks/bench_threads on the 2-core development machine, a
// 2-thread product of 65536 complex floats took 12-17 ms when the machine was loaded, 0.05 ms on one
// thread. Element-wise loops therefore fork only when they touch at least kParallelElementwiseBytes.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace forge {
namespace detail {

// Bytes (operands and result) an element-wise loop must touch before it runs on several threads.
// Where the number comes from: benchmarks/bench_threads, first table (docs/benchmarks.md, "Threads on a
// shared machine"), a complex float product c = a % b on the 2-core development machine, shared with
// other jobs. With OMP_WAIT_POLICY=passive two threads first beat one at 2^21 elements (50 MB touched:
// 0.78-1.00 of the one-thread time; 1.00-1.5 at 2^20, 25 MB; slower below). With libgomp's default
// policy they take 0.45-0.75 of it from 2^14 to 2^20 elements when the partner thread is ready, and
// stall 4-12 ms when it is not, at any size. 32 MiB lies between the break-even and the first gain;
// a loop that large takes over a millisecond on one thread.
constexpr std::size_t kParallelElementwiseBytes = std::size_t(32) << 20;

// Whether an element-wise loop over n elements, each touching bytes_per_element bytes, should fork.
constexpr bool parallel_elementwise(std::size_t n, std::size_t bytes_per_element) {
    return bytes_per_element > 0 && n >= (kParallelElementwiseBytes + bytes_per_element - 1) / bytes_per_element;
}

// Bytes a pass over a reconstruction's input must touch before it runs on several threads: the checks, copies and
// sums that read a slice's samples once per reconstruction (not once per iteration, where a stall repeats). One
// thread of an H200's 16-core host reads 7 to 8 GB/s, so each pass over a 256x256 x 16-coil slice's 12.6 MB took
// 1.6 ms of the slice's latency, and 4 MiB (one interleave of it) 0.5 ms, far above a parallel region's start.
constexpr std::size_t kParallelPassBytes = std::size_t(4) << 20;

// Whether a pass over n elements of bytes_per_element bytes each should fork.
constexpr bool parallel_pass(std::size_t n, std::size_t bytes_per_element) {
    return bytes_per_element > 0 && n >= (kParallelPassBytes + bytes_per_element - 1) / bytes_per_element;
}

// Terms a reduction sums in order before its partial sum joins the others: the block of fixed_order_sum.
constexpr std::size_t kReductionBlock = std::size_t(1) << 15;

// sum_{i < n} of the terms add(i, acc) accumulates (acc += term i), computed the same way, bit for bit, on any number
// of threads: the terms fall into fixed blocks of kReductionBlock (not one per thread), each block is summed in index
// order, and the blocks' sums are added in block order. Blocks run on the threads when 'fork' and there are two or
// more; n <= kReductionBlock is the plain serial sum. Acc: double or std::complex<double> (value-initialised to 0).
template <typename Acc, typename Add>
Acc fixed_order_sum(std::size_t n, bool fork, Add&& add) {
    const std::size_t nblocks = (n + kReductionBlock - 1) / kReductionBlock;
    if (nblocks <= 1) {
        Acc s{};
        for (std::size_t i = 0; i < n; ++i) add(i, s);
        return s;
    }
    std::vector<Acc> partial(nblocks);
#pragma omp parallel for schedule(static) if (fork)
    for (long long b = 0; b < static_cast<long long>(nblocks); ++b) {
        const std::size_t lo = std::size_t(b) * kReductionBlock, hi = std::min(n, lo + kReductionBlock);
        Acc s{};
        for (std::size_t i = lo; i < hi; ++i) add(i, s);
        partial[std::size_t(b)] = s;
    }
    Acc s = partial[0];
    for (std::size_t b = 1; b < nblocks; ++b) s += partial[b];
    return s;
}

// Runs body(b) for b < nbatch independent transforms of a batch (coils, time segments): one parallel region,
// whole transforms per thread (their own loops then run on that thread), when every thread gets at least
// one and no region is active; otherwise in order, each transform using the threads itself. Each result is
// computed the same way in both cases. The first exception a transform throws is rethrown.
template <typename Body>
void for_each_in_batch(std::size_t nbatch, Body&& body) {
#ifdef _OPENMP
    const int t = omp_get_max_threads();
    if (t > 1 && !omp_in_parallel() && nbatch >= std::size_t(t)) {
        std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(t)
        for (long long b = 0; b < static_cast<long long>(nbatch); ++b) {
            try {
                body(std::size_t(b));
            } catch (...) {
#pragma omp critical(forge_batch_error)
                if (!error) error = std::current_exception();
            }
        }
        if (error) std::rethrow_exception(error);
        return;
    }
#endif
    for (std::size_t b = 0; b < nbatch; ++b) body(b);
}

}  // namespace detail
}  // namespace forge
