#pragma once
// --operator auto: which encoding operator reconstructs a problem fastest on the machine in use, from a cost
// model whose rates are measured there. Reconstruct.h includes this header; it may also be included alone.
//
// The model (estimate_seconds) prices one reconstruction with each operator, set-up included: the exact DFT's
// sample-pixel products; the NUFFT's plan, FFTs of the 2x grid and interpolation taps (time segmentation: L + 1 of
// them); the Toeplitz path's kernels (a fixed cost per build plus ToeplitzNormal::estimate_kernel_seconds scaled),
// right-hand side and 2 (L + 1) FFTs of the 2x grid per coil and iteration; and, for every operator, the work each
// iteration shares whatever the operator (SENSE's coil products, PCG's vector updates and the penalty: a fixed
// CostRates::iteration plus (nc + 2) coil-pixels at CostRates::vector) and a fixed overhead per operator apply
// (CostRates::apply: SENSE hands all coils, and time segmentation all segments, to one batched apply, so an
// iteration pays it twice for the NUFFT and the DFT, once for the Toeplitz normal). Iterations are priced at
// expected_iterations(): the solves stop on the tolerance before -n. Its rates (CostRates) are, by default, measured
// once per process and device by micro-runs of those kernels (measure_cost_rates(): each rate timed warm at two sizes
// and split into a fixed part and a proportional one, so that neither a GPU's launch latency nor a first call's set-up
// is taken for throughput; 0.3 s on a 2-core CPU, about 1 s on an H200) and kept in a file ($XDG_CACHE_HOME/forge, else ~/.cache/forge:
// cost-model-<machine>.txt, keyed by the CPU model and thread count or the GPU's name) that later processes read
// instead. FORGE_COST_MODEL=fixed in the environment, or set_cost_calibration(false), keeps the rates written below
// (fixed_cost_rates()): the same choice on every machine, for reproducible runs and tests.
#include <string>

#include "forge/Recon/Reconstruct.h"

namespace forge {
namespace recon {

// Rates of the kernels each operator uses (per second) on one device.
struct CostRates {
    double dft = 0;        // exact DFT (Gdft), no field map: sample-pixel products per coil
    double dft_field = 0;  // exact DFT with a field map (a phase per product more)
    double fft = 0;        // FFTs: 5 M log2 M flops of an M-point FFT
    double taps = 0;       // NUFFT interpolation: kernel taps applied (forward or adjoint)
    double plan = 0;       // NUFFT plan (made on the host, also for a GPU NUFFT): samples
    double kernels = 1;    // a Toeplitz kernel build's size-dependent part / ToeplitzNormal::estimate_kernel_seconds()
    double vector = 0;     // per-iteration vector work: coil-pixels (a coil product, its conjugate, the sum)
    double apply = 0;      // seconds of fixed overhead per (batched) operator apply
    std::string source;    // "fixed", "measured" or "cached <file>"
    // (after 'source', so that aggregate initialisers of the fields above keep compiling)
    double iteration = 0;     // seconds of fixed overhead per solver iteration: launches and reductions
    double kernel_fixed = 0;  // seconds per Toeplitz kernel build whatever its size: plans, pair data, transfers
    // Time segmentation's set-up on the host (choosing L for a field map, the min-max interpolators): samples per
    // second, paid by every time-segmented operator and every field-corrected Toeplitz kernel build
    double segmentation = 0;
    // A field-corrected Toeplitz build's host work beyond that (the pair data of L + 1 segments and their
    // compression): sample-pairs per second
    double pairs = 0;
};

// The rates written into the code: CPU from forge-recon --report on a 2-core AMD EPYC, GPU rounded from an H200's
// calibration.
CostRates fixed_cost_rates(bool gpu);
// Times the micro-runs now (on the GPU with 'gpu'; throws forge::cuda_error when none is usable): an exact DFT
// block with and without a field map, a NUFFT plan, batched forward and adjoint and field-free Toeplitz applies (an
// FFT pair of the 2x grid per image) at two sizes, SENSE's coil products at two sizes, Toeplitz kernel builds at
// two sizes after one that is not timed (the first build's one-time set-up: modules, FFT plans), a time
// segmentation's choice of L and interpolators, and a field-corrected Toeplitz build for a field-map band.
CostRates measure_cost_rates(bool gpu);
// The rates estimate_seconds() and choose_operator() use: fixed_cost_rates() with calibration off; else the
// calibration of this process and device (measured at the first call, or read from the cache file).
CostRates cost_rates(bool gpu);
// Calibration on or off for this process (overrides FORGE_COST_MODEL; default: on unless FORGE_COST_MODEL=fixed).
void set_cost_calibration(bool on);
bool cost_calibration();
// The machine's key ("cpu-<model>-<threads>t" or "gpu-<name>", file-name safe) and its cache file ("" when neither
// XDG_CACHE_HOME nor HOME is set: nothing cached).
std::string cost_model_key(bool gpu);
std::string cost_model_file(bool gpu);
// Writes 'r' to / reads it from 'path' (false when the file is missing, unreadable or incomplete).
bool write_cost_rates(const std::string& path, const CostRates& r);
bool read_cost_rates(const std::string& path, CostRates& r);

// The iterations a solve of at most 'iterations' is priced at: with a tolerance (> 0) min(iterations,
// kExpectedIterations), without one all of them. The default tolerance (2e-4) stopped the demo's spirals and the
// radial phantom at 25 to 35 of 50 iterations; 30 stands for them (a looser tolerance stops sooner: the estimate is
// then high for every operator alike, most for the one with the least set-up).
constexpr int kExpectedIterations = 30;
int expected_iterations(int iterations, double tolerance);

// Time (seconds) of one reconstruction with 'op', set-up included (Toeplitz: its kernels and right-hand side,
// counted against S.iterations, which it prices as given), at the rates 'r' (without: cost_rates(S.gpu)).
double estimate_seconds(const ReconProblem& P, const ReconSettings& S, EncodingOperator op, bool fieldCorrection);
double estimate_seconds(const ReconProblem& P, const ReconSettings& S, EncodingOperator op, bool fieldCorrection,
                        const CostRates& r);

// Whether reconstruct()'s Toeplitz path forms G^H y of frame 'frame' of P with the NUFFT under S.toeplitz_rhs
// (Auto: where the exact DFT's is estimated over 50 ms and the model puts the NUFFT's below it). It changes the
// image (by the NUFFT's error), so it is priced at fixed_cost_rates() on every machine.
bool toeplitz_rhs_by_nufft(const ReconProblem& P, std::size_t frame, const ReconSettings& S, bool fieldCorrection);

// An exact operator (fft, dft) is taken over an approximate one (nufft, timeseg, toeplitz) while its estimate is
// within this factor of the fastest approximate one's.
// It is also taken while its estimate is under kExactFloorSeconds (small problems keep the exact model: a few ms
// either way).
constexpr double kExactPreference = 1.2;
constexpr double kExactFloorSeconds = 0.01;

// --operator auto: among the operators that reproduce the problem's model (fft only when the samples lie on a
// grid, P.fft_grid, set by fft_grid(); nufft only without a field map to correct, else timeseg; dft; toeplitz), the one
// with the least estimate_seconds() for expected_iterations(iterations, tolerance) iterations, except that the fastest
// exact one (fft, dft) is taken while within kExactPreference of the fastest approximate one or under
// kExactFloorSeconds. 'reason' names the estimates. The rates: 'r', or cost_rates(gpu).
struct OperatorChoice {
    EncodingOperator op;
    std::string reason;
};
OperatorChoice choose_operator(const ReconProblem& P, int iterations, bool gpu, bool fieldCorrection = true,
                               double tolerance = kDefaultTolerance);
OperatorChoice choose_operator(const ReconProblem& P, int iterations, bool gpu, bool fieldCorrection,
                               const CostRates& r, double tolerance = kDefaultTolerance);

}  // namespace recon
}  // namespace forge
