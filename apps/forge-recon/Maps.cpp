// forge-recon's map estimation steps: noise pre-whitening, coil compression, coil maps and field maps
// from the data (forge/Recon/CoilPreprocessing.h, CoilMaps.h, FieldMapEstimation.h; docs/map-estimation.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>

#include "ReconApp.h"
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
void extend_file_fieldmap(ReconProblem& P, const Settings& S, const std::string& what) {
    if (S.fieldmapExtend == "off" || P.fieldmap.empty()) return;
    std::size_t filled = 0;
    for (arma::fvec& f : P.fieldmap) {
        const std::vector<unsigned char> support = forge::recon::fieldmap_support(f);
        std::size_t known = 0;
        for (const unsigned char b : support) known += b;
        if (known == 0 || known == f.n_elem) continue;
        f = forge::recon::extend_fieldmap(f, support, P.Nx, P.Ny, P.Nz);
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
    if (S.fieldmap == "none" || S.fieldmap == "estimate" || !S.fieldmapScan.empty()) {
    } else if (!S.fieldmap.empty()) {
        forge::io::attach_fieldmap(P, from_spec(S.fieldmap, "field map"), "'" + S.fieldmap + "'");
        extend_file_fieldmap(P, S, "'" + S.fieldmap + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "fieldmap")) {
        forge::io::attach_fieldmap(P, from_input(g + "fieldmap"), "(" + g + "fieldmap in the input)");
        extend_file_fieldmap(P, S, "(" + g + "fieldmap in the input)");
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

forge::recon::CoilMapOptions coil_map_options(const Settings& S) {
    forge::recon::CoilMapOptions o;
    o.calibration = S.smapsCalibration;
    o.kernel = S.smapsKernel;
    o.threshold = S.smapsThreshold;
    // --device cpu keeps the estimation on the host too; otherwise on the GPU when one is usable.
    o.device = S.gpu ? forge::ReconDevice::Auto : forge::ReconDevice::Host;
    return o;
}

forge::recon::FieldMapOptions fieldmap_options(const Settings& S) {
    forge::recon::FieldMapOptions o;
    o.beta = S.fieldmapBeta;
    o.iterations = S.fieldmapIterations;
    o.device = S.gpu ? forge::ReconDevice::Auto : forge::ReconDevice::Host;
    return o;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void estimate_smaps(ReconProblem& P, const Settings& S, const std::string& what, StageTimes& times) {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory(P, S, true, true);
    std::array<double, 3> width{};
    std::vector<arma::uvec> masks;
    std::vector<forge::recon::CoilMapStats> stats;
    P.smaps = forge::recon::estimate_coil_maps(P, coil_map_options(S), &masks, &width, &stats);
    std::size_t inside = 0;
    for (const auto& m : masks) inside += arma::accu(m);
    CoilMapSummary summary;
    summary.add(stats);
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  ": estimated coil sensitivity maps from the central %gx%g%s cycles/FOV of k-space (local "
                  "eigenvectors, %dx%d window; mask %.0f%% of the pixels, dropping %.2g%% of the calibration image's "
                  "energy)",
                  width[0], width[1], P.Nz > 1 ? ("x" + std::to_string(int(width[2]))).c_str() : "", S.smapsKernel,
                  S.smapsKernel, 100.0 * double(inside) / double(P.n2() * P.nslices), 100 * summary.dropped_energy);
    note("forge-recon: " + what + buf, S.quiet);
    for (std::size_t s = 0; s < stats.size(); ++s) {
        if (stats[s].mask_dropped) {
            std::snprintf(buf, sizeof buf,
                          ": slice %zu: the coil maps' mask would drop %.1f%% of the calibration image's energy "
                          "(over 1%%): the maps cover the whole image instead",
                          s, 100 * stats[s].dropped_energy);
            warn(what + buf);
        }
        if (stats[s].outliers > 0)
            warn(what + ": slice " + std::to_string(s) + ": " + std::to_string(stats[s].outliers) +
                 " calibration sample(s) left out of the coil maps as spikes (coil amplitude over 1000 times the "
                 "99th percentile)");
    }
    times.coil_map_estimation.add(stats);
    times.coil_maps += seconds_since(t0);
}
}  // namespace

std::vector<arma::fvec> fieldmap_from_echoes(ReconProblem E, const Settings& S, const std::string& what,
                                             StageTimes& times) {
    if (E.smaps.empty()) estimate_smaps(E, S, what, times);
    const auto t0 = std::chrono::steady_clock::now();
    E.fftGrid = forge::recon::fft_grid(E);
    forge::recon::ReconSettings R;
    R.op = forge::recon::choose_operator(E, S.iterations, S.gpu).op;
    R.beta = S.beta;
    R.iterations = S.iterations;
    R.gpu = S.gpu;
    std::vector<double> tes;
    for (const auto& fr : E.frames)
        if (std::find(tes.begin(), tes.end(), fr.echo_time) == tes.end()) tes.push_back(fr.echo_time);
    std::sort(tes.begin(), tes.end());
    std::vector<arma::fvec> maps;
    try {
        maps = forge::recon::estimate_fieldmap(E, R, fieldmap_options(S));
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
    if (!P.fieldmap.empty()) {
        std::vector<float> v;
        for (const auto& f : P.fieldmap) v.insert(v.end(), f.begin(), f.end());
        forge::io::write_nifti(outs.stage(prefix + "_fieldmap.nii"), v, {{P.Nx, P.Ny, P.Nz * P.nslices, 1}}, P.affine,
                               "field map rad/s");
    }
}

// Coil maps for the file mode: an explicit --smaps estimate that cannot be done is an error; maps estimated
// because the input has none fall back to coil-by-coil root-sum-of-squares with a warning.
void estimate_smaps_or_fall_back(ReconProblem& P, const Settings& S, const std::string& what, StageTimes& times) {
    try {
        estimate_smaps(P, S, what, times);
    } catch (const forge::invalid_argument& e) {
        if (S.smaps == "estimate") throw;
        P.smaps.clear();
        warn(std::string("cannot estimate coil maps (") + e.what() + ")");
    }
}

// Coil maps and field map for the file mode, after the maps named on the command line or stored in the input
// were attached.
void estimate_maps(ReconProblem& P, const Settings& S, const arma::cx_mat& coilTransform, StageTimes& times) {
    const bool wantMaps = P.smaps.empty() && S.smaps != "none";
    if (S.fieldmap == "estimate") {
        if (wantMaps) estimate_smaps_or_fall_back(P, S, P.source, times);
        P.fieldmap = fieldmap_from_echoes(P, S, P.source, times);
        return;
    }
    if (S.fieldmapScan.empty()) {
        if (wantMaps) estimate_smaps_or_fall_back(P, S, P.source, times);
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
    check_data(E, image_names(E));
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
    if (wantMaps) {
        if (S.smapsSource == "input") {
            estimate_smaps_or_fall_back(P, S, P.source, times);
        } else {  // the field-map scan is a fully sampled calibration: its first echo gives the coil maps
            estimate_smaps_or_fall_back(E, S, S.fieldmapScan + " (first echo)", times);
            P.smaps = E.smaps;
        }
    }
    if (E.smaps.empty()) E.smaps = P.smaps;
    P.fieldmap = fieldmap_from_echoes(E, S, S.fieldmapScan, times);
}

}  // namespace forge_recon
