#pragma once
// forge-recon --report FILE.json: what a run did, for programs to read rather than its printed lines to be
// parsed. The schema is docs/forge-recon.md's; Report.cpp writes it (nlohmann/json).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "forge/IO/OutputSet.h"
#include "forge/Recon/Metrics.h"
#include "forge/Recon/Reconstruct.h"

namespace forge_recon {

struct Settings;

// Seconds spent in each stage of a run (on rank 0; the solves' stages: the slowest rank's).
struct StageTimes {
    double read = 0;            // the input, its maps and reference (file mode)
    double simulation = 0;      // the acquisition (--demo)
    double coil_maps = 0;       // noise pre-whitening, coil compression, coil-map estimation
    double field_map = 0;       // field-map estimation (reading a --fieldmap-scan included)
    double operator_setup = 0;  // building the operators (time segmentation, Toeplitz kernels), scaling, penalty
    double solve = 0;           // the solves: right-hand side, PCG iterations, transfers
    double write = 0;           // the output images and files
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
};

// stop_reason as the report names it: "iteration_limit", "tolerance", "zero_gradient", "flat_direction".
const char* stop_reason_token(forge::StopReason r);

// Writes 'r' (and S's operator and solver settings) as JSON to 'path', staged in 'outs' so that the report appears
// with the other outputs at outs.commit() or not at all. Throws std::runtime_error when it cannot be written.
void write_report(forge::io::OutputSet& outs, const std::string& path, const RunReport& r, const Settings& S);

}  // namespace forge_recon
