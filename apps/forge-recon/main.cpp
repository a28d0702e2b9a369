// forge-recon: raw data to image in one command.
//
//   forge-recon --demo                       synthesise, simulate, reconstruct, write NIfTI/PNG/ISMRMRD
//   forge-recon data.h5 -o out/recon         reconstruct an ISMRMRD (MRD) file
//
// See docs/forge-recon.md for the options, the data layout and the conventions. The conversion is
// forge::io::problem_from_mrd (forge/IO/MrdProblem.h), the solve forge::recon::reconstruct
// (forge/Recon/Reconstruct.h); the demo is Demo.cpp.
#include <chrono>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <armadillo>

#include "Distributed.h"
#include "ReconApp.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/IO/Png.h"
#include "forge/Recon/Metrics.h"

namespace forge_recon {

// Loads maps and the reference named on the command line or stored in the ISMRMRD file itself
// (/dataset/csm, /dataset/fieldmap, /dataset/phantom: the layout ismrmrd_generate_cartesian_shepp_logan
// and forge-recon --demo write).
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
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "fieldmap")) {
        forge::io::attach_fieldmap(P, from_input(g + "fieldmap"), "(" + g + "fieldmap in the input)");
    }
    if (S.reference == "none") {
    } else if (!S.reference.empty()) {
        forge::io::attach_reference(P, from_spec(S.reference, "reference image"), "'" + S.reference + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "phantom")) {
        forge::io::attach_reference(P, from_input(g + "phantom"), "(" + g + "phantom in the input)");
    }
}

int run_file(Settings& S) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string base = S.input;  // default output name: <input stem>_recon
    auto slash = base.rfind('/');
    if (slash != std::string::npos) base = base.substr(slash + 1);
    auto dot = base.rfind('.');
    if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
    if (S.output.empty()) S.output = base + "_recon";
    check_output_prefix(S.output, base + "_recon");
    if (!S.fieldmapScan.empty() && (S.fieldmap == "estimate" || (!S.fieldmap.empty() && S.fieldmap != "none")))
        throw UsageError("--fieldmap-scan and --fieldmap " + S.fieldmap + " both give the field map; choose one");
    if (!S.fieldmapScan.empty() && S.fieldmap == "none")
        throw UsageError("--fieldmap-scan with --fieldmap none: drop one of them");
    std::vector<std::string> outputs{S.output + ".nii", S.output + ".png"};
    if (S.saveMaps) {
        outputs.push_back(S.output + "_smaps.nii");
        outputs.push_back(S.output + "_fieldmap.nii");
    }
    forge::io::OutputSet::check_paths(outputs);
    forge::io::MrdFile F;
    try {
        F = forge::io::read_mrd(S.input, S.group);
    } catch (const UsageError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
    ReconProblem P = forge::io::problem_from_mrd(F, S.input, problem_options(S));
    attach_maps(P, S, S.input);
    resolve_device(S);
    // Coil transforms and map estimation act on the whole problem: rank 0 does them, the others take its
    // result (the data too when a coil transform changed them).
    bool transformed = false;
    if (dist::root()) {
        const arma::cx_mat coilTransform = preprocess_coils(P, F, S, S.input);
        transformed = !coilTransform.is_empty();
        estimate_maps(P, S, coilTransform);
    }
    dist::checkpoint();
    dist::broadcast_maps(P, transformed);
    resolve_operator(P, S);
    const double tRead = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const bool correct = !P.fieldmap.empty() && !S.noFieldCorrection;
    note("forge-recon: " + S.input + ": " + std::to_string(F.acquisitions.size()) + " acquisitions, " +
             std::to_string(P.nc) + " coils, " + std::to_string(P.nslices) + " slice(s), " + std::to_string(P.nframes) +
             " frame(s), image " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz) +
             ", trajectory " + F.header.trajectory +
             (F.acquisitions.front().trajDims && !S.cartesian ? " (from the acquisitions)"
                                                              : " (from the encoding counters)"),
         S.quiet);
    if (P.smaps.empty()) {
        warn("no sensitivity maps: reconstructing each coil and combining by root-sum-of-squares" +
             std::string(P.accel > 1 ? " (the data are undersampled, expect aliasing)" : ""));
    }
    if (P.fieldmap.empty()) note("forge-recon: no field map: no off-resonance correction", S.quiet);
    if (correct && S.op == "nufft") warn("--operator nufft has no field correction: the field map is ignored");
    if (correct && !F.header.hasTE) warn("the header has no echo time (TE): sample times start at 0");
    note("forge-recon: operator " + operator_description(P, S) + (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") +
             (P.smaps.empty() ? "" : " + SENSE") + ", penalty " + S.penalty + " beta " + std::to_string(S.beta) + ", " +
             "at most " + std::to_string(S.iterations) + " iterations" +
             (S.tolerance > 0 ? " (tolerance " + tolerance_text(S.tolerance) + ")" : "") + " on " +
             device_description(S),
         S.quiet);
    notice_long_run(P, S, 1);

    const std::vector<std::size_t> mine = my_share(P);
    Progress prog(solves_per_recon(P, S, mine.size()), S.quiet);
    const auto tRecon0 = std::chrono::steady_clock::now();
    forge::recon::ReconResult R = reconstruct_share(P, correct && S.op != "nufft", S, prog, mine, "recon");
    const double tMine = R.seconds;
    dist::checkpoint();
    dist::gather_images(P, mine, R);
    const std::vector<dist::RankReport> reports = dist::gather_reports(mine.size(), tMine, device_description(S));
    // Distributed: from the start of the reconstruction until rank 0 holds every image.
    if (dist::distributed())
        R.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tRecon0).count();
    if (!dist::root()) {
        dist::checkpoint();  // rank 0 writes the outputs
        return 0;
    }

    forge::io::OutputSet outs;
    write_image(S.output + ".nii", P, R.complexImage, S.complexOut, outs, "forge-recon");
    if (S.saveMaps) write_maps(S.output, P, outs);
    std::vector<std::vector<arma::fvec>> sets{{R.magnitude.begin(), R.magnitude.begin() + P.nslices}};
    forge::io::write_png_montage(outs.stage(S.output + ".png"), montage(P, sets), display_scale(sets[0]));
    outs.commit();
    dist::checkpoint();

    print_rank_reports(reports);
    std::printf("forge-recon: reconstruction %.2f s (reading %.2f s) on %s\n", R.seconds, tRead,
                device_description(S).c_str());
    if (!P.reference.empty()) {
        std::vector<arma::fvec> first(R.magnitude.begin(), R.magnitude.begin() + P.nslices);
        const forge::recon::Quality q = forge::recon::magnitude_quality(first, P.reference);
        std::printf("forge-recon: NRMSE vs reference %.6f  PSNR %.2f dB\n", q.nrmse, q.psnr);
        for (std::size_t f = 1; f < P.nframes; ++f) {
            std::vector<arma::fvec> fr(R.magnitude.begin() + f * P.nslices, R.magnitude.begin() + (f + 1) * P.nslices);
            const forge::recon::Quality qf = forge::recon::magnitude_quality(fr, P.reference);
            std::printf("forge-recon: frame %zu NRMSE vs reference %.6f  PSNR %.2f dB\n", f + 1, qf.nrmse, qf.psnr);
        }
    }
    for (const auto& f : outs.report()) std::printf("forge-recon: wrote %s\n", f.c_str());
    return 0;
}

}  // namespace forge_recon

namespace {
// Prints the message of a failed run (in an MPI run only the lowest failing rank does, naming itself)
// and returns the exit code every rank returns.
int fail(int code, const std::string& msg) {
    bool print = true;
    const int agreed = forge_recon::dist::report_failure(code, print);
    if (print) {
        const std::string who = forge_recon::dist::rank_name();
        std::fprintf(stderr, "forge-recon: error: %s%s\n", who.empty() ? "" : (who + ": ").c_str(), msg.c_str());
    }
    return agreed;
}

int run(int argc, char** argv) {
    using namespace forge_recon;
    Settings S;
    CLI::App app{"forge-recon: iterative MRI reconstruction (ISMRMRD in, NIfTI and PNG out)", "forge-recon"};
    app.add_option("input", S.input, "ISMRMRD (MRD) HDF5 raw data file");
    app.add_flag(
        "--demo", S.demo,
        "synthesise a phantom, simulate spiral data with a field map, reconstruct with and without field correction");
    app.add_option("-o,--output", S.output,
                   "output prefix: writes PREFIX.nii and PREFIX.png (demo: PREFIX_*.nii/png and PREFIX.h5; default "
                   "forge_demo/demo)");
    app.add_option("--operator", S.op,
                   "encoding operator: auto (default: fft for samples on an FFT grid, else dft when cheap, else "
                   "timeseg), fft (Cartesian: exact at FFT cost; time-segmented field correction), dft (exact, "
                   "field-corrected), nufft (no field correction), timeseg (NUFFT with time-segmented field "
                   "correction) or toeplitz (the exact DFT once for G^H y, then every iteration by FFTs on a 2x "
                   "grid with exact, time-segmented kernels: docs/toeplitz.md)")
        ->check(CLI::IsMember({"auto", "fft", "dft", "nufft", "timeseg", "toeplitz"}));
    app.add_option("-L,--segments", S.segments,
                   "timeseg, toeplitz, and fft with a field map: number of time segments L (default: timeseg and "
                   "fft the smallest L with an estimated RMS error of at most 1%, toeplitz the L for "
                   "--toeplitz-error)")
        ->check(CLI::Range(0, 256));
    app.add_option("--toeplitz-error", S.toeplitzError,
                   "toeplitz with a field map: relative error of the normal operator against the exact one that "
                   "chooses L (default 1e-3; smaller costs more kernels: (L+1)(L+2)/2 of 8 bytes per cell of the "
                   "2x grid)")
        ->check(CLI::Range(1e-6, 0.5));
    app.add_option("--penalty", S.penalty, "regulariser: quad (Tikhonov on finite differences) or tv")
        ->check(CLI::IsMember({"quad", "tv"}));
    app.add_option("--beta", S.beta, "penalty weight, relative to the data term's curvature (default 1e-3)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--delta", S.delta, "TV smoothing threshold, relative to the image scale (default 0.05)")
        ->check(CLI::PositiveNumber);
    app.add_option("-n,--iterations", S.iterations,
                   "most conjugate-gradient iterations per solve (default " +
                       std::to_string(forge::recon::kDefaultIterations) + ")")
        ->check(CLI::Range(1, 10000));
    app.add_option("--tolerance", S.tolerance,
                   "stop a solve once ||gradient|| <= TOL * ||initial gradient|| (default 2e-4; 0: run all "
                   "iterations)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--device", S.device, "cpu, gpu or auto (GPU when one is usable; default)")
        ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
    app.add_option("--fieldmap", S.fieldmap,
                   "field map in rad/s: FILE.nii or FILE.h5:/dataset (default: <group>/fieldmap in the input); "
                   "estimate: from the input's own echoes (two or more contrasts); none: no field map");
    app.add_option("--fieldmap-scan", S.fieldmapScan,
                   "multi-echo ISMRMRD field-map scan on the same grid: the field map is estimated from it");
    app.add_option("--smaps", S.smaps,
                   "coil sensitivity maps: FILE.nii or FILE.h5:/dataset (default: <group>/csm in the input, else "
                   "estimated from the data); estimate: from the data even when the input has maps; none: coil by "
                   "coil, root-sum-of-squares");
    app.add_option("--smaps-source", S.smapsSource,
                   "where estimated coil maps come from: auto (default: the --fieldmap-scan's first echo when given, "
                   "else the input) or input")
        ->check(CLI::IsMember({"auto", "input"}));
    app.add_flag(
        "--save-maps", S.saveMaps,
        "write the maps used: PREFIX_smaps.nii (complex; x, y, slices, coils) and PREFIX_fieldmap.nii (rad/s)");
    app.add_option("--prewhiten", S.prewhiten,
                   "noise pre-whitening from the input's noise scans: auto (default: when there are any) or off")
        ->check(CLI::IsMember({"auto", "off"}));
    app.add_option("--coil-compress", S.coilCompress,
                   "compress the coils to N virtual coils (SVD of the data) before the reconstruction (0: off)")
        ->check(CLI::Range(0, 1024));
    app.add_option("--smaps-calibration", S.smapsCalibration,
                   "coil-map estimation: width of the central k-space used, cycles/FOV (default 24; Cartesian data: "
                   "at most the fully sampled centre)")
        ->check(CLI::Range(4.0, 1e6));
    app.add_option("--smaps-kernel", S.smapsKernel, "coil-map estimation: covariance window, pixels (odd; default 5)")
        ->check(CLI::Range(1, 63));
    app.add_option("--smaps-threshold", S.smapsThreshold,
                   "coil-map estimation: mask threshold, fraction of the largest local coil amplitude (default 0.05)")
        ->check(CLI::Range(0.0, 0.99));
    app.add_option("--fieldmap-beta", S.fieldmapBeta,
                   "field-map estimation: penalty weight relative to the brightest pixel's data (default 0.01)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--fieldmap-iterations", S.fieldmapIterations,
                   "field-map estimation: surrogate iterations (default 200)")
        ->check(CLI::Range(0, 100000));
    app.add_option("--reference", S.reference,
                   "reference image for NRMSE/PSNR: FILE.nii or FILE.h5:/dataset (default: <group>/phantom in the "
                   "input); none: no comparison");
    app.add_flag("--no-field-correction", S.noFieldCorrection, "ignore the field map");
    app.add_flag("--complex", S.complexOut, "write complex64 NIfTI instead of magnitude float32");
    app.add_flag("--cartesian", S.cartesian,
                 "take k-space from the encoding counters even when the acquisitions carry trajectories");
    app.add_option("--dataset", S.group, "ISMRMRD group name in the HDF5 file (default: dataset)");
    app.add_flag("-q,--quiet", S.quiet, "print only results and errors");
    app.add_option("--demo-size", S.demoSize, "demo matrix size (default 64)");
    app.add_option("--demo-slices", S.demoSlices, "demo slice count (default 2)");
    app.add_option("--demo-coils", S.demoCoils, "demo coil count (default 8)");
    app.add_option("--demo-noise", S.demoNoise, "demo noise level relative to the data RMS (default 0.01)")
        ->check(CLI::NonNegativeNumber);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return dist::root() ? app.exit(e) : 0;
    } catch (const CLI::ParseError& e) {
        return fail(2, std::string(e.what()) + " (see forge-recon --help)");
    }
    try {
        forge::io::quiet_hdf5_errors();
        if (S.demo) {
            if (!S.input.empty()) throw UsageError("--demo takes no input file (got '" + S.input + "')");
            return run_demo(S);
        }
        if (S.input.empty()) throw UsageError("no input file given (try forge-recon --demo, or forge-recon --help)");
        return run_file(S);
    } catch (const dist::PeerFailure& e) {
        return e.code;  // another rank failed and says why
    } catch (const UsageError& e) {
        return fail(2, e.what());
    } catch (const forge::invalid_argument& e) {
        return fail(2, e.what());
    } catch (const forge::io::input_error& e) {
        return fail(2, e.what());
    } catch (const forge::overflow_error& e) {
        // values beyond the float range even after the reconstruction's scaling: input that cannot be right
        return fail(2, e.what());
    } catch (const std::bad_alloc&) {
        // the size checks estimate from below: an input can still be too large for this machine
        return fail(2, "out of memory: " + (S.input.empty() ? std::string("the demo") : "'" + S.input + "'") +
                           " is too large for the memory available");
    } catch (const std::exception& e) {
        return fail(1, e.what());
    }
}
}  // namespace

int main(int argc, char** argv) {
    // Line-buffered even into a pipe or a log file: a long run shows its summary at once, and a killed
    // run keeps the lines saying what it was reconstructing.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    forge_recon::dist::init(argc, argv);
    const int code = run(argc, argv);
    forge_recon::dist::finalize();
    return code;
}
