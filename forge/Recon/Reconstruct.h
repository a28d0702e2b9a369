#pragma once
// Reconstructs a ReconProblem frame by frame with forge's operators and forge::recon_solve (PCG):
// SENSE when the problem has coil maps, otherwise coil by coil combined by root-sum-of-squares.
// Also the operator choice forge-recon's --operator auto makes (docs/forge-recon.md) and the cost
// estimates behind it.
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/Core/DeprecatedFields.h"
#include "forge/Operators/toeplitz/ToeplitzOptions.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Solvers/SolverCommon.h"

namespace forge {
namespace recon {

// Encoding operator: Dft (exact, field-corrected Gdft), Fft (GfftSampled: the exact model for samples on
// an FFT grid; time-segmented field correction), Nufft (Gnufft, no field correction), TimeSeg (Gnufft with
// time-segmented field correction), Toeplitz (the exact Gdft for G^H y, then iterations on its normal operator
// by FFTs on a 2x grid: ToeplitzNormal, time-segmented with a field map).
enum class EncodingOperator { Dft, Fft, Nufft, TimeSeg, Toeplitz };
// The Toeplitz path's right-hand side G^H y: Exact (Gdft), Nufft (Gnufft; with a field map time-segmented for
// the Toeplitz operator's requested error), or Auto: the NUFFT where the exact DFT would cost noticeably more
// (toeplitz_rhs_by_nufft()).
enum class ToeplitzRhs { Auto, Exact, Nufft };
// Quad and TV (smoothed) by PCG; L1Wavelet (db2 wavelets, random shifts) and TVExact (isotropic, not smoothed) by a
// proximal solver (docs/compressed-sensing.md).
enum class PenaltyKind { Quad, TV, L1Wavelet, TVExact };

const char* operator_name(EncodingOperator op);  // "dft", "fft", "nufft", "timeseg", "toeplitz"

// The default stopping rule of every solve: at most 50 PCG iterations, stopping once ||gradient|| <= 2e-4 x
// ||initial gradient||. On BART's radial Shepp-Logan (128x128, 101 spokes, 8 coils) it stops after 34
// iterations at BART pics' default quality (NRMSE 0.2241 vs 0.2245; 10 iterations: 0.2752); Cartesian data stop
// sooner (ISMRMRD's 64x64 Shepp-Logan: 6, its 128x128: 21). docs/reconstruction.md has the measurements.
constexpr int kDefaultIterations = 50;
constexpr double kDefaultTolerance = 2e-4;
// Time segmentation's (EncodingOperator::TimeSeg and Fft with a field map) target RMS error when it picks L itself.
constexpr double kTimeSegError = 0.01;
// The most time segments the reconstruction's operators pick themselves (more would not reach the error: use dft).
constexpr unsigned kMaxSegments = 64;

struct ReconSettingsFields {
    EncodingOperator op = EncodingOperator::Dft;
    int segments = 0;              // Fft/TimeSeg with a field map: L (0 = smallest L with estimated RMS error <= 1%);
                                   // Toeplitz: L (0 = chosen for toeplitz_error)
    double toeplitz_error = 1e-3;  // Toeplitz with a field map: relative error of the normal operator
    ToeplitzRhs toeplitz_rhs = ToeplitzRhs::Auto;  // Toeplitz: the operator of G^H y
    PenaltyKind penalty = PenaltyKind::Quad;
    double beta = 1e-3;                    // relative to the data term's curvature
    double delta = 0.05;                   // TV: relative to the image scale
    double lambda = 0.005;                 // L1Wavelet, TVExact: relative to max |E^H y|
    int iterations = kDefaultIterations;   // PCG: at most this many iterations per solve
    double tolerance = kDefaultTolerance;  // PCG: stop at ||gradient|| <= tolerance * initial (0 = off)
    bool gpu = false;                      // solve on the GPU (forgeCol device residency)
    // PCG with the quadratic penalty: preconditioned by the circulant approximation of the cost's Hessian
    // (CirculantPreconditioner.h, on the coil maps' support): the same minimiser, reached to the tolerance in fewer
    // iterations where the sampling density dominates the spectrum (docs/reconstruction.md has the measurements).
    bool preconditioner = false;
    // Per slice (indexed by slice), the image a frame's SENSE solve starts from, in the images' units (an earlier
    // frame's image of that slice: a warm start); an empty entry, or none: zeros. The stopping rule stays relative to
    // the gradient at zero (PcgOptions::tolerance_from_zero), so a warm start stops at the image a cold start
    // reaches, sooner. Proximal penalties and coil-by-coil solves (no maps) start from zero.
    std::vector<arma::cx_fvec> start;
    // Each frame's SENSE solve starts from the image of the latest frame of its slice reconstructed in this call
    // (the first from 'start'): a series' frames, in P.frames order (or S.frames'). The images then depend on which
    // frames one call reconstructs (a distributed run's shares).
    bool warm_start = false;
    // Indices into P.frames to reconstruct, each at most once (empty: all). The images of the other frames
    // stay zero: a process of a distributed run reconstructs its share and the shares are gathered after.
    std::vector<std::size_t> frames;
    // Called after every PCG iteration of the solve named 'label' (of 'niter' iterations).
    std::function<void(const std::string& label, const PcgIterationInfo& info, std::size_t niter)> on_iteration;
    // false: on_iteration's info.cost is NaN in PCG solves, which then skip the cost's evaluation each iteration (on
    // the GPU three waits for the device an iteration); their reports (on_solve_end) carry the final cost either way.
    bool iteration_cost = true;
    // Toeplitz: called as the kernels of the solve named 'label' are built: step 'done' of 'total' (0 first, total
    // last), seconds since the build began (ToeplitzBuildProgress).
    std::function<void(const std::string& label, std::size_t done, std::size_t total, double seconds)> on_build;
    // Called when a solve ends, with its report (iterations run, why it stopped), in the problem's units.
    std::function<void(const std::string& label, const SolverReport& report, std::size_t niter)> on_solve_end;
};
// ReconSettings's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct ReconSettings : ReconSettingsFields {
    FORGE_FIELD_ALIAS(toeplitzError, toeplitz_error)
    FORGE_FIELD_ALIAS(toeplitzRhs, toeplitz_rhs)
    FORGE_FIELD_ALIAS_COPIES(ReconSettings, ReconSettingsFields)
};
FORGE_FIELD_ALIASES_END

// One PCG solve of a reconstruction: its frame (and coil, without maps), its time segments, what the solver did.
struct SolveRecord {
    std::string label;                 // as the callbacks name the solve
    std::size_t frame_index = 0;       // index into P.frames
    std::size_t slice = 0, frame = 0;  // that frame's slice and frame
    long coil = -1;                    // coil by coil (no maps): the coil, 0-based; -1: SENSE, every coil at once
    std::size_t segments = 0;          // L: time segments of TimeSeg/Fft, or of the Toeplitz kernels; 0: none
    SolverReport report;               // iterations, stop reason, gradient norms, in the problem's units
    double seconds = 0;                // the solve: right-hand side (Toeplitz), PCG loop, transfers
    // seconds split: before the PCG loop (the right-hand side G^H y of the Toeplitz path, uploads) and the loop
    // itself (report.elapsed_s); rhs_seconds + iteration_seconds = seconds.
    double rhs_seconds = 0, iteration_seconds = 0;
    // The frame's set-up before its solves (building the operator: NUFFT plan, time segmentation, Toeplitz
    // kernels; the scaling and the penalty), carried by the frame's first solve (0 on the others).
    double setup_seconds = 0;
};

struct ReconResultFields {
    std::vector<arma::fvec> magnitude;         // per image, ordered slice-fastest then frame
    std::vector<arma::cx_fvec> complex_image;  // the same, complex
    double seconds = 0;
    // Every solve, in the order run (frames in S.frames order; coils in order within a frame).
    std::vector<SolveRecord> solves;
    // seconds split: in the solves (the sum of solves[i].seconds), and in setting them up (the operators with
    // their Toeplitz kernels and time segmentation, the scaling, the penalty).
    double solve_seconds = 0, setup_seconds = 0;
    // Frames that solved with an operator built before them (by an earlier frame, or an earlier call through the
    // OperatorCache), and operators built.
    std::size_t operators_reused = 0, operators_built = 0;
};
// ReconResult's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct ReconResult : ReconResultFields {
    FORGE_FIELD_ALIAS(complexImage, complex_image)
    FORGE_FIELD_ALIAS_COPIES(ReconResult, ReconResultFields)
};
FORGE_FIELD_ALIASES_END

// Encoding operators that reconstruct() built, for later frames and calls to reuse: a frame whose trajectory,
// grid and operator settings (and, where the operator holds them, field map, sample times and pixel positions) are
// those of a cached operator solves with it, its NUFFT plan, device copies, time segmentation and Toeplitz kernels
// included, instead of building them again: the slices of a multi-slice scan or stream that share a trajectory,
// the frames of a series. A field-corrected Toeplitz operator whose field map differs from a cached one's (the next
// slice) still takes that one's kernels when the samples, times and settings are the same and both maps fall in one
// band (toeplitz_band(); ToeplitzNormal::with_field_map): only its phase maps and right-hand side operator are new.
// Holds at most 'capacity' operators, the least recently used dropped first (Toeplitz kernels and device copies take
// memory). The images equal those without a cache. One per pipeline: not for concurrent calls.
class OperatorCache {
public:
    explicit OperatorCache(std::size_t capacity = 4);
    ~OperatorCache();
    OperatorCache(const OperatorCache&) = delete;
    OperatorCache& operator=(const OperatorCache&) = delete;
    std::size_t size() const;            // operators held
    std::size_t built() const;           // operators built through this cache so far
    std::size_t reused() const;          // frames that found theirs here
    std::size_t kernels_shared() const;  // of the operators built, Toeplitz ones that took a cached one's kernels
    void clear();
    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
    friend ReconResult reconstruct(const ReconProblem&, bool, const ReconSettings&, const std::string&, OperatorCache*);
    friend std::size_t prepare_operators(const ReconProblem&, bool, const ReconSettings&, OperatorCache&);
};

// Reconstructs every frame; images ordered x, y, (z,) slice, frame. 'fieldCorrection' false ignores the
// field map. 'tag' starts every solve's label ("recon slice 2/3 frame 1/2 coil 4"). With 'operators', frames take
// their encoding operators from it and leave the ones built there (see OperatorCache); without, a call reuses an
// operator only between its own frames.
// Throws forge::invalid_argument when the operator cannot be used with this problem, or when S.frames names
// a frame P does not have (or one twice).
ReconResult reconstruct(const ReconProblem& P, bool fieldCorrection, const ReconSettings& S,
                        const std::string& tag = "recon", OperatorCache* operators = nullptr);

// Builds into 'operators' the encoding operators that reconstruct(P, fieldCorrection, S, tag, &operators) takes for
// S.frames of P (all when empty), without solving; returns how many it built (the others were there). An operator
// depends on a frame's trajectory, sample times, settings and field map, not on its samples, which are not read:
// a stream builds the next slice's operator before its samples arrive, from the trajectory before and the next
// slice's field map. One that turns out not to fit is not taken (the cache compares all it depends on). Throws as
// reconstruct() does for an operator that cannot be used, and for frames P does not have.
std::size_t prepare_operators(const ReconProblem& P, bool fieldCorrection, const ReconSettings& S,
                              OperatorCache& operators);

// PCG solves one reconstruct() runs (frames, or S.frames when given, x (coils without maps)) times iterations
// each.
std::size_t solves_per_reconstruction(const ReconProblem& P, const ReconSettings& S);

// The FFT grid on whose k-space lattice every sample of every frame lies, per axis the first that fits of:
// the recon grid itself (k integer in cycles per recon FOV), and the encoded FOV's grid at the recon pixel
// size (M = N * encodedFOV / reconFOV: ISMRMRD's readout oversampling puts k on half-integers, M = 2N).
// {0, 0, 0} when none fits (non-Cartesian data): then the FFT cannot reproduce the exact model.
std::array<std::size_t, 3> fft_grid(const ReconProblem& P);

// The band (FieldBand, rad/s) that the Toeplitz path's kernels for this field map are built for: half the map's range
// rounded up to a step of 2^(1/4) from 1 Hz, so that the slices of a stack, whose ranges differ a little, share
// kernels (OperatorCache); at most 19% wider than the map needs, which costs at most one segment.
FieldBand toeplitz_band(const arma::fvec& field_map);

// Sample-pixel products of one reconstruction with the exact DFT (forward and adjoint, every coil, frame
// and iteration).
double dft_cost(const ReconProblem& P, int iterations);

// estimate_seconds(), toeplitz_rhs_by_nufft() and choose_operator() (--operator auto): OperatorChoice.h, included
// at the end of this header.

// ---------------------------------------------------------------- checks of a problem's data and maps
// A sample whose coil amplitude sqrt(sum_c |y_c|^2) exceeds this multiple of the root-sum-of-squares of every
// smaller sample of its frame (the sample holds over 99.9999% of the frame's energy) is no measurement: a single
// corrupt value of 1e25 among data of order 1 would otherwise be the whole image.
constexpr double kDataSpikeFactor = 1e3;

// Removes such spikes from 'frame' (the sample from every coil, with its k and t) and returns how many: the
// largest m + 1 samples, m below 1% of the frame's samples (none of a frame under 100), where the (m+1)-th largest
// amplitude exceeds kDataSpikeFactor x the root-sum-of-squares of all the samples below it (which must not be all
// zero). Throws forge::invalid_argument when frame.y does not hold nc x samples values.
std::size_t remove_spikes(ReconFrame& frame, std::size_t nc);
// The same for every frame of P (n1total and n1max updated); one count per frame, in P.frames' order.
std::vector<std::size_t> remove_spikes(ReconProblem& P);

// Share of the energy of the gridded coil images of 'slice' (low_resolution_coil_images() of its first frame:
// calibration centre, density compensated, on the image grid; sum over coils and pixels of |x_c|^2) on the pixels
// where P.smaps[slice] vanishes (sum_c |S_c|^2 <= 1e-6 x its largest value): the part of the object that SENSE with
// these maps sets to zero. 0 when the images hold no energy. Throws forge::invalid_argument when P has no maps
// for 'slice', no frame of it, or (as low_resolution_coil_images()) no calibration region.
double uncovered_energy(const ReconProblem& P, std::size_t slice, const CoilMapOptions& options = {});

}  // namespace recon
}  // namespace forge

#include "forge/Recon/OperatorChoice.h"  // IWYU pragma: export
