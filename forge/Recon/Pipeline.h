#pragma once
// The reconstruction pipeline: a request says how to reconstruct (operator, penalty, solver, device, coil maps),
// and a session reconstructs group after group of acquisitions with it: a whole file at once, or the slices and
// frames of a stream as they complete. A session keeps what later groups can reuse: the encoding operators built
// for a trajectory (OperatorCache), the coil-map estimation's calibration plan (CoilMapCache), each slice's
// estimated coil maps and, with warm starts, each slice's latest image. Every group's images equal those of the
// same frames reconstructed together in one group.
//
//   forge::recon::ReconRequest r;                  // defaults: operator by cost, quadratic penalty, 50 iterations
//   r.device = forge::Device::GPU;
//   forge::recon::ReconSession session(r);
//   for (std::size_t s = 0; s < slices.size(); ++s) {   // one-slice problems, as a stream completes them
//       forge::recon::GroupResult g = session.reconstruct(slices[s], {s, 0});  // the session's slice s, frame 0
//       ... g.images.complex_image[0] ...
//   }
//
// forge-recon's file, stream, server and demo modes run through it (apps/forge-recon), as does Python's
// forge.reconstruct.
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/Core/Device.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"

namespace forge {
namespace recon {

// Where a group's coil maps come from.
enum class MapsPolicy {
    Auto,      // the problem's own maps when it has them, else estimated from the data; an estimate the data cannot
               // give (no calibration region) falls back to coil-by-coil root-sum-of-squares with a warning
    Estimate,  // estimated from the data, replacing any the problem has; an estimate that cannot be made throws
    Given,     // the problem's own: a group without maps throws
    None       // none: each coil reconstructed alone, combined by root-sum-of-squares
};

struct ReconRequest {
    // The operator: chosen by choose_operator() for each group (its cost model, the device in use) when
    // auto_operator, else settings.op.
    bool auto_operator = true;
    // Penalty, solver, operator settings and callbacks (ReconSettings); its gpu, frames and start are the session's.
    ReconSettings settings;
    Device device = Device::Auto;  // Auto: the GPU when one is usable
    MapsPolicy maps = MapsPolicy::Auto;
    CoilMapOptions coil_maps;      // estimation (its device follows 'device' unless set to Host)
    bool field_correction = true;  // false: a field map the problem holds is ignored
    bool warm_start = false;       // each slice's later frames start from its latest image (ReconSettings::warm_start)
    std::size_t cached_operators = 4;  // OperatorCache capacity
    // Called with each warning (spikes left out, maps that drop part of the object, maps not estimable); none:
    // warnings are dropped.
    std::function<void(const std::string&)> warn;
    // prepare_maps() keeps each slice's estimated maps for the slice's later groups (kept_maps()); false: a caller
    // whose slices come in one group each (a stream whose header says so) saves the copy (8 MB a 256x256 x 16-coil
    // slice).
    bool keep_maps = true;
};

// How messages and the session's per-slice state name a group's slices and frames: the group's slice s is the
// session's slice first_slice + s (a stream's group holds one slice and frame, those of the stream).
struct GroupPlace {
    std::size_t first_slice = 0, first_frame = 0;
    bool name_frames = false;                // messages name frames too ("slice 3, frame 1")
    std::string slice(std::size_t s) const;  // "slice 3"
    std::string operator()(std::size_t s, std::size_t f) const;
};
// The place of a whole problem: its own indices, frames named when it has several.
GroupPlace whole_problem(const ReconProblem& P);

// Leaves out k-space spikes (remove_spikes; 'warn', when given, is called once per frame that had any) and refuses a
// frame whose data are all zero (forge::invalid_argument naming P.source and the place). Returns the spikes per frame.
std::vector<std::size_t> check_data(ReconProblem& P, const GroupPlace& place,
                                    const std::function<void(const std::string&)>& warn = nullptr);

// What prepare_maps() did to the coil maps.
struct MapsReport {
    enum class Source { None, Given, Estimated, Kept } source = Source::None;  // Kept: estimated by an earlier group
    std::vector<CoilMapStats> stats;                                           // per slice estimated
    std::vector<arma::uvec> masks;                                             // per slice estimated: 1 inside the mask
    std::array<double, 3> calibration_width{};                                 // cycles/FOV per axis, when estimated
    double seconds = 0;
    bool fell_back = false;  // Auto could not estimate: root-sum-of-squares (the warning said why)
};

struct GroupResult {
    ReconResult images;            // reconstruct()'s result: images, solves, seconds
    EncodingOperator op{};         // the operator used
    std::string op_reason;         // why auto_operator chose it (empty when given)
    bool field_corrected = false;  // a field map was corrected for
    MapsReport maps;
    std::vector<std::size_t> spikes;  // per frame of the group, samples left out as spikes
};

class ReconSession {
public:
    // Resolves the device: forge::cuda_error when Device::GPU is asked for and none is usable.
    explicit ReconSession(ReconRequest request);
    ~ReconSession();
    ReconSession(const ReconSession&) = delete;
    ReconSession& operator=(const ReconSession&) = delete;

    const ReconRequest& request() const { return request_; }
    // The request's settings, callbacks and field correction may change between groups (a progress display per
    // group, a reconstruction without field correction beside one with it); operators are cached by what they
    // depend on, so a change never reuses one that does not fit.
    ReconRequest& request() { return request_; }
    bool on_gpu() const { return gpu_; }

    // The steps of reconstruct(), for callers that do something between them (a distributed run estimates maps
    // on one process and shares them):
    // 1. check_data() (below) with the request's warnings.
    std::vector<std::size_t> check_data(ReconProblem& P, const GroupPlace& place) const {
        return recon::check_data(P, place, request_.warn);
    }
    // 2. The coil maps by the request's policy. Maps P holds are checked: finite and not zero on a slice, and, when
    //    'origin' names where they came from (for messages: "--smaps maps.nii"), against the data of a slice's
    //    frame 0: zero where the data's gridded image holds over half its energy is refused, over 5% warned about
    //    (an empty origin: maps the caller estimated). Maps estimated here are kept for the slice's later groups.
    //    Refusals throw forge::invalid_argument naming the place.
    MapsReport prepare_maps(ReconProblem& P, const GroupPlace& place, const std::string& origin = "given maps");
    // Whether prepare_maps() will estimate maps for P (to check the memory it needs first).
    bool will_estimate(const ReconProblem& P, const GroupPlace& place) const;
    // 3. The operator: the request's, or by choose_operator() (P.fft_grid set), and why.
    OperatorChoice choose(ReconProblem& P) const;
    // 4. Solves 'frames' of P (indices into P.frames; empty: all) with 'op', operators cached across calls, warm
    //    starts per slice when asked; refuses (std::runtime_error) an image that is not finite or zero everywhere.
    ReconResult solve(const ReconProblem& P, EncodingOperator op, const GroupPlace& place,
                      const std::vector<std::size_t>& frames = {}, const std::string& tag = "recon");

    //    prepare_operators(): step 4's operators for a group whose samples are yet to come (its trajectory,
    //    field map and settings known), built into the session's cache so that its solve() finds them; returns how
    //    many were built. P's data are not read (recon::prepare_operators).
    std::size_t prepare_operators(const ReconProblem& P, EncodingOperator op,
                                  const std::vector<std::size_t>& frames = {});

    // All four on one group.
    GroupResult reconstruct(ReconProblem& P, const GroupPlace& place, const std::string& tag = "recon");
    GroupResult reconstruct(ReconProblem& P) { return reconstruct(P, whole_problem(P)); }

    // The estimated maps kept for the session's slice 'slice' (empty when none).
    const arma::cx_fvec& kept_maps(std::size_t slice) const;
    OperatorCache& operators() { return *operators_; }

private:
    CoilMapOptions map_options() const;
    ReconRequest request_;
    bool gpu_ = false;
    std::unique_ptr<OperatorCache> operators_;
    CoilMapCache calibration_;  // the maps' calibration plan and density, per trajectory
    // By session slice: estimated maps, and the latest image (warm starts). Deques: growing one leaves the slices
    // before where they are, where a vector would copy them all (Armadillo's vectors move without noexcept), 32 MB
    // at the 32nd slice of 128x128 x 8 coils.
    std::deque<arma::cx_fvec> maps_;
    std::deque<arma::cx_fvec> lastImage_;
};

// Share of the gridded image's energy on which given maps vanish, above which prepare_maps() refuses them, and
// above which it warns (masked maps of the object itself leave 0.1 to 2% outside: the gridded image's blur).
constexpr double kUncoveredRefused = 0.5;
constexpr double kUncoveredWarned = 0.05;

}  // namespace recon
}  // namespace forge
