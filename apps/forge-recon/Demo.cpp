// forge-recon --demo: synthesises a multi-slice phantom with coil maps and a field map (forge/Sim),
// simulates a spiral acquisition and a 2-echo Cartesian field-map scan with the exact field-corrected
// operator, reconstructs the spiral without and with field correction (true maps), and field-corrected
// with coil maps and a field map estimated from the raw data alone; writes the images, the comparison and
// ISMRMRD files that reproduce the runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>

#include <sys/stat.h>

#include "DemoFigure.h"
#include "ReconApp.h"
#include "forge/Core/forgeCol.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/SENSE.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/Metrics.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

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

}  // namespace

int run_demo(Settings& S) {
    const auto tStart = std::chrono::steady_clock::now();
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
    resolve_device(S);
    const std::size_t N = static_cast<std::size_t>(S.demoSize), ns = static_cast<std::size_t>(S.demoSlices),
                      nc = static_cast<std::size_t>(S.demoCoils);
    const double fov_mm = 240.0, thick_mm = 5.0;

    // spiral: 2 interleaves, Archimedean, constant angular rate, spiral-out from k = 0
    const std::size_t shots = 2, turns = N / (2 * shots), perTurn = 3 * N;
    const std::size_t nsamp = turns * perTurn;
    const double dwell_us = 16000.0 / double(nsamp);  // 16 ms readout
    const double TE_ms = 1.0;
    forge::io::MrdHeader H;
    H.encodedMatrix = {N, N, 1};
    H.reconMatrix = {N, N, 1};
    H.encodedFov_mm = {fov_mm, fov_mm, thick_mm};
    H.reconFov_mm = {fov_mm, fov_mm, thick_mm};
    H.trajectory = "spiral";
    H.hasTE = true;
    H.TE_ms = TE_ms;
    H.receiverChannels = nc;

    std::vector<forge::io::MrdAcquisition> acqs;
    std::mt19937 rng(12345);
    std::normal_distribution<float> gauss(0.0f, 1.0f);

    // geometry of the in-memory problem: built through the same path as a file
    forge::io::MrdFile F;
    F.header = H;
    for (std::size_t s = 0; s < ns; ++s)
        for (std::size_t sh = 0; sh < shots; ++sh) {
            forge::io::MrdAcquisition a;
            a.samples = static_cast<uint16_t>(nsamp);
            a.channels = static_cast<uint16_t>(nc);
            a.trajDims = 2;
            a.centerSample = 0;
            a.dwell_us = static_cast<float>(dwell_us);
            a.e1 = static_cast<uint16_t>(sh);
            a.slice = static_cast<uint16_t>(s);
            a.readDir = {1, 0, 0};
            a.phaseDir = {0, 1, 0};
            a.sliceDir = {0, 0, 1};
            a.position = {0, 0, float((double(s) - double(ns - 1) / 2) * thick_mm)};
            const forge::sim::Trajectory2D k = forge::sim::spiral_interleave_normalised(nsamp, turns, sh, shots);
            a.traj.resize(2 * nsamp);
            for (std::size_t j = 0; j < nsamp; ++j) {
                a.traj[2 * j] = float(k.kx[j]);
                a.traj[2 * j + 1] = float(k.ky[j]);
            }
            a.data.assign(nsamp * nc, cxf(0, 0));
            F.acquisitions.push_back(std::move(a));
        }
    ReconProblem P = forge::io::problem_from_mrd(F, "demo", problem_options(S));
    // truth, maps
    std::vector<arma::fvec> truth(ns), fms(ns);
    std::vector<arma::cx_fvec> maps(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        truth[s] = forge::sim::smooth_shepp_logan_slice(N, s, ns);
        // scaled to sum_c |S_c|^2 = 1 (a prescan-normalised array): the receive field's overall shading is
        // not in the data, and maps estimated from them follow the same normalisation
        maps[s] = forge::sim::normalise_coil_maps(forge::sim::ring_coil_maps(N, nc, s), nc);
        fms[s] = forge::sim::two_blob_fieldmap(N, s);
    }
    // simulate with Gdft (true field map), per slice, all coils in one batch
    const auto tSim0 = std::chrono::steady_clock::now();
    for (auto& fr : P.frames) {
        const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
        forge::Gdft<float> G(n1, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fms[fr.slice], fr.t);
        forge::SENSE<float, forge::Gdft<float>> E(G, maps[fr.slice], nc);
        arma::cx_fvec y;
        if (S.gpu) {  // simulate where the reconstruction runs: one batched SENSE apply on the GPU
            forge::forgeCol<forge::forgeComplex<float>> xg(arma::conv_to<arma::cx_fvec>::from(truth[fr.slice]));
            xg.put_on_gpu();
            forge::forgeCol<forge::forgeComplex<float>> yg = E * xg;
            yg.get_from_gpu();
            y = yg.to_arma();
        } else {
            y = E * arma::conv_to<arma::cx_fvec>::from(truth[fr.slice]);
        }
        const double rms = std::sqrt(double(arma::accu(arma::square(arma::abs(y)))) / double(y.n_elem));
        const float sigma = float(S.demoNoise * rms / std::sqrt(2.0));
        for (auto& v : y) v += cxf(sigma * gauss(rng), sigma * gauss(rng));
        fr.y = y;
        // back into the acquisitions (for the ISMRMRD file)
        std::size_t off = 0;
        for (auto& a : F.acquisitions) {
            if (a.slice != fr.slice) continue;
            for (std::size_t c = 0; c < nc; ++c)
                for (std::size_t j = 0; j < a.samples; ++j) a.data[c * a.samples + j] = y[c * n1 + off + j];
            off += a.samples;
        }
    }
    // The field-map scan of the usual protocol: a fully sampled Cartesian 2-echo gradient echo on the same
    // grid (short readouts: 4 us dwell), simulated with the same maps and the same Gdft.
    forge::io::MrdHeader HF = H;
    HF.trajectory = "cartesian";
    HF.echoTimes_ms = {2.0, 4.5};
    HF.TE_ms = HF.echoTimes_ms[0];
    HF.hasCenterE1 = true;
    HF.centerE1 = N / 2;
    forge::io::MrdFile FF;
    FF.header = HF;
    for (std::size_t s = 0; s < ns; ++s)
        for (uint16_t e = 0; e < HF.echoTimes_ms.size(); ++e)
            for (std::size_t line = 0; line < N; ++line) {
                forge::io::MrdAcquisition a;
                a.samples = static_cast<uint16_t>(N);
                a.channels = static_cast<uint16_t>(nc);
                a.centerSample = static_cast<uint16_t>(N / 2);
                a.dwell_us = 4.0f;
                a.e1 = static_cast<uint16_t>(line);
                a.slice = static_cast<uint16_t>(s);
                a.contrast = e;
                a.readDir = {1, 0, 0};
                a.phaseDir = {0, 1, 0};
                a.sliceDir = {0, 0, 1};
                a.position = {0, 0, float((double(s) - double(ns - 1) / 2) * thick_mm)};
                a.data.assign(N * nc, cxf(0, 0));
                FF.acquisitions.push_back(std::move(a));
            }
    ReconProblem PF = forge::io::problem_from_mrd(FF, "demo field-map scan", problem_options(S));
    for (auto& fr : PF.frames) {
        const std::size_t n1 = fr.kx.n_elem;
        forge::Gdft<float> G(n1, PF.n2(), fr.kx, fr.ky, fr.kz, PF.ix, PF.iy, PF.iz, fms[fr.slice], fr.t);
        forge::SENSE<float, forge::Gdft<float>> E(G, maps[fr.slice], nc);
        arma::cx_fvec y = E * arma::conv_to<arma::cx_fvec>::from(truth[fr.slice]);
        const double rms = std::sqrt(double(arma::accu(arma::square(arma::abs(y)))) / double(y.n_elem));
        const float sigma = float(S.demoNoise * rms / std::sqrt(2.0));
        for (auto& v : y) v += cxf(sigma * gauss(rng), sigma * gauss(rng));
        fr.y = y;
        std::size_t off = 0;
        for (auto& a : FF.acquisitions) {
            if (a.slice != fr.slice || a.contrast != fr.contrast) continue;
            for (std::size_t c = 0; c < nc; ++c)
                for (std::size_t j = 0; j < a.samples; ++j) a.data[c * a.samples + j] = y[c * n1 + off + j];
            off += a.samples;
        }
    }
    const double tSim = std::chrono::duration<double>(std::chrono::steady_clock::now() - tSim0).count();
    P.fieldmap = fms;
    P.smaps = maps;
    P.reference = truth;
    resolve_operator(P, S);

    note("forge-recon --demo: " + std::to_string(N) + "x" + std::to_string(N) + " x " + std::to_string(ns) +
             " slices, " + std::to_string(nc) + " coils, spiral " + std::to_string(shots) + " x " +
             std::to_string(nsamp) + " samples (" + std::to_string(int(std::lround(dwell_us * nsamp / 1000))) +
             " ms readout), field map up to " +
             std::to_string(
                 int(std::lround(double(arma::max(arma::abs(arma::join_cols(fms[0], fms.back())))) / (2 * M_PI)))) +
             " Hz, simulated with Gdft in " + std::to_string(tSim).substr(0, 5) + " s on " + device_description(S),
         S.quiet);
    note("forge-recon: operator " + S.op + (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") + " + SENSE",
         S.quiet);
    notice_long_run(P, S, 2);

    // From the raw data alone: coil maps from the spiral's central k-space, the field map from the 2-echo scan
    const auto tEst0 = std::chrono::steady_clock::now();
    ReconProblem PE = P;
    if (dist::root()) {  // estimated once, on rank 0, for every rank
        PE.smaps = forge::recon::estimate_coil_maps(PF, coil_map_options(S));
        note("forge-recon: demo field-map scan: estimated the coil maps from its first echo (fully sampled)", S.quiet);
        PF.smaps = PE.smaps;
        PE.fieldmap = fieldmap_from_echoes(PF, S, "demo field-map scan");
    }
    dist::checkpoint();
    dist::broadcast_maps(PE, false);
    const double tEst = std::chrono::duration<double>(std::chrono::steady_clock::now() - tEst0).count();
    double fmErr = 0;  // RMS field-map error (Hz) where the object gives signal (above 10% of its maximum)
    {
        std::size_t n = 0;
        for (std::size_t s = 0; s < ns; ++s)
            for (std::size_t k = 0; k < N * N; ++k)
                if (truth[s][k] > 0.1f * truth[s].max()) {
                    const double e = double(PE.fieldmap[s][k] - fms[s][k]) / (2 * M_PI);
                    fmErr += e * e;
                    ++n;
                }
        fmErr = std::sqrt(fmErr / double(std::max<std::size_t>(n, 1)));
    }

    const std::vector<std::size_t> mine = my_share(P);
    Progress prog(3 * solves_per_recon(P, S, mine.size()), S.quiet);
    forge::recon::ReconResult U = reconstruct_share(P, false, S, prog, mine, "uncorrected");
    forge::recon::ReconResult C = reconstruct_share(P, true, S, prog, mine, "field-corrected");
    forge::recon::ReconResult X = reconstruct_share(PE, true, S, prog, mine, "estimated maps");
    const double tMine = U.seconds + C.seconds + X.seconds;
    dist::checkpoint();
    for (forge::recon::ReconResult* r : {&U, &C, &X}) {
        dist::gather_images(P, mine, *r);
        r->seconds = dist::max_over_ranks(r->seconds);  // the slowest rank's share
    }
    const std::vector<dist::RankReport> reports = dist::gather_reports(mine.size(), tMine, device_description(S));
    if (!dist::root()) {
        dist::checkpoint();  // rank 0 writes the outputs
        return 0;
    }
    const forge::recon::Quality qu = forge::recon::magnitude_quality(U.magnitude, truth),
                                qc = forge::recon::magnitude_quality(C.magnitude, truth),
                                qx = forge::recon::magnitude_quality(X.magnitude, truth);

    // outputs
    forge::io::OutputSet outs;
    std::vector<arma::cx_fvec> truthC, fmC;
    for (std::size_t s = 0; s < ns; ++s) {
        truthC.push_back(arma::conv_to<arma::cx_fvec>::from(truth[s]));
        fmC.push_back(arma::conv_to<arma::cx_fvec>::from(fms[s] / float(2 * M_PI)));
    }
    write_image(S.output + "_truth.nii", P, truthC, false, outs, "forge demo truth");
    write_image(S.output + "_uncorrected.nii", P, U.complexImage, S.complexOut, outs, "forge demo uncorrected");
    write_image(S.output + "_corrected.nii", P, C.complexImage, S.complexOut, outs, "forge demo field-corrected");
    write_image(S.output + "_estimated.nii", P, X.complexImage, S.complexOut, outs,
                "forge demo field-corrected, estimated maps");
    write_maps(S.output + "_estimated", PE, outs);
    {
        std::vector<float> v;
        for (auto& f : fms) v.insert(v.end(), f.begin(), f.end());
        forge::io::write_nifti(outs.stage(S.output + "_fieldmap.nii"), v, {{N, N, ns, 1}}, P.affine, "field map rad/s");
    }
    const float scale = display_scale(truth);
    {
        std::size_t w = 0, h = 0;
        const std::vector<std::uint8_t> px =
            render_figure(comparison_figure(N, nc, truth, fms, {&U, &C, &X}, {qu, qc, qx}, scale), w, h);
        forge::io::write_png_gray8(outs.stage(S.output + "_comparison.png"), w, h, px);
    }
    forge::io::write_png_montage(outs.stage(S.output + "_corrected.png"), montage(P, {C.magnitude}), scale);
    // ISMRMRD file with the maps and the truth, so 'forge-recon <prefix>.h5' reproduces the corrected image
    {
        std::vector<forge::io::MrdNamedArray> arrays(3);
        arrays[0].name = "csm";
        arrays[0].dims = {N, N, ns, nc};
        arrays[0].data.resize(N * N * ns * nc);
        for (std::size_t c = 0; c < nc; ++c)
            for (std::size_t s = 0; s < ns; ++s)
                for (std::size_t k = 0; k < N * N; ++k)
                    arrays[0].data[(c * ns + s) * N * N + k] = maps[s][c * N * N + k];
        arrays[1].name = "fieldmap";
        arrays[1].dims = {N, N, ns};
        arrays[2].name = "phantom";
        arrays[2].dims = {N, N, ns};
        for (std::size_t s = 0; s < ns; ++s)
            for (std::size_t k = 0; k < N * N; ++k) {
                arrays[1].data.push_back(cxf(fms[s][k], 0));
                arrays[2].data.push_back(cxf(truth[s][k], 0));
            }
        forge::io::write_mrd(outs.stage(S.output + ".h5"), forge::io::make_mrd_header_xml(H, "forge-demo"),
                             F.acquisitions, arrays, S.group);
        forge::io::write_mrd(outs.stage(S.output + "_fieldmap_scan.h5"),
                             forge::io::make_mrd_header_xml(HF, "forge-demo"), FF.acquisitions, {}, S.group);
    }
    outs.commit();
    dist::checkpoint();

    print_rank_reports(reports);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - tStart).count();
    std::printf("forge-recon --demo results (%s, operator %s, %d iterations, penalty %s beta %g)\n",
                device_description(S).c_str(), S.op.c_str(), S.iterations, S.penalty.c_str(), S.beta);
    std::printf("  uncorrected      NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qu.nrmse, qu.psnr, U.seconds);
    std::printf("  field-corrected  NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qc.nrmse, qc.psnr, C.seconds);
    std::printf("  estimated maps   NRMSE %.6f  PSNR %6.2f dB  time %6.2f s  (estimation %.2f s)\n", qx.nrmse, qx.psnr,
                X.seconds, tEst);
    std::printf("  NRMSE improvement %.2fx   simulation %.2f s   total %.2f s\n",
                qc.nrmse > 0 ? qu.nrmse / qc.nrmse : 0.0, tSim, total);
    std::printf("  estimated maps: NRMSE %.2fx the true maps', %.2fx better than uncorrected; field map RMS error "
                "%.2f Hz in the object\n",
                qc.nrmse > 0 ? qx.nrmse / qc.nrmse : 0.0, qx.nrmse > 0 ? qu.nrmse / qx.nrmse : 0.0, fmErr);
    for (const auto& f : outs.report()) std::printf("forge-recon: wrote %s\n", f.c_str());
    std::printf("forge-recon: reproduce the corrected image with: forge-recon %s.h5\n", S.output.c_str());
    std::printf("forge-recon: and from the raw data alone with: forge-recon %s.h5 --smaps estimate --fieldmap-scan "
                "%s_fieldmap_scan.h5\n",
                S.output.c_str(), S.output.c_str());
    return 0;
}

}  // namespace forge_recon
