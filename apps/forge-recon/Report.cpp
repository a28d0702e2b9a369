// forge-recon --report: the run as JSON (docs/forge-recon.md, "The report").
#include "Report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "Distributed.h"
#include "ReconApp.h"

#ifndef FORGE_RECON_VERSION
#define FORGE_RECON_VERSION "unknown"
#endif

namespace forge_recon {

using Json = nlohmann::ordered_json;  // keys in the order written: the schema's

namespace {

// Numbers JSON can hold; NaN and infinities (a PSNR of an exact image, a cost never computed) are null.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json solve_json(const forge::recon::SolveRecord& s, double finalCost) {
    const forge::SolverReport& r = s.report;
    Json j;
    j["slice"] = s.slice;
    j["frame"] = s.frame;
    j["coil"] = s.coil < 0 ? Json(nullptr) : Json(s.coil);
    j["segments"] = s.segments ? Json(s.segments) : Json(nullptr);
    j["iterations"] = r.iterations;
    j["stop_reason"] = forge::stop_reason_token(r.stop_reason);
    j["converged"] = r.converged;
    j["relative_gradient"] =
        number(r.initial_gradient_norm > 0 ? r.final_gradient_norm / r.initial_gradient_norm : 0.0);
    j["initial_gradient_norm"] = number(r.initial_gradient_norm);
    j["final_gradient_norm"] = number(r.final_gradient_norm);
    j["final_cost"] = number(finalCost);
    j["seconds"] = s.seconds;
    return j;
}

Json reconstruction_json(const ReportedReconstruction& rec) {
    Json j;
    j["name"] = rec.name;
    j["field_correction"] = rec.field_correction;
    j["seconds"] = rec.seconds;
    std::size_t iterations = 0;
    Json solves = Json::array();
    for (std::size_t i = 0; i < rec.solves.size(); ++i) {
        iterations += rec.solves[i].report.iterations;
        solves.push_back(solve_json(rec.solves[i], i < rec.final_costs.size() ? rec.final_costs[i] : NAN));
    }
    j["iterations"] = iterations;
    j["solves"] = solves;
    Json quality = Json::array();
    for (std::size_t f = 0; f < rec.quality.size(); ++f)
        quality.push_back(
            {{"frame", f}, {"nrmse", number(rec.quality[f].nrmse)}, {"psnr", number(rec.quality[f].psnr)}});
    j["quality"] = quality;
    return j;
}

// A stage's seconds rounded as the summary line prints them.
std::string seconds_text(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

}  // namespace

void CoilMapSummary::add(const std::vector<forge::recon::CoilMapStats>& stats) {
    for (const auto& st : stats) {
        ++slices;
        dropped_energy = std::max(dropped_energy, st.dropped_energy);
        masks_dropped += st.mask_dropped ? 1 : 0;
        outliers += st.outliers;
        grid = st.grid;
    }
}

double RunReport::other_seconds() const { return std::max(0.0, total_seconds - stages.sum()); }

void add_reconstruction_stages(const ReportedReconstruction& rec, StageTimes& times) {
    times.operator_setup += rec.setup_seconds;
    times.rhs += rec.rhs_seconds;
    times.iterations += rec.iteration_seconds;
}

std::vector<FrameStages> frame_stages(const std::vector<ReportedReconstruction>& recs) {
    std::vector<FrameStages> out;
    for (const auto& rec : recs) {
        const std::size_t first = out.size();
        for (const auto& s : rec.solves) {
            auto it = std::find_if(out.begin() + std::ptrdiff_t(first), out.end(),
                                   [&s](const FrameStages& f) { return f.slice == s.slice && f.frame == s.frame; });
            if (it == out.end()) {
                FrameStages f;
                f.reconstruction = rec.name;
                f.slice = s.slice;
                f.frame = s.frame;
                out.push_back(f);
                it = out.end() - 1;
            }
            it->operator_setup += s.setup_seconds;
            it->rhs += s.rhs_seconds;
            it->iterations += s.iteration_seconds;
        }
    }
    return out;
}

std::string stage_summary(const RunReport& r) {
    const StageTimes& t = r.stages;
    const bool demo = r.mode == "demo";
    // (label, seconds, shown even at 0)
    const std::vector<std::tuple<const char*, double, bool>> parts = {{"device", t.device, false},
                                                                      {"read", t.read, !demo},
                                                                      {"simulate", t.simulation, demo},
                                                                      {"coils", t.coil_preprocessing, false},
                                                                      {"maps", t.coil_maps + t.field_map, true},
                                                                      {"build", t.operator_setup, true},
                                                                      {"rhs", t.rhs, true},
                                                                      {"solve", t.iterations, true},
                                                                      {"write", t.write, true},
                                                                      {"other", r.other_seconds(), true}};
    std::string line = "forge-recon: time " + seconds_text(r.total_seconds) + " s =";
    bool firstPart = true;
    for (const auto& p : parts) {
        if (!std::get<2>(p) && std::get<1>(p) < 0.005) continue;
        line += std::string(firstPart ? " " : " + ") + std::get<0>(p) + " " + seconds_text(std::get<1>(p));
        firstPart = false;
    }
    return line;
}

void write_report(forge::io::OutputSet& outs, const std::string& path, const RunReport& r, const Settings& S) {
    Json j;
    j["report_version"] = 1;
    j["forge_version"] = FORGE_RECON_VERSION;
    j["mode"] = r.mode;
    j["input"] = r.input.empty() ? Json(nullptr) : Json(r.input);
    const ReportedData& d = r.data;
    j["data"] = {{"acquisitions", d.acquisitions},
                 {"coils", d.coils},
                 {"slices", d.slices},
                 {"frames", d.frames},
                 {"matrix", d.matrix},
                 {"trajectory", d.trajectory},
                 {"k_from", d.k_from},
                 {"field_map", d.field_map}};
    j["device"] = r.device;
    j["processes"] = dist::size();
    j["operator"] = {{"requested", S.opRequested.empty() ? S.op : S.opRequested},
                     {"name", S.op},
                     {"description", r.operator_description},
                     {"auto_reason", S.opReason.empty() ? Json(nullptr) : Json(S.opReason)},
                     {"sense", r.sense}};
    std::vector<std::size_t> segments;
    std::size_t iterations = 0;
    for (const auto& rec : r.reconstructions)
        for (const auto& s : rec.solves) {
            iterations += s.report.iterations;
            if (s.segments && std::find(segments.begin(), segments.end(), s.segments) == segments.end())
                segments.push_back(s.segments);
        }
    std::sort(segments.begin(), segments.end());
    j["segments"] = segments;
    j["penalty"] = {{"kind", S.penalty},
                    {"beta", S.beta},
                    {"delta", S.penalty == "tv" ? Json(S.delta) : Json(nullptr)}};
    if (S.penalty == "l1-wavelet" || S.penalty == "tv-exact") j["penalty"]["lambda"] = S.lambda;
    j["solver"] = {{"iteration_limit", S.iterations}, {"tolerance", S.tolerance}};
    j["iterations"] = iterations;
    Json recs = Json::array();
    for (const auto& rec : r.reconstructions) recs.push_back(reconstruction_json(rec));
    j["reconstructions"] = recs;
    const StageTimes& t = r.stages;
    const CoilMapSummary& cm = t.coil_map_estimation;
    j["coil_map_estimation"] = cm.slices == 0 ? Json(nullptr)
                                              : Json{{"slices", cm.slices},
                                                     {"dropped_energy", cm.dropped_energy},
                                                     {"masks_dropped", cm.masks_dropped},
                                                     {"outliers", cm.outliers},
                                                     {"map_grid", cm.grid}};
    j["stages_s"] = {{"read", t.read},
                     {"simulation", t.simulation},
                     {"coil_maps", t.coil_preprocessing + t.coil_maps},
                     {"field_map", t.field_map},
                     {"operator_setup", t.operator_setup},
                     {"solve", t.solve()},
                     {"write", t.write},
                     {"total", r.total_seconds}};
    // The same run as stages that partition it (they and "other" add up to total_s), per (slice, frame) too.
    Json frames = Json::array();
    for (const FrameStages& f : frame_stages(r.reconstructions))
        frames.push_back({{"reconstruction", f.reconstruction},
                          {"slice", f.slice},
                          {"frame", f.frame},
                          {"operator_build", f.operator_setup},
                          {"rhs", f.rhs},
                          {"iterations", f.iterations}});
    j["timing"] = {{"total_s", r.total_seconds},
                   {"stages_s",
                    {{"device", t.device},
                     {"read", t.read},
                     {"simulation", t.simulation},
                     {"coil_preprocessing", t.coil_preprocessing},
                     {"coil_maps", t.coil_maps},
                     {"field_map", t.field_map},
                     {"operator_build", t.operator_setup},
                     {"rhs", t.rhs},
                     {"iterations", t.iterations},
                     {"write", t.write},
                     {"other", r.other_seconds()}}},
                   {"frames_s", frames},
                   {"summary", stage_summary(r)}};
    // (file names are bytes: one that is not UTF-8 is written with U+FFFD where JSON cannot hold it)
    const std::string text = j.dump(2, ' ', false, Json::error_handler_t::replace);
    const std::string tmp = outs.stage(path);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out << text << '\n';
    if (out) out.close();
    if (!out)
        throw std::runtime_error("writing the report '" + path + "' failed: " + forge::io::write_error_text(errno));
}

}  // namespace forge_recon
