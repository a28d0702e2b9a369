#pragma once
// ToeplitzNormal<T1>: the normal operator N = G^H diag(W) G of the exact field-corrected DFT G of one trajectory
// on a Cartesian image grid, applied by FFTs on a grid of twice the size (Toeplitz embedding), with kernels
// computed once by forge's exact DFT or by a NUFFT (ToeplitzOptions::source; see "Kernel sources" below).
//
//   field-free   (G^H W G x)(r) = sum_r' q(r - r') x(r'),   q(d) = sum_j W_j exp(+i 2 pi k_j . d)
//                q on the offsets d = m / N (m = -N .. N-1 per axis) is one adjoint Gdft of W; then
//                N x = crop(IFFT(FFT(q) .* FFT(pad(x)))) on the 2Nx x 2Ny x 2Nz grid (axes of length 1 stay 1).
//   field map    G ~ sum_l diag(a_l(t)) F diag(b_l),  b_l = exp(-i field_map tau_l) (TimeSegmentation's interpolators
//   a_l
//                and nodes tau_l), so N ~ sum_{l,m} diag(conj b_l) F^H diag(conj(a_l) W a_m) F diag(b_m): one kernel
//                per pair l <= m (the pair (m, l) is its conjugate transpose; pairs whose data conj(a_l) W a_m
//                vanish, e.g. Hanning segments that do not overlap, are not stored), each an adjoint DFT.
//
//   ImageGrid grid{Nx, Ny, Nz};
//   ToeplitzNormal<float> N(grid, Trajectory<float>{kx, ky, kz}, W);                  // field-free
//   ToeplitzNormal<float> N(grid, Trajectory<float>{kx, ky, kz, t}, W, field_map, L);        // field-corrected
//   (min-max) ToeplitzNormal<float> N(Nx, Ny, Nz, kx, ky, kz, W, field_map, t, L, TSInterp::MinMax, options);  //
//   positional y = N * x;     // = N / x: the operator is Hermitian (domain = codomain = the n2 = Nx*Ny*Nz pixels)
//   N.domain_shape() == grid
//   field-map band  the kernels of one field map depend on it only through the interpolators a_l; min-max
//                interpolators over a band [-B, B] of frequencies (FieldBand, a uniform histogram) depend on the
//                readout times alone, and a field map's centre w_c (the midpoint of its range) factors out of the
//                normal operator: G(w) = diag(exp(-i w_c t)) G(w - w_c), so G(w)^H W G(w) = G(w - w_c)^H W G(w - w_c).
//                Kernels built for a band serve every field map whose range is at most 2B wide: with_field_map()
//                gives the operator of another map (of the same samples, weights and grid) at the cost of its phase
//                maps, with no kernel build (the slices of a stack, the frames of a series).
//   ToeplitzNormal<float> N(grid, Trajectory<float>{kx, ky, kz, t}, W, field_map, FieldBand{B}, L);
//   ToeplitzNormal<float> N2 = N.with_field_map(field_map_2);   // same kernels, field_map_2's phases
// Options (ToeplitzOptions.h, the last argument of every constructor): where the kernels are built, whether a
// Cartesian axis is grouped, a progress callback, the stream and device of device applies, and the kernel source.
//
// As the normal of an operator (SENSE then runs sum_c S_c^H N S_c with the coils batched through the FFTs):
//   auto G  = std::make_shared<Gdft<float>>(...);                     // the exact operator: right-hand side
//   auto Gt = with_normal<float>(G, std::make_shared<ToeplitzNormal<float>>(...));
//   SENSE<float> S(Gt, maps, nc);   S.normal(x) -> Toeplitz;  S * x, S / y -> exact
//
// Units and layout as Gdft / Gfft: k in cycles/FOV; the image is Nx x Ny x Nz with x fastest and pixel spacing
// 1/N per axis in FOV units (only differences of positions enter, so any offset of the grid, e.g. Gfft's
// image_coords(), gives the same operator); field_map in rad/s (n2 entries), t in seconds and W >= 0 (n1 entries
// each; empty W = ones).
// Accuracy: the field-free operator is exact to rounding. With a field map its error against the exact
// G^H W G is about twice TimeSegmentation's (choose_segments() picks L for a requested error).
// Cost: the exact source's kernels take one batched adjoint DFT of n1 samples on the 8 n2 cells of the padded grid
// (4 n2 in 2D) per independent pair (the NUFFT's: "Kernel sources" below): float builds first reduce the pair data
// to their numerical rank (singular values above 1e-5 of the largest), about half the pairs for min-max
// interpolators (dft_count()). When the samples take
// only G <= Pa / 2 distinct values (exact equality) along an axis of Pa padded cells, e.g. the kz of a stack of
// spirals or the ky of EPI, the build groups them (grouped_axis(); the axis with the largest saving Pa / G):
// q(d) = sum_g exp(+i 2 pi k_g d_a) Q_g(d_other), Q_g the adjoint DFT of group g's samples on one slab of cells
// across the axis, so the DFTs cost n1 x (cells / Pa) per basis kernel, plus an expansion of G products per cell
// (phases in double); the kernels equal the full DFT's up to rounding (AxisGrouping::Off forces the full DFT).
// Measured on the host (bench_toeplitz_build, 48x48x16 stack of spirals, 24576 samples, L = 6): 22.9 s -> 0.88 s.
// The operator keeps kernel_count() complex arrays of the padded size (kernel_bytes()). An apply is 2 (L+1) FFTs on the
// padded grid and one kernel product per cell, independent of n1. Host data run with FFTW (kernels built by the host
// Gdft or Gnufft of precision T1); a forgeCol on the GPU runs with cuFFT and stays there (CUDA builds; with T1 = float
// and a device present the kernels are built on the GPU by the CudaDftPipeline or the CudaNufftPipeline).
// Host apply: the padded grid's FFT axis by axis, each axis transforming only the lines that are not zero (x: the
// rows of the image's y and z; y: those of its z) and the inverse only the lines the crop keeps: 3/4 of the FFT
// work of the full grids in 2D, 7/12 in 3D. After x, each slab of constant x is transformed along y and z,
// multiplied by the kernels and transformed back in a thread's cache, so only the image's lines pass through
// memory. All stages run on the OpenMP threads (over planes, slabs, rows); the scratch is kept between applies (a
// pool: concurrent applies each take their own).
// Kernel sources (ToeplitzOptions::source, kernel_source()): the basis kernels q(d) = sum_j b_j exp(+i 2 pi k_j . d)
// (b: a column of the compressed pair data) on the offsets d = m / N are either adjoint DFTs (Exact, above) or one
// type-1 NUFFT each (Nufft): Gnufft's adjoint on the padded grid (2N per axis) at k' = 2k, k wrapped into
// [-N/2, N/2] (exact at integer m), reordered from the NUFFT's centred order to the circular one; requested
// relative error 1e-6 in float (Gnufft<float>'s floor), 1e-9 in double; on the GPU one batched adjoint of
// Gnufft<float>'s device plan. Per basis kernel it costs the FFT of the NUFFT's grid (4N per axis: 2^d times the
// padded grid's cells) and n1 W^d spreading taps (W = 8 in float, 11 in double) instead of n1 x cells phases, and
// needs no Cartesian axis; with one (grouped_axis()), where cheaper, per group a 2D NUFFT of the slab across the axis
// and the expansion along it (one plan for groups with the same in-plane samples). Measured against the exact float64
// G^H W G (ToeplitzNufftKernelTests): float <= 1e-5, double <= 1e-9 relative beyond the segmentation's error.
// Auto estimates both builds' seconds (KernelSources.cpp: per-unit costs measured on the host and on an H100) and
// takes the NUFFT when, for float, the exact build is estimated above 0.25 s on the host (0.02 s on the GPU) and
// slower than the NUFFT; for double (host only), above 2 s and ten times slower: double keeps kernels exact to
// rounding wherever they are affordable. Grids with fewer than two axes longer than 1 (or an axis too short for
// the NUFFT's kernel) always take the exact DFT; asking for Nufft there throws. build_times().dft is the time of
// the basis kernels' transforms by either source; grouped_axis() is 3 after a NUFFT of the whole grid.
// Progress: ToeplitzOptions::progress, when set, is called with (done, total, seconds) as the kernel build
// proceeds: done = 0 when it starts, then after each step (the pair data, equal parts of the DFTs, the FFTs and
// combinations of the kernels), last with done = total; seconds since the build started.
#include <complex>
#include <functional>
#include <memory>
#include <vector>

#include <armadillo>

#include "forge/Core/Geometry.h"
#include "forge/Operators/Composition.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/toeplitz/ToeplitzOptions.h"

namespace forge {

template <typename T1>
class ToeplitzNormal : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ForgeVec;

    // Field-free: the image grid, the samples (their times t are ignored) and the weights W (empty: ones).
    ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                   const ToeplitzOptions& options = {});
    // Field-corrected: the samples with their readout times k.t, the field map (one value per pixel) and L segments.
    ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                   const arma::Col<T1>& field_map, uword L, TSInterp type = TSInterp::MinMax,
                   const ToeplitzOptions& options = {});
    // The normal operator of a time-segmented operator (TimeSegmentation of any G on k's samples and this grid):
    // its interpolators and phase maps as they are, the phase maps shared (no second segmentation, no second
    // copy), so that these kernels approximate that operator's own G^H W G and its adjoint gives the matching
    // right-hand side G^H W y (a time-segmented NUFFT: forge-recon's Toeplitz path).
    ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                   const TimeSegmentationCore<T1>& segmented, const ToeplitzOptions& options = {});
    // Field-corrected with kernels for a band (min-max over [-band.half_width, band.half_width], L segments) and
    // the phases of 'field_map', whose range must be at most 2 band.half_width wide (field_band()).
    ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                   const arma::Col<T1>& field_map, FieldBand band, uword L, const ToeplitzOptions& options = {});
    // The same, positional.
    ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const ToeplitzOptions& options = {});
    ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& field_map,
                   const arma::Col<T1>& timeVec, uword L, TSInterp type = TSInterp::MinMax,
                   const ToeplitzOptions& options = {});
    // The build choices as trailing positional arguments (kept one release; ToeplitzOptions holds them now).
    FORGE_DEPRECATED("ToeplitzNormal(grid, k, W, ToeplitzOptions{build, grouping, progress})")
    ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, const arma::Col<T1>& W, KernelBuild where,
                   AxisGrouping grouping = AxisGrouping::Auto, const ToeplitzBuildProgress& progress = nullptr);
    FORGE_DEPRECATED("ToeplitzNormal(grid, k, W, field_map, L, type, ToeplitzOptions{build, grouping, progress})")
    ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& field_map,
                   const arma::Col<T1>& timeVec, uword L, TSInterp type, KernelBuild where,
                   AxisGrouping grouping = AxisGrouping::Auto, const ToeplitzBuildProgress& progress = nullptr);

    // Segments L for which the normal operator's error against the exact G^H W G stays near 'targetError'
    // (relative, for random images): TimeSegmentation's choice for half the target, since the segmentation's
    // error enters the normal operator twice (through G and through G^H).
    static uword choose_segments(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec, double targetError,
                                 TSInterp type = TSInterp::MinMax, uword Lmax = 64);
    // The same for kernels of a band: the L whose min-max interpolators over the band (a uniform histogram) reach
    // the target there.
    static uword choose_segments(const arma::Col<T1>& timeVec, FieldBand band, double targetError, uword Lmax = 64);
    // The narrowest band that holds the field map: half its range (max - min) / 2.
    static FieldBand field_band(const arma::Col<T1>& field_map);
    // Bytes the kernels of L segments take at most (all (L+1)(L+2)/2 pairs; L = 0 field-free), without
    // building them. The operator keeps them where it built them (and a copy on the other side once used
    // there).
    static double kernel_bytes(uword Nx, uword Ny, uword Nz, uword L);
    // Estimated seconds of the basis kernels' transforms for n1 samples and 'basis' basis kernels (the rank of the
    // pair data; about (L+1)(L+2)/4), on the GPU or the host, by 'source' (Auto: the source the build would choose,
    // priced without Cartesian-axis grouping; a grid the NUFFT cannot take: the exact DFT): the cost rule behind Auto,
    // for callers weighing the Toeplitz path against others. Not the pair data, the kernels' FFTs or their combination.
    static double estimate_kernel_seconds(uword n1, uword Nx, uword Ny, uword Nz, uword basis, bool device,
                                          KernelSource source = KernelSource::Auto);

    // The same kernels with another field map's phase maps: for an operator built for a FieldBand, a map of n2
    // finite values whose range is at most 2 band_half_width() wide (else forge::invalid_argument). The kernels are
    // copied, not rebuilt (on the GPU a device-to-device copy); the copy is independent of this operator.
    ToeplitzNormal with_field_map(const arma::Col<T1>& field_map) const;
    bool built_for_band() const { return banded_; }
    double band_half_width() const { return banded_ ? bandHalfWidth_ : 0.0; }  // rad/s

    uword segments() const { return S_ - 1; }       // L (0: field-free)
    uword kernel_count() const { return npairs_; }  // stored pair kernels
    uword dft_count() const { return ndft_; }       // adjoint DFTs the build took (rank of the pair data)
    double kernel_bytes() const { return double(npairs_) * double(P_total_) * sizeof(std::complex<T1>); }
    uword padded_size(int axis) const { return P_[axis]; }
    // Wall time of the kernel build: in all, of which the pair data and their compression, and the adjoint DFTs
    // (the rest: the FFTs of the kernels and the pairs' combinations).
    struct BuildTimes {
        double total = 0, pair_data = 0, dft = 0;
    };
    const BuildTimes& build_times() const { return times_; }
    double build_seconds() const { return times_.total; }
    bool kernels_built_on_gpu() const { return builtOnGpu_; }
    // The axis (0 = x, 1 = y, 2 = z) along which the build grouped the samples by their exactly equal
    // coordinate; 3 when it took the full DFT or a NUFFT.
    uword grouped_axis() const { return groupedAxis_; }
    // How the basis kernels were computed: KernelSource::Exact or KernelSource::Nufft (never Auto).
    KernelSource kernel_source() const { return source_; }
    // Uploads the kernels (when built on the host) and makes the cuFFT plan now; nothing without a device.
    void prepare_device() const override;

protected:
    void apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;
    void apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;

private:
    struct Cache;
    // The grid, after refusing kernels for L segments (0: field-free) that would not fit in memory.
    void set_grid(uword Nx, uword Ny, uword Nz, uword L);
    // Checks options.stream and options.device and keeps them for the device work.
    void set_device_options(const ToeplitzOptions& options);
    template <typename C>  // the interpolators in double, or in T1 as a time-segmented operator keeps them
    void build(const arma::Col<T1>& kx, const arma::Col<T1>& ky, const arma::Col<T1>& kz, const arma::Col<T1>& W,
               const arma::Mat<C>& a, const ToeplitzOptions& options);
    const ForgeVec& host_kernels() const;
    void apply_host_chunk(const Elem* K, const Elem* in, Elem* out, uword nv, Elem* scratch, int threads) const;

    uword N_[3] = {1, 1, 1}, P_[3] = {1, 1, 1};
    uword P_total_ = 0;
    uword S_ = 1, npairs_ = 0, ndft_ = 0;
    std::vector<uword> pairs_;                           // (l, m) of each stored kernel
    std::vector<long long> table_;                       // S x S: the kernel of (l, m) (ToeplitzKernels.h)
    std::shared_ptr<const StackedDiagonal<T1>> phases_;  // b_l, l = 0..L (null when field-free)
    arma::vec tau_;                                      // the nodes tau_l, when built for a band
    double bandHalfWidth_ = 0;
    bool banded_ = false;
    std::vector<uword> cell_;       // n2: the padded-grid cell of each pixel
    std::shared_ptr<Cache> cache_;  // kernels (host and/or device), FFT plans, shared by copies
    BuildTimes times_;
    uword groupedAxis_ = 3;
    KernelSource source_ = KernelSource::Exact;
    bool builtOnGpu_ = false;
    CUstream_st* stream_ = nullptr;  // ToeplitzOptions::stream and device
    int device_ = -1;
};

extern template class ToeplitzNormal<float>;
extern template class ToeplitzNormal<double>;

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::AxisGrouping;
using forge::FieldBand;
using forge::KernelBuild;
using forge::KernelSource;
using forge::ToeplitzBuildProgress;
using forge::ToeplitzNormal;
using forge::ToeplitzOptions;
#endif
