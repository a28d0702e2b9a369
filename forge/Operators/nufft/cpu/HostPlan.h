#pragma once
// Private to Gnufft's sources: the host plan's sample data (Gnufft<T1>::Points) and the holders that make the host
// plan lazily. A Gnufft<float> with a GPU plan sorts its samples on the device; its host data (slab order, stencils,
// FFTW plans) are made on the first host transform (or grid_positions) that needs them, once, under std::call_once,
// since applies are const and may run on several threads.
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "forge/Operators/nufft/Gnufft.h"

namespace forge {

namespace nufft_detail {
// std::allocator without the value-initialisation of resize: arrays every entry of which the sort writes (in
// parallel, so their pages are first touched by the threads that use them) are not cleared first on one thread.
template <typename T>
struct UninitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitAllocator<U>;
    };
    UninitAllocator() = default;
    template <typename U>
    UninitAllocator(const UninitAllocator<U>&) noexcept {}
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
