#pragma once
// forge's OpenMP policy for host loops (docs/conventions.md, "Threads").
//
// An element-wise loop (a multiply or an add per element) is memory-bound and short, and every parallel
// region ends in a barrier that waits for each thread of the team. On a loaded machine a team thread may
// wait for a CPU while its partner spins at the barrier (libgomp spins ~300000 times, milliseconds,
// before it sleeps): measured with benchmarks/bench_threads on the 2-core development machine, a
// 2-thread product of 65536 complex floats took 12-17 ms when the machine was loaded, 0.045 ms on one
// thread. Element-wise loops therefore fork only when they touch at least kParallelElementwiseBytes.
#include <cstddef>

namespace forge {
namespace detail {

// Bytes (operands and result) an element-wise loop must touch before it runs on several threads.
// Where the number comes from (bench_threads, first table, docs/benchmarks.md "Threads on a shared
// machine"): on an idle machine two threads halve a complex product from ~2^14 elements on, saving at
// most half of what one thread takes (0.13 ms of 0.26 ms at 2^18 elements, 6.3 MB); on a loaded machine
// a fork costs 0.05 ms with a passive wait policy and 8-16 ms with libgomp's default one. 8 MiB is where
// one thread takes ~0.35 ms: loops below it cannot gain more than ~0.2 ms by forking, and never fork.
constexpr std::size_t kParallelElementwiseBytes = std::size_t(8) << 20;

// Whether an element-wise loop over n elements, each touching bytes_per_element bytes, should fork.
constexpr bool parallel_elementwise(std::size_t n, std::size_t bytes_per_element) {
    return bytes_per_element > 0 && n >= (kParallelElementwiseBytes + bytes_per_element - 1) / bytes_per_element;
}

}  // namespace detail
}  // namespace forge
