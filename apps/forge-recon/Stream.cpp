// forge-recon's MRD streams: --stream (stdin to stdout) with forge/IO's MrdStream.h.
#include <unistd.h>
#include <cstdio>

#include "ReconApp.h"
#include "forge/IO/MrdStream.h"

namespace forge_recon {

bool prefix_outputs(const Settings& S) { return !S.stream || !S.output.empty(); }

void setup_stream(Settings& S) {
    if (bart_input(S)) throw UsageError("--stream reads an MRD stream on stdin; --bart-kspace gives other data");
    if (!S.input.empty()) throw UsageError("--stream reads stdin; drop the input file '" + S.input + "'");
    if (dist::distributed()) throw UsageError("--stream runs as one process (not under mpirun)");
    if (!S.fieldmapScan.empty()) throw UsageError("--fieldmap-scan with --stream: the stream carries one scan");
    S.input = "stdin";
    S.streamIn = STDIN_FILENO;
    // the images go to stdout's descriptor; every line forge-recon prints goes to stderr instead
    std::fflush(stdout);
    S.streamOut = ::dup(STDOUT_FILENO);
    if (S.streamOut < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        throw std::runtime_error("--stream: cannot set aside stdout for the images");
}

forge::io::MrdFile read_stream_input(const Settings& S) {
    try {
        return forge::io::read_mrd_stream(S.streamIn, S.input);
    } catch (const forge::io::input_error& e) {
        throw UsageError(e.what());
    }
}

void write_stream_output(const forge::io::ImageGeometry& g, const std::vector<forge::io::MrdOutputImage>& images,
                         const Settings& S) {
    forge::io::MrdImageOptions o;
    o.complex = S.complexOut;
    forge::io::write_mrd_image_stream(S.streamOut, g, images, o);
    note("forge-recon: wrote " + std::to_string(images.size()) + " images to the MRD stream", S.quiet);
}

}  // namespace forge_recon
