#pragma once
// Which instruction set the CPU loops of the exact DFT (Gdft, GdftR2) run on.
//
// forge compiles those loops once per instruction set: on x86-64 for SSE2 ("sse2"), AVX2 with FMA
// ("avx2") and AVX-512 ("avx512"), plus "native" (-march=native) when built with FORGE_NATIVE_ARCH=ON;
// elsewhere "generic". At first use the first of cpu_kernel_isas() is taken, unless the environment
// variable FORGE_CPU_KERNEL_ISA names another one of them.
#include <string>
#include <vector>

namespace forge {

// The instruction set in use, e.g. "avx2".
std::string cpu_kernel_isa();
// Width of its vectors in bits (128, 256 or 512).
int cpu_kernel_vector_bits();
// Those built into this library that this CPU runs, preferred first.
std::vector<std::string> cpu_kernel_isas();
// Switches to 'name' (one of cpu_kernel_isas(); forge::invalid_argument otherwise). Not thread-safe against
// operators running at the same time: call it between applications (benchmarks, tests).
void set_cpu_kernel_isa(const std::string& name);

}  // namespace forge
