// Picks the build of the exact-DFT CPU loops (forge/Operators/dft/cpu/DftCpuKernelsIsa.cpp) that this CPU
// runs, preferring the widest vectors; CMake defines FORGE_DFTCPU_HAVE_<ISA> for each build it compiled.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "forge/Core/Exceptions.h"
#include "forge/Operators/dft/CpuKernelIsa.h"
#include "forge/Operators/dft/cpu/DftCpuKernels.h"

#define FORGE_DFTCPU_DECLARE(isa)                      \
    namespace forge::dftcpu::isa {                     \
    void apply_float(const DftKernelArgs<float>& g);   \
    void apply_double(const DftKernelArgs<double>& g); \
    int vector_bits();                                 \
    }

#ifdef FORGE_DFTCPU_HAVE_native
FORGE_DFTCPU_DECLARE(native)
#endif
#ifdef FORGE_DFTCPU_HAVE_avx512
FORGE_DFTCPU_DECLARE(avx512)
#endif
#ifdef FORGE_DFTCPU_HAVE_avx2
FORGE_DFTCPU_DECLARE(avx2)
#endif
#ifdef FORGE_DFTCPU_HAVE_sse2
FORGE_DFTCPU_DECLARE(sse2)
#endif
#ifdef FORGE_DFTCPU_HAVE_generic
FORGE_DFTCPU_DECLARE(generic)
#endif

namespace forge {
namespace dftcpu {
namespace {

struct Isa {
    const char* name;
    bool (*supported)();
    DftKernelF f;
    DftKernelD d;
    int (*bits)();
};

bool always() { return true; }
#if defined(__x86_64__) || defined(__i386__)
bool has_avx512() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
bool has_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

#define FORGE_DFTCPU_ENTRY(isa, test) \
    Isa { #isa, test, isa::apply_float, isa::apply_double, isa::vector_bits }

// Preferred first.
const std::vector<Isa>& all_isas() {
    static const std::vector<Isa> v = {
#ifdef FORGE_DFTCPU_HAVE_native
        FORGE_DFTCPU_ENTRY(native, always),
#endif
#ifdef FORGE_DFTCPU_HAVE_avx512
        FORGE_DFTCPU_ENTRY(avx512, has_avx512),
#endif
#ifdef FORGE_DFTCPU_HAVE_avx2
        FORGE_DFTCPU_ENTRY(avx2, has_avx2),
#endif
#ifdef FORGE_DFTCPU_HAVE_sse2
        FORGE_DFTCPU_ENTRY(sse2, always),
#endif
#ifdef FORGE_DFTCPU_HAVE_generic
        FORGE_DFTCPU_ENTRY(generic, always),
#endif
    };
    return v;
}

const Isa* find_supported(const std::string& name) {
    for (const Isa& i : all_isas())
        if (name == i.name && i.supported()) return &i;
    return nullptr;
}

std::string supported_list() {
    std::string s;
    for (const Isa& i : all_isas())
        if (i.supported()) s += (s.empty() ? "" : ", ") + std::string(i.name);
    return s;
}

std::atomic<const Isa*> g_current{nullptr};
std::mutex g_init;

const Isa& current() {
    const Isa* c = g_current.load(std::memory_order_acquire);
    if (c) return *c;
    std::lock_guard<std::mutex> lock(g_init);
    c = g_current.load(std::memory_order_relaxed);
    if (c) return *c;
    if (const char* env = std::getenv("FORGE_CPU_KERNEL_ISA"); env && *env) {
        c = find_supported(env);
        if (!c) {
            throw invalid_argument(
                std::string("FORGE_CPU_KERNEL_ISA: '") + env +
                "' is not an instruction set this build and CPU run; expected one of: " + supported_list());
        }
    } else {
        for (const Isa& i : all_isas())
            if (i.supported()) {
                c = &i;
                break;
            }
    }
    g_current.store(c, std::memory_order_release);
    return *c;
}

}  // namespace

DftKernelF kernel_float() { return current().f; }
DftKernelD kernel_double() { return current().d; }

}  // namespace dftcpu

std::string cpu_kernel_isa() { return dftcpu::current().name; }
int cpu_kernel_vector_bits() { return dftcpu::current().bits(); }

std::vector<std::string> cpu_kernel_isas() {
    std::vector<std::string> v;
    for (const auto& i : dftcpu::all_isas())
        if (i.supported()) v.push_back(i.name);
    return v;
}

void set_cpu_kernel_isa(const std::string& name) {
    const dftcpu::Isa* c = dftcpu::find_supported(name);
    if (!c) {
        throw invalid_argument(
            "set_cpu_kernel_isa: '" + name +
            "' is not an instruction set this build and CPU run; expected one of: " + dftcpu::supported_list());
    }
    std::lock_guard<std::mutex> lock(dftcpu::g_init);  // a first use running now sees the choice after
    dftcpu::g_current.store(c, std::memory_order_release);
}

}  // namespace forge
