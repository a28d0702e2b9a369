#pragma once
// From an ISMRMRD (MRD) file's content to a forge::recon::ReconProblem: k-space in cycles per recon FOV,
// sample times in seconds from the echo, coil-major data, the pixel grid and the NIfTI affine; and the
// maps (field map, coil sensitivities, reference image) from NIfTI files or HDF5 datasets.
// Part of Forge::IO (it reads ISMRMRD's layout); the problem itself (forge/Recon) knows no file format.
#include <functional>
#include <string>

#include "forge/Core/Config.h"
#include "forge/IO/Mrd.h"
#include "forge/Recon/ReconProblem.h"

namespace forge {
namespace io {

struct MrdProblemOptions {
    // Take k-space from the encoding counters even when the acquisitions carry trajectories.
    bool cartesian = false;
    // Called with the problem's sizes (grid, slices, frames, coils, samples; no data yet) before anything
    // the size of the data or of an image is allocated, and again by attach_smaps() with withMaps = true:
    // a caller can refuse a problem that will not fit in memory by throwing.
    std::function<void(const recon::ReconProblem& sizes, bool withMaps)> size_check;
    // Where set, each frame's sample array (ReconFrame::y, n values) is taken from sample_array(n) instead of a new
    // allocation, and filled: a caller that reconstructs one group after another (a stream) hands back the arrays
    // of the groups it has finished, whose pages are resident. A new array costs a page fault per 4 KB page on its
    // first write, 3072 for a 256x256 x 16-coil slice (8 to 10 ms in a sandboxed host's kernel). An array of
    // another length (an empty one: none to give) is not used.
    std::function<arma::cx_fvec(std::size_t n)> sample_array;
};

// Builds the problem, validating the header and the acquisitions. Sizes: Nx, Ny (, Nz) from the header's
// reconSpace matrix (encodedSpace when absent); one frame per (slice, repetition, contrast).
// k per axis d = trajectory value * encoded matrix[d] * reconFOV[d] / encodedFOV[d] (ISMRMRD trajectories
// are normalised to [-0.5, 0.5]), or from the encoding counters (sample - centre sample, e1 - centre line)
// for Cartesian data; the +N/2 edge sample wraps to -N/2. t = TE + (sample - centre sample) * dwell.
// Throws forge::invalid_argument with one line naming the field (header sizes, channel or trajectory
// dimension mismatches, non-finite values, trajectory values outside [-0.5, 0.5]).
// 'source' names the data in messages.
recon::ReconProblem problem_from_mrd(const MrdFile& file, const std::string& source,
                                     const MrdProblemOptions& options = {});

// Reads a map; the reader calls the DimsCheck before it allocates the values.
using MapLoader = std::function<Array(const DimsCheck&)>;

// "file.nii", "file.cfl" (BART's array: file.hdr and file.cfl, its 16 dims as they are) or
// "file.h5:/path/in/file" -> array (dims fastest first). 'what' names it in messages.
Array load_map(const std::string& spec, const std::string& what, const DimsCheck& check = {});

// Attach a map to the problem, checking its size (x, y, slices (, coils)) before its values are read and
// refusing NaN or Inf by name. 'origin' says where it came from in messages.
void attach_field_map(recon::ReconProblem& P, const MapLoader& load, const std::string& origin);  // rad/s
FORGE_DEPRECATED("attach_field_map")  // the name before the field_map spelling, until forge 0.3.0
inline void attach_fieldmap(recon::ReconProblem& P, const MapLoader& load, const std::string& origin) {
    attach_field_map(P, load, origin);
}
void attach_smaps(recon::ReconProblem& P, const MapLoader& load, const std::string& origin,
                  const MrdProblemOptions& options = {});                                         // complex
void attach_reference(recon::ReconProblem& P, const MapLoader& load, const std::string& origin);  // |values|

}  // namespace io
}  // namespace forge
