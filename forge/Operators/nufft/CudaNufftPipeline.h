#pragma once
// CudaNufftPipeline: the GPU plan of Gnufft<float> (declared without CUDA headers), in cufinufft's shape:
// make it from a geometry and options (stream, device, max_batch), execute many times; set_points loads
// a new trajectory (re-sorted into sectors, allocations reused where they fit).
//
//   cuda::NufftGeometry g = ...;                 // sizes, kernel polynomials, stencil data (host arrays)
//   cuda::CudaNufftPipeline plan(g);             // own blocking stream, current device
//   plan.execute(cuda::Direction::forward, d_images, d_kdata, ncoils);
//   plan.set_points(n1b, ux, uy, uz);            // another trajectory on the same grid (host presort)
//   plan.set_trajectory(n1c, k, true);           // k in cycles/FOV, here device arrays: sorted on the device
//
// The batch is first-class: each pass takes up to pass_size() vectors, one oversampled grid each; every
// kernel runs over the pass with the vector in gridDim.y, and one cuFFT plan-many transforms all its grids.
//
// Forward  (image -> samples): deapodize + zero-pad (one kernel), cuFFT on the oversampled grid,
//          Kaiser-Bessel interpolation (one thread per sample, samples in sector order for locality, the
//          sample's 3W kernel weights evaluated once by Horner's rule into registers; kernels compiled
//          per width).
// Adjoint  (samples -> image): sector-based gridding with padded tiles (cufinufft's subproblem method): the
//          oversampled grid is cut into sectors and each sample belongs to the one sector that holds its
//          stencil start (sorted once per trajectory, on the device from k, or on the host from stencils: the
//          same order the forward pass reads). A sector's samples are one subproblem, or several when they are
//          many (chunks sized so that the GPU gets several thread blocks per SM). One thread block per
//          subproblem spreads its samples into a shared-memory tile that covers the sector and the W - 1 cells
//          past its far edges, so every tap of every sample lands in the tile without a bounds check (a warp's
//          threads run the same W^d taps), with shared-memory atomics only; it then adds the tile onto the
//          cleared grid with global atomic adds, wrapped at the grid's edges. Each sample is read once and its
//          3W kernel weights are evaluated once. Then inverse cuFFT, crop + deapodize (one kernel).
// The trajectory (stencil starts and offsets, in sector order), the subproblems, the kernel polynomials and the
// deapodization factors live on the device for the plan's lifetime. Data are interleaved complex float device arrays,
// batch vectors back to back: images n2 x batch, k-space n1 x batch. Work is queued on the plan's stream
// (PlanOptions.h); execute returns once it is queued.
#include <algorithm>
#include <memory>

#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/Config.h"
#include "forge/Core/Validation.h"

namespace forge {
namespace cuda {

struct NufftGeometry {
    static constexpr int kMaxDegree = 19;   // kernel polynomials: degree <= W + 3
    static constexpr int kCoefStride = 16;  // coef row length (the widest kernel)
    uword N[3];                             // image size per axis (1 for unused axes)
    uword G[3];                             // oversampled grid size per axis (1 for unused axes)
    uword W;                                // kernel width in grid cells
    uword n1;                               // number of samples
    // host, per axis, sample order: first grid cell of the sample's stencil, ceil(u - W/2) for the position u
    // in grid units in [0, G) (may be negative; wrapped by the kernels), and the offset
    // y = 2 (u - first) - (W - 1) in [-1, 1]; 0 and 0 on axes of length 1.
    const int* first[3];
    const float* offset[3];
    // Or the samples themselves, n1 floats per axis in cycles/FOV (host arrays, or device arrays on the plan's device
    // when k_on_device): with k[0] set, first and offset are not read, and the plan checks the samples (finite,
    // within [-N/2, N/2], [-1/2, 1/2] on an axis of length 1), makes the stencils and sorts them on the device.
    const float* k[3] = {nullptr, nullptr, nullptr};
    bool k_on_device = false;
    const float* deapod[3];  // host: per-axis deapodization multipliers 1/D, N[d] entries each
    // host: tap a of a stencil weighs sum_k coef[k * kCoefStride + a] y^k, k = 0..degree (Gnufft's kernel)
    const float* coef;
    int degree;
};

class CudaNufftPipeline {
public:
    // Sector edge in grid cells: a 2D sector is 32 x 32, a 3D one 16 x 16 x 16, shorter axes whole; a sector whose
    // padded tile ((S + W - 1) cells per axis longer than 1, 8 bytes each) would exceed max_tile_bytes halves its edge
    // (3D sectors of kernels wider than 8 taps are 8 x 8 x 8).
    static constexpr uword kSector2D = 32, kSector3D = 16;
    // The default tile budget: within the opt-in shared memory per block of every GPU from sm_80 (and sm_86's 99 KiB).
    static constexpr uword kMaxTileBytes = 99 * 1024;
    // The kernels index samples, grid cells along an axis and sectors (one thread block each) with 32-bit
    // ints; grid and image offsets use 64 bits.
    static constexpr uword kMaxIndex = 2147483647;
    static uword tile_bytes(const NufftGeometry& g, uword S) {
        uword cells = 1;
        for (int d = 0; d < 3; ++d)
            if (g.G[d] > 1) cells *= std::min(S, g.G[d]) + g.W - 1;
        return cells * 8;
    }
    static uword sector_size(const NufftGeometry& g, int axis, uword max_tile_bytes = kMaxTileBytes) {
        if (g.G[axis] <= 1) return 1;
        uword S = g.N[2] > 1 ? kSector3D : kSector2D;
        while (S > 4 && tile_bytes(g, S) > max_tile_bytes) S /= 2;
        return std::min(S, g.G[axis]);
    }
    // Throws forge::invalid_argument naming the size and the limit when the kernels cannot index it.
    static void check_sizes(const char* where, const NufftGeometry& g, uword max_tile_bytes = kMaxTileBytes) {
        const char* why = "CudaNufftPipeline::kMaxIndex: the GPU kernels index it with 32-bit ints";
        checked_product(where, {{"n1 (k-space samples)", g.n1}}, kMaxIndex, why);
        const char* axes[3] = {"oversampled grid size x", "oversampled grid size y", "oversampled grid size z"};
        uword nsec[3];
        for (int d = 0; d < 3; ++d) {
            checked_product(where, {{axes[d], g.G[d]}}, kMaxIndex, why);
            const uword S = sector_size(g, d, max_tile_bytes);
            nsec[d] = (g.G[d] + S - 1) / S;
        }
        checked_product(where, {{"sectors along x", nsec[0]}, {"y", nsec[1]}, {"z", nsec[2]}}, kMaxIndex,
                        "CudaNufftPipeline::kMaxIndex: one thread block per sector, numbered with 32-bit ints");
        // Sectors hold at most 16^3 cells, so this also bounds the grid to 2^43 cells: its byte count fits.
    }

    // Vectors per pass when options.max_batch is 0: up to this many, within a 1 GiB grid workspace.
    static constexpr uword kDefaultPass = 8;

    // Uploads geom (host arrays, read during the call only). With options.max_batch > 0 the grid workspace
    // for that many vectors is allocated here; otherwise it grows on demand up to the default pass.
    explicit CudaNufftPipeline(const NufftGeometry& geom, const PlanOptions& options = PlanOptions());
    ~CudaNufftPipeline();
    CudaNufftPipeline(const CudaNufftPipeline&) = delete;
    CudaNufftPipeline& operator=(const CudaNufftPipeline&) = delete;

    // A new trajectory on the same grid: n1 sample positions in grid units, wrapped into [0, G) (host
    // arrays; an axis of length 1 takes 0). Re-sorts the sectors; device arrays are reused when they fit.
    void set_points(uword n1, const float* ux, const float* uy, const float* uz);
    // The same from stencil starts and offsets (NufftGeometry's first and offset; full precision on any grid).
    void set_points(uword n1, const int* const first[3], const float* const offset[3]);

    // A new trajectory of n1 samples in cycles/FOV (host arrays, or device arrays on the plan's device when on_device),
    // checked, converted to stencils and sorted into sectors on the device: per-sector counts, a CUB radix sort of the
    // samples by sector (stable: each sector keeps the trajectory order) that both directions read, and the
    // subproblems. The positions in grid units are computed in double as Gnufft's host
    // plan does, so both give the same stencils. Returns false, with the plan unchanged, when some component is not
    // finite or lies outside the band (the caller finds and names it). Device scratch is kept and only grows.
    bool set_trajectory(uword n1, const float* const k[3], bool on_device);
    // The plan's samples in cycles/FOV, as last given to set_trajectory (or geometry.k): n1() floats into each of
    // three host arrays. Throws when the points came as stencils (has_trajectory() false).
    void copy_trajectory(float* const k[3]) const;
    bool has_trajectory() const;
    // Seconds the last set_trajectory (or the constructor's) took on the host clock: copying k to the device, and
    // checking, converting and sorting it there (up to the finished sort).
    struct SortTimes {
        double upload = 0, sort = 0;
    };
    SortTimes sort_times() const;

    // Transforms batch vectors (device pointers): forward images (n2 x batch) -> k-space (n1 x batch),
    // adjoint the other way round. Calls from several host threads are serialised.
    void execute(Direction direction, const float* d_in, float* d_out, uword batch = 1) const;
    // Waits until all work queued on the plan's stream has finished.
    void synchronize() const;

    uword n1() const;
    uword pass_size(uword batch) const;  // vectors one pass of execute takes for a batch of that size
    CUstream_st* stream() const;
    int device() const;
    uword max_batch() const;

    // Sorting statistics: number of sectors and of (sector, sample) entries; each sample belongs to one sector (its
    // stencil start's), so the entries equal n1 (the padded tiles take the footprints that cross a sector's edge).
    long long num_sectors() const;
    long long sector_entries() const;
    // Thread blocks of the gridding kernel: one per non-empty sector, more where a crowded sector is split.
    long long num_subproblems() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cuda
}  // namespace forge
