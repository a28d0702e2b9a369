// forge-recon's BART input: --bart-kspace, --bart-traj and --bart-maps read with forge/IO's Cfl.h and turned into
// ISMRMRD content (BartProblem.h), so that the rest of the file mode is the ISMRMRD path's.
#include <string>

#include "ReconApp.h"
#include "forge/IO/BartProblem.h"
#include "forge/IO/Cfl.h"

namespace forge_recon {

bool bart_input(const Settings& S) { return !S.bartKspace.empty(); }

void check_bart_settings(const Settings& S) {
    if (!bart_input(S)) return;
    if (S.demo) throw UsageError("--demo takes no input (got --bart-kspace '" + S.bartKspace + "')");
    if (!S.input.empty())
        throw UsageError("--bart-kspace '" + S.bartKspace + "' and the ISMRMRD input '" + S.input +
                         "' both give the data; choose one");
    if (!S.bartMaps.empty() && !S.smaps.empty())
        throw UsageError("--bart-maps and --smaps both give the coil maps; choose one");
    const bool fieldmap = !S.fieldmap.empty() && S.fieldmap != "none";
    if (fieldmap || !S.fieldmapScan.empty())
        throw UsageError(std::string(fieldmap ? "--fieldmap " + S.fieldmap : "--fieldmap-scan") +
                         " with BART input: BART's arrays carry no sample times, so there is no field to correct");
}

forge::io::MrdFile read_bart_input(const Settings& S, std::string& matrixFrom) {
    using namespace forge::io;
    try {
        const CflDims kd = read_cfl_dims(S.bartKspace), td = read_cfl_dims(S.bartTraj);
        check_bart_dims(kd, S.bartKspace, td, S.bartTraj);
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
        return mrd_from_bart(kspace, S.bartKspace, traj, S.bartTraj, matrix);
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

}  // namespace forge_recon
