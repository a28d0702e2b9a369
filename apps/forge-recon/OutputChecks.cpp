// forge-recon's output checks before anything runs: no output names an input file or another output, and every
// output's folder exists and is writable (forge::io::OutputSet::check_named).
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <sys/stat.h>

#include "ReconApp.h"
#include "forge/IO/Cfl.h"

namespace forge_recon {

namespace {

bool ends_with(const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// A BART array's two files.
void add_cfl(std::vector<Named>& v, const std::string& option, const std::string& name) {
    if (name.empty()) return;
    const std::string base = forge::io::cfl_base(name);
    v.push_back({option, base + ".cfl"});
    v.push_back({option, base + ".hdr"});
}

// The file of a map SPEC (forge::io::load_map): FILE.nii, a BART array, or FILE.h5:/path; none for "none",
// "estimate" or an empty SPEC.
void add_spec(std::vector<Named>& v, const std::string& option, const std::string& spec) {
    if (spec.empty() || spec == "none" || spec == "estimate") return;
    if (ends_with(spec, ".cfl") || ends_with(spec, ".hdr")) return add_cfl(v, option, spec);
    if (ends_with(spec, ".nii")) return v.push_back({option, spec});
    const auto colon = spec.rfind(':');
    v.push_back({option, colon != std::string::npos && colon > 0 ? spec.substr(0, colon) : spec});
}

// A stream's descriptor that is a regular file (stdin redirected from one), by the file's name.
void add_descriptor(std::vector<Named>& v, const std::string& option, int fd) {
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    std::error_code e;
    const std::filesystem::path file = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), e);
    v.push_back({option, e ? "/proc/self/fd/" + std::to_string(fd) : file.string()});
}

}  // namespace

std::vector<Named> input_files(const Settings& S) {
    std::vector<Named> in;
    if (bart_input(S)) {
        add_cfl(in, "--bart-kspace", S.bartKspace);
        add_cfl(in, "--bart-traj", S.bartTraj);
        add_cfl(in, "--bart-maps", S.bartMaps);
        add_cfl(in, "--bart-times", S.bartTimes);
    } else if (S.stream) {
        add_descriptor(in, "--stream's stdin", S.streamIn);
    } else if (!S.input.empty() && !S.demo) {
        in.push_back({"the input", S.input});
    }
    add_spec(in, "--fieldmap", S.fieldmap);
    add_spec(in, "--smaps", S.smaps);
    add_spec(in, "--reference", S.reference);
    if (!S.fieldmapScan.empty()) in.push_back({"--fieldmap-scan", S.fieldmapScan});
    return in;
}

void check_outputs(const Settings& S, std::vector<Named> outputs) {
    if (!S.report.empty()) outputs.push_back({"--report", S.report});
    std::vector<std::string> paths;
    for (const auto& o : outputs) paths.push_back(o.path);
    forge::io::OutputSet::check_named(input_files(S), outputs);
    forge::io::OutputSet::check_paths(paths);
    std::vector<Named> out;  // a stream's images into a file (stdout redirected) that is also an output file
    if (S.stream) add_descriptor(out, "--stream's stdout", S.streamOut);
    for (const auto& s : out)
        for (const auto& o : outputs)
            if (forge::io::same_file(s.path, o.path))
                throw UsageError(o.option + " '" + o.path + "' is the file " + s.option +
                                 " goes to; choose another name");
}

}  // namespace forge_recon
