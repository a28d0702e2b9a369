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
    add_spec(in, "--fieldmap", S.field_map);
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

void check_file_outputs(Settings& S) {
    std::string base = bart_input(S) ? forge::io::cfl_base(S.bartKspace) : S.input;
    auto slash = base.rfind('/');
    if (slash != std::string::npos) base = base.substr(slash + 1);
    auto dot = base.rfind('.');
    if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
    // a stream writes its images back into the stream, and files only when -o asks for them
    const bool files = prefix_outputs(S);
    if (S.output.empty() && files) S.output = base + "_recon";
    if (files) check_output_prefix(S.output, base + "_recon");
    if (!files && S.saveMaps) throw UsageError("--save-maps with --stream needs -o PREFIX for the maps' files");
    if (!S.fieldmapScan.empty() && (S.field_map == "estimate" || (!S.field_map.empty() && S.field_map != "none")))
        throw UsageError("--fieldmap-scan and --fieldmap " + S.field_map + " both give the field map; choose one");
    if (!S.fieldmapScan.empty() && S.field_map == "none")
        throw UsageError("--fieldmap-scan with --fieldmap none: drop one of them");
    std::vector<Named> outputs;
    if (files) outputs = {{"-o", S.output + ".nii"}, {"-o", S.output + ".png"}};
    while (S.dicomDir.size() > 1 && S.dicomDir.back() == '/') S.dicomDir.pop_back();
    check_dicom_folder(S);
    if (!S.mrdOut.empty()) outputs.push_back({"--mrd-out", S.mrdOut});
    if (S.saveMaps) {
        outputs.push_back({"--save-maps", S.output + "_smaps.nii"});
        outputs.push_back({"--save-maps", S.output + "_fieldmap.nii"});
    }
    check_outputs(S, outputs);
}

}  // namespace forge_recon
