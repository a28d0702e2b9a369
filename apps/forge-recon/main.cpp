// forge-recon: raw data to image in one command.
//
//   forge-recon --demo                       synthesise, simulate, reconstruct, write NIfTI/PNG/ISMRMRD
//   forge-recon data.h5 -o out/recon         reconstruct an ISMRMRD (MRD) file
//   forge-recon --bart-kspace k --bart-traj t    BART's .cfl/.hdr arrays (BartInput.cpp)
//   forge-recon --stream <in.mrd >images.mrd     an MRD stream in and out; --server over TCP (Stream.cpp)
//   ... --mrd-out FILE.h5 --dicom DIR           ISMRMRD images and DICOM besides NIfTI/PNG (ImageOutputs.cpp)
//
// See docs/forge-recon.md for the options, the data layout and the conventions. The conversion is
// forge::io::problem_from_mrd (forge/IO/MrdProblem.h), the solve forge::recon::reconstruct
// (forge/Recon/Reconstruct.h); the demo is Demo.cpp.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <armadillo>

#include "Distributed.h"
#include "ReconApp.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/Cfl.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/IO/Png.h"
#include "forge/Recon/Metrics.h"

namespace forge_recon {

namespace {

forge::io::MrdFile read_input(const Settings& S) {
    try {
        return forge::io::read_mrd(S.input, S.group);
    } catch (const UsageError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int run_file(Settings& S) {
    const auto t0 = std::chrono::steady_clock::now();
    DeviceWarmUp warmUp(S);
    check_file_outputs(S);
    RunReport report;
    report.mode = "file";
    report.input = S.input;
    StageTimes& times = report.stages;
    std::string matrixFrom;
    forge::io::MrdFile streamed;
    if (S.stream && reconstruct_stream_by_group(S, warmUp, streamed)) return 0;  // each image sent as it completed
    const forge::io::MrdFile F = bart_input(S) ? read_bart_input(S, matrixFrom)
                                 : S.stream    ? std::move(streamed)
                                               : read_input(S);
    ReconProblem P = forge::io::problem_from_mrd(F, S.input, problem_options(S));
    const forge::recon::GroupPlace place = forge::recon::whole_problem(P);
    forge::recon::check_data(P, place, warn);
    attach_bart_maps(P, S);
    attach_bart_times(P, S);
    attach_maps(P, S, bart_input(S) || S.stream ? std::string() : S.input);
    const std::string givenMaps = maps_origin(P, S);
    times.read = seconds_since(t0);
    const auto tDevice = std::chrono::steady_clock::now();
    warmUp.wait();
    resolve_device(S);
    times.device = seconds_since(tDevice);
    forge::recon::ReconSession session(recon_request(S));
    // Coil transforms and map estimation act on the whole problem: rank 0 does them, the others take its
    // result (the data too when a coil transform changed them).
    bool transformed = false;
    if (dist::root()) {
        const auto tCoils = std::chrono::steady_clock::now();
        const arma::cx_mat coilTransform = preprocess_coils(P, F, S, S.input);
        times.coil_preprocessing += seconds_since(tCoils);
        transformed = !coilTransform.is_empty();
        estimate_maps(session, P, S, coilTransform, givenMaps, times);
    }
    dist::checkpoint();
    dist::broadcast_maps(P, transformed);
    resolve_operator(P, S);
    const double tRead = seconds_since(t0);

    const bool correct = !P.field_map.empty() && !S.noFieldCorrection;
    describe_run(P, F, S, correct, matrixFrom);
    notice_long_run(P, S, 1);

    const std::vector<std::size_t> mine = my_share(P);
    Progress prog(solves_per_recon(P, S, mine.size()), S.quiet);
    const auto tRecon0 = std::chrono::steady_clock::now();
    std::vector<double> costs;
    forge::recon::ReconResult R = reconstruct_share(session, P, correct, S, prog, mine, "recon", &costs, place);
    const double tMine = R.seconds;
    dist::checkpoint();
    report.reconstructions.push_back(
        gather_reconstruction(P, mine, R, std::move(costs), "recon", correct && S.op != "nufft"));
    const std::vector<dist::RankReport> reports = dist::gather_reports(mine.size(), tMine, device_description(S));
    // Distributed: from the start of the reconstruction until rank 0 holds every image.
    if (dist::distributed()) R.seconds = seconds_since(tRecon0);
    if (!dist::root()) {
        dist::checkpoint();  // rank 0 writes the outputs
        return 0;
    }

    const auto tWrite = std::chrono::steady_clock::now();
    DicomFolder dicomFolder(S.dicomDir);  // before outs: removed, if it made the folder, after outs removed its files
    forge::io::OutputSet outs;
    const bool files = prefix_outputs(S);
    if (files) write_image(S.output + ".nii", P, R.complex_image, S.complexOut, outs, "forge-recon");
    if (S.saveMaps) write_maps(S.output, P, outs);
    const forge::io::ImageGeometry geometry = forge::io::image_geometry(F, P);
    std::vector<forge::io::MrdOutputImage> images;
    if (!S.mrdOut.empty() || !S.dicomDir.empty() || S.stream)
        images = output_images(P, geometry, R, report.reconstructions.front(), S);
    if (!S.mrdOut.empty()) write_mrd_output(S.mrdOut, F, geometry, images, S, outs);
    if (!S.dicomDir.empty()) write_dicom_output(dicomFolder, F, geometry, images, S, outs);
    std::vector<std::vector<arma::fvec>> sets{{R.magnitude.begin(), R.magnitude.begin() + P.nslices}};
    if (files) forge::io::write_png_montage(outs.stage(S.output + ".png"), montage(P, sets), display_scale(sets[0]));
    ReportedReconstruction& rec = report.reconstructions.front();
    rec.seconds = R.seconds;
    add_reconstruction_stages(rec, times);
    times.write = seconds_since(tWrite);
    report.total_seconds = seconds_since(t0);
    if (!S.report.empty()) {
        report.device = device_description(S);
        report.operator_description = operator_description(P, S);
        report.sense = !P.smaps.empty();
        report.data = reported_data(P, F, k_from_acquisitions(F, S));
        write_report(outs, S.report, report, S);
    }
    outs.commit();  // renames: the report's total and the printed line leave them out, and agree
    dicomFolder.keep();
    if (S.stream) write_stream_output(geometry, images, S);
    dist::checkpoint();

    print_rank_reports(reports);
    std::printf("forge-recon: reconstruction %.2f s (reading %.2f s) on %s\n", R.seconds, tRead,
                device_description(S).c_str());
    const std::vector<forge::recon::Quality>& quality = report.reconstructions.front().quality;
    for (std::size_t f = 0; f < quality.size(); ++f) {
        if (f == 0)
            std::printf("forge-recon: NRMSE vs reference %.6f  PSNR %.2f dB\n", quality[f].nrmse, quality[f].psnr);
        else
            std::printf("forge-recon: frame %zu NRMSE vs reference %.6f  PSNR %.2f dB\n", f + 1, quality[f].nrmse,
                        quality[f].psnr);
    }
    for (const auto& f : outs.report())
        if (S.dicomDir.empty() || f.compare(0, S.dicomDir.size() + 1, S.dicomDir + "/") != 0)
            std::printf("forge-recon: wrote %s\n", f.c_str());
    if (!S.dicomDir.empty())
        std::printf("forge-recon: wrote %zu DICOM images to %s/\n", dicomFolder.files, S.dicomDir.c_str());
    std::printf("%s\n", stage_summary(report).c_str());
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
    CLI::App app{"forge-recon: iterative MRI reconstruction (ISMRMRD files or streams, or BART arrays, in; NIfTI, PNG, "
                 "ISMRMRD images or DICOM out)",
                 "forge-recon"};
    add_options(app, S);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return dist::root() ? app.exit(e) : 0;
    } catch (const CLI::ParseError& e) {
        return fail(2, std::string(e.what()) + " (see forge-recon --help)");
    }
    try {
        forge::io::quiet_hdf5_errors();
        check_bart_settings(S);
        if (S.warmStart && dist::distributed())
            throw UsageError("--warm-start runs in one process (not under mpirun): each rank's frames would start "
                             "from other images");
        if (S.demo) {
            if (!S.input.empty()) throw UsageError("--demo takes no input file (got '" + S.input + "')");
            if (!S.mrdOut.empty() || !S.dicomDir.empty())
                throw UsageError("--mrd-out and --dicom are for the file mode (the demo writes its own files)");
            return run_demo(S);
        }
        if (bart_input(S)) S.input = forge::io::cfl_base(S.bartKspace) + ".cfl";  // names the data in messages
        if (S.server) return run_server(S);
        if (S.stream) {
            std::signal(SIGPIPE, SIG_IGN);  // a reader that closed stdout fails the write (EPIPE), which is reported
            setup_stream(S);
        }
        if (S.input.empty())
            throw UsageError("no input file given (try forge-recon --demo, --stream, or forge-recon --help)");
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
    // A write past the file-size limit (ulimit -f) fails with EFBIG and is reported, instead of SIGXFSZ ending the run.
    forge::io::catch_file_size_signal();
    forge_recon::dist::init(argc, argv);
    const int code = run(argc, argv);
    forge_recon::dist::finalize();
    return code;
}
