// forge-recon --demo: the acquisition forge::sim::demo_acquisition() simulates (a multi-slice phantom with coil
// maps and a field map, a spiral scan and a 2-echo Cartesian field-map scan, forge/Sim/DemoAcquisition.h) goes
// through the same MRD-to-problem path as a file; the spiral is reconstructed without and with field correction
// (true maps), and field-corrected with coil maps and a field map estimated from the raw data alone. Writes the
// images, the comparison figure and ISMRMRD files that reproduce the runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>

#include <sys/stat.h>

#include "DemoFigure.h"
#include "ReconApp.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/Metrics.h"
#include "forge/Sim/DemoAcquisition.h"

namespace forge_recon {

using cxf = std::complex<float>;

namespace {

std::string fixed(double v, int digits) {
    char b[32];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

// |a |x| - truth| per slice, a the least-squares scale of the magnitudes (as magnitude_quality fits it).
std::vector<std::vector<float>> magnitude_errors(const std::vector<arma::fvec>& x,
                                                 const std::vector<arma::fvec>& truth) {
    double num = 0, den = 0;
    for (std::size_t s = 0; s < truth.size(); ++s) {
        num += arma::dot(arma::conv_to<arma::vec>::from(x[s]), arma::conv_to<arma::vec>::from(truth[s]));
        den += arma::dot(arma::conv_to<arma::vec>::from(x[s]), arma::conv_to<arma::vec>::from(x[s]));
    }
    const float a = den > 0 ? float(num / den) : 0.0f;
    std::vector<std::vector<float>> e(truth.size());
    for (std::size_t s = 0; s < truth.size(); ++s) {
        e[s].resize(truth[s].n_elem);
        for (std::size_t k = 0; k < truth[s].n_elem; ++k) e[s][k] = std::fabs(a * std::fabs(x[s][k]) - truth[s][k]);
    }
    return e;
}

std::vector<float> as_vector(const arma::fvec& v) { return std::vector<float>(v.begin(), v.end()); }

// The comparison figure: the reference and the three reconstructions (with their NRMSE) per slice, then the
// field map and each reconstruction's error magnified 5 times.
Figure comparison_figure(std::size_t N, std::size_t nc, const std::vector<arma::fvec>& truth,
                         const std::vector<arma::fvec>& fieldmap,
                         const std::vector<const forge::recon::ReconResult*>& r,
                         const std::vector<forge::recon::Quality>& q, float scale) {
    const std::size_t ns = truth.size(), planes = std::min<std::size_t>(ns, 8);
    float fmMaxHz = 0;
    for (const auto& f : fieldmap) fmMaxHz = std::max(fmMaxHz, float(arma::abs(f).max() / (2 * M_PI)));
    Figure fig;
    fig.nx = fig.ny = N;
    fig.columns = 4;
    fig.title = "forge-recon --demo: " + std::to_string(N) + "x" + std::to_string(N) + ", " + std::to_string(ns) +
                (ns == 1 ? " slice, " : " slices, ") + std::to_string(nc) + " coils, spiral, field map up to " +
                std::to_string(int(std::lround(fmMaxHz))) + " Hz" + (ns > planes ? " (first 8 slices)" : "");
    const char* names[3] = {"no field correction", "field-corrected", "estimated maps"};
    FigureBlock images, errors;
    images.labels.push_back("reference\n(simulated)");
    errors.labels.push_back("field map\n+-" + std::to_string(int(std::lround(fmMaxHz))) + " Hz");
    std::vector<std::vector<std::vector<float>>> err;
    for (int i = 0; i < 3; ++i) {
        images.labels.push_back(std::string(names[i]) + "\nNRMSE " + fixed(q[i].nrmse, 4));
        errors.labels.push_back("error x5\n(" + std::string(names[i]) + ")");
        err.push_back(magnitude_errors(r[i]->magnitude, truth));
    }
    for (std::size_t s = 0; s < planes; ++s) {
        images.rows.push_back({grey_tile(as_vector(truth[s]), scale)});
        errors.rows.push_back({signed_grey_tile(as_vector(arma::fvec(fieldmap[s] / float(2 * M_PI))), fmMaxHz)});
        for (int i = 0; i < 3; ++i) {
            images.rows.back().push_back(grey_tile(as_vector(r[i]->magnitude[s]), scale));
            errors.rows.back().push_back(grey_tile(err[i][s], scale / 5));
        }
    }
    fig.blocks = {images, errors};
    return fig;
}

// The demo's output prefix (default forge_demo/demo, its folder made when missing) and its size options.
void prepare_demo(Settings& S) {
    if (S.output.empty()) {  // a folder of its own, not the current one (often the repository root)
        S.output = "forge_demo/demo";
        // (every rank of an MPI run gets here: one of them may have made it meanwhile)
        if (!is_dir("forge_demo") && ::mkdir("forge_demo", 0777) != 0 && !is_dir("forge_demo"))
            throw UsageError("cannot create the output folder 'forge_demo' in the current folder (give -o PREFIX)");
    }
    check_output_prefix(S.output);
    if (S.demoSize < 16 || S.demoSize > 256 || S.demoSize % 2)
        throw UsageError("--demo-size must be an even number in [16, 256], got " + std::to_string(S.demoSize));
    if (S.demoSlices < 1 || S.demoSlices > 16) throw UsageError("--demo-slices must be in [1, 16]");
    if (S.demoCoils < 1 || S.demoCoils > 32) throw UsageError("--demo-coils must be in [1, 32]");
    std::vector<Named> outputs;
    for (const char* suffix :
         {"_truth.nii", "_uncorrected.nii", "_corrected.nii", "_estimated.nii", "_estimated_smaps.nii",
          "_estimated_fieldmap.nii", "_fieldmap.nii", "_comparison.png", "_corrected.png", ".h5", "_fieldmap_scan.h5"})
        outputs.push_back({"-o", S.output + suffix});
    check_outputs(S, outputs);
}

// One simulated scan as an ISMRMRD file: the header of a 2D multi-slice acquisition on the demo's grid, one
// acquisition per readout.
forge::io::MrdFile mrd_file(const forge::sim::DemoAcquisition& d, const forge::sim::SimulatedScan& scan) {
    forge::io::MrdFile F;
    forge::io::MrdHeader& H = F.header;
    H.encoded_matrix = {d.N, d.N, 1};
    H.recon_matrix = {d.N, d.N, 1};
    H.encoded_fov_mm = {d.fov_mm, d.fov_mm, d.thickness_mm};
    H.recon_fov_mm = {d.fov_mm, d.fov_mm, d.thickness_mm};
    H.trajectory = scan.cartesian ? "cartesian" : "spiral";
    H.has_te = true;
    H.te_ms = scan.echo_times_ms.front();
    H.echo_times_ms = scan.echo_times_ms;
    H.has_center_e1 = scan.cartesian;
    H.center_e1 = scan.centre_line;
    H.receiver_channels = d.coils;
    for (const forge::sim::Readout& r : scan.readouts) {
        forge::io::MrdAcquisition a;
        a.samples = static_cast<uint16_t>(r.samples);
        a.channels = static_cast<uint16_t>(d.coils);
        a.traj_dims = r.traj.empty() ? 0 : 2;
        a.center_sample = static_cast<uint16_t>(r.center_sample);
        a.dwell_us = r.dwell_us;
        a.e1 = static_cast<uint16_t>(r.line);
        a.slice = static_cast<uint16_t>(r.slice);
        a.contrast = static_cast<uint16_t>(r.contrast);
        a.read_dir = {1, 0, 0};
        a.phase_dir = {0, 1, 0};
        a.slice_dir = {0, 0, 1};
        a.position = {0, 0, d.slice_offset_mm[r.slice]};
        a.traj = r.traj;
        a.data = r.data;
        F.acquisitions.push_back(std::move(a));
    }
    return F;
}

// The spiral's problem with the true maps and the truth as its reference.
ReconProblem true_maps_problem(const forge::sim::DemoAcquisition& d, const forge::io::MrdFile& F, Settings& S) {
    ReconProblem P = forge::io::problem_from_mrd(F, "demo", problem_options(S));
    P.field_map = d.field_map;
    P.smaps = d.smaps;
    P.reference = d.truth;
    resolve_operator(P, S);
    const forge::sim::Readout& r = d.spiral.readouts.front();
    const std::vector<arma::fvec>& fms = d.field_map;
    note("forge-recon --demo: " + std::to_string(d.N) + "x" + std::to_string(d.N) + " x " + std::to_string(d.slices) +
             " slices, " + std::to_string(d.coils) + " coils, spiral " + std::to_string(d.shots) + " x " +
             std::to_string(r.samples) + " samples (" +
             std::to_string(int(std::lround(double(r.dwell_us) * double(r.samples) / 1000))) +
             " ms readout), field map up to " +
             std::to_string(
                 int(std::lround(double(arma::max(arma::abs(arma::join_cols(fms[0], fms.back())))) / (2 * M_PI)))) +
             " Hz, simulated with Gdft in " + std::to_string(d.simulation_seconds).substr(0, 5) + " s on " +
             device_description(S),
         S.quiet);
    note("forge-recon: operator " + S.op + (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") + " + SENSE",
         S.quiet);
    return P;
}

// P with coil maps and a field map estimated from the raw data alone: the coil maps from the fully sampled
// field-map scan's first echo, the field map from its two echoes (on rank 0, for every rank).
ReconProblem estimated_maps_problem(const ReconProblem& P, ReconProblem PF, const Settings& S, StageTimes& times) {
    ReconProblem PE = P;
    if (dist::root()) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<forge::recon::CoilMapStats> stats;
        PE.smaps = forge::recon::estimate_coil_maps(PF, coil_map_options(S), nullptr, nullptr, &stats);
        times.coil_maps += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        times.coil_map_estimation.add(stats);
        note("forge-recon: demo field-map scan: estimated the coil maps from its first echo (fully sampled)", S.quiet);
        PF.smaps = PE.smaps;
        PE.field_map = fieldmap_from_echoes(PF, S, "demo field-map scan", times);
    }
    dist::checkpoint();
    dist::broadcast_maps(PE, false);
    return PE;
}

// RMS field-map error (Hz) where the object gives signal (above 10% of its maximum).
double fieldmap_error_hz(const forge::sim::DemoAcquisition& d, const std::vector<arma::fvec>& estimated) {
    double err = 0;
    std::size_t n = 0;
    for (std::size_t s = 0; s < d.slices; ++s) {
        const float threshold = 0.1f * d.truth[s].max();  // once per slice: inside the loop it cost O(N^4)
        for (std::size_t k = 0; k < d.N * d.N; ++k)
            if (d.truth[s][k] > threshold) {
                const double e = double(estimated[s][k] - d.field_map[s][k]) / (2 * M_PI);
                err += e * e;
                ++n;
            }
    }
    return std::sqrt(err / double(std::max<std::size_t>(n, 1)));
}

// The images, the comparison figure, the corrected montage, and the ISMRMRD files (with the maps and the truth,
// so that 'forge-recon <prefix>.h5' reproduces the corrected image) of the demo's three reconstructions (U, C, X).
void write_demo_outputs(const forge::sim::DemoAcquisition& d, const ReconProblem& P, const ReconProblem& PE,
                        const forge::io::MrdFile& F, const forge::io::MrdFile& FF, const Settings& S,
                        const std::vector<const forge::recon::ReconResult*>& r,
                        const std::vector<forge::recon::Quality>& q, forge::io::OutputSet& outs) {
    const std::size_t N = d.N, ns = d.slices, nc = d.coils;
    std::vector<arma::cx_fvec> truthC;
    for (std::size_t s = 0; s < ns; ++s) truthC.push_back(arma::conv_to<arma::cx_fvec>::from(d.truth[s]));
    write_image(S.output + "_truth.nii", P, truthC, false, outs, "forge demo truth");
    write_image(S.output + "_uncorrected.nii", P, r[0]->complex_image, S.complexOut, outs, "forge demo uncorrected");
    write_image(S.output + "_corrected.nii", P, r[1]->complex_image, S.complexOut, outs, "forge demo field-corrected");
    write_image(S.output + "_estimated.nii", P, r[2]->complex_image, S.complexOut, outs,
                "forge demo field-corrected, estimated maps");
    write_maps(S.output + "_estimated", PE, outs);
    {
        std::vector<float> v;
        for (auto& f : d.field_map) v.insert(v.end(), f.begin(), f.end());
        forge::io::write_nifti(outs.stage(S.output + "_fieldmap.nii"), v, {{N, N, ns, 1}}, P.affine, "field map rad/s");
    }
    const float scale = display_scale(d.truth);
    {
        std::size_t w = 0, h = 0;
        const std::vector<std::uint8_t> px =
            render_figure(comparison_figure(N, nc, d.truth, d.field_map, r, q, scale), w, h);
        forge::io::write_png_gray8(outs.stage(S.output + "_comparison.png"), w, h, px);
    }
    forge::io::write_png_montage(outs.stage(S.output + "_corrected.png"), montage(P, {r[1]->magnitude}), scale);
    std::vector<forge::io::MrdNamedArray> arrays(3);
    arrays[0].name = "csm";
    arrays[0].dims = {N, N, ns, nc};
    arrays[0].data.resize(N * N * ns * nc);
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t s = 0; s < ns; ++s)
            for (std::size_t k = 0; k < N * N; ++k)
                arrays[0].data[(c * ns + s) * N * N + k] = d.smaps[s][c * N * N + k];
    arrays[1].name = "fieldmap";
    arrays[1].dims = {N, N, ns};
    arrays[2].name = "phantom";
    arrays[2].dims = {N, N, ns};
    for (std::size_t s = 0; s < ns; ++s)
        for (std::size_t k = 0; k < N * N; ++k) {
            arrays[1].data.push_back(cxf(d.field_map[s][k], 0));
            arrays[2].data.push_back(cxf(d.truth[s][k], 0));
        }
    forge::io::write_mrd(outs.stage(S.output + ".h5"), forge::io::make_mrd_header_xml(F.header, "forge-demo"),
                         F.acquisitions, arrays, S.group);
    forge::io::write_mrd(outs.stage(S.output + "_fieldmap_scan.h5"),
                         forge::io::make_mrd_header_xml(FF.header, "forge-demo"), FF.acquisitions, {}, S.group);
}

}  // namespace

int run_demo(Settings& S) {
    const auto tStart = std::chrono::steady_clock::now();
    auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    prepare_demo(S);
    RunReport report;
    report.mode = "demo";
    StageTimes& times = report.stages;
    auto tStage = std::chrono::steady_clock::now();
    resolve_device(S);
    times.device = since(tStage);
    tStage = std::chrono::steady_clock::now();
    forge::sim::DemoOptions o;
    o.size = std::size_t(S.demoSize);
    o.slices = std::size_t(S.demoSlices);
    o.coils = std::size_t(S.demoCoils);
    o.noise = S.demoNoise;
    o.gpu = S.gpu;  // simulated where the reconstruction runs
    const forge::sim::DemoAcquisition d = forge::sim::demo_acquisition(o);
    const forge::io::MrdFile F = mrd_file(d, d.spiral), FF = mrd_file(d, d.field_map_scan);
    times.simulation = since(tStage);  // the objects, the simulated data (d.simulation_seconds), the acquisitions
    tStage = std::chrono::steady_clock::now();
    const ReconProblem P = true_maps_problem(d, F, S);
    ReconProblem PF = forge::io::problem_from_mrd(FF, "demo field-map scan", problem_options(S));
    times.read = since(tStage);  // the acquisitions to problems, as a file's
    notice_long_run(P, S, 2);

    const auto tEst0 = std::chrono::steady_clock::now();
    const ReconProblem PE = estimated_maps_problem(P, std::move(PF), S, times);
    const double tEst = since(tEst0), fmErr = fieldmap_error_hz(d, PE.field_map);

    const std::vector<std::size_t> mine = my_share(P);
    Progress prog(3 * solves_per_recon(P, S, mine.size()), S.quiet);
    std::vector<double> costs[3];
    forge::recon::ReconSession session(recon_request(S));  // U and C share their trajectory's operators
    forge::recon::ReconResult U = reconstruct_share(session, P, false, S, prog, mine, "uncorrected", &costs[0]);
    forge::recon::ReconResult C = reconstruct_share(session, P, true, S, prog, mine, "field-corrected", &costs[1]);
    forge::recon::ReconResult X = reconstruct_share(session, PE, true, S, prog, mine, "estimated maps", &costs[2]);
    const double tMine = U.seconds + C.seconds + X.seconds;
    dist::checkpoint();
    const char* names[3] = {"uncorrected", "field-corrected", "estimated maps"};
    forge::recon::ReconResult* results[3] = {&U, &C, &X};
    for (int i = 0; i < 3; ++i) {
        report.reconstructions.push_back(
            gather_reconstruction(P, mine, *results[i], std::move(costs[i]), names[i], i > 0));
        results[i]->seconds = dist::max_over_ranks(results[i]->seconds);  // the slowest rank's share
        report.reconstructions.back().seconds = results[i]->seconds;
        add_reconstruction_stages(report.reconstructions.back(), times);
    }
    const std::vector<dist::RankReport> reports = dist::gather_reports(mine.size(), tMine, device_description(S));
    if (!dist::root()) {
        dist::checkpoint();  // rank 0 writes the outputs
        return 0;
    }
    const forge::recon::Quality qu = report.reconstructions[0].quality[0], qc = report.reconstructions[1].quality[0],
                                qx = report.reconstructions[2].quality[0];

    const auto tWrite = std::chrono::steady_clock::now();
    forge::io::OutputSet outs;
    write_demo_outputs(d, P, PE, F, FF, S, {&U, &C, &X}, {qu, qc, qx}, outs);
    times.write = since(tWrite);
    report.total_seconds = since(tStart);
    if (!S.report.empty()) {
        report.device = device_description(S);
        report.operator_description = S.op;
        report.sense = true;
        report.data = reported_data(P, F, true);
        write_report(outs, S.report, report, S);
    }
    outs.commit();
    dist::checkpoint();

    print_rank_reports(reports);
    const double total = since(tStart);
    std::printf("forge-recon --demo results (%s, operator %s, %d iterations, penalty %s beta %g)\n",
                device_description(S).c_str(), S.op.c_str(), S.iterations, S.penalty.c_str(), S.beta);
    std::printf("  uncorrected      NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qu.nrmse, qu.psnr, U.seconds);
    std::printf("  field-corrected  NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qc.nrmse, qc.psnr, C.seconds);
    std::printf("  estimated maps   NRMSE %.6f  PSNR %6.2f dB  time %6.2f s  (estimation %.2f s)\n", qx.nrmse, qx.psnr,
                X.seconds, tEst);
    std::printf("  NRMSE improvement %.2fx   simulation %.2f s   total %.2f s\n",
                qc.nrmse > 0 ? qu.nrmse / qc.nrmse : 0.0, d.simulation_seconds, total);
    std::printf("  estimated maps: NRMSE %.2fx the true maps', %.2fx better than uncorrected; field map RMS error "
                "%.2f Hz in the object\n",
                qc.nrmse > 0 ? qx.nrmse / qc.nrmse : 0.0, qx.nrmse > 0 ? qu.nrmse / qx.nrmse : 0.0, fmErr);
    for (const auto& f : outs.report()) std::printf("forge-recon: wrote %s\n", f.c_str());
    std::printf("forge-recon: reproduce the corrected image with: forge-recon %s.h5\n", S.output.c_str());
    std::printf("forge-recon: and from the raw data alone with: forge-recon %s.h5 --smaps estimate --fieldmap-scan "
                "%s_fieldmap_scan.h5\n",
                S.output.c_str(), S.output.c_str());
    std::printf("%s\n", stage_summary(report).c_str());
    return 0;
}

}  // namespace forge_recon
