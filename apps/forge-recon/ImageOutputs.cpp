// forge-recon's scanner-format outputs: the images as ISMRMRD images (--mrd-out) and DICOM MR images (--dicom), with
// the acquisitions' geometry (forge::io::ImageGeometry) and how each image was made.
#include <cstdio>
#include <string>
#include <vector>

#include "ReconApp.h"
#include "forge/IO/Dicom.h"
#include "forge/IO/MrdImages.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FORGE_RECON_VERSION
#define FORGE_RECON_VERSION "unknown"
#endif

namespace forge_recon {

namespace {
std::string number(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}
}  // namespace

std::vector<forge::io::MrdOutputImage> output_images(const ReconProblem& P, const forge::io::ImageGeometry& g,
                                                     const forge::recon::ReconResult& R,
                                                     const ReportedReconstruction& rec, const Settings& S) {
    std::vector<forge::io::MrdOutputImage> out;
    for (std::size_t f = 0; f < P.nframes; ++f)
        for (std::size_t s = 0; s < P.nslices; ++s) {
            forge::io::MrdOutputImage o;
            o.slice = s;
            o.repetition = g.frames.at(f)[0];
            o.contrast = g.frames.at(f)[1];
            const arma::cx_fvec& im = R.complex_image.at(f * P.nslices + s);
            o.values.assign(im.begin(), im.end());
            std::vector<std::string> iterations, reasons, gradients;
            for (const auto& sv : rec.solves) {
                if (sv.slice != s || sv.frame != f) continue;
                iterations.push_back(std::to_string(sv.report.iterations));
                reasons.push_back(forge::stop_reason_token(sv.report.stop_reason));
                const double g0 = sv.report.initial_gradient_norm;
                gradients.push_back(number(g0 > 0 ? sv.report.final_gradient_norm / g0 : 0.0));
            }
            o.meta = {{"source", {S.input}},
                      {"software", {std::string("forge-recon ") + FORGE_RECON_VERSION}},
                      {"operator", {S.op}},
                      {"sense", {P.smaps.empty() ? "false" : "true"}},
                      {"field_correction", {rec.field_correction ? "true" : "false"}},
                      {"penalty", {S.penalty}},
                      {"beta", {number(S.beta)}},
                      {"iterations", iterations},
                      {"stop_reason", reasons},
                      {"relative_gradient", gradients}};
            out.push_back(std::move(o));
        }
    return out;
}

void write_mrd_output(const std::string& path, const forge::io::MrdFile& F, const forge::io::ImageGeometry& g,
                      const std::vector<forge::io::MrdOutputImage>& images, const Settings& S,
                      forge::io::OutputSet& outs) {
    forge::io::MrdImageOptions o;
    o.complex = S.complexOut;
    const std::string xml = F.xml.empty() ? forge::io::make_mrd_header_xml(F.header, "forge-recon") : F.xml;
    forge::io::write_mrd_images(outs.stage(path), xml, g, images, o);
}

void check_dicom_folder(const Settings& S) {
    if (S.dicomDir.empty()) return;
    if (!forge::io::dicom_available())
        throw UsageError("--dicom: this forge-recon was built without DCMTK (Debian: apt-get install libdcmtk-dev, "
                         "then configure with -DFORGE_DICOM=AUTO or ON)");
    struct stat st;
    if (::stat(S.dicomDir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) throw UsageError("--dicom '" + S.dicomDir + "' exists and is not a folder");
        DIR* d = ::opendir(S.dicomDir.c_str());
        if (!d) throw UsageError("--dicom '" + S.dicomDir + "': cannot read the folder");
        bool empty = true;
        while (const dirent* e = ::readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") empty = false;
        ::closedir(d);
        if (!empty)
            throw UsageError("--dicom '" + S.dicomDir +
                             "' is not empty (a DICOM series is written into an empty or new folder)");
        if (::access(S.dicomDir.c_str(), W_OK) != 0) throw UsageError("--dicom '" + S.dicomDir + "' is not writable");
        return;
    }
    const auto slash = S.dicomDir.rfind('/');
    std::string parent = slash == std::string::npos ? "." : S.dicomDir.substr(0, slash);
    if (parent.empty()) parent = "/";
    if (!is_dir(parent)) throw UsageError("--dicom '" + S.dicomDir + "': folder '" + parent + "' does not exist");
    if (::access(parent.c_str(), W_OK) != 0)
        throw UsageError("--dicom '" + S.dicomDir + "': folder '" + parent + "' is not writable");
}

DicomFolder::~DicomFolder() {
    if (made) ::rmdir(path.c_str());  // only an empty folder goes
}

void DicomFolder::make() {
    if (is_dir(path)) return;
    if (::mkdir(path.c_str(), 0777) != 0) throw std::runtime_error("cannot make the --dicom folder '" + path + "'");
    made = true;
}

void write_dicom_output(DicomFolder& folder, const forge::io::MrdFile& F, const forge::io::ImageGeometry& g,
                        const std::vector<forge::io::MrdOutputImage>& images, const Settings& S,
                        forge::io::OutputSet& outs) {
    folder.make();
    forge::io::DicomOptions o;
    o.series_description = "forge-recon " + S.op;
    o.software = std::string("forge-recon ") + FORGE_RECON_VERSION;
    o.echo_times_ms = F.header.echo_times_ms;
    if (o.echo_times_ms.empty() && F.header.has_te) o.echo_times_ms = {F.header.te_ms};
    folder.files = forge::io::write_dicom_series(folder.path, g, images, o, [&outs](const std::string& p) {
                       return outs.stage(p);
                   }).size();
}

}  // namespace forge_recon
