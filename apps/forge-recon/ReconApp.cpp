// forge-recon's shared pieces: messages, the memory check, device and operator choice, output images.
#include "ReconApp.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <memory>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/Core/DeviceMemory.h"
#include "forge/IO/Cfl.h"
#include "forge/IO/Nifti.h"
#include "forge/Operators/nufft/Gnufft.h"

namespace forge_recon {

using cxf = std::complex<float>;
using forge::recon::EncodingOperator;

// In a distributed run rank 0 speaks for all: every rank works on the same problem and settings.
void warn(const std::string& msg) {
    if (dist::root()) std::fprintf(stderr, "forge-recon: warning: %s\n", msg.c_str());
}
void note(const std::string& msg, bool quiet) {
    if (!quiet && dist::root()) std::fprintf(stdout, "%s\n", msg.c_str());
}

bool is_dir(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {
// Bytes this process may still use: MemAvailable, capped by its cgroup's memory.max and by ulimit -v.
// Negative when none of them can be read.
double available_memory_bytes() {
    double avail = -1;
    {
        std::ifstream mi("/proc/meminfo");
        std::string key, rest;
        double kb = 0;
        while (mi >> key >> kb) {
            std::getline(mi, rest);
            if (key == "MemAvailable:") {
                avail = kb * 1024.0;
                break;
            }
        }
    }
    if (avail < 0) {
        const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && page > 0) avail = double(pages) * double(page);
    }
    auto cap = [&avail](double limit) {
        if (limit >= 0 && (avail < 0 || limit < avail)) avail = limit;
    };
    std::ifstream cg("/proc/self/cgroup");  // cgroup v2: "0::/path"
    for (std::string line; std::getline(cg, line);) {
        if (line.compare(0, 3, "0::") != 0) continue;
        const std::string dir = "/sys/fs/cgroup" + line.substr(3);
        std::ifstream mx(dir + "/memory.max"), cur(dir + "/memory.current");
        double limit = 0, used = 0;
        if (mx >> limit) cap(cur >> used ? limit - used : limit);  // "max" (no limit) does not parse
    }
    struct rlimit rl;
    if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) cap(double(rl.rlim_cur));
    return avail;
}

// What the run holds throughout, roughly and from below: the data as read and as frames, the pixel grid,
// field map and reference, and the maps (while read, as kept).
double held_bytes(const ReconProblem& P, bool withMaps) {
    const double n2 = double(P.n2()), nc = double(P.nc), planes = double(P.nslices), n1 = double(P.n1total);
    double b = n1 * (8 * nc + 12) + n1 * (16 + 8 * nc);  // acquisitions; frames (k, t, data)
    b += 12 * n2 + 8 * n2 * planes;                      // pixel grid; field map and reference
    if (withMaps) b += 24 * nc * n2 * planes;            // maps (while read, as kept)
    return b;
}

// The reconstruction's working set: what is held, every frame's image (complex, magnitude, output volume)
// and, for the one frame solved at a time, the operator's copies, the SENSE maps, an oversampled NUFFT grid
// and the solver's vectors.
double working_set_bytes(const ReconProblem& P, const Settings& S, bool withMaps) {
    const double n2 = double(P.n2()), nc = double(P.nc), n1f = double(P.n1max),
                 images = double(P.nslices) * double(P.nframes);
    const double coilsPerSolve = withMaps ? nc : 1.0;
    double b = held_bytes(P, withMaps);
    if (withMaps) b += 8 * nc * n2;  // SENSE's copy
    b += 20 * n2 * images;           // images
    b += 24 * n2 + 20 * n1f;         // operator: pixel grid, field map, k, t
    if (S.op != "dft") b += 16 * double(P.Nz > 1 ? 8 : 4) * n2 * coilsPerSolve;  // 2x oversampled grid
    b += 48 * n2 + 24 * n1f * coilsPerSolve;                                     // solver vectors
    return b;
}

// Coil-map estimation of one slice (forge::recon::estimate_coil_maps): the low-resolution coil images,
// their window sums and the maps (complex float, pixels x coils), the covariance of every coil pair at
// every pixel (nc (nc + 1) / 2 complex floats: 4.3 GB for 1024 coils on 32x32), the NUFFT's 2x grid, and
// per thread an nc x nc Hermitian eigenproblem in double precision (matrix, eigenvectors, LAPACK's work).
double map_estimation_bytes(const ReconProblem& P) {
    const double n2 = double(P.n2()), nc = double(P.nc);
    double threads = 1;
#ifdef _OPENMP
    threads = double(omp_get_max_threads());
#endif
    double b = 3 * 8 * n2 * nc + 4 * n2 * nc * (nc + 1) + 17 * n2;
    b += 8 * double(P.Nz > 1 ? 8 : 4) * n2;
    b += (threads + 1) * 48 * nc * nc;
    return b;
}

}  // namespace

void check_memory(const ReconProblem& P, const Settings& S, bool withMaps, bool estimatingMaps) {
    double need = working_set_bytes(P, S, withMaps);
    if (estimatingMaps) need = std::max(need, held_bytes(P, true) + map_estimation_bytes(P));
    const double avail = available_memory_bytes();
    if (avail < 0 || need <= avail) return;
    auto gib = [](double b) {
        char t[32];
        std::snprintf(t, sizeof t, "%.1f", b / double(1u << 30));
        return std::string(t);
    };
    const std::string maps = estimatingMaps ? " with coil maps estimated from the data"
                             : withMaps     ? " with sensitivity maps"
                                            : "";
    throw UsageError("'" + P.source + "' needs about " + gib(need) + " GiB of memory (image " + std::to_string(P.Nx) +
                     "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz) + ", " + std::to_string(P.nslices) +
                     " slice(s) x " + std::to_string(P.nframes) + " frame(s), " + std::to_string(P.nc) + " coil(s)" +
                     maps + ") but only " + gib(avail) + " GiB are available");
}

void check_output_prefix(std::string& prefix, const std::string& defaultName) {
    const std::string given = prefix;
    if (is_dir(prefix)) prefix += (prefix.back() == '/' ? "" : "/") + defaultName;
    const auto slash = prefix.rfind('/');
    std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
    if (dir.empty()) dir = "/";
    if (!is_dir(dir)) throw UsageError("-o '" + given + "': output folder '" + dir + "' does not exist");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw UsageError("-o '" + given + "': output folder '" + dir + "' is not writable");
}

namespace {
// Volume (x, y, slices*Nz, frames) of magnitudes or complex values.
template <typename T>
std::vector<T> volume(const ReconProblem& P, const std::vector<arma::cx_fvec>& imgs, bool complexOut);
template <>
std::vector<float> volume(const ReconProblem& P, const std::vector<arma::cx_fvec>& imgs, bool) {
    std::vector<float> v;
    v.reserve(P.n2() * imgs.size());
    for (const auto& im : imgs)
        for (std::size_t i = 0; i < im.n_elem; ++i) v.push_back(std::abs(im[i]));
    return v;
}
template <>
std::vector<cxf> volume(const ReconProblem& P, const std::vector<arma::cx_fvec>& imgs, bool) {
    std::vector<cxf> v;
    v.reserve(P.n2() * imgs.size());
    for (const auto& im : imgs) v.insert(v.end(), im.begin(), im.end());
    return v;
}

}  // namespace

void write_image(const std::string& path, const ReconProblem& P, const std::vector<arma::cx_fvec>& imgs,
                 bool complexOut, forge::io::OutputSet& outs, const std::string& descr) {
    const std::array<std::size_t, 4> dims{{P.Nx, P.Ny, P.Nz * P.nslices, imgs.size() / P.nslices}};
    const std::string tmp = outs.stage(path);
    if (complexOut)
        forge::io::write_nifti(tmp, volume<cxf>(P, imgs, true), dims, P.affine, descr);
    else
        forge::io::write_nifti(tmp, volume<float>(P, imgs, false), dims, P.affine, descr);
}

// Tiles of the 2D slices (of every Nz plane) of the first frame of several images, one row per image set.
forge::io::Montage montage(const ReconProblem& P, const std::vector<std::vector<arma::fvec>>& sets) {
    forge::io::Montage m;
    m.nx = P.Nx;
    m.ny = P.Ny;
    const std::size_t planes = P.Nz * P.nslices;
    const std::size_t per = std::min<std::size_t>(planes, 8);
    m.columns = sets.size() > 1 ? sets.size() : static_cast<std::size_t>(std::ceil(std::sqrt(double(per))));
    // order: for each plane, one tile per set (sets side by side)
    for (std::size_t p = 0; p < per; ++p)
        for (const auto& set : sets) {
            const std::size_t slice = p / P.Nz, z = p % P.Nz;
            const arma::fvec& vol = set[slice];
            m.tiles.emplace_back(vol.begin() + z * P.Nx * P.Ny, vol.begin() + (z + 1) * P.Nx * P.Ny);
        }
    return m;
}

float display_scale(const std::vector<arma::fvec>& imgs) {
    std::vector<float> all;
    for (const auto& v : imgs) all.insert(all.end(), v.begin(), v.end());
    if (all.empty()) return 1.0f;
    std::size_t k = static_cast<std::size_t>(0.995 * double(all.size() - 1));
    std::nth_element(all.begin(), all.begin() + k, all.end());
    return all[k] > 0 ? all[k] * 1.1f : 1.0f;
}

std::string device_description(const Settings& S) {
    if (!S.gpu) return "CPU";
    if (forge::device::device_count() > 1)
        return "GPU " + std::to_string(forge::device::current_device()) + " (" + forge::device::device_name() + ")";
    return std::string("GPU (") + forge::device::device_name() + ")";
}

DeviceWarmUp::DeviceWarmUp(const Settings& S) {
    if (S.device == "cpu" || !forge::device::built_with_cuda() || dist::distributed()) return;
    const bool autoOperator = S.op == "auto";
    done_ = std::async(std::launch::async, [autoOperator] {
        try {
            if (!forge::device::available()) return;
            // One tiny NUFFT each way on the GPU: the context, cuFFT and the lazily loaded kernel modules.
            const arma::fvec k = {-1.5f, 0.0f, 2.25f}, z(3, arma::fill::zeros);
            const forge::Gnufft<float> G(3, 16, 16, 1, k, k, z);
            forge::forgeCol<forge::forgeComplex<float>> x(arma::cx_fvec(256, arma::fill::zeros));
            x.put_on_gpu();
            const forge::forgeCol<forge::forgeComplex<float>> y = G * x, back = G / y;
            forge::device::synchronize();
            // --operator auto's rates for this GPU (measured once, about 1 s on an H200, or read from their cache
            // file): otherwise the first slice of a --server connection or a --stream waits for them
            if (autoOperator) forge::recon::cost_rates(true);
        } catch (...) {  // resolve_device() and the reconstruction report what matters
        }
    });
}

void resolve_device(Settings& S) {
    const bool have = forge::device::built_with_cuda() && forge::device::available();
    if (S.device == "gpu") {
        if (!forge::device::built_with_cuda())
            throw UsageError("--device gpu: this forge-recon was built without CUDA");
        if (!have) throw UsageError("--device gpu: no usable CUDA device was found");
        S.gpu = true;
    } else if (S.device == "auto") {
        S.gpu = have;
    } else {
        S.gpu = false;
    }
    // The processes of a node take its GPUs in turn; more processes than GPUs share them.
    if (S.gpu && dist::distributed()) forge::device::set_device(dist::node_rank() % forge::device::device_count());
}

std::vector<std::size_t> my_share(const ReconProblem& P) { return dist::my_frames(P.frames.size()); }

EncodingOperator encoding_operator(const std::string& op) {
    if (op == "fft") return EncodingOperator::Fft;
    if (op == "nufft") return EncodingOperator::Nufft;
    if (op == "timeseg") return EncodingOperator::TimeSeg;
    if (op == "toeplitz") return EncodingOperator::Toeplitz;
    return EncodingOperator::Dft;
}

forge::recon::ReconResult reconstruct_share(forge::recon::ReconSession& session, const ReconProblem& P,
                                            bool fieldCorrection, const Settings& S, Progress& prog,
                                            const std::vector<std::size_t>& frames, const std::string& tag,
                                            std::vector<double>* finalCosts, const forge::recon::GroupPlace& place) {
    if (frames.empty()) {  // more processes than frames: nothing to do here (an empty list would mean all)
        forge::recon::ReconResult R;
        R.complex_image.assign(P.nslices * P.nframes, arma::cx_fvec(P.n2(), arma::fill::zeros));
        for (const auto& c : R.complex_image) R.magnitude.push_back(arma::abs(c));
        return R;
    }
    forge::recon::ReconRequest& r = session.request();
    r.field_correction = fieldCorrection;
    forge::recon::ReconSettings& R = r.settings;
    auto last = std::make_shared<std::size_t>(0);   // the last iteration reported in the current solve
    auto lastCost = std::make_shared<double>(NAN);  // and its cost
    R.on_iteration = [&prog, last, lastCost](const std::string& label, const forge::PcgIterationInfo& i,
                                             std::size_t niter) {
        *last = i.iteration;
        *lastCost = i.cost;
        prog.iteration(label, i.iteration, niter, i.cost, i.gradient_norm);
    };
    R.on_build = [&prog](const std::string& label, std::size_t done, std::size_t total, double seconds) {
        prog.build(label, done, total, seconds);
    };
    const double tol = S.tolerance;
    const bool quiet = S.quiet;
    R.iteration_cost = !quiet;  // quiet: the report's final cost comes from the solver's report
    R.on_solve_end = [&prog, last, lastCost, tol, quiet,
                      finalCosts](const std::string& label, const forge::SolverReport& rep, std::size_t niter) {
        prog.finish_solve(*last, niter);
        *last = 0;
        if (finalCosts) finalCosts->push_back(std::isnan(rep.final_cost) ? *lastCost : rep.final_cost);
        *lastCost = NAN;
        if (!quiet) std::fprintf(stderr, "%s\n", stop_message(label, rep, tol).c_str());
    };
    forge::recon::ReconResult out = session.solve(P, encoding_operator(S.op), place, frames, rank_tag(tag));
    // the callbacks hold 'prog', which the caller's scope owns
    R.on_iteration = nullptr;
    R.on_build = nullptr;
    R.on_solve_end = nullptr;
    return out;
}

ReportedReconstruction gather_reconstruction(const ReconProblem& P, const std::vector<std::size_t>& mine,
                                             forge::recon::ReconResult& R, std::vector<double> finalCosts,
                                             const std::string& name, bool fieldCorrection) {
    ReportedReconstruction rec;
    rec.name = name;
    rec.field_correction = fieldCorrection;
    double rhs = 0, iterations = 0;  // this rank's
    for (const auto& s : R.solves) {
        rhs += s.rhs_seconds;
        iterations += s.iteration_seconds;
    }
    rec.rhs_seconds = dist::max_over_ranks(rhs);
    rec.iteration_seconds = dist::max_over_ranks(iterations);
    dist::gather_images(P, mine, R);
    rec.solves = R.solves;
    rec.final_costs = std::move(finalCosts);
    dist::gather_solves(rec.solves, rec.final_costs);
    rec.setup_seconds = dist::max_over_ranks(R.setup_seconds);
    rec.solve_seconds = dist::max_over_ranks(R.solve_seconds);
    if (dist::root()) rec.quality = frame_quality(P, R);
    return rec;
}

ReportedData reported_data(const ReconProblem& P, const forge::io::MrdFile& F, bool kFromAcquisitions) {
    ReportedData d;
    d.acquisitions = F.acquisitions.size();
    d.coils = P.nc;
    d.slices = P.nslices;
    d.frames = P.nframes;
    d.matrix = {{P.Nx, P.Ny, P.Nz}};
    d.trajectory = F.header.trajectory;
    d.k_from = kFromAcquisitions ? "acquisitions" : "encoding counters";
    d.field_map = !P.field_map.empty();
    return d;
}

std::vector<forge::recon::Quality> frame_quality(const ReconProblem& P, const forge::recon::ReconResult& R) {
    std::vector<forge::recon::Quality> q;
    if (P.reference.empty()) return q;
    for (std::size_t f = 0; f < P.nframes; ++f) {
        const std::vector<arma::fvec> frame(R.magnitude.begin() + f * P.nslices,
                                            R.magnitude.begin() + (f + 1) * P.nslices);
        q.push_back(forge::recon::magnitude_quality(frame, P.reference));
    }
    return q;
}

std::string rank_tag(const std::string& tag) {
    return dist::distributed() ? tag + " [" + dist::rank_name() + "]" : tag;
}

void print_rank_reports(const std::vector<dist::RankReport>& reports) {
    if (reports.size() < 2) return;
    for (const auto& r : reports)
        std::printf("forge-recon: rank %d/%zu: %zu frame(s) in %.2f s on %s\n", r.rank + 1, reports.size(), r.frames,
                    r.seconds, r.where.c_str());
}

forge::io::MrdProblemOptions problem_options(const Settings& S) {
    forge::io::MrdProblemOptions o;
    o.cartesian = S.cartesian;
    o.size_check = [&S](const ReconProblem& P, bool withMaps) { check_memory(P, S, withMaps); };
    return o;
}

std::size_t solves_per_recon(const ReconProblem& P, const Settings& S, std::size_t frames) {
    forge::recon::ReconSettings r;
    r.iterations = S.iterations;
    if (frames != std::size_t(-1)) r.frames.assign(frames, 0);  // only their number counts here
    return forge::recon::solves_per_reconstruction(P, r);
}

forge::recon::ReconRequest recon_request(const Settings& S) {
    forge::recon::ReconRequest r;
    r.auto_operator = false;  // resolve_operator() chose S.op, from the whole stream for --stream
    forge::recon::ReconSettings& R = r.settings;
    R.op = encoding_operator(S.op);
    R.segments = S.segments;
    R.toeplitz_error = S.toeplitz_error;
    using forge::recon::PenaltyKind;
    R.penalty = S.penalty == "tv"           ? PenaltyKind::TV
                : S.penalty == "l1-wavelet" ? PenaltyKind::L1Wavelet
                : S.penalty == "tv-exact"   ? PenaltyKind::TVExact
                                            : PenaltyKind::Quad;
    R.beta = S.beta;
    R.lambda = S.lambda;
    R.delta = S.delta;
    R.iterations = S.iterations;
    R.tolerance = S.tolerance;
    R.preconditioner = S.preconditioner == "circulant";
    r.device = S.gpu ? forge::Device::GPU : forge::Device::Host;
    using forge::recon::MapsPolicy;
    r.maps = S.smaps == "none" ? MapsPolicy::None : S.smaps == "estimate" ? MapsPolicy::Estimate : MapsPolicy::Auto;
    r.coil_maps = coil_map_options(S);
    r.field_correction = !S.noFieldCorrection;
    r.warm_start = S.warmStart;
    r.warn = warn;
    return r;
}

std::string tolerance_text(double tolerance) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", tolerance);
    return buf;
}

std::string operator_description(const ReconProblem& P, const Settings& S) {
    if (S.op == "timeseg" && (P.field_map.empty() || S.noFieldCorrection))
        return "timeseg (no field map to correct: plain nufft)";
    return S.op;
}

std::string stop_message(const std::string& label, const forge::SolverReport& rep, double tolerance) {
    const double rel = rep.initial_gradient_norm > 0 ? rep.final_gradient_norm / rep.initial_gradient_norm : 0.0;
    char buf[300];
    switch (rep.stop_reason) {
        case forge::StopReason::Tolerance:
            std::snprintf(buf, sizeof buf, "converged after %zu iterations (relative gradient %.3e <= tolerance %g)",
                          std::size_t(rep.iterations), rel, tolerance);
            break;
        case forge::StopReason::ZeroGradient:
            std::snprintf(buf, sizeof buf, "converged after %zu iterations (the gradient is exactly zero)",
                          std::size_t(rep.iterations));
            break;
        case forge::StopReason::FlatDirection:
            std::snprintf(buf, sizeof buf,
                          "converged after %zu iterations (no step along the search direction lowers the cost; "
                          "relative gradient %.3e)",
                          std::size_t(rep.iterations), rel);
            break;
        case forge::StopReason::IterationLimit:
            if (tolerance > 0)
                std::snprintf(buf, sizeof buf,
                              "stopped at the iteration limit, %zu iterations (relative gradient %.3e, tolerance %g "
                              "not reached; -n sets the limit)",
                              std::size_t(rep.iterations), rel, tolerance);
            else
                std::snprintf(buf, sizeof buf,
                              "stopped at the iteration limit, %zu iterations (relative gradient %.3e; no tolerance)",
                              std::size_t(rep.iterations), rel);
            break;
    }
    return "forge-recon: " + label + ": " + buf;
}

void resolve_operator(ReconProblem& P, Settings& S) {
    P.fft_grid = forge::recon::fft_grid(P);
    const bool onGrid = P.fft_grid[0] > 0;
    if (S.op == "fft" && !onGrid)
        throw UsageError("--operator fft: the samples are not on the k-space grid of an FFT (neither the recon grid "
                         "nor the encoded FOV's grid); use --operator dft, toeplitz, timeseg or nufft");
    if (S.opRequested.empty()) S.opRequested = S.op;
    if (S.op != "auto") return;
    const forge::recon::OperatorChoice c =
        forge::recon::choose_operator(P, S.iterations, S.gpu, !P.field_map.empty() && !S.noFieldCorrection,
                                      S.tolerance);
    S.op = forge::recon::operator_name(c.op);
    S.opReason = c.reason;
}

// Before a long run (estimated over a minute) says how long, and which operator would be faster.
void notice_long_run(const ReconProblem& P, const Settings& S, int reconstructions) {
    const forge::recon::ReconSettings R = [&] {
        forge::recon::ReconSettings r;
        r.iterations = S.iterations;
        r.segments = S.segments;
        r.gpu = S.gpu;
        return r;
    }();
    const bool correct = !S.noFieldCorrection;
    const double est = reconstructions * forge::recon::estimate_seconds(P, R, encoding_operator(S.op), correct);
    if (est <= 60) return;
    const bool fieldmap = correct && !P.field_map.empty();
    const std::string faster = P.fft_grid[0] ? "fft" : fieldmap ? "timeseg" : "nufft";
    char buf[400];
    std::snprintf(buf, sizeof buf, "--operator %s will take about %.0f s on %s (estimate)", S.op.c_str(), est,
                  device_description(S).c_str());
    std::string msg = buf;
    const double alt = reconstructions * forge::recon::estimate_seconds(P, R, encoding_operator(faster), correct);
    if (faster != S.op && alt < est) {
        std::snprintf(buf, sizeof buf, "; --operator %s takes about %.2g s%s", faster.c_str(), alt,
                      faster == "fft"       ? " for the same exact model (the samples lie on an FFT grid)"
                      : faster == "timeseg" ? " (NUFFT, time-segmented field correction: about 1% operator error)"
                                            : " (NUFFT)");
        msg += buf;
    }
    warn(msg);
}

bool k_from_acquisitions(const forge::io::MrdFile& F, const Settings& S) {
    return F.acquisitions.front().traj_dims && !S.cartesian;
}

void describe_run(const ReconProblem& P, const forge::io::MrdFile& F, const Settings& S, bool correct,
                  const std::string& matrixFrom) {
    const std::string sizes = std::to_string(P.nc) + " coils, " + std::to_string(P.nslices) + " slice(s), " +
                              std::to_string(P.nframes) + " frame(s), image " + std::to_string(P.Nx) + "x" +
                              std::to_string(P.Ny) + "x" + std::to_string(P.Nz);
    if (bart_input(S))
        note("forge-recon: " + S.input + " (BART, trajectory " + forge::io::cfl_base(S.bartTraj) +
                 ".cfl): " + std::to_string(F.acquisitions.size()) + " readouts of " +
                 std::to_string(F.acquisitions.front().samples) + " samples, " + sizes + " (" + matrixFrom + ")",
             S.quiet);
    else
        note("forge-recon: " + S.input + ": " + std::to_string(F.acquisitions.size()) + " acquisitions, " + sizes +
                 ", trajectory " + F.header.trajectory +
                 (k_from_acquisitions(F, S) ? " (from the acquisitions)" : " (from the encoding counters)"),
             S.quiet);
    if (P.smaps.empty()) {
        warn("no sensitivity maps: reconstructing each coil and combining by root-sum-of-squares" +
             std::string(P.accel > 1 ? " (the data are undersampled, expect aliasing)" : ""));
    }
    if (P.field_map.empty()) note("forge-recon: no field map: no off-resonance correction", S.quiet);
    if (correct && S.op == "nufft") warn("--operator nufft has no field correction: the field map is ignored");
    if (correct && !F.header.has_te) warn("the header has no echo time (TE): sample times start at 0");
    note("forge-recon: operator " + operator_description(P, S) +
             (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") + (P.smaps.empty() ? "" : " + SENSE") +
             ", penalty " + S.penalty + " beta " + std::to_string(S.beta) + ", " + "at most " +
             std::to_string(S.iterations) + " iterations" +
             (S.tolerance > 0 ? " (tolerance " + tolerance_text(S.tolerance) + ")" : "") + " on " +
             device_description(S),
         S.quiet);
}

}  // namespace forge_recon
