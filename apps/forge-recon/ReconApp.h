#pragma once
// forge-recon's pieces shared by the file mode (main.cpp) and the demo (Demo.cpp): the settings from the
// command line, messages, the memory check, the operator choice and the output images. The reconstruction
// itself is forge::recon::reconstruct(); the MRD conversion forge::io::problem_from_mrd().
#include <array>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include <armadillo>

#include "Distributed.h"
#include "Progress.h"
#include "Report.h"
#include "forge/IO/ImageGeometry.h"
#include "forge/IO/MrdImages.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/MrdStream.h"
#include "forge/IO/OutputSet.h"
#include "forge/IO/Png.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/Metrics.h"
#include "forge/Recon/Pipeline.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"

namespace CLI {
class App;
}

namespace forge_recon {

using forge::recon::ReconProblem;

// A user-facing problem: one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void warn(const std::string& msg);
void note(const std::string& msg, bool quiet);

struct Settings {
    std::string input;
    std::string output;
    std::string bartKspace, bartTraj, bartMaps;  // BART arrays read instead of an ISMRMRD file (BartInput.cpp)
    std::string bartTimes;                       // --bart-times: BART array [1, samples, readouts] of sample times (s)
    std::string dwell, echoTime;                 // --dwell, --echo-time (seconds, as given) for BART input
    std::string mrdOut;                          // --mrd-out FILE.h5: the images as ISMRMRD images (ImageOutputs.cpp)
    std::string dicomDir;                        // --dicom DIR: the images as DICOM MR images (ImageOutputs.cpp)
    bool stream = false;                         // --stream: an MRD stream in on stdin, images out on stdout
    int streamIn = 0, streamOut = -1;            // the stream's file descriptors (Stream.cpp)
    bool server = false;                         // --server: MRD streams over TCP, --max-clients at once
    bool connection = false;                     // a --server connection: run_server() answers its errors
    int port = 9002;                             // --port
    std::string bind = "127.0.0.1";              // --bind: the address to listen on
    int connections = 0;                         // --connections: serve this many, then exit (0: until stopped)
    int maxClients = 4;                          // --max-clients: --server connections served at once
    uint64_t maxStreamMemory = 0;                // --max-stream-memory (bytes; 0: a quarter of physical memory)
    double readTimeout = -1;                     // --read-timeout (s; -1: 60 for --server, none for --stream)
    double writeTimeout = 60;                    // --write-timeout (s): --server's send timeout
    std::string overlap = "auto";                // --overlap: prepare a stream's next group while one solves
    int solvers = 1;                             // --solvers: a stream's groups solved at once (with --overlap)
    bool demo = false;
    std::string op = "auto";       // resolved to dft, fft, nufft or timeseg by resolve_operator()
    std::string opRequested;       // --operator as given (resolve_operator() keeps it)
    std::string opReason;          // why auto chose it
    int segments = 0;              // timeseg: L (0 = smallest L with estimated RMS error <= 1%); toeplitz: L
    double toeplitz_error = 1e-3;  // toeplitz: requested relative error of the normal operator (chooses L)
    std::string penalty = "quad";
    double lambda = 5e-3;  // l1-wavelet, tv-exact: relative to max |E^H y|
    double beta = 1e-3;
    double delta = 0.05;
    int iterations = forge::recon::kDefaultIterations;   // PCG: at most this many iterations per solve
    double tolerance = forge::recon::kDefaultTolerance;  // PCG: stop at ||gradient|| <= tolerance * initial (0 = off)
    bool warmStart = false;  // each frame of a slice starts from its previous frame's image (ReconSettings::warm_start)
    std::string preconditioner = "none";  // --preconditioner: none or circulant (ReconSettings::preconditioner)
    std::string device = "auto";
    std::string field_map, smaps, reference;  // SPEC, "none", or (smaps, field_map) "estimate"
    std::string fieldmapScan;                 // multi-echo field-map scan (ISMRMRD file)
    std::string smapsSource = "auto";         // auto: the field-map scan when given, else the input; input
    bool saveMaps = false;                    // write PREFIX_smaps.nii and PREFIX_fieldmap.nii
    std::string prewhiten = "auto";           // auto: whiten when the file has noise scans; off
    int coilCompress = 0;                     // virtual coils (0: no compression)
    double smapsCalibration = 0;   // coil maps: central k-space width, cycles/FOV (0: 48 for 2D non-Cartesian, else 24)
    int smapsKernel = 5;           // coil maps: covariance window, pixels
    double smapsThreshold = 0.05;  // coil maps: mask threshold
    double fieldmapBeta = 1e-2;    // field map: penalty weight
    int fieldmapIterations = 200;  // field map: surrogate iterations
    bool noFieldCorrection = false;
    std::string fieldmapExtend = "on";  // on: a field map read from a file is extended beyond its nonzero pixels
    bool complexOut = false;
    bool cartesian = false;
    std::string group = "dataset";
    bool quiet = false;
    std::string report;  // --report FILE.json (empty: none)
    // demo
    int demoSize = 64;
    int demoSlices = 2;
    int demoCoils = 8;
    double demoNoise = 0.01;
    bool gpu = false;  // resolved from 'device'
};

// forge-recon's command line (Options.cpp).
void add_options(CLI::App& app, Settings& S);

bool is_dir(const std::string& p);
// Checks that the folder of the -o prefix exists and is writable. A prefix naming an existing folder ("out"
// or "out/") becomes that folder plus 'defaultName', the name the outputs get without -o ("<input
// stem>_recon"; the demo's "demo").
void check_output_prefix(std::string& prefix, const std::string& defaultName = "demo");
// The files named on the command line that the run reads (the input, BART arrays, map files, a stdin redirected
// from a file), each with the option that named it (OutputChecks.cpp).
using Named = forge::io::OutputSet::Named;
std::vector<Named> input_files(const Settings& S);
// Refuses, before anything is read, outputs ('outputs' and --report) that name an input or each other, whose
// folder does not exist or is not writable, or that exist as something other than a file.
void check_outputs(const Settings& S, std::vector<Named> outputs);
// Refuses a reconstruction that cannot fit before anything of its size is allocated; 'estimatingMaps' counts
// coil-map estimation from the data too (checked before it starts).
void check_memory(const ReconProblem& P, const Settings& S, bool withMaps, bool estimatingMaps = false);

// Starts the CUDA context, cuFFT and the NUFFT's device code on a background thread, so that their first-use cost
// (0.1 to 0.3 s on an H100) overlaps reading the input. Nothing for --device cpu, a build without CUDA or a
// distributed run (its processes choose their GPUs later). wait() (before resolve_device()) and the destructor join
// it: the thread must not outlive the caller's scope, or the CUDA runtime's exit handlers would run beside it.
// Errors are left to resolve_device() and the reconstruction.
class DeviceWarmUp {
public:
    explicit DeviceWarmUp(const Settings& S);
    ~DeviceWarmUp() { wait(); }
    DeviceWarmUp(const DeviceWarmUp&) = delete;
    DeviceWarmUp& operator=(const DeviceWarmUp&) = delete;
    void wait() {
        if (done_.valid()) done_.wait();
    }

private:
    std::future<void> done_;
};
void resolve_device(Settings& S);
std::string device_description(const Settings& S);
// Resolves --operator auto (forge::recon::choose_operator) and checks that an explicit fft fits the data.
void resolve_operator(ReconProblem& P, Settings& S);
// The operator a resolved --operator names ("fft", "nufft", "timeseg", "toeplitz"; anything else: dft).
forge::recon::EncodingOperator encoding_operator(const std::string& op);
// Before a long run (estimated over a minute) says how long, and which operator would be faster.
void notice_long_run(const ReconProblem& P, const Settings& S, int reconstructions);

// problem_from_mrd's options for S: --cartesian, and check_memory() before the data are laid out.
forge::io::MrdProblemOptions problem_options(const Settings& S);
// PCG solves of one reconstruction (of 'frames' of its frames; all when frames is -1), for the progress
// bar's ETA.
std::size_t solves_per_recon(const ReconProblem& P, const Settings& S, std::size_t frames = std::size_t(-1));

// The pipeline's request for S (forge/Recon/Pipeline.h): the operator resolve_operator() chose, the penalty and
// solver settings, the device resolve_device() chose, the maps policy of --smaps with the estimation's options,
// field correction and warm starts; its warnings are forge-recon's.
forge::recon::ReconRequest recon_request(const Settings& S);
// The line forge-recon prints when a solve ends: why it stopped (tolerance, iteration limit, ...), after how many
// iterations, at which relative gradient.
std::string stop_message(const std::string& label, const forge::SolverReport& rep, double tolerance);
// A tolerance as the summary line prints it ("0.0002").
std::string tolerance_text(double tolerance);
// The operator that runs, for the summary line: S.op, and for timeseg without a field map to correct
// "timeseg (no field correction: plain nufft)".
std::string operator_description(const ReconProblem& P, const Settings& S);
// This process's share of P's frames, as indices into P.frames (all of them in a run of one process).
std::vector<std::size_t> my_share(const ReconProblem& P);
// Solves the frames 'frames' of P (my_share()) in 'session' with S's operator, reporting every iteration and the end
// of every solve to 'prog'; the other frames' images stay zero until gathered (dist::gather_images). Solves are
// labelled rank_tag(tag). 'fieldCorrection' false ignores P's field map. 'finalCosts' (optional) receives the cost
// after each solve's last iteration (NaN: it ran none). 'place' names P's slices and frames in the session.
forge::recon::ReconResult reconstruct_share(forge::recon::ReconSession& session, const ReconProblem& P,
                                            bool fieldCorrection, const Settings& S, Progress& prog,
                                            const std::vector<std::size_t>& frames, const std::string& tag,
                                            std::vector<double>* finalCosts = nullptr,
                                            const forge::recon::GroupPlace& place = {});
// Gathers every rank's share of a reconstruction on rank 0 (images, solve records, final costs; the slowest
// rank's seconds), as --report describes it: name, field correction and, with a reference, each frame's quality.
ReportedReconstruction gather_reconstruction(const ReconProblem& P, const std::vector<std::size_t>& mine,
                                             forge::recon::ReconResult& R, std::vector<double> finalCosts,
                                             const std::string& name, bool fieldCorrection);
// What --report says of the data of P (read from F; 'kFromAcquisitions': k from stored trajectories).
ReportedData reported_data(const ReconProblem& P, const forge::io::MrdFile& F, bool kFromAcquisitions);
// Each frame's magnitude quality against P.reference (all slices of the frame together); empty without one.
std::vector<forge::recon::Quality> frame_quality(const ReconProblem& P, const forge::recon::ReconResult& R);
// 'tag' with this process's rank in a distributed run ("recon [rank 2/4]"), else 'tag'.
std::string rank_tag(const std::string& tag);
// Rank 0 of a distributed run: one line per rank (frames, seconds, device); nothing in a run of one process.
void print_rank_reports(const std::vector<dist::RankReport>& reports);

void write_image(const std::string& path, const ReconProblem& P, const std::vector<arma::cx_fvec>& imgs,
                 bool complexOut, forge::io::OutputSet& outs, const std::string& descr);
forge::io::Montage montage(const ReconProblem& P, const std::vector<std::vector<arma::fvec>>& sets);
float display_scale(const std::vector<arma::fvec>& imgs);

// Noise pre-whitening (from the file's noise scans) and coil compression as S asks; notes what was done.
// 'fallback' (optional) is applied instead when the file has no noise scans and no compression is asked
// (a field-map scan takes the imaging data's coil transform). Returns the transform applied (empty: none).
arma::cx_mat preprocess_coils(ReconProblem& P, const forge::io::MrdFile& F, const Settings& S, const std::string& what,
                              const arma::cx_mat* fallback = nullptr);
// Coil maps and field map estimated from the data where S asks for them (or the input has none); notes
// what was done.
forge::recon::CoilMapOptions coil_map_options(const Settings& S);
forge::recon::FieldMapOptions fieldmap_options(const Settings& S);
// The field map of a multi-echo problem (its own coil maps estimated when it has none), reconstructing
// its echoes quietly with S's solver settings.
// Its seconds go to times.field_map (those of the coil maps it estimates to times.coil_maps).
std::vector<arma::fvec> fieldmap_from_echoes(ReconProblem echoes, const Settings& S, const std::string& what,
                                             StageTimes& times);
// The file mode's maps: the coil maps by the session's policy (given ones checked against the data; 'origin' as
// maps_origin() says), the field map from the input's echoes (--fieldmap estimate) or from --fieldmap-scan (whose
// first echo gives the coil maps unless --smaps-source input); timed into 'times'.
void estimate_maps(forge::recon::ReconSession& session, ReconProblem& P, const Settings& S,
                   const arma::cx_mat& coilTransform, const std::string& origin, StageTimes& times);
// Loads maps and the reference named on the command line or stored in the ISMRMRD file 'mrdPath' itself
// (<group>/csm, <group>/fieldmap, <group>/phantom: the layout ismrmrd_generate_cartesian_shepp_logan and
// forge-recon --demo write).
void attach_maps(ReconProblem& P, const Settings& S, const std::string& mrdPath);
// Writes PREFIX_smaps.nii (complex, x, y, slices, coils) and PREFIX_fieldmap.nii (rad/s) when present.
void write_maps(const std::string& prefix, const ReconProblem& P, forge::io::OutputSet& outs);

// Where P's coil maps came from, for messages ("--bart-maps maps.cfl", "/dataset/csm in the input"); call before
// maps are estimated: "" when P has none.
std::string maps_origin(const ReconProblem& P, const Settings& S);
// The session's coil maps for P (ReconSession::prepare_maps, 'origin' as there), the memory checked first when they
// are estimated; notes what was estimated (naming 'what') and times it into 'times'.
forge::recon::MapsReport prepare_maps(forge::recon::ReconSession& session, ReconProblem& P, const Settings& S,
                                      const forge::recon::GroupPlace& place, const std::string& origin,
                                      const std::string& what, StageTimes& times);

// BART input (BartInput.cpp): --bart-kspace, --bart-traj, --bart-maps. Refuses what BART's arrays cannot give (an
// ISMRMRD input beside them, a field map: they carry no sample times); reads the arrays, checking their sizes
// against each other and the memory before the values are read, into ISMRMRD content and 'matrixFrom' (where the
// image matrix came from, for messages).
bool bart_input(const Settings& S);
void check_bart_settings(const Settings& S);
forge::io::MrdFile read_bart_input(const Settings& S, std::string& matrixFrom);
// --bart-maps attached to P (after problem_from_mrd).
void attach_bart_maps(ReconProblem& P, const Settings& S);
// --bart-times: P's sample times set from the array (after problem_from_mrd); --dwell and --echo-time went into
// the MRD content read_bart_input() made.
void attach_bart_times(ReconProblem& P, const Settings& S);

// The images of R (file mode) with their indices and, as meta attributes, how each was made (the operator, its
// solves' iterations, stop reasons and relative gradients from 'rec'), for the scanner-format writers.
std::vector<forge::io::MrdOutputImage> output_images(const ReconProblem& P, const forge::io::ImageGeometry& g,
                                                     const forge::recon::ReconResult& R,
                                                     const ReportedReconstruction& rec, const Settings& S);
// --mrd-out: the images with F's XML header (as stored; a minimal one for BART input), staged in 'outs'.
void write_mrd_output(const std::string& path, const forge::io::MrdFile& F, const forge::io::ImageGeometry& g,
                      const std::vector<forge::io::MrdOutputImage>& images, const Settings& S,
                      forge::io::OutputSet& outs);

// --dicom DIR: refuses a build without DCMTK, a DIR that is a file or a folder that is not empty, and a DIR whose
// parent folder does not exist, before anything is read.
void check_dicom_folder(const Settings& S);
// The --dicom folder of a run: made by make() when missing, and removed again when the run ends without keep()
// (a failed run leaves no folder of its own behind; its files are removed by the OutputSet).
struct DicomFolder {
    explicit DicomFolder(std::string dir) : path(std::move(dir)) {}
    ~DicomFolder();
    DicomFolder(const DicomFolder&) = delete;
    DicomFolder& operator=(const DicomFolder&) = delete;
    void make();
    void keep() { made = false; }
    std::string path;
    bool made = false;
    std::size_t files = 0;
};
// --dicom: one MR image per slice (and plane, and frame) into 'folder', staged in 'outs'.
void write_dicom_output(DicomFolder& folder, const forge::io::MrdFile& F, const forge::io::ImageGeometry& g,
                        const std::vector<forge::io::MrdOutputImage>& images, const Settings& S,
                        forge::io::OutputSet& outs);

// MRD streams (Stream.cpp). --stream: the acquisitions come as an MRD stream on S.streamIn and the images go back
// as one on S.streamOut (stdout's descriptor, kept aside while stdout itself goes to stderr, so no text ever
// lands in the stream).
bool prefix_outputs(const Settings& S);  // NIfTI and PNG files: not for a stream without -o
void setup_stream(Settings& S);
void write_stream_output(const forge::io::ImageGeometry& g, const std::vector<forge::io::MrdOutputImage>& images,
                         const Settings& S);
// --stream slice by slice (StreamGroups.cpp): reads the stream and sends each slice x repetition x contrast
// group's image as soon as the acquisition flags complete it, then CLOSE, and returns true; or, where the
// images could differ from the whole stream's (docs/streaming.md), reads it all into F and returns false for
// run_file() to go on as with a file. A failure after images were sent writes a TEXT message and CLOSE first
// (but for a --server connection, which run_server() answers).
bool reconstruct_stream_by_group(Settings& S, DeviceWarmUp& warmUp, forge::io::MrdFile& F);

// --server: listens on S.bind:S.port and serves up to S.maxClients connections at once, each on a thread of its
// own, an MRD stream in and its images (or a TEXT message with the error) and CLOSE back, as --stream does on
// stdin/stdout; a failed connection is logged and the server goes on.
int run_server(Settings& S);
// The stream's reader options: the memory cap (--max-stream-memory, shared by --max-clients connections) and
// the read deadline (--read-timeout).
forge::io::MrdStreamOptions stream_options(const Settings& S);
// --server reconstructs one connection at a time while every connection reads and writes its client on its own
// thread. A connection holds the compute turn while any share of it lives: its thread's own, and one for each group
// handed to its solver thread (StreamGroups.cpp), so that its slices solve while it reads the next; a ClientWait
// gives the calling thread's share back while it waits for the client. Outside --server there is no turn, and these
// do nothing.
struct ComputeTurn {
    int shares = 0;  // guarded by the turn's mutex (Stream.cpp)
    // The connection the calling thread works for (null outside --server).
    static ComputeTurn* current();
};
// A share of connection c's turn, taken at construction (waiting while another connection holds the turn) and given
// back at destruction, on whichever thread (null: nothing).
class ComputeShare {
public:
    explicit ComputeShare(ComputeTurn* c);
    ~ComputeShare();
    ComputeShare(const ComputeShare&) = delete;
    ComputeShare& operator=(const ComputeShare&) = delete;

private:
    ComputeTurn* c_;
};
// For its scope the calling thread works for connection c (its ClientWaits give back one of c's shares).
class ConnectionThread {
public:
    explicit ConnectionThread(ComputeTurn* c);
    ~ConnectionThread();
    ConnectionThread(const ConnectionThread&) = delete;
    ConnectionThread& operator=(const ConnectionThread&) = delete;

private:
    ComputeTurn* before_;
};
struct ClientWait {
    ClientWait();
    ~ClientWait();
    ClientWait(const ClientWait&) = delete;
    ClientWait& operator=(const ClientWait&) = delete;

private:
    ComputeTurn* turn_;
};

// The file mode's outputs, checked before anything is read (OutputChecks.cpp): the prefix (default: <input
// stem>_recon), the options that exclude each other, and that no output names an input or another output.
void check_file_outputs(Settings& S);
// Whether the trajectory comes from the acquisitions' stored k (not the encoding counters).
bool k_from_acquisitions(const forge::io::MrdFile& F, const Settings& S);
// The lines that say what will be reconstructed, and how ('correct': with field correction; 'matrixFrom': where
// BART input's image matrix came from).
void describe_run(const ReconProblem& P, const forge::io::MrdFile& F, const Settings& S, bool correct,
                  const std::string& matrixFrom);

int run_file(Settings& S);
int run_demo(Settings& S);

}  // namespace forge_recon
