// forge-recon's BART input: --bart-kspace, --bart-traj and --bart-maps read with forge/IO's Cfl.h and turned into
// ISMRMRD content (BartProblem.h), so that the rest of the file mode is the ISMRMRD path's. BART's arrays carry no
// sample times: --dwell and --echo-time (t = TE + dwell * j), or --bart-times, give them for field correction.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "ReconApp.h"
#include "forge/IO/BartProblem.h"
#include "forge/IO/Cfl.h"

namespace forge_recon {

bool bart_input(const Settings& S) { return !S.bartKspace.empty(); }

namespace {

// A number of seconds given as 'option': finite, and > 0 ('positive') or >= 0; else a UsageError naming it.
double seconds_option(const std::string& text, const char* option, bool positive) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (text.empty() || end == begin || *end != '\0' || errno == ERANGE)
        throw UsageError(std::string(option) + " '" + text + "' is not a number of seconds");
    if (!std::isfinite(v) || (positive ? !(v > 0) : !(v >= 0)))
        throw UsageError(std::string(option) + " " + text + ": expected a finite number of seconds " +
                         (positive ? "> 0" : ">= 0"));
    return v;
}

bool has_times(const Settings& S) { return !S.dwell.empty() || !S.bartTimes.empty(); }

forge::io::BartSampleTimes sample_times(const Settings& S) {
    forge::io::BartSampleTimes t;
    if (S.dwell.empty()) return t;
    t.dwell = seconds_option(S.dwell, "--dwell", true);
    if (!S.echoTime.empty()) t.echo_time = seconds_option(S.echoTime, "--echo-time", false);
    return t;
}

}  // namespace

void check_bart_settings(const Settings& S) {
    if (!bart_input(S)) return;
    if (S.demo) throw UsageError("--demo takes no input (got --bart-kspace '" + S.bartKspace + "')");
    if (!S.input.empty())
        throw UsageError("--bart-kspace '" + S.bartKspace + "' and the ISMRMRD input '" + S.input +
                         "' both give the data; choose one");
    if (!S.bartMaps.empty() && !S.smaps.empty())
        throw UsageError("--bart-maps and --smaps both give the coil maps; choose one");
    sample_times(S);  // refuses a --dwell or --echo-time that is not a number of seconds
    const bool fieldmap = !S.field_map.empty() && S.field_map != "none";
    if ((fieldmap || !S.fieldmapScan.empty()) && !has_times(S))
        throw UsageError(std::string(fieldmap ? "--fieldmap " + S.field_map : "--fieldmap-scan") +
                         " with BART input: BART's arrays carry no sample times; give them with --dwell SECONDS "
                         "(and --echo-time SECONDS: t = TE + dwell * sample index) or --bart-times FILE");
    if (S.field_map == "estimate")
        throw UsageError("--fieldmap estimate with BART input: BART's arrays hold one echo; give the field map with "
                         "--fieldmap FILE");
}

forge::io::MrdFile read_bart_input(const Settings& S, std::string& matrixFrom) {
    using namespace forge::io;
    try {
        const CflDims kd = read_cfl_dims(S.bartKspace), td = read_cfl_dims(S.bartTraj);
        check_bart_dims(kd, S.bartKspace, td, S.bartTraj);
        if (!S.bartTimes.empty()) check_bart_times_dims(read_cfl_dims(S.bartTimes), S.bartTimes, kd);
        std::array<std::size_t, 3> matrix{};
        if (!S.bartMaps.empty()) {
            matrix = check_bart_maps_dims(read_cfl_dims(S.bartMaps), S.bartMaps, kd);
            matrixFrom = "from --bart-maps";
        }
        const CflArray traj = read_cfl(S.bartTraj);
        if (S.bartMaps.empty()) {
            matrix = bart_image_matrix(traj, S.bartTraj);
            matrixFrom = "from the trajectory's extent, as BART's nufft";
        }
        // the memory check of the whole run before the k-space values are read: the sizes of the problem
        ReconProblem sizes;
        sizes.Nx = matrix[0];
        sizes.Ny = matrix[1];
        sizes.Nz = matrix[2];
        sizes.nc = kd[kBartCoilDim];
        sizes.nslices = kd[kBartSliceDim];
        sizes.nframes = kd[kBartTimeDim];
        sizes.n1max = kd[1] * kd[2];
        sizes.n1total = sizes.n1max * sizes.nslices * sizes.nframes;
        check_memory(sizes, S, !S.bartMaps.empty());
        const CflArray kspace = read_cfl(S.bartKspace);
        return mrd_from_bart(kspace, S.bartKspace, traj, S.bartTraj, matrix, {{1, 1, 1}}, sample_times(S));
    } catch (const input_error& e) {
        throw UsageError(e.what());
    }
}

void attach_bart_maps(ReconProblem& P, const Settings& S) {
    if (S.bartMaps.empty()) return;
    using namespace forge::io;
    const std::string name = cfl_base(S.bartMaps) + ".cfl";
    attach_smaps(
        P,
        [&](const DimsCheck& check) {
            const CflArray m = read_cfl(S.bartMaps, [&](const std::vector<std::size_t>& d) {
                // the shape attach_smaps() checks: x, y, z * slices, coils
                check({d[0], d[1], d[2] * d[kBartSliceDim], d[kBartCoilDim]});
            });
            return bart_maps_array(m);
        },
        "'" + name + "'", problem_options(S));
}

void attach_bart_times(ReconProblem& P, const Settings& S) {
    if (S.bartTimes.empty()) return;
    using namespace forge::io;
    try {
        set_bart_sample_times(P, read_cfl(S.bartTimes), S.bartTimes);
    } catch (const input_error& e) {
        throw UsageError(e.what());
    }
}

}  // namespace forge_recon
