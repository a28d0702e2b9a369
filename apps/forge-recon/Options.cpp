// forge-recon's command line: every option, its default and its check (docs/forge-recon.md).
#include <cstdlib>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

#include "ReconApp.h"

namespace forge_recon {

void add_options(CLI::App& app, Settings& S) {
    app.add_option("input", S.input, "ISMRMRD (MRD) HDF5 raw data file");
    auto* kspace =
        app.add_option("--bart-kspace", S.bartKspace,
                       "BART non-Cartesian k-space [1, samples, readouts, coils(, time at 10, slices at 13)] "
                       "(NAME or NAME.cfl, with NAME.hdr), read instead of an ISMRMRD file; needs "
                       "--bart-traj");
    auto* traj = app.add_option("--bart-traj", S.bartTraj,
                                "BART trajectory [3, samples, readouts] of --bart-kspace, in BART's units (cycles/FOV: "
                                "an N-pixel axis holds k in [-N/2, N/2])");
    auto* maps = app.add_option("--bart-maps", S.bartMaps,
                                "BART coil maps [x, y, z, coils] of --bart-kspace (one ESPIRiT set); they give the "
                                "image matrix (default: from the trajectory's extent, as BART's nufft)");
    auto* times = app.add_option("--bart-times", S.bartTimes,
                                 "BART array [1, samples, readouts] of the sample times of --bart-kspace, in seconds "
                                 "(for field correction with --fieldmap)");
    auto* dwell = app.add_option("--dwell", S.dwell,
                                 "seconds per sample of --bart-kspace: t = TE + dwell * (sample index within its "
                                 "readout), TE from --echo-time (for field correction with --fieldmap)");
    auto* te = app.add_option("--echo-time", S.echoTime,
                              "seconds from excitation to the first sample of each readout of --bart-kspace (with "
                              "--dwell; default 0)");
    kspace->needs(traj);
    traj->needs(kspace);
    maps->needs(kspace);
    times->needs(kspace);
    dwell->needs(kspace);
    te->needs(dwell);
    times->excludes(dwell);
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
    app.add_option("--toeplitz-error", S.toeplitz_error,
                   "toeplitz with a field map: relative error of the normal operator against the exact one that "
                   "chooses L (default 1e-3; smaller costs more kernels: (L+1)(L+2)/2 of 8 bytes per cell of the "
                   "2x grid)")
        ->check(CLI::Range(1e-6, 0.5));
    app.add_option("--penalty", S.penalty,
                   "regulariser: quad (Tikhonov on finite differences), tv (smoothed), or, by POGM (compressed "
                   "sensing), l1-wavelet (db2 wavelets, random shifts; even image sizes) or tv-exact (isotropic TV)")
        ->check(CLI::IsMember({"quad", "tv", "l1-wavelet", "tv-exact"}));
    app.add_option("--beta", S.beta, "penalty weight, relative to the data term's curvature (default 1e-3)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--lambda", S.lambda,
                   "l1-wavelet, tv-exact: penalty weight, relative to max |E^H y| (independent of the data's scale "
                   "and size; default 0.005)")
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
    app.add_option("--preconditioner", S.preconditioner,
                   "quad penalty: none (default) or circulant (the conjugate gradients divide each spatial frequency "
                   "by the Hessian's, from its response to one impulse: the same minimiser, in fewer iterations on "
                   "spirals and radial data; docs/reconstruction.md)")
        ->check(CLI::IsMember({"none", "circulant"}));
    app.add_flag("--warm-start", S.warmStart,
                 "each frame of a slice (a repetition, a real-time series) starts its solve from the slice's previous "
                 "image, stopping where a start from zero would, in fewer iterations; one process only (the images "
                 "then depend on the order the frames are solved in)");
    app.add_option("--device", S.device, "cpu, gpu or auto (GPU when one is usable; default)")
        ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
    app.add_option("--fieldmap", S.field_map,
                   "field map in rad/s: FILE.nii or FILE.h5:/dataset (default: <group>/fieldmap in the input); "
                   "estimate: from the input's own echoes (two or more contrasts); none: no field map");
    app.add_option("--fieldmap-extend", S.fieldmapExtend,
                   "on (default): a field map read from a file (--fieldmap, or stored in the input) that is 0 outside "
                   "the object is extended smoothly beyond its nonzero pixels (harmonic fill), so that field "
                   "correction meets no jump where there is no signal; off: use it as given")
        ->check(CLI::IsMember({"on", "off"}));
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
                   "coil-map estimation: width of the central k-space used, cycles/FOV (default 0: 48 for 2D "
                   "non-Cartesian images, else 24; Cartesian data: at most the fully sampled centre)")
        ->check(CLI::Validator(
            [](std::string& v) {
                const double c = std::atof(v.c_str());
                return c == 0 || (c >= 4 && c <= 1e6) ? std::string()
                                                      : "expected 0 (the default) or a width from 4 to 1e6 cycles/FOV";
            },
            "0 or 4..1e6"));
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
    app.add_flag("--complex", S.complexOut,
                 "write complex64 NIfTI instead of magnitude float32 (and complex ISMRMRD images with --mrd-out)");
    app.add_flag("--stream", S.stream,
                 "read the acquisitions as an MRD stream on stdin and write the images as one on stdout (the MRD "
                 "streaming protocol of Gadgetron and ismrmrd.serialization); messages go to stderr, files only "
                 "with -o");
    auto* server = app.add_flag("--server", S.server,
                                "serve MRD streams over TCP on --bind:--port, one connection after another: each "
                                "sends acquisitions and gets its images back (docs/streaming.md)");
    app.add_option("--port", S.port, "--server: TCP port (default 9002; 0: any free port, printed)")
        ->check(CLI::Range(0, 65535))
        ->needs(server);
    app.add_option("--bind", S.bind, "--server: address to listen on (default 127.0.0.1; 0.0.0.0: every interface)")
        ->needs(server);
    app.add_option("--connections", S.connections, "--server: exit after this many connections (default 0: never)")
        ->check(CLI::NonNegativeNumber)
        ->needs(server);
    app.add_option("--max-clients", S.maxClients,
                   "--server: connections served at once, each reading its client on its own thread; "
                   "reconstructions take turns (default 4)")
        ->check(CLI::Range(1, 1024))
        ->needs(server);
    app.add_option("--max-stream-memory", S.maxStreamMemory,
                   "--stream, --server: most memory the acquisitions read and not yet reconstructed may hold, "
                   "e.g. 512MiB or 2GB (default: a quarter of physical memory; --server: shared equally by "
                   "--max-clients connections); a stream that needs more fails")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Range(uint64_t(1) << 20, std::numeric_limits<uint64_t>::max()));
    app.add_option("--read-timeout", S.readTimeout,
                   "--stream, --server: seconds each message of the stream has to arrive in full after the one "
                   "before; a sender that stops or trickles is cut off (default: 60 for --server, none for "
                   "--stream; 0: none)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--write-timeout", S.writeTimeout,
                   "--server: seconds a client may take no data of the reply before its connection is closed "
                   "(default 60; 0: none)")
        ->check(CLI::NonNegativeNumber)
        ->needs(server);
    app.add_option("--overlap", S.overlap,
                   "--stream, --server: prepare each slice (its data checks and coil maps) while the one before "
                   "solves on a thread of its own; the images are the same (default auto: on with a GPU)")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    app.add_option("--solvers", S.solvers,
                   "--stream, --server with --overlap: groups solved at once, each on a thread of its own and, with "
                   "a GPU, on the GPUs in turn; the images are written in order (default 1)")
        ->check(CLI::Range(1, 64));
    app.add_option("--dicom", S.dicomDir,
                   "also write the images as DICOM MR images into the folder DIR (made when missing; must be empty): "
                   "one file per slice and frame with its geometry, 16-bit magnitudes with a rescale slope");
    app.add_option("--mrd-out", S.mrdOut,
                   "also write the images as ISMRMRD images to FILE.h5 (/dataset/image_1: geometry, indices, "
                   "magnitude or --complex, how each was made as meta attributes; the input's XML header)");
    app.add_flag("--cartesian", S.cartesian,
                 "take k-space from the encoding counters even when the acquisitions carry trajectories");
    app.add_option("--report", S.report,
                   "write what the run did as JSON to FILE.json: the operator and why, time segments, iterations and "
                   "stop reasons, per-frame NRMSE/PSNR against a reference, stage timings (docs/forge-recon.md)");
    app.add_option("--dataset", S.group, "ISMRMRD group name in the HDF5 file (default: dataset)");
    app.add_flag("-q,--quiet", S.quiet, "print only results and errors");
    app.add_option("--demo-size", S.demoSize, "demo matrix size (default 64)");
    app.add_option("--demo-slices", S.demoSlices, "demo slice count (default 2)");
    app.add_option("--demo-coils", S.demoCoils, "demo coil count (default 8)");
    app.add_option("--demo-noise", S.demoNoise, "demo noise level relative to the data RMS (default 0.01)")
        ->check(CLI::NonNegativeNumber);
}

}  // namespace forge_recon
