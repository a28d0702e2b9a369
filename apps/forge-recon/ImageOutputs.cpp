// forge-recon's scanner-format outputs: the images as ISMRMRD images (--mrd-out), with the acquisitions' geometry
// (forge::io::ImageGeometry) and how each image was made as meta attributes.
#include <cstdio>
#include <string>
#include <vector>

#include "ReconApp.h"
#include "forge/IO/MrdImages.h"

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
            const arma::cx_fvec& im = R.complexImage.at(f * P.nslices + s);
            o.values.assign(im.begin(), im.end());
            std::vector<std::string> iterations, reasons, gradients;
            for (const auto& sv : rec.solves) {
                if (sv.slice != s || sv.frame != f) continue;
                iterations.push_back(std::to_string(sv.report.iterations));
                reasons.push_back(stop_reason_token(sv.report.stop_reason));
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

}  // namespace forge_recon
