#pragma once
// forge-recon --report FILE.json: what a run did, for programs to read rather than its printed lines to be
// parsed. The schema is docs/forge-recon.md's; Report.cpp writes it (nlohmann/json).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "forge/IO/OutputSet.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/Metrics.h"
#include "forge/Recon/Reconstruct.h"

namespace forge_recon {

struct Settings;

// What the coil-map estimations of a run measured (forge::recon::CoilMapStats over the slices estimated).
struct CoilMapSummary {
    std::size_t slices = 0;                      // slices whose maps were estimated
    double dropped_energy = 0;                   // the largest share of a slice's calibration energy its mask drops
    std::size_t masks_dropped = 0;               // slices whose mask would have dropped over 1% (maps everywhere)
    std::size_t outliers = 0;                    // calibration samples left out as spikes
    std::array<std::size_t, 3> grid{{0, 0, 0}};  // the map grid of the eigenvectors
    void add(const std::vector<forge::recon::CoilMapStats>& stats);
};

// Seconds spent in each stage of a run (on rank 0; the solves' stages: the slowest rank's). The stages partition the
// run: what none of them covers is reported as "other" (RunReport::other_seconds()).
struct StageTimes {
    double device = 0;              // finding and initialising the GPU (CUDA context)
    double read = 0;                // the input, its maps and reference (file mode); the demo: MRD to problem
    double simulation = 0;          // the acquisition (--demo): objects, simulated data, MRD acquisitions
    double coil_preprocessing = 0;  // noise pre-whitening, coil compression
    double coil_maps = 0;           // coil-map estimation
    double field_map = 0;           // field-map estimation (reading a --fieldmap-scan included)
    double operator_setup = 0;      // building the operators (NUFFT plan, time segmentation, Toeplitz kernels), scaling
    double rhs = 0;                 // the solves before their PCG loops: G^H y of the Toeplitz path, uploads
    double iterations = 0;          // the PCG loops
    double write = 0;               // the output images and files
    CoilMapSummary coil_map_estimation;  // not seconds: what the coil-map stage measured
    // the solves: right-hand side, PCG, transfers
    double solve() const { return rhs + iterations; }
    double sum() const {
        return device + read + simulation + coil_preprocessing + coil_maps + field_map + operator_setup + rhs +
               iterations + write;
    }
};

// One reconstruction of the run (the file mode has one; the demo three).
struct ReportedReconstruction {
    std::string name;
    bool field_correction = false;
    double seconds = 0;
    std::vector<forge::recon::SolveRecord> solves;  // every rank's, in the order of the problem's frames
    std::vector<double> final_costs;                // per solve: the cost after its last iteration (NaN: none ran)
    std::vector<forge::recon::Quality> quality;     // per frame against the reference; empty without one
    double setup_seconds = 0, solve_seconds = 0;    // the slowest rank's
    double rhs_seconds = 0, iteration_seconds = 0;  // solve_seconds split (the slowest rank's each)
};

// The data reconstructed.
struct ReportedData {
    std::size_t acquisitions = 0, coils = 0, slices = 0, frames = 0;
    std::array<std::size_t, 3> matrix{{0, 0, 0}};  // image grid of one frame
    std::string trajectory;                        // the header's: "cartesian", "spiral", ...
    std::string k_from;                            // "acquisitions" (stored trajectories) or "encoding counters"
    bool field_map = false;                        // a field map was given, stored or estimated
};

struct RunReport {
    std::string mode;   // "file" or "demo"
    std::string input;  // file mode: the input file
    ReportedData data;
    std::string device;
    std::string operator_description;  // operator_description(): what runs, e.g. "timeseg (... plain nufft)"
    bool sense = false;                // coil maps: SENSE (else coil by coil, root-sum-of-squares)
    std::vector<ReportedReconstruction> reconstructions;
    StageTimes stages;
    double total_seconds = 0;
    // The run's time that no stage covers (>= 0).
    double other_seconds() const;
};

// The stages of one (slice, frame) of a reconstruction, summed over its solves (coils without maps).
struct FrameStages {
    std::string reconstruction;
    std::size_t slice = 0, frame = 0;
    double operator_setup = 0, rhs = 0, iterations = 0;
};
std::vector<FrameStages> frame_stages(const std::vector<ReportedReconstruction>& recs);

// Adds a reconstruction's stages (the slowest rank's set-up and solves) to 'times'.
void add_reconstruction_stages(const ReportedReconstruction& rec, StageTimes& times);

// The one line a run ends with: where the time went, e.g.
//   forge-recon: time 1.12 s = read 0.31 + maps 0.00 + build 0.05 + rhs 0.02 + solve 0.61 + write 0.13 + other 0.00
// (stages of no time in this mode left out; "maps" = coil maps + field map).
std::string stage_summary(const RunReport& r);

// Writes 'r' (and S's operator and solver settings) as JSON to 'path', staged in 'outs' so that the report appears
// with the other outputs at outs.commit() or not at all. Throws std::runtime_error when it cannot be written.
void write_report(forge::io::OutputSet& outs, const std::string& path, const RunReport& r, const Settings& S);

}  // namespace forge_recon
