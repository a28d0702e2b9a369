// forge-recon's map estimation steps: noise pre-whitening, coil compression, coil maps and field maps
// from the data (forge/Recon/CoilPreprocessing.h, CoilMaps.h, FieldMapEstimation.h; docs/map-estimation.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>

#include "ReconApp.h"
#include "forge/IO/Cfl.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/Recon/CoilPreprocessing.h"
#include "forge/Recon/FieldMapExtension.h"
#include "forge/Solvers/recon_solve.h"

namespace forge_recon {

using cxf = std::complex<float>;

namespace {

// A field map read from a file is 0 outside the object when another tool wrote it: each slice's map is extended
// beyond its nonzero pixels (forge/Recon/FieldMapExtension.h), unless --fieldmap-extend off.
void extend_file_field_map(ReconProblem& P, const Settings& S, const std::string& what) {
    if (S.fieldmapExtend == "off" || P.field_map.empty()) return;
    std::size_t filled = 0;
    for (arma::fvec& f : P.field_map) {
        const std::vector<unsigned char> support = forge::recon::field_map_support(f);
        std::size_t known = 0;
        for (const unsigned char b : support) known += b;
        if (known == 0 || known == f.n_elem) continue;
        f = forge::recon::extend_field_map(f, support, P.Nx, P.Ny, P.Nz);
        filled += f.n_elem - known;
    }
    if (filled > 0)
        note("forge-recon: field map " + what + ": extended smoothly to the " + std::to_string(filled) +
                 " pixels where it is 0 (outside the object; --fieldmap-extend off keeps them)",
             S.quiet);
}

}  // namespace

void attach_maps(ReconProblem& P, const Settings& S, const std::string& mrdPath) {
    const std::string g = "/" + S.group + "/";
    using forge::io::DimsCheck;
    auto from_spec = [](const std::string& spec, const std::string& what) {
        return [spec, what](const DimsCheck& c) { return forge::io::load_map(spec, what, c); };
    };
    auto from_input = [&mrdPath](const std::string& object) {
        return [&mrdPath, object](const DimsCheck& c) { return forge::io::read_hdf5_array(mrdPath, object, c); };
    };
    // 'none': neither a file nor the map stored in the input
    if (S.smaps == "none" || S.smaps == "estimate") {
    } else if (!S.smaps.empty()) {
        forge::io::attach_smaps(P, from_spec(S.smaps, "sensitivity maps"), "'" + S.smaps + "'", problem_options(S));
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "csm")) {
        forge::io::attach_smaps(P, from_input(g + "csm"), "(" + g + "csm in the input)", problem_options(S));
    }
    if (S.field_map == "none" || S.field_map == "estimate" || !S.fieldmapScan.empty()) {
    } else if (!S.field_map.empty()) {
        forge::io::attach_field_map(P, from_spec(S.field_map, "field map"), "'" + S.field_map + "'");
        extend_file_field_map(P, S, "'" + S.field_map + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "fieldmap")) {
        forge::io::attach_field_map(P, from_input(g + "fieldmap"), "(" + g + "fieldmap in the input)");
        extend_file_field_map(P, S, "(" + g + "fieldmap in the input)");
    }
    if (S.reference == "none") {
    } else if (!S.reference.empty()) {
        forge::io::attach_reference(P, from_spec(S.reference, "reference image"), "'" + S.reference + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "phantom")) {
        forge::io::attach_reference(P, from_input(g + "phantom"), "(" + g + "phantom in the input)");
    }
}

arma::cx_mat preprocess_coils(ReconProblem& P, const forge::io::MrdFile& F, const Settings& S, const std::string& what,
                              const arma::cx_mat* fallback) {
    arma::cx_mat T;  // the transform applied so far
    if (!F.noise.empty() && S.prewhiten != "off") {
        std::size_t n = 0;
        for (const auto& a : F.noise) {
            if (a.channels != P.nc)
                throw UsageError(what + ": a noise scan has " + std::to_string(a.channels) + " channels but the data " +
                                 std::to_string(P.nc) + " (use --prewhiten off to ignore the noise scans)");
            n += a.samples;
        }
        arma::cx_fmat noise(n, P.nc);
        std::size_t row = 0;
        for (const auto& a : F.noise) {
            for (std::size_t c = 0; c < P.nc; ++c)
                for (std::size_t j = 0; j < a.samples; ++j) noise(row + j, c) = a.data[c * a.samples + j];
            row += a.samples;
        }
        try {
            const arma::cx_mat W = forge::recon::whitening_matrix(forge::recon::noise_covariance(noise));
            forge::recon::apply_coil_transform(P, W);
            T = W;
        } catch (const forge::invalid_argument& e) {
            throw UsageError(what + ": noise pre-whitening from its " + std::to_string(F.noise.size()) +
                             " noise scan(s): " + e.what() + " (use --prewhiten off)");
        }
        note("forge-recon: " + what + ": noise pre-whitening from " + std::to_string(n) + " samples of " +
                 std::to_string(F.noise.size()) + " noise scan(s)",
             S.quiet);
    }
    if (S.coilCompress > 0 && static_cast<std::size_t>(S.coilCompress) < P.nc) {
        double energy = 0;
        const std::size_t before = P.nc;
        const arma::cx_mat A =
            forge::recon::coil_compression_matrix(P, static_cast<std::size_t>(S.coilCompress), &energy);
        forge::recon::apply_coil_transform(P, A);
        T = T.is_empty() ? A : arma::cx_mat(A * T);
        char buf[200];
        std::snprintf(buf, sizeof buf, ": coil compression %zu -> %zu virtual coils (%.4f%% of the data's energy kept)",
                      before, P.nc, 100 * energy);
        note("forge-recon: " + what + buf, S.quiet);
    }
    if (T.is_empty() && fallback && !fallback->is_empty()) {
        if (fallback->n_cols != P.nc)
            throw UsageError(what + " has " + std::to_string(P.nc) + " coils but the data " +
                             std::to_string(fallback->n_cols));
        forge::recon::apply_coil_transform(P, *fallback);
        T = *fallback;
        note("forge-recon: " + what + ": the data's noise pre-whitening and coil compression applied", S.quiet);
    }
    return T;
}

std::string maps_origin(const ReconProblem& P, const Settings& S) {
    if (P.smaps.empty()) return {};
    if (!S.bartMaps.empty()) return "--bart-maps " + forge::io::cfl_base(S.bartMaps) + ".cfl";
    if (!S.smaps.empty() && S.smaps != "none" && S.smaps != "estimate") return "--smaps " + S.smaps;
    return "/" + S.group + "/csm in the input";
}

forge::recon::CoilMapOptions coil_map_options(const Settings& S) {
    forge::recon::CoilMapOptions o;
    o.calibration = S.smapsCalibration;
    o.kernel = S.smapsKernel;
    o.threshold = S.smapsThreshold;
    // --device cpu keeps the estimation on the host too; otherwise on the GPU when one is usable.
    o.device = S.gpu ? forge::Device::Auto : forge::Device::Host;
    return o;
}

forge::recon::FieldMapOptions fieldmap_options(const Settings& S) {
    forge::recon::FieldMapOptions o;
    o.beta = S.fieldmapBeta;
    o.iterations = S.fieldmapIterations;
    o.device = S.gpu ? forge::Device::Auto : forge::Device::Host;
    return o;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Coil maps of a problem beside the reconstruction's (a field-map scan, the echoes of a field-map estimate), in a
// session of their own: its kept maps are not the reconstruction's.
forge::recon::MapsReport own_maps(forge::recon::MapsPolicy policy, ReconProblem& P, const Settings& S,
                                  const std::string& what, StageTimes& times) {
    forge::recon::ReconRequest r = recon_request(S);
    r.maps = policy;
    forge::recon::ReconSession own(r);
    return prepare_maps(own, P, S, forge::recon::whole_problem(P), "", what, times);
}

}  // namespace

forge::recon::MapsReport prepare_maps(forge::recon::ReconSession& session, ReconProblem& P, const Settings& S,
                                      const forge::recon::GroupPlace& place, const std::string& origin,
                                      const std::string& what, StageTimes& times) {
    const auto t0 = std::chrono::steady_clock::now();
    if (session.will_estimate(P, place)) check_memory(P, S, true, true);
    forge::recon::MapsReport r = session.prepare_maps(P, place, origin);
    times.coil_maps += seconds_since(t0);
    if (r.source != forge::recon::MapsReport::Source::Estimated) return r;
    std::size_t inside = 0;
    for (const auto& m : r.masks) inside += arma::accu(m);
    CoilMapSummary summary;
    summary.add(r.stats);
    const std::array<double, 3>& width = r.calibration_width;
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  ": estimated coil sensitivity maps from the central %gx%g%s cycles/FOV of k-space (local "
                  "eigenvectors, %dx%d window; mask %.0f%% of the pixels, dropping %.2g%% of the calibration image's "
                  "energy)",
                  width[0], width[1], P.Nz > 1 ? ("x" + std::to_string(int(width[2]))).c_str() : "", S.smapsKernel,
                  S.smapsKernel, 100.0 * double(inside) / double(P.n2() * P.nslices), 100 * summary.dropped_energy);
    note("forge-recon: " + what + buf, S.quiet);
    times.coil_map_estimation.add(r.stats);
    return r;
}

std::vector<arma::fvec> fieldmap_from_echoes(ReconProblem E, const Settings& S, const std::string& what,
                                             StageTimes& times) {
    if (E.smaps.empty()) own_maps(forge::recon::MapsPolicy::Estimate, E, S, what, times);
    const auto t0 = std::chrono::steady_clock::now();
    E.fft_grid = forge::recon::fft_grid(E);
    forge::recon::ReconSettings R;
    R.op = forge::recon::choose_operator(E, S.iterations, S.gpu, true, S.tolerance).op;
    R.beta = S.beta;
    R.iterations = S.iterations;
    R.gpu = S.gpu;
    std::vector<double> tes;
    for (const auto& fr : E.frames)
        if (std::find(tes.begin(), tes.end(), fr.echo_time) == tes.end()) tes.push_back(fr.echo_time);
    std::sort(tes.begin(), tes.end());
    std::vector<arma::fvec> maps;
    try {
        maps = forge::recon::estimate_field_map(E, R, fieldmap_options(S));
    } catch (const forge::invalid_argument& e) {
        throw UsageError(what + ": " + e.what());
    }
    float lo = 0, hi = 0;
    for (const auto& m : maps) {
        lo = std::min(lo, m.min());
        hi = std::max(hi, m.max());
    }
    std::string te;
    for (double t : tes) {
        char b[32];
        std::snprintf(b, sizeof b, "%s%.2f", te.empty() ? "" : ", ", t * 1e3);
        te += b;
    }
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  ": estimated the field map from %zu echoes (TE %s ms; operator %s, penalized: beta %g, %d "
                  "iterations): %.0f to %.0f Hz",
                  tes.size(), te.c_str(), forge::recon::operator_name(R.op), S.fieldmapBeta, S.fieldmapIterations,
                  lo / (2 * M_PI), hi / (2 * M_PI));
    note("forge-recon: " + what + buf, S.quiet);
    times.field_map += seconds_since(t0);
    return maps;
}

void write_maps(const std::string& prefix, const ReconProblem& P, forge::io::OutputSet& outs) {
    const std::size_t n2 = P.n2();
    if (!P.smaps.empty()) {
        std::vector<cxf> v(n2 * P.nslices * P.nc);
        for (std::size_t c = 0; c < P.nc; ++c)
            for (std::size_t s = 0; s < P.nslices; ++s)
                for (std::size_t k = 0; k < n2; ++k) v[(c * P.nslices + s) * n2 + k] = P.smaps[s][c * n2 + k];
        forge::io::write_nifti(outs.stage(prefix + "_smaps.nii"), v, {{P.Nx, P.Ny, P.Nz * P.nslices, P.nc}}, P.affine,
                               "coil sensitivity maps");
    }
    if (!P.field_map.empty()) {
        std::vector<float> v;
        for (const auto& f : P.field_map) v.insert(v.end(), f.begin(), f.end());
        forge::io::write_nifti(outs.stage(prefix + "_fieldmap.nii"), v, {{P.Nx, P.Ny, P.Nz * P.nslices, 1}}, P.affine,
                               "field map rad/s");
    }
}

// Coil maps and field map for the file mode, after the maps named on the command line or stored in the input
// were attached.
void estimate_maps(forge::recon::ReconSession& session, ReconProblem& P, const Settings& S,
                   const arma::cx_mat& coilTransform, const std::string& origin, StageTimes& times) {
    const forge::recon::GroupPlace place = forge::recon::whole_problem(P);
    const bool wantMaps = P.smaps.empty() && S.smaps != "none";
    if (S.field_map == "estimate") {
        prepare_maps(session, P, S, place, origin, P.source, times);
        P.field_map = fieldmap_from_echoes(P, S, P.source, times);
        return;
    }
    if (S.fieldmapScan.empty()) {
        prepare_maps(session, P, S, place, origin, P.source, times);
        return;
    }
    const auto tScan = std::chrono::steady_clock::now();  // reading and preparing the scan: field-map time
    forge::io::MrdFile F;
    try {
        F = forge::io::read_mrd(S.fieldmapScan, S.group);
    } catch (const std::runtime_error& e) {
        throw UsageError(std::string("--fieldmap-scan: ") + e.what());
    }
    ReconProblem E = forge::io::problem_from_mrd(F, S.fieldmapScan, problem_options(S));
    forge::recon::check_data(E, forge::recon::whole_problem(E), warn);
    if (E.Nx != P.Nx || E.Ny != P.Ny || E.Nz != P.Nz || E.nslices != P.nslices)
        throw UsageError("--fieldmap-scan '" + S.fieldmapScan + "' has a " + std::to_string(E.Nx) + "x" +
                         std::to_string(E.Ny) + "x" + std::to_string(E.Nz) + " grid x " + std::to_string(E.nslices) +
                         " slice(s) but the data " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                         std::to_string(P.Nz) + " x " + std::to_string(P.nslices) +
                         " (the field-map scan must share the image grid)");
    // the scan's own noise scans whiten it; otherwise (and always with coil compression) it takes the data's
    // coil transform, so both share one coil space
    if (S.coilCompress > 0 && !coilTransform.is_empty()) {
        if (coilTransform.n_cols != E.nc)
            throw UsageError("--fieldmap-scan '" + S.fieldmapScan + "' has " + std::to_string(E.nc) +
                             " coils but the data " + std::to_string(coilTransform.n_cols));
        forge::recon::apply_coil_transform(E, coilTransform);
    } else {
        Settings Sq = S;
        Sq.coilCompress = 0;
        preprocess_coils(E, F, Sq, S.fieldmapScan, &coilTransform);
    }
    if (E.nc != P.nc)
        throw UsageError("--fieldmap-scan '" + S.fieldmapScan + "' has " + std::to_string(E.nc) +
                         " coils but the data " + std::to_string(P.nc));
    times.field_map += seconds_since(tScan);
    if (wantMaps && S.smapsSource != "input") {
        // the field-map scan is a fully sampled calibration: its first echo gives the coil maps
        own_maps(session.request().maps, E, S, S.fieldmapScan + " (first echo)", times);  // checked there
        P.smaps = E.smaps;
    } else {
        prepare_maps(session, P, S, place, origin, P.source, times);
    }
    if (E.smaps.empty()) E.smaps = P.smaps;
    P.field_map = fieldmap_from_echoes(E, S, S.fieldmapScan, times);
}

}  // namespace forge_recon
