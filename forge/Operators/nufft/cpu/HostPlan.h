#pragma once
// Private to Gnufft's sources: the host plan's sample data (Gnufft<T1>::Points) and the holders that make the host
// plan lazily. A Gnufft<float> with a GPU plan sorts its samples on the device; its host data (slab order, stencils,
// FFTW plans) are made on the first host transform (or grid_positions) that needs them, once, under std::call_once,
// since applies are const and may run on several threads.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "forge/Operators/nufft/Gnufft.h"

namespace forge {

namespace nufft_detail {
// std::allocator without the value-initialisation of resize: arrays every entry of which the sort writes (in
// parallel, so their pages are first touched by the threads that use them) are not cleared first on one thread.
// Asks for transparent huge pages on the 2 MiB-aligned part of [p, p + bytes) before it is first touched (Linux).
inline void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef __linux__
    constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
    const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
    const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) / kHuge * kHuge;
    if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);  // advice only
#else
    (void)p, (void)bytes;
#endif
}

// Arrays of 8 MiB or more are asked to live on transparent huge pages (Linux, madvise): a 2M-sample plan touches
// about 100 MB, and 4 KiB pages would cost one page fault each.
template <typename T>
struct UninitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitAllocator<U>;
    };
    UninitAllocator() = default;
    template <typename U>
    UninitAllocator(const UninitAllocator<U>&) noexcept {}
    static constexpr std::size_t kHuge = std::size_t(2) << 20;
    static bool huge(std::size_t n) { return n * sizeof(T) >= 4 * kHuge; }
    T* allocate(std::size_t n) {
#ifdef __linux__
        if (huge(n)) {
            const std::size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
            void* p = std::aligned_alloc(kHuge, bytes);
            if (!p) throw std::bad_alloc();
            madvise(p, bytes, MADV_HUGEPAGE);  // advice only: its failure changes nothing
            return static_cast<T*>(p);
        }
#endif
        return std::allocator<T>::allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
#ifdef __linux__
        if (huge(n)) {
            std::free(p);
            return;
        }
#endif
        std::allocator<T>::deallocate(p, n);
    }
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};
template <typename T>
using UninitVector = std::vector<T, UninitAllocator<T>>;

// One sample of the slab order: its index j and, per axis, the first grid cell of its stencil (unwrapped,
// ceil(u - W/2)) and the offset y = 2 (u - first) - (W - 1) in [-1, 1] (0 / 0 on axes of length 1). Together, so that
// the sort writes one place per sample (32 bytes in float) and the gridding reads one.
template <typename T1>
struct SampleStencil {
    uword j;
    int first[3];
    T1 offset[3];
};
}  // namespace nufft_detail

// Sample positions in the forms the host transforms read.
template <typename T1>
struct Gnufft<T1>::Points {
    uword n1 = 0;
    // Positions in grid units wrapped into [0, G) per axis (grid_positions()).
    std::vector<T1> u[3];
    // Samples in slab order (slowest axis) for race-free gridding, each with its stencil; slabStart has nslab+1
    // entries.
    nufft_detail::UninitVector<nufft_detail::SampleStencil<T1>> stencil;
    std::vector<uword> slabStart;
    double checkSeconds = 0, sortSeconds = 0;  // NufftPlanTimes::host_check, host_sort
};

// The current points' host data: made at once (host plans) or on first use from the GPU plan's copy of the
// trajectory (source). Shared by copies of the operator; set_points gives the operator a new one.
template <typename T1>
struct Gnufft<T1>::HostPoints {
    std::once_flag once;
    std::atomic<bool> ready{false};  // set at the end of once's call
    Points points;
    const cuda::CudaNufftPipeline* source = nullptr;
};

// The host FFTW plans of the oversampled grid, made on first use (at once on host-only operators).
template <typename T1>
struct Gnufft<T1>::HostFft {
    std::once_flag once;
    std::atomic<bool> ready{false};
    std::shared_ptr<const FftPlan<T1>> plan;
    double seconds = 0;
};

}  // namespace forge
