// forge-recon: raw data to image in one command.
//
//   forge-recon --demo                       synthesise, simulate, reconstruct, write NIfTI/PNG/ISMRMRD
//   forge-recon data.h5 -o out/recon         reconstruct an ISMRMRD (MRD) file
//
// See docs/forge-recon.md for the options, the data layout and the conventions.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <armadillo>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/Gdft.h"
#include "forge/Operators/GfftSampled.h"
#include "forge/Operators/SENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Penalties/TVPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.hpp"
#if __has_include("forge/Operators/Gnufft.h")
#include "forge/Operators/Gnufft.h"
#define FORGE_RECON_HAVE_NUFFT 1
#endif
#if defined(FORGE_RECON_HAVE_NUFFT) && __has_include("forge/Operators/TimeSegmentation.h")
#include "forge/Operators/TimeSegmentation.h"
#define FORGE_RECON_HAVE_TIMESEG 1
#endif

#include "Mrd.h"
#include "Nifti.h"
#include "Png.h"
#include "Progress.h"

namespace {

using forge::uword;
using cxf = std::complex<float>;
using forge::io::Affine;

// A user-facing problem: one line on stderr, exit code 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void warn(const std::string& msg) { std::fprintf(stderr, "forge-recon: warning: %s\n", msg.c_str()); }
void note(const std::string& msg, bool quiet) {
    if (!quiet) std::fprintf(stdout, "%s\n", msg.c_str());
}

// ------------------------------------------------------------------------------------------ options
struct Settings {
    std::string input;
    std::string output;
    bool demo = false;
    std::string op = "auto";  // resolved to dft, fft, nufft or timeseg by resolve_operator()
    std::string opReason;    // why auto chose it
    int segments = 0;  // timeseg: L (0 = smallest L with estimated RMS error <= 1%)
    std::string penalty = "quad";
    double beta = 1e-3;
    double delta = 0.05;
    int iterations = 10;
    double tolerance = 0;  // PCG: stop at ||gradient|| <= tolerance * initial (0 = off)
    std::string device = "auto";
    std::string fieldmap, smaps, reference;
    bool noFieldCorrection = false;
    bool complexOut = false;
    bool cartesian = false;
    std::string group = "dataset";
    bool quiet = false;
    // demo
    int demoSize = 64;
    int demoSlices = 2;
    int demoCoils = 8;
    double demoNoise = 0.01;
    bool gpu = false;  // resolved from 'device'
};

// ------------------------------------------------------------------------------------------ problem
// One reconstruction unit: a 2D slice or a 3D volume at one repetition/contrast.
struct Frame {
    std::size_t slice = 0, frame = 0;  // slice index (2D multi-slice), frame index (repetition/contrast)
    arma::fvec kx, ky, kz, t;          // n1 samples (cycles/FOV, seconds)
    arma::cx_fvec y;                   // nc * n1, coil-major
};

struct Problem {
    std::size_t Nx = 0, Ny = 0, Nz = 1;  // image grid of one frame (Nz = 1 for 2D)
    std::size_t nslices = 1, nframes = 1, nc = 1;
    std::array<double, 3> voxel_mm{{1, 1, 1}};
    Affine affine{};
    std::vector<Frame> frames;
    arma::fvec ix, iy, iz;                 // n2 pixel positions (FOV units)
    std::vector<arma::fvec> fieldmap;      // per slice: n2 (rad/s); empty: none
    std::vector<arma::cx_fvec> smaps;      // per slice: nc * n2; empty: none
    std::vector<arma::fvec> reference;     // per slice: n2 magnitudes; empty: none
    std::size_t accel = 1;
    std::string source;
    std::size_t n1total = 0, n1max = 0;    // samples per coil: in all frames, in the largest frame
    std::array<double, 3> fovRatio{{1, 1, 1}};  // recon FOV / encoded FOV per axis
    std::array<std::size_t, 3> fftGrid{{0, 0, 0}};  // FFT grid holding every sample (0: none); see fft_grid()
    std::size_t n2() const { return Nx * Ny * Nz; }
};

bool is_file(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool is_dir(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// ------------------------------------------------------------------------------------------ memory
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

// The reconstruction's working set, roughly and from below: the data as read and as frames, the pixel
// grid, the maps, every frame's image (complex, magnitude, output volume) and, for the one frame solved
// at a time, the operator's copies, the SENSE maps, an oversampled NUFFT grid and the solver's vectors.
double working_set_bytes(const Problem& P, const Settings& S, bool withMaps) {
    const double n2 = double(P.n2()), nc = double(P.nc), planes = double(P.nslices), n1 = double(P.n1total),
                 n1f = double(P.n1max), images = planes * double(P.nframes);
    const double coilsPerSolve = withMaps ? nc : 1.0;
    double b = n1 * (8 * nc + 12) + n1 * (16 + 8 * nc);    // acquisitions; frames (k, t, data)
    b += 12 * n2 + 8 * n2 * planes;                         // pixel grid; field map and reference
    if (withMaps) b += 24 * nc * n2 * planes + 8 * nc * n2;  // maps (while read, as kept); SENSE's copy
    b += 20 * n2 * images;                                  // images
    b += 24 * n2 + 20 * n1f;                                // operator: pixel grid, field map, k, t
    if (S.op != "dft") b += 16 * double(P.Nz > 1 ? 8 : 4) * n2 * coilsPerSolve;  // 2x oversampled grid
    b += 48 * n2 + 24 * n1f * coilsPerSolve;               // solver vectors
    return b;
}

// Refuses a reconstruction that cannot fit before anything of its size is allocated.
void check_memory(const Problem& P, const Settings& S, bool withMaps) {
    const double need = working_set_bytes(P, S, withMaps), avail = available_memory_bytes();
    if (avail < 0 || need <= avail) return;
    auto gib = [](double b) {
        char t[32];
        std::snprintf(t, sizeof t, "%.1f", b / double(1u << 30));
        return std::string(t);
    };
    throw UsageError("'" + P.source + "' needs about " + gib(need) + " GiB of memory (image " + std::to_string(P.Nx) +
                     "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz) + ", " + std::to_string(P.nslices) +
                     " slice(s) x " + std::to_string(P.nframes) + " frame(s), " + std::to_string(P.nc) + " coil(s)" +
                     (withMaps ? " with sensitivity maps" : "") + ") but only " + gib(avail) + " GiB are available");
}

// "file.nii" | "file.h5:/path/in/file" -> array (dims fastest first); 'check' sees the dims before the
// values are read.
forge::io::Array load_map(const std::string& spec, const std::string& what, const forge::io::DimsCheck& check) {
    auto ends_with = [](const std::string& s, const std::string& e) {
        return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
    };
    if (ends_with(spec, ".nii")) {
        if (!is_file(spec)) throw UsageError(what + " file '" + spec + "' does not exist");
        auto v = forge::io::read_nifti(spec, check);
        forge::io::Array a;
        a.dims.assign(v.dims.begin(), v.dims.end());
        a.data = std::move(v.data);
        a.is_complex = v.is_complex;
        return a;
    }
    std::string file = spec, object;
    auto colon = spec.rfind(':');
    if (colon != std::string::npos && colon > 0) {
        file = spec.substr(0, colon);
        object = spec.substr(colon + 1);
    }
    if (!is_file(file)) throw UsageError(what + " file '" + file + "' does not exist");
    if (object.empty())
        throw UsageError(what + " '" + spec + "': give a .nii file or FILE.h5:/path/to/dataset");
    return forge::io::read_hdf5_array(file, object, check);
}

std::string dims_string(const std::vector<std::size_t>& d) {
    std::ostringstream s;
    std::size_t last = d.size();
    while (last > 1 && d[last - 1] == 1) --last;
    for (std::size_t i = 0; i < last; ++i) s << (i ? "x" : "") << d[i];
    return s.str();
}

// Checks map dims (x, y, then 'rest' values in any trailing shape) and splits per slice.
void check_map_dims(const std::vector<std::size_t>& dims, const Problem& P, std::size_t perPixel, const std::string& what,
                    const std::string& expected) {
    std::size_t rest = 1;
    for (std::size_t k = 2; k < dims.size(); ++k) rest *= dims[k];
    if (dims.size() < 2 || dims[0] != P.Nx || dims[1] != P.Ny || rest != P.Nz * P.nslices * perPixel) {
        throw UsageError(what + " has size " + dims_string(dims) + " but this reconstruction needs " + expected);
    }
}

// NaN or Inf in a map would turn the whole image into NaN (or stop the solver): refused by name.
void check_finite(const forge::io::Array& a, const std::string& what) {
    for (std::size_t i = 0; i < a.data.size(); ++i)
        if (!std::isfinite(a.data[i].real()) || !std::isfinite(a.data[i].imag()))
            throw UsageError(what + " holds a non-finite value (NaN or Inf) at index " + std::to_string(i));
}

// Reads a map; the reader calls the DimsCheck before it allocates the values.
using MapLoader = std::function<forge::io::Array(const forge::io::DimsCheck&)>;

void attach_fieldmap(Problem& P, const MapLoader& load, const std::string& origin) {
    const std::string expected = std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                 std::to_string(P.Nz * P.nslices) + " (x, y, slices) in rad/s";
    const forge::io::Array a = load([&](const std::vector<std::size_t>& d) { check_map_dims(d, P, 1, "field map " + origin, expected); });
    check_finite(a, "field map " + origin);
    P.fieldmap.assign(P.nslices, arma::fvec(P.n2()));
    for (std::size_t s = 0; s < P.nslices; ++s)
        for (std::size_t k = 0; k < P.n2(); ++k) P.fieldmap[s][k] = static_cast<float>(a.data[s * P.n2() + k].real());
}

void check_memory(const Problem& P, const Settings& S, bool withMaps);

void attach_smaps(Problem& P, const Settings& S, const MapLoader& load, const std::string& origin) {
    const std::string expected = std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                 std::to_string(P.Nz * P.nslices) + "x" + std::to_string(P.nc) +
                                 " (x, y, slices, coils), complex";
    const forge::io::Array a = load([&](const std::vector<std::size_t>& d) {
        check_map_dims(d, P, P.nc, "sensitivity maps " + origin, expected);
        check_memory(P, S, true);
    });
    check_finite(a, "sensitivity maps " + origin);
    const std::size_t n2 = P.n2();
    P.smaps.assign(P.nslices, arma::cx_fvec(n2 * P.nc));
    // file order: x, y, (z,) slice, coil
    for (std::size_t c = 0; c < P.nc; ++c)
        for (std::size_t s = 0; s < P.nslices; ++s)
            for (std::size_t k = 0; k < n2; ++k) {
                auto v = a.data[(c * P.nslices + s) * n2 + k];
                P.smaps[s][c * n2 + k] = cxf(static_cast<float>(v.real()), static_cast<float>(v.imag()));
            }
}

void attach_reference(Problem& P, const MapLoader& load, const std::string& origin) {
    const std::string expected = std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                 std::to_string(P.Nz * P.nslices) + " (x, y, slices)";
    const forge::io::Array a = load([&](const std::vector<std::size_t>& d) { check_map_dims(d, P, 1, "reference image " + origin, expected); });
    check_finite(a, "reference image " + origin);
    P.reference.assign(P.nslices, arma::fvec(P.n2()));
    for (std::size_t s = 0; s < P.nslices; ++s)
        for (std::size_t k = 0; k < P.n2(); ++k)
            P.reference[s][k] = static_cast<float>(std::abs(a.data[s * P.n2() + k]));
}

// Voxel (i, j, k) -> RAS+ mm from the acquisition geometry (ISMRMRD positions/directions are in the
// patient's LPS frame; NIfTI is RAS, so x and y change sign). Falls back to an axis-aligned grid.
Affine make_affine(const Problem& P, const std::vector<const forge::io::MrdAcquisition*>& firstOfSlice, bool is3D) {
    const auto& a0 = *firstOfSlice.front();
    auto norm3 = [](const std::array<float, 3>& v) { return std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2]); };
    std::array<double, 3> rd{{1, 0, 0}}, pd{{0, 1, 0}}, sd{{0, 0, 1}};
    bool valid = norm3(a0.readDir) > 0.5 && norm3(a0.phaseDir) > 0.5;
    if (valid) {
        for (int k = 0; k < 3; ++k) {
            rd[k] = a0.readDir[k];
            pd[k] = a0.phaseDir[k];
            sd[k] = a0.sliceDir[k];
        }
        if (norm3(a0.sliceDir) < 0.5) {  // slice = read x phase
            sd = {rd[1] * pd[2] - rd[2] * pd[1], rd[2] * pd[0] - rd[0] * pd[2], rd[0] * pd[1] - rd[1] * pd[0]};
        }
    }
    std::array<double, 3> pos{{a0.position[0], a0.position[1], a0.position[2]}};
    double dz = P.voxel_mm[2];
    if (!is3D && firstOfSlice.size() > 1) {
        const auto& a1 = *firstOfSlice[1];
        double d = 0;
        for (int k = 0; k < 3; ++k) d += (double(a1.position[k]) - a0.position[k]) * sd[k];
        if (std::fabs(d) > 1e-6) dz = d;
    }
    // LPS position of voxel (0, 0, 0)
    std::array<double, 3> o;
    for (int k = 0; k < 3; ++k) {
        o[k] = pos[k] - double(P.Nx / 2) * P.voxel_mm[0] * rd[k] - double(P.Ny / 2) * P.voxel_mm[1] * pd[k];
        if (is3D) o[k] -= double(P.Nz / 2) * P.voxel_mm[2] * sd[k];
    }
    Affine A{};
    const double flip[3] = {-1, -1, 1};  // LPS -> RAS
    for (int r = 0; r < 3; ++r) {
        A[r][0] = flip[r] * rd[r] * P.voxel_mm[0];
        A[r][1] = flip[r] * pd[r] * P.voxel_mm[1];
        A[r][2] = flip[r] * sd[r] * dz;
        A[r][3] = flip[r] * o[r];
    }
    A[3][3] = 1;
    return A;
}

// Builds the reconstruction problem from ISMRMRD content. Validates the trajectory against the header.
Problem build_problem(const forge::io::MrdFile& F, const Settings& S, const std::string& source) {
    const auto& H = F.header;
    Problem P;
    P.source = source;
    const bool is3D = H.encodedMatrix[2] > 1;
    auto pick = [](std::size_t r, std::size_t e) { return r > 0 ? r : e; };
    P.Nx = pick(H.reconMatrix[0], H.encodedMatrix[0]);
    P.Ny = pick(H.reconMatrix[1], H.encodedMatrix[1]);
    P.Nz = is3D ? pick(H.reconMatrix[2], H.encodedMatrix[2]) : 1;
    if (P.Nx < 2 || P.Ny < 2) throw UsageError("the ISMRMRD header's matrix size is " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + " (need at least 2x2)");
    const std::string matrixField = std::string("the ISMRMRD header's ") +
                                    (H.reconMatrix[0] > 0 && H.reconMatrix[1] > 0 ? "reconSpace" : "encodedSpace") +
                                    "/matrixSize " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                    std::to_string(P.Nz);
    constexpr std::size_t kNiftiMax = 32767;  // NIfTI-1 stores each dimension as int16
    if (P.Nx > kNiftiMax || P.Ny > kNiftiMax || P.Nz > kNiftiMax)
        throw UsageError(matrixField + " exceeds the 32767 voxels per axis a NIfTI-1 image holds");
    for (std::size_t n : {P.Nx, P.Ny, P.Nz})
        if (n > 1 && n % 2) throw UsageError("the ISMRMRD header's recon matrix " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz) + " has an odd size (forge needs even sizes)");
    // FOV scaling: k in cycles per recon FOV = k in cycles per encoded FOV * reconFOV/encFOV
    for (int k = 0; k < 3; ++k)
        for (const auto& f : {std::make_pair("encodedSpace", H.encodedFov_mm[k]), std::make_pair("reconSpace", H.reconFov_mm[k])})
            if (!std::isfinite(f.second) || f.second < 0)
                throw UsageError(std::string("the ISMRMRD header's ") + f.first + "/fieldOfView_mm/" + "xyz"[k] + " is " +
                                 std::to_string(f.second) + " (expected a finite, non-negative size in mm)");
    if (H.hasTE && !std::isfinite(H.TE_ms))
        throw UsageError("the ISMRMRD header's sequenceParameters/TE is " + std::to_string(H.TE_ms) + " (expected a finite time in ms)");
    std::array<double, 3> fovRatio{{1, 1, 1}};
    for (int k = 0; k < 3; ++k) {
        if (H.reconFov_mm[k] > 0 && H.encodedFov_mm[k] > 0) fovRatio[k] = H.reconFov_mm[k] / H.encodedFov_mm[k];
        const double fov = H.reconFov_mm[k] > 0 ? H.reconFov_mm[k] : H.encodedFov_mm[k];
        const std::size_t n = k == 0 ? P.Nx : (k == 1 ? P.Ny : P.Nz);
        P.voxel_mm[k] = fov > 0 ? fov / double(n) : 1.0;
    }
    P.fovRatio = fovRatio;
    P.accel = H.accelE1 * H.accelE2;

    // channels must agree
    const auto& acqs = F.acquisitions;
    P.nc = acqs.front().channels;
    if (P.nc == 0) throw UsageError("acquisition 0 of '" + source + "' has no channels");
    const std::size_t trajDims = acqs.front().trajDims;
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        if (acqs[i].channels != P.nc)
            throw UsageError("acquisition " + std::to_string(i) + " has " + std::to_string(acqs[i].channels) +
                             " channels but acquisition 0 has " + std::to_string(P.nc));
        if (acqs[i].trajDims != trajDims)
            throw UsageError("acquisition " + std::to_string(i) + " has " + std::to_string(acqs[i].trajDims) +
                             " trajectory dimensions but acquisition 0 has " + std::to_string(trajDims));
        if (acqs[i].samples == 0) throw UsageError("acquisition " + std::to_string(i) + " has no samples");
        const auto& a = acqs[i];
        auto finite3 = [](const std::array<float, 3>& v) { return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]); };
        if (!std::isfinite(a.dwell_us) || !finite3(a.position) || !finite3(a.readDir) || !finite3(a.phaseDir) || !finite3(a.sliceDir))
            throw UsageError("acquisition " + std::to_string(i) + " of '" + source +
                             "' has a non-finite (NaN or Inf) sample_time_us, position or direction");
        for (const auto& v : a.data)
            if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
                throw UsageError("acquisition " + std::to_string(i) + " of '" + source + "' holds a non-finite sample (NaN or Inf)");
    }
    const bool useTraj = trajDims > 0 && !S.cartesian;
    const bool cartHeader = H.trajectory == "cartesian" || H.trajectory == "epi";
    if (!cartHeader && trajDims == 0)
        throw UsageError("the header says the trajectory is " + H.trajectory +
                         " but the acquisitions carry no trajectory (trajectory_dimensions = 0)");
    if (useTraj) {
        const std::size_t need = is3D ? 3 : 2;
        if (trajDims != need)
            throw UsageError("the acquisitions' trajectories have " + std::to_string(trajDims) +
                             " dimensions but the header's encoded matrix " + std::to_string(H.encodedMatrix[0]) + "x" +
                             std::to_string(H.encodedMatrix[1]) + "x" + std::to_string(H.encodedMatrix[2]) +
                             " is " + (is3D ? "3D (needs 3)" : "2D (needs 2)"));
    }
    const double TE = H.hasTE ? H.TE_ms * 1e-3 : 0.0;

    // group into slices x frames (repetition, contrast)
    std::map<uint16_t, std::size_t> sliceIndex;
    std::map<std::pair<uint16_t, uint16_t>, std::size_t> frameIndex;
    for (const auto& a : acqs) {
        sliceIndex.emplace(a.slice, 0);
        frameIndex.emplace(std::make_pair(a.repetition, a.contrast), 0);
    }
    if (is3D && sliceIndex.size() > 1) throw UsageError("3D data with several slices (slab loops) is not supported");
    {
        std::size_t i = 0;
        for (auto& kv : sliceIndex) kv.second = i++;
        i = 0;
        for (auto& kv : frameIndex) kv.second = i++;
    }
    P.nslices = sliceIndex.size();
    P.nframes = frameIndex.size();
    std::vector<std::vector<const forge::io::MrdAcquisition*>> groups(P.nslices * P.nframes);
    std::vector<const forge::io::MrdAcquisition*> firstOfSlice(P.nslices, nullptr);
    for (const auto& a : acqs) {
        std::size_t s = sliceIndex[a.slice], f = frameIndex[{a.repetition, a.contrast}];
        groups[f * P.nslices + s].push_back(&a);
        if (!firstOfSlice[s]) firstOfSlice[s] = &a;
    }
    // sizes against the output format, the data present and the memory there is, before anything the
    // size of an image is allocated
    if (P.Nz * P.nslices > kNiftiMax || P.nframes > kNiftiMax)
        throw UsageError("'" + source + "' has " + std::to_string(P.Nz * P.nslices) + " planes (slices x z) and " +
                         std::to_string(P.nframes) + " frames (repetitions x contrasts); a NIfTI-1 image holds at most 32767 of each");
    for (const auto& g : groups) {
        std::size_t n1 = 0;
        for (auto* a : g) n1 += a->samples;
        P.n1total += n1;
        P.n1max = std::max(P.n1max, n1);
    }
    constexpr double kPixelsPerValue = 1024;  // far beyond any undersampling that reconstructs
    if (double(P.n2()) > kPixelsPerValue * double(P.n1total) * double(P.nc))
        throw UsageError(matrixField + " asks for " + std::to_string(P.n2()) + " pixels but '" + source + "' holds only " +
                         std::to_string(P.n1total * P.nc) + " measured values (" + std::to_string(P.n1total) +
                         " samples x " + std::to_string(P.nc) + " coils); forge-recon refuses more than 1024 pixels per value");
    check_memory(P, S, false);
    const double centreE1 = H.hasCenterE1 ? double(H.centerE1) : double(H.encodedMatrix[1] / 2);
    const double centreE2 = H.hasCenterE2 ? double(H.centerE2) : double(H.encodedMatrix[2] / 2);
    const double kmax[3] = {double(P.Nx) / 2, double(P.Ny) / 2, double(P.Nz) / 2};
    for (std::size_t f = 0; f < P.nframes; ++f)
        for (std::size_t s = 0; s < P.nslices; ++s) {
            const auto& g = groups[f * P.nslices + s];
            if (g.empty()) continue;
            Frame fr;
            fr.slice = s;
            fr.frame = f;
            std::size_t n1 = 0;
            for (auto* a : g) n1 += a->samples;
            fr.kx.set_size(n1);
            fr.ky.set_size(n1);
            fr.kz.zeros(n1);
            fr.t.set_size(n1);
            fr.y.set_size(n1 * P.nc);
            std::size_t off = 0;
            for (auto* a : g) {
                const double dwell = a->dwell_us * 1e-6;
                for (std::size_t j = 0; j < a->samples; ++j) {
                    double k[3] = {0, 0, 0};
                    if (useTraj) {
                        for (std::size_t d = 0; d < trajDims; ++d) {
                            const double v = a->traj[j * trajDims + d];
                            if (!(std::fabs(v) <= 0.5 + 1e-3))
                                throw UsageError("trajectory value " + std::to_string(v) +
                                                 " is outside ISMRMRD's normalised range [-0.5, 0.5] (k / encoded matrix size)");
                            k[d] = v * double(H.encodedMatrix[d]) * fovRatio[d];
                        }
                    } else {
                        k[0] = (double(j) - double(a->centerSample)) * fovRatio[0];
                        k[1] = (double(a->e1) - centreE1) * fovRatio[1];
                        if (is3D) k[2] = (double(a->e2) - centreE2) * fovRatio[2];
                    }
                    // keep inside [-N/2, N/2) (NUFFT convention), wrapping the +N/2 edge sample
                    for (int d = 0; d < 3; ++d)
                        if (kmax[d] >= 1 && k[d] >= kmax[d] && k[d] <= kmax[d] + 1e-6) k[d] -= 2 * kmax[d];
                    fr.kx[off + j] = float(k[0]);
                    fr.ky[off + j] = float(k[1]);
                    fr.kz[off + j] = float(k[2]);
                    fr.t[off + j] = float(TE + (double(j) - double(a->centerSample)) * dwell);
                    for (std::size_t c = 0; c < P.nc; ++c) fr.y[c * n1 + off + j] = a->data[c * a->samples + j];
                }
                off += a->samples;
            }
            P.frames.push_back(std::move(fr));
        }
    // pixel coordinates (FOV units)
    const std::size_t n2 = P.n2();
    P.ix.set_size(n2);
    P.iy.set_size(n2);
    P.iz.set_size(n2);
    for (std::size_t z = 0; z < P.Nz; ++z)
        for (std::size_t y = 0; y < P.Ny; ++y)
            for (std::size_t x = 0; x < P.Nx; ++x) {
                const std::size_t i = x + P.Nx * (y + P.Ny * z);
                P.ix[i] = float((double(x) - double(P.Nx / 2)) / double(P.Nx));
                P.iy[i] = float((double(y) - double(P.Ny / 2)) / double(P.Ny));
                P.iz[i] = P.Nz > 1 ? float((double(z) - double(P.Nz / 2)) / double(P.Nz)) : 0.0f;
            }
    P.affine = make_affine(P, firstOfSlice, is3D);
    return P;
}

// ------------------------------------------------------------------------------------------ solving
struct ReconOutput {
    std::vector<arma::fvec> magnitude;   // per frame (slice-major within frame order of P.frames)
    std::vector<arma::cx_fvec> complexImage;
    double seconds = 0;
};

template <typename Op>
arma::cx_fvec run_pcg(const Op& A, const arma::cx_fvec& y, std::size_t n2, const forge::Robject<float>& R,
                      const Settings& S, forge::io::Progress& prog, const std::string& label) {
    forge::PcgOptions<float> opts;
    opts.tolerance = static_cast<float>(S.tolerance);
    forge::SolverReport rep;
    const std::size_t niter = static_cast<std::size_t>(S.iterations);
    std::size_t last = 0;
    opts.callback = [&](const forge::PcgIterationInfo& i) {
        last = i.iteration;
        prog.iteration(label, i.iteration, niter, i.cost, i.gradient_norm);
    };
    arma::cx_fvec x;
    if (S.gpu) {
        forge::forgeCol<forge::forgeComplex<float>> x0(n2), yy(y);
        forge::forgeCol<float> W(y.n_elem, 1.0f);
        x0.putOnGPU();
        yy.putOnGPU();
        W.putOnGPU();
        auto xg = forge::solve_pwls_pcg<float>(x0, A, W, yy, R, niter, opts, &rep);
        xg.getFromGPU();
        x = xg.getArma();
    } else {
        arma::cx_fvec x0(n2, arma::fill::zeros);
        arma::fvec W(y.n_elem, arma::fill::ones);
        x = forge::solve_pwls_pcg<float>(x0, A, W, y, R, niter, opts, &rep);
    }
    prog.finish_solve(last, niter);
    if (rep.converged)
        prog.converged(label, rep.iterations,
                       rep.initial_gradient_norm > 0 ? rep.final_gradient_norm / rep.initial_gradient_norm : 0.0,
                       S.tolerance);
    return x;
}

std::unique_ptr<forge::Robject<float>> make_penalty(const Problem& P, const Settings& S, double dataCurvature,
                                                    double imageScale) {
    const float beta = static_cast<float>(S.beta * dataCurvature);
    if (S.penalty == "tv")
        return std::unique_ptr<forge::Robject<float>>(
            new forge::TVPenalty<float>(P.Nx, P.Ny, P.Nz, beta, static_cast<float>(S.delta * imageScale)));
    return std::unique_ptr<forge::Robject<float>>(new forge::QuadPenalty<float>(P.Nx, P.Ny, P.Nz, beta));
}

// Rough image scale for TV's delta: max |adjoint| / curvature.
template <typename Op>
double image_scale(const Op& A, const arma::cx_fvec& y, double curvature) {
    arma::cx_fvec back = A / y;
    return curvature > 0 ? double(arma::max(arma::abs(back))) / curvature : 1.0;
}

// Reconstructs one frame: SENSE when maps are there, otherwise coil by coil with root-sum-of-squares.
template <typename Enc>
arma::cx_fvec recon_frame(const Problem& P, const Frame& fr, const Enc& G, const Settings& S,
                          forge::io::Progress& prog, const std::string& label) {
    const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
    if (!P.smaps.empty()) {
        const arma::cx_fvec& maps = P.smaps[fr.slice];
        forge::SENSE<float, Enc> E(G, maps, P.nc);
        double energy = 0;
        for (std::size_t i = 0; i < maps.n_elem; ++i) energy += std::norm(maps[i]);
        const double curvature = double(n1) * energy / double(n2);
        const double scale = S.penalty == "tv" ? image_scale(E, fr.y, curvature) : 1.0;
        auto R = make_penalty(P, S, curvature, scale);
        return run_pcg(E, fr.y, n2, *R, S, prog, label);
    }
    arma::fvec sos(n2, arma::fill::zeros);
    for (std::size_t c = 0; c < P.nc; ++c) {
        arma::cx_fvec yc = fr.y.subvec(c * n1, (c + 1) * n1 - 1);
        const double curvature = double(n1);
        const double scale = S.penalty == "tv" ? image_scale(G, yc, curvature) : 1.0;
        auto R = make_penalty(P, S, curvature, scale);
        arma::cx_fvec xc = run_pcg(G, yc, n2, *R, S, prog, label + " coil " + std::to_string(c + 1));
        sos += arma::square(arma::abs(xc));
    }
    return arma::conv_to<arma::cx_fvec>::from(arma::sqrt(sos));
}

arma::cx_fvec recon_one(const Problem& P, const Frame& fr, bool fieldCorrection, const Settings& S,
                        forge::io::Progress& prog, const std::string& label) {
    const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
    if (S.op == "fft") {
        forge::GfftSampled<float> G(P.Nx, P.Ny, P.Nz, P.fftGrid[0], P.fftGrid[1], P.fftGrid[2], fr.kx, fr.ky, fr.kz);
        if (!fieldCorrection || P.fieldmap.empty()) return recon_frame(P, fr, G, S, prog, label);
#ifdef FORGE_RECON_HAVE_TIMESEG
        using TS = forge::TimeSegmentation<float, forge::GfftSampled<float>>;
        const arma::fvec& fmap = P.fieldmap[fr.slice];
        forge::uword L = static_cast<forge::uword>(S.segments);
        if (L == 0) L = TS::choose_segments(fmap, fr.t, 0.01, forge::TSInterp::MinMax, 64).L;
        TS T(G, fmap, fr.t, L, forge::TSInterp::MinMax);
        return recon_frame(P, fr, T, S, prog, label + " (L=" + std::to_string(L) + ")");
#else
        throw UsageError("--operator fft with a field map: this build has no TimeSegmentation");
#endif
    }
    if (S.op == "nufft") {
#ifdef FORGE_RECON_HAVE_NUFFT
        forge::Gnufft<float> G(n1, P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz);
        return recon_frame(P, fr, G, S, prog, label);
#else
        throw UsageError("--operator nufft: this build has no Gnufft");
#endif
    }
    if (S.op == "timeseg") {
#ifdef FORGE_RECON_HAVE_TIMESEG
        forge::Gnufft<float> G(n1, P.Nx, P.Ny, P.Nz, fr.kx, fr.ky, fr.kz);
        if (!fieldCorrection || P.fieldmap.empty()) return recon_frame(P, fr, G, S, prog, label);
        using TS = forge::TimeSegmentation<float, forge::Gnufft<float>>;
        const arma::fvec& fmap = P.fieldmap[fr.slice];
        forge::uword L = static_cast<forge::uword>(S.segments);
        if (L == 0) L = TS::choose_segments(fmap, fr.t, 0.01, forge::TSInterp::MinMax, 64).L;
        TS T(G, fmap, fr.t, L, forge::TSInterp::MinMax);
        return recon_frame(P, fr, T, S, prog, label + " (L=" + std::to_string(L) + ")");
#else
        throw UsageError("--operator timeseg: this build has no TimeSegmentation");
#endif
    }
    arma::fvec fm = (fieldCorrection && !P.fieldmap.empty()) ? P.fieldmap[fr.slice] : arma::fvec(n2, arma::fill::zeros);
    forge::Gdft<float> G(n1, n2, fr.kx, fr.ky, fr.kz, P.ix, P.iy, P.iz, fm, fr.t);
    return recon_frame(P, fr, G, S, prog, label);
}

// Reconstructs every frame; images ordered x, y, (z,) slice, frame.
ReconOutput reconstruct(const Problem& P, bool fieldCorrection, const Settings& S, forge::io::Progress& prog,
                        const std::string& tag) {
    ReconOutput out;
    const auto t0 = std::chrono::steady_clock::now();
    out.complexImage.assign(P.nslices * P.nframes, arma::cx_fvec(P.n2(), arma::fill::zeros));
    for (const auto& fr : P.frames) {
        std::string label = tag;
        if (P.nslices > 1) label += " slice " + std::to_string(fr.slice + 1) + "/" + std::to_string(P.nslices);
        if (P.nframes > 1) label += " frame " + std::to_string(fr.frame + 1) + "/" + std::to_string(P.nframes);
        out.complexImage[fr.frame * P.nslices + fr.slice] = recon_one(P, fr, fieldCorrection, S, prog, label);
    }
    for (const auto& c : out.complexImage) out.magnitude.push_back(arma::abs(c));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

std::size_t solves_per_recon(const Problem& P, const Settings& S) {
    return P.frames.size() * (P.smaps.empty() ? P.nc : 1) * static_cast<std::size_t>(S.iterations);
}

// NRMSE (after a least-squares scale fit of the magnitude) and PSNR against a reference, over all slices.
struct Quality {
    double nrmse = 0, psnr = 0;
};
Quality compare(const std::vector<arma::fvec>& img, const std::vector<arma::fvec>& ref) {
    double num = 0, den = 0;
    for (std::size_t s = 0; s < ref.size(); ++s) {
        num += arma::dot(arma::conv_to<arma::vec>::from(img[s]), arma::conv_to<arma::vec>::from(ref[s]));
        den += arma::dot(arma::conv_to<arma::vec>::from(img[s]), arma::conv_to<arma::vec>::from(img[s]));
    }
    const double a = den > 0 ? num / den : 0.0;
    double err = 0, energy = 0, peak = 0;
    std::size_t n = 0;
    for (std::size_t s = 0; s < ref.size(); ++s) {
        arma::vec d = a * arma::conv_to<arma::vec>::from(img[s]) - arma::conv_to<arma::vec>::from(ref[s]);
        err += arma::dot(d, d);
        energy += arma::dot(arma::conv_to<arma::vec>::from(ref[s]), arma::conv_to<arma::vec>::from(ref[s]));
        peak = std::max(peak, double(arma::max(ref[s])));
        n += ref[s].n_elem;
    }
    Quality q;
    q.nrmse = energy > 0 ? std::sqrt(err / energy) : 0.0;
    const double mse = err / double(std::max<std::size_t>(n, 1));
    q.psnr = mse > 0 ? 10.0 * std::log10(peak * peak / mse) : INFINITY;
    return q;
}

// ------------------------------------------------------------------------------------------ outputs
// The files a run writes. Each is written under a temporary name next to its final one; only when all
// are complete does commit() rename them into place, so a run that fails leaves every file that was
// there before it as it was. An existing file of the same name is replaced (and reported as such).
class OutputSet {
public:
    // Refuses output names that exist as something other than a file (a folder named mine.png).
    static void check_paths(const std::vector<std::string>& paths) {
        for (const auto& p : paths) {
            struct stat st;
            if (::stat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
                throw UsageError("output '" + p + "' exists and is " +
                                 (S_ISDIR(st.st_mode) ? "a folder" : "not a regular file") +
                                 "; remove it or choose another -o prefix");
        }
    }
    OutputSet() = default;
    OutputSet(const OutputSet&) = delete;
    OutputSet& operator=(const OutputSet&) = delete;
    ~OutputSet() {
        if (!committed_)
            for (const auto& o : outs_) std::remove(o.tmp.c_str());
    }
    // Registers 'path' and returns the temporary name to write it under.
    std::string stage(const std::string& path) {
        check_paths({path});
        outs_.push_back({path, forge::io::temporary_name(path), std::string(), false});
        return outs_.back().tmp;
    }
    // Renames every staged file into place. Earlier files are kept under a second name (a hard link,
    // no copy) until all renames have succeeded, so a failure part-way puts them back.
    void commit() {
        std::vector<std::string> finals;
        for (const auto& o : outs_) finals.push_back(o.path);
        check_paths(finals);
        for (auto& o : outs_) {
            o.existed = is_file(o.path);
            if (!o.existed) continue;
            o.backup = o.path + ".old" + std::to_string(static_cast<long>(::getpid()));
            std::remove(o.backup.c_str());
            if (::link(o.path.c_str(), o.backup.c_str()) != 0) o.backup.clear();
        }
        for (std::size_t i = 0; i < outs_.size(); ++i) {
            if (std::rename(outs_[i].tmp.c_str(), outs_[i].path.c_str()) == 0) continue;
            const std::string why = std::strerror(errno);
            for (std::size_t j = 0; j < outs_.size(); ++j) {
                const Output& o = outs_[j];
                if (j < i && !o.backup.empty()) std::rename(o.backup.c_str(), o.path.c_str());
                else if (j < i && !o.existed) std::remove(o.path.c_str());
                else if (!o.backup.empty()) std::remove(o.backup.c_str());
            }
            throw std::runtime_error("cannot rename '" + outs_[i].tmp + "' into '" + outs_[i].path + "': " + why);
        }
        for (const auto& o : outs_)
            if (!o.backup.empty()) std::remove(o.backup.c_str());
        committed_ = true;
    }
    // The final names in the order staged, each marked when it replaced an earlier file.
    std::vector<std::string> report() const {
        std::vector<std::string> r;
        for (const auto& o : outs_) r.push_back(o.path + (o.existed ? " (replaced an existing file)" : ""));
        return r;
    }

private:
    struct Output {
        std::string path, tmp, backup;
        bool existed = false;
    };
    std::vector<Output> outs_;
    bool committed_ = false;
};

void check_output_prefix(const std::string& prefix) {
    auto slash = prefix.rfind('/');
    std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
    if (dir.empty()) dir = "/";
    if (!is_dir(dir)) throw UsageError("output folder '" + dir + "' does not exist");
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError("output folder '" + dir + "' is not writable");
    if (slash != std::string::npos && slash + 1 == prefix.size())
        throw UsageError("output '" + prefix + "' names a folder; give a file prefix such as " + prefix + "recon");
}

// Volume (x, y, slices*Nz, frames) of magnitudes or complex values.
template <typename T>
std::vector<T> volume(const Problem& P, const std::vector<arma::cx_fvec>& imgs, bool complexOut);
template <>
std::vector<float> volume(const Problem& P, const std::vector<arma::cx_fvec>& imgs, bool) {
    std::vector<float> v;
    v.reserve(P.n2() * imgs.size());
    for (const auto& im : imgs)
        for (std::size_t i = 0; i < im.n_elem; ++i) v.push_back(std::abs(im[i]));
    return v;
}
template <>
std::vector<cxf> volume(const Problem& P, const std::vector<arma::cx_fvec>& imgs, bool) {
    std::vector<cxf> v;
    v.reserve(P.n2() * imgs.size());
    for (const auto& im : imgs) v.insert(v.end(), im.begin(), im.end());
    return v;
}

void write_image(const std::string& path, const Problem& P, const std::vector<arma::cx_fvec>& imgs, bool complexOut,
                 OutputSet& outs, const std::string& descr) {
    const std::array<std::size_t, 4> dims{{P.Nx, P.Ny, P.Nz * P.nslices, imgs.size() / P.nslices}};
    const std::string tmp = outs.stage(path);
    if (complexOut)
        forge::io::write_nifti(tmp, volume<cxf>(P, imgs, true), dims, P.affine, descr);
    else
        forge::io::write_nifti(tmp, volume<float>(P, imgs, false), dims, P.affine, descr);
}

// Tiles of the 2D slices (of every Nz plane) of the first frame of several images, one row per image set.
forge::io::Montage montage(const Problem& P, const std::vector<std::vector<arma::fvec>>& sets) {
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
    if (S.gpu) return std::string("GPU (") + forge::device::device_name() + ")";
    return "CPU";
}

void resolve_device(Settings& S) {
    const bool have = forge::device::built_with_cuda() && forge::device::available();
    if (S.device == "gpu") {
        if (!forge::device::built_with_cuda()) throw UsageError("--device gpu: this forge-recon was built without CUDA");
        if (!have) throw UsageError("--device gpu: no usable CUDA device was found");
        S.gpu = true;
    } else if (S.device == "auto") {
        S.gpu = have;
    } else {
        S.gpu = false;
    }
}

// Loads maps and the reference named on the command line or stored in the ISMRMRD file itself
// (/dataset/csm, /dataset/fieldmap, /dataset/phantom: the layout ismrmrd_generate_cartesian_shepp_logan
// and forge-recon --demo write).
void attach_maps(Problem& P, const Settings& S, const std::string& mrdPath) {
    const std::string g = "/" + S.group + "/";
    using forge::io::DimsCheck;
    auto from_spec = [](const std::string& spec, const std::string& what) {
        return [spec, what](const DimsCheck& c) { return load_map(spec, what, c); };
    };
    auto from_input = [&mrdPath](const std::string& object) {
        return [&mrdPath, object](const DimsCheck& c) { return forge::io::read_hdf5_array(mrdPath, object, c); };
    };
    // 'none': neither a file nor the map stored in the input
    if (S.smaps == "none") {
    } else if (!S.smaps.empty()) {
        attach_smaps(P, S, from_spec(S.smaps, "sensitivity maps"), "'" + S.smaps + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "csm")) {
        attach_smaps(P, S, from_input(g + "csm"), "(" + g + "csm in the input)");
    }
    if (S.fieldmap == "none") {
    } else if (!S.fieldmap.empty()) {
        attach_fieldmap(P, from_spec(S.fieldmap, "field map"), "'" + S.fieldmap + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "fieldmap")) {
        attach_fieldmap(P, from_input(g + "fieldmap"), "(" + g + "fieldmap in the input)");
    }
    if (S.reference == "none") {
    } else if (!S.reference.empty()) {
        attach_reference(P, from_spec(S.reference, "reference image"), "'" + S.reference + "'");
    } else if (!mrdPath.empty() && forge::io::hdf5_has_object(mrdPath, g + "phantom")) {
        attach_reference(P, from_input(g + "phantom"), "(" + g + "phantom in the input)");
    }
}

// ------------------------------------------------------------------------------------------ operator choice
// The FFT grid on whose k-space lattice every sample of every frame lies, per axis the first that fits of:
// the recon grid itself (k integer in cycles per recon FOV), and the encoded FOV's grid at the recon pixel
// size (M = N * encodedFOV / reconFOV: ISMRMRD's readout oversampling puts k on half-integers, M = 2N).
// {0, 0, 0} when none fits (non-Cartesian data): then the FFT cannot reproduce the exact model.
std::array<std::size_t, 3> fft_grid(const Problem& P) {
    const std::size_t N[3] = {P.Nx, P.Ny, P.Nz};
    std::array<std::size_t, 3> M{{0, 0, 0}};
    for (int d = 0; d < 3; ++d) {
        std::vector<std::size_t> candidates{N[d]};
        const double enc = double(N[d]) / P.fovRatio[d];
        const std::size_t Me = static_cast<std::size_t>(std::llround(enc));
        if (N[d] > 1 && std::fabs(enc - double(Me)) < 1e-6 && Me > N[d] && Me % 2 == 0) candidates.push_back(Me);
        for (std::size_t m : candidates) {
            std::size_t n[3] = {1, 1, 1}, g[3] = {1, 1, 1};  // this axis only: the others are ignored
            n[d] = N[d];
            g[d] = m;
            bool ok = true;
            for (const auto& fr : P.frames)
                if (!forge::GfftSampled<float>::on_grid(n[0], n[1], n[2], g[0], g[1], g[2], fr.kx, fr.ky, fr.kz)) {
                    ok = false;
                    break;
                }
            if (ok) {
                M[d] = m;
                break;
            }
        }
        if (M[d] == 0) return {{0, 0, 0}};
    }
    return M;
}

// Sample-pixel products of one reconstruction with the exact DFT: forward and adjoint, every coil, frame
// and iteration. --operator auto takes the DFT for non-Cartesian data while this is at most
// kDftAutoLimit (CPU) / kDftAutoLimitGpu: about 20 s at the throughputs below.
constexpr double kDftAutoLimit = 2e10, kDftAutoLimitGpu = 4e12;
double dft_cost(const Problem& P, const Settings& S) {
    double c = 0;
    for (const auto& fr : P.frames) c += double(fr.kx.n_elem) * double(P.n2()) * double(P.nc);
    return 2.0 * double(S.iterations) * c;
}

// Rough solve time (seconds) of one reconstruction with an operator: throughputs measured with forge-recon
// on a 2-core Xeon and on an H100 (docs/forge-recon.md); good to a factor of a few, which is all the
// operator choice and the long-run notice need.
double estimate_seconds(const Problem& P, const Settings& S, const std::string& op) {
    const double dftRate = S.gpu ? 2e11 : 1e9;  // sample-pixel products per second
    const double fftRate = S.gpu ? 2e11 : 1e9;  // 5 N log2 N FFT flops (and gridding work) per second
    if (op == "dft") return dft_cost(P, S) / dftRate;
    const double dims = P.Nz > 1 ? 3 : 2;
    double perIter = 0;
    for (const auto& fr : P.frames) {
        const double n1 = double(fr.kx.n_elem);
        double grid = double(P.n2()), extra = 2 * n1;
        if (op == "fft") {
            grid = double(P.fftGrid[0] * P.fftGrid[1] * P.fftGrid[2]);
        } else {  // nufft, timeseg: 2x oversampled grid, 5^d kernel taps per sample
            grid *= std::pow(2.0, dims);
            extra = 8 * n1 * std::pow(5.0, dims);
        }
        double segs = 1;
        if (op == "timeseg" && !P.fieldmap.empty() && !S.noFieldCorrection) segs = S.segments > 0 ? S.segments + 1 : 9;
        perIter += segs * double(P.nc) * 2 * (5 * grid * std::log2(std::max(grid, 2.0)) + extra);
    }
    return double(S.iterations) * perIter / fftRate;
}

// Resolves --operator auto (rule in docs/forge-recon.md): data on an FFT grid -> fft (the exact model at
// FFT cost); otherwise the exact DFT while its cost is small, else the time-segmented NUFFT. Checks that
// an explicit --operator fft fits the data.
void resolve_operator(Problem& P, Settings& S) {
    P.fftGrid = fft_grid(P);
    const bool onGrid = P.fftGrid[0] > 0;
    const std::string grid = std::to_string(P.fftGrid[0]) + "x" + std::to_string(P.fftGrid[1]) + "x" +
                             std::to_string(P.fftGrid[2]);
    if (S.op == "fft" && !onGrid)
        throw UsageError("--operator fft: the samples are not on the k-space grid of an FFT (neither the recon grid "
                         "nor the encoded FOV's grid); use --operator dft, timeseg or nufft");
    if (S.op != "auto") return;
    if (onGrid) {
        S.op = "fft";
        S.opReason = "the samples lie on the " + grid + " FFT grid";
        return;
    }
    const double cost = dft_cost(P, S), limit = S.gpu ? kDftAutoLimitGpu : kDftAutoLimit;
    char buf[160];
    std::snprintf(buf, sizeof buf, "non-Cartesian, DFT cost %.1e sample-pixel products %s %.0e", cost,
                  cost <= limit ? "<=" : ">", limit);
    S.opReason = buf;
#ifdef FORGE_RECON_HAVE_TIMESEG
    S.op = cost <= limit ? "dft" : "timeseg";
#else
    S.op = "dft";
#endif
}

// Before a long run (estimated over a minute) says how long, and which operator would be faster.
void notice_long_run(const Problem& P, const Settings& S, int reconstructions) {
    const double est = reconstructions * estimate_seconds(P, S, S.op);
    if (est <= 60) return;
    std::string faster = P.fftGrid[0] ? "fft" : "timeseg";
#ifndef FORGE_RECON_HAVE_TIMESEG
    if (!P.fftGrid[0]) faster = "dft";
#endif
    char buf[400];
    std::snprintf(buf, sizeof buf, "--operator %s will take about %.0f s on %s (estimate)", S.op.c_str(), est,
                  device_description(S).c_str());
    std::string msg = buf;
    const double alt = reconstructions * estimate_seconds(P, S, faster);
    if (faster != S.op && alt < est) {
        std::snprintf(buf, sizeof buf, "; --operator %s takes about %.2g s%s", faster.c_str(), alt,
                      faster == "fft" ? " for the same exact model (the samples lie on an FFT grid)"
                                      : " (NUFFT, time-segmented field correction: about 1% operator error)");
        msg += buf;
    }
    warn(msg);
}

// ------------------------------------------------------------------------------------------ file mode
int run_file(Settings& S) {
    const auto t0 = std::chrono::steady_clock::now();
    if (S.output.empty()) {
        std::string base = S.input;
        auto slash = base.rfind('/');
        if (slash != std::string::npos) base = base.substr(slash + 1);
        auto dot = base.rfind('.');
        if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
        S.output = base + "_recon";
    }
    check_output_prefix(S.output);
    OutputSet::check_paths({S.output + ".nii", S.output + ".png"});
    forge::io::MrdFile F;
    try {
        F = forge::io::read_mrd(S.input, S.group);
    } catch (const UsageError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
    Problem P = build_problem(F, S, S.input);
    attach_maps(P, S, S.input);
    resolve_device(S);
    resolve_operator(P, S);
    const double tRead = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const bool correct = !P.fieldmap.empty() && !S.noFieldCorrection;
    note("forge-recon: " + S.input + ": " + std::to_string(F.acquisitions.size()) + " acquisitions, " +
             std::to_string(P.nc) + " coils, " + std::to_string(P.nslices) + " slice(s), " + std::to_string(P.nframes) +
             " frame(s), image " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz) +
             ", trajectory " + F.header.trajectory + (F.acquisitions.front().trajDims && !S.cartesian ? " (from the acquisitions)" : " (from the encoding counters)"),
         S.quiet);
    if (P.smaps.empty()) {
        warn("no sensitivity maps: reconstructing each coil and combining by root-sum-of-squares" +
             std::string(P.accel > 1 ? " (the data are undersampled, expect aliasing)" : ""));
    }
    if (P.fieldmap.empty()) note("forge-recon: no field map: no off-resonance correction", S.quiet);
    if (correct && S.op == "nufft") warn("--operator nufft has no field correction: the field map is ignored");
    if (correct && !F.header.hasTE) warn("the header has no echo time (TE): sample times start at 0");
    note(std::string("forge-recon: operator ") + S.op + (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") +
             (P.smaps.empty() ? "" : " + SENSE") + ", penalty " + S.penalty + " beta " + std::to_string(S.beta) + ", " +
             std::to_string(S.iterations) + " iterations on " + device_description(S),
         S.quiet);
    notice_long_run(P, S, 1);

    forge::io::Progress prog(solves_per_recon(P, S), S.quiet);
    ReconOutput R = reconstruct(P, correct && S.op != "nufft", S, prog, "recon");

    OutputSet outs;
    write_image(S.output + ".nii", P, R.complexImage, S.complexOut, outs, "forge-recon");
    std::vector<std::vector<arma::fvec>> sets{{R.magnitude.begin(), R.magnitude.begin() + P.nslices}};
    forge::io::write_png_montage(outs.stage(S.output + ".png"), montage(P, sets), display_scale(sets[0]));
    outs.commit();

    std::printf("forge-recon: reconstruction %.2f s (reading %.2f s) on %s\n", R.seconds, tRead,
                device_description(S).c_str());
    if (!P.reference.empty()) {
        std::vector<arma::fvec> first(R.magnitude.begin(), R.magnitude.begin() + P.nslices);
        Quality q = compare(first, P.reference);
        std::printf("forge-recon: NRMSE vs reference %.6f  PSNR %.2f dB\n", q.nrmse, q.psnr);
        for (std::size_t f = 1; f < P.nframes; ++f) {
            std::vector<arma::fvec> fr(R.magnitude.begin() + f * P.nslices, R.magnitude.begin() + (f + 1) * P.nslices);
            Quality qf = compare(fr, P.reference);
            std::printf("forge-recon: frame %zu NRMSE vs reference %.6f  PSNR %.2f dB\n", f + 1, qf.nrmse, qf.psnr);
        }
    }
    for (const auto& f : outs.report()) std::printf("forge-recon: wrote %s\n", f.c_str());
    return 0;
}

// ------------------------------------------------------------------------------------------ demo
struct Ellipse {
    double value, a, b, x0, y0, phi_deg;
};

// Modified Shepp-Logan (Toft) in FOV units (the phantom spans [-0.5, 0.5)^2), with a slice-dependent
// scaling and a small bright marker at (+0.25, -0.30) that shows the orientation.
arma::fvec demo_phantom(std::size_t N, std::size_t slice, std::size_t nslices) {
    const double sc = 0.46;  // ellipse units [-1, 1] -> FOV units
    const double shrink = 1.0 - 0.08 * (nslices > 1 ? double(slice) / double(nslices - 1) : 0.0);
    std::vector<Ellipse> E = {{1.0, .69, .92, 0, 0, 0},        {-.8, .6624, .874, 0, -.0184, 0},
                              {-.2, .11, .31, .22, 0, -18},     {-.2, .16, .41, -.22, 0, 18},
                              {.1, .21, .25, 0, .35, 0},        {.1, .046, .046, 0, .1, 0},
                              {.1, .046, .046, 0, -.1, 0},      {.1, .046, .023, -.08, -.605, 0},
                              {.1, .023, .023, 0, -.606, 0},    {.1, .023, .046, .06, -.605, 0}};
    arma::fvec img(N * N, arma::fill::zeros);
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
            double v = 0;
            for (const auto& e : E) {
                const double c = std::cos(e.phi_deg * M_PI / 180), s = std::sin(e.phi_deg * M_PI / 180);
                const double u = px / (sc * shrink) - e.x0, w = py / (sc * shrink) - e.y0;
                const double xr = c * u + s * w, yr = -s * u + c * w;
                // smooth edge (about one pixel wide), so the object is nearly band-limited to the
                // k-space disc the spiral covers
                const double rho = std::sqrt((xr * xr) / (e.a * e.a) + (yr * yr) / (e.b * e.b));
                const double dpix = (rho - 1.0) * std::min(e.a, e.b) * sc * shrink * double(N);
                v += e.value * 0.5 * (1.0 - std::tanh(dpix / 0.8));
            }
            const double mx = px - 0.25, my = py + 0.30;  // orientation marker
            const double dm = (std::sqrt(mx * mx + my * my) - 0.045) * double(N);
            const double wm = 0.5 * (1.0 - std::tanh(dm / 0.8));
            v = v * (1.0 - wm) + 1.0 * wm;
            img[x + N * y] = float(v);
        }
    return img;
}

// Smooth coil sensitivities of nc loops on a circle of radius 0.7 FOV around the object.
arma::cx_fvec demo_smaps(std::size_t N, std::size_t nc, std::size_t slice) {
    arma::cx_fvec m(N * N * nc);
    for (std::size_t c = 0; c < nc; ++c) {
        const double ang = 2 * M_PI * double(c) / double(nc) + 0.1 * double(slice);
        const double cx = 0.7 * std::cos(ang), cy = 0.7 * std::sin(ang);
        for (std::size_t y = 0; y < N; ++y)
            for (std::size_t x = 0; x < N; ++x) {
                const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
                const double d2 = (px - cx) * (px - cx) + (py - cy) * (py - cy);
                const double mag = 1.0 / (1.0 + d2 / 0.25);
                const double ph = ang + 2.0 * (px * std::cos(ang) + py * std::sin(ang));
                m[c * N * N + x + N * y] = cxf(float(mag * std::cos(ph)), float(mag * std::sin(ph)));
            }
    }
    return m;
}

// Field map (rad/s): two Gaussian off-resonance blobs and a linear shim term.
arma::fvec demo_fieldmap(std::size_t N, std::size_t slice) {
    arma::fvec fm(N * N);
    const double sh = 0.03 * double(slice);
    for (std::size_t y = 0; y < N; ++y)
        for (std::size_t x = 0; x < N; ++x) {
            const double px = (double(x) - double(N / 2)) / double(N), py = (double(y) - double(N / 2)) / double(N);
            const double b1 = std::exp(-((px - 0.10 - sh) * (px - 0.10 - sh) + (py - 0.15) * (py - 0.15)) / (2 * 0.12 * 0.12));
            const double b2 = std::exp(-((px + 0.15) * (px + 0.15) + (py + 0.10 + sh) * (py + 0.10 + sh)) / (2 * 0.15 * 0.15));
            const double hz = 70.0 * b1 - 50.0 * b2 + 30.0 * px;
            fm[x + N * y] = float(2 * M_PI * hz);
        }
    return fm;
}

int run_demo(Settings& S) {
    const auto tStart = std::chrono::steady_clock::now();
    if (S.output.empty()) {  // a folder of its own, not the current one (often the repository root)
        S.output = "forge_demo/demo";
        if (!is_dir("forge_demo") && ::mkdir("forge_demo", 0777) != 0)
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
            a.traj.resize(2 * nsamp);
            for (std::size_t j = 0; j < nsamp; ++j) {
                const double tau = double(j) / double(nsamp);
                const double r = 0.5 * tau;  // normalised units: |k| / N up to 0.5
                const double th = 2 * M_PI * double(turns) * tau + 2 * M_PI * double(sh) / double(shots);
                a.traj[2 * j] = float(r * std::cos(th));
                a.traj[2 * j + 1] = float(r * std::sin(th));
            }
            a.data.assign(nsamp * nc, cxf(0, 0));
            F.acquisitions.push_back(std::move(a));
        }
    Problem P = build_problem(F, S, "demo");
    // truth, maps
    std::vector<arma::fvec> truth(ns), fms(ns);
    std::vector<arma::cx_fvec> maps(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        truth[s] = demo_phantom(N, s, ns);
        maps[s] = demo_smaps(N, nc, s);
        fms[s] = demo_fieldmap(N, s);
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
            xg.putOnGPU();
            forge::forgeCol<forge::forgeComplex<float>> yg = E * xg;
            yg.getFromGPU();
            y = yg.getArma();
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
    const double tSim = std::chrono::duration<double>(std::chrono::steady_clock::now() - tSim0).count();
    P.fieldmap = fms;
    P.smaps = maps;
    P.reference = truth;
    resolve_operator(P, S);

    note("forge-recon --demo: " + std::to_string(N) + "x" + std::to_string(N) + " x " + std::to_string(ns) +
             " slices, " + std::to_string(nc) + " coils, spiral " + std::to_string(shots) + " x " +
             std::to_string(nsamp) + " samples (" + std::to_string(int(std::lround(dwell_us * nsamp / 1000))) +
             " ms readout), field map up to " +
             std::to_string(int(std::lround(double(arma::max(arma::abs(arma::join_cols(fms[0], fms.back())))) / (2 * M_PI)))) +
             " Hz, simulated with Gdft in " + std::to_string(tSim).substr(0, 5) + " s on " + device_description(S),
         S.quiet);
    note("forge-recon: operator " + S.op + (S.opReason.empty() ? "" : " (auto: " + S.opReason + ")") + " + SENSE",
         S.quiet);
    notice_long_run(P, S, 2);

    forge::io::Progress prog(2 * solves_per_recon(P, S), S.quiet);
    ReconOutput U = reconstruct(P, false, S, prog, "uncorrected");
    ReconOutput C = reconstruct(P, true, S, prog, "field-corrected");
    Quality qu = compare(U.magnitude, truth), qc = compare(C.magnitude, truth);

    // outputs
    OutputSet outs;
    std::vector<arma::cx_fvec> truthC, fmC;
    for (std::size_t s = 0; s < ns; ++s) {
        truthC.push_back(arma::conv_to<arma::cx_fvec>::from(truth[s]));
        fmC.push_back(arma::conv_to<arma::cx_fvec>::from(fms[s] / float(2 * M_PI)));
    }
    write_image(S.output + "_truth.nii", P, truthC, false, outs, "forge demo truth");
    write_image(S.output + "_uncorrected.nii", P, U.complexImage, S.complexOut, outs, "forge demo uncorrected");
    write_image(S.output + "_corrected.nii", P, C.complexImage, S.complexOut, outs, "forge demo field-corrected");
    {
        std::vector<float> v;
        for (auto& f : fms) v.insert(v.end(), f.begin(), f.end());
        forge::io::write_nifti(outs.stage(S.output + "_fieldmap.nii"), v, {{N, N, ns, 1}}, P.affine, "field map rad/s");
    }
    const float scale = display_scale(truth);
    forge::io::write_png_montage(outs.stage(S.output + "_comparison.png"), montage(P, {truth, U.magnitude, C.magnitude}), scale);
    forge::io::write_png_montage(outs.stage(S.output + "_corrected.png"), montage(P, {C.magnitude}), scale);
    // ISMRMRD file with the maps and the truth, so 'forge-recon <prefix>.h5' reproduces the corrected image
    {
        std::vector<forge::io::MrdNamedArray> arrays(3);
        arrays[0].name = "csm";
        arrays[0].dims = {N, N, ns, nc};
        arrays[0].data.resize(N * N * ns * nc);
        for (std::size_t c = 0; c < nc; ++c)
            for (std::size_t s = 0; s < ns; ++s)
                for (std::size_t k = 0; k < N * N; ++k) arrays[0].data[(c * ns + s) * N * N + k] = maps[s][c * N * N + k];
        arrays[1].name = "fieldmap";
        arrays[1].dims = {N, N, ns};
        arrays[2].name = "phantom";
        arrays[2].dims = {N, N, ns};
        for (std::size_t s = 0; s < ns; ++s)
            for (std::size_t k = 0; k < N * N; ++k) {
                arrays[1].data.push_back(cxf(fms[s][k], 0));
                arrays[2].data.push_back(cxf(truth[s][k], 0));
            }
        forge::io::write_mrd(outs.stage(S.output + ".h5"), forge::io::make_mrd_header_xml(H, "forge-demo"), F.acquisitions,
                             arrays, S.group);
    }
    outs.commit();

    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - tStart).count();
    std::printf("forge-recon --demo results (%s, operator %s, %d iterations, penalty %s beta %g)\n",
                device_description(S).c_str(), S.op.c_str(), S.iterations, S.penalty.c_str(), S.beta);
    std::printf("  uncorrected      NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qu.nrmse, qu.psnr, U.seconds);
    std::printf("  field-corrected  NRMSE %.6f  PSNR %6.2f dB  time %6.2f s\n", qc.nrmse, qc.psnr, C.seconds);
    std::printf("  NRMSE improvement %.2fx   simulation %.2f s   total %.2f s\n", qc.nrmse > 0 ? qu.nrmse / qc.nrmse : 0.0,
                tSim, total);
    for (const auto& f : outs.report()) std::printf("forge-recon: wrote %s\n", f.c_str());
    std::printf("forge-recon: reproduce the corrected image with: forge-recon %s.h5\n", S.output.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Line-buffered even into a pipe or a log file: a long run shows its summary at once, and a killed
    // run keeps the lines saying what it was reconstructing.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Settings S;
    CLI::App app{"forge-recon: iterative MRI reconstruction (ISMRMRD in, NIfTI and PNG out)", "forge-recon"};
    app.add_option("input", S.input, "ISMRMRD (MRD) HDF5 raw data file");
    app.add_flag("--demo", S.demo, "synthesise a phantom, simulate spiral data with a field map, reconstruct with and without field correction");
    app.add_option("-o,--output", S.output, "output prefix: writes PREFIX.nii and PREFIX.png (demo: PREFIX_*.nii/png and PREFIX.h5; default forge_demo/demo)");
    app.add_option("--operator", S.op,
                   "encoding operator: auto (default: fft for samples on an FFT grid, else dft when cheap, else "
                   "timeseg), fft (Cartesian: exact at FFT cost; time-segmented field correction), dft (exact, "
                   "field-corrected), nufft (no field correction) or timeseg (NUFFT with time-segmented field "
                   "correction)")
        ->check(CLI::IsMember({"auto", "fft", "dft", "nufft", "timeseg"}));
    app.add_option("-L,--segments", S.segments,
                   "timeseg, and fft with a field map: number of time segments L (default: the smallest L with "
                   "an estimated RMS error of at most 1%)")
        ->check(CLI::Range(0, 256));
    app.add_option("--penalty", S.penalty, "regulariser: quad (Tikhonov on finite differences) or tv")
        ->check(CLI::IsMember({"quad", "tv"}));
    app.add_option("--beta", S.beta, "penalty weight, relative to the data term's curvature (default 1e-3)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--delta", S.delta, "TV smoothing threshold, relative to the image scale (default 0.05)")
        ->check(CLI::PositiveNumber);
    app.add_option("-n,--iterations", S.iterations, "conjugate-gradient iterations (default 10)")
        ->check(CLI::Range(1, 10000));
    app.add_option("--tolerance", S.tolerance,
                   "stop a solve early once ||gradient|| <= TOL * ||initial gradient|| (default 0: run all iterations)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--device", S.device, "cpu, gpu or auto (GPU when one is usable; default)")
        ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
    app.add_option("--fieldmap", S.fieldmap, "field map in rad/s: FILE.nii or FILE.h5:/dataset (default: <group>/fieldmap in the input); none: no field map");
    app.add_option("--smaps", S.smaps, "coil sensitivity maps: FILE.nii or FILE.h5:/dataset (default: <group>/csm in the input); none: coil by coil, root-sum-of-squares");
    app.add_option("--reference", S.reference, "reference image for NRMSE/PSNR: FILE.nii or FILE.h5:/dataset (default: <group>/phantom in the input); none: no comparison");
    app.add_flag("--no-field-correction", S.noFieldCorrection, "ignore the field map");
    app.add_flag("--complex", S.complexOut, "write complex64 NIfTI instead of magnitude float32");
    app.add_flag("--cartesian", S.cartesian, "take k-space from the encoding counters even when the acquisitions carry trajectories");
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
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "forge-recon: error: %s (see forge-recon --help)\n", e.what());
        return 2;
    }
    try {
        forge::io::quiet_hdf5_errors();
        if (S.demo) {
            if (!S.input.empty()) throw UsageError("--demo takes no input file (got '" + S.input + "')");
            return run_demo(S);
        }
        if (S.input.empty()) throw UsageError("no input file given (try forge-recon --demo, or forge-recon --help)");
        return run_file(S);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "forge-recon: error: %s\n", e.what());
        return 2;
    } catch (const forge::invalid_argument& e) {
        std::fprintf(stderr, "forge-recon: error: %s\n", e.what());
        return 2;
    } catch (const forge::io::input_error& e) {
        std::fprintf(stderr, "forge-recon: error: %s\n", e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        // the size checks estimate from below: an input can still be too large for this machine
        std::fprintf(stderr, "forge-recon: error: out of memory: %s is too large for the memory available\n",
                     S.input.empty() ? "the demo" : ("'" + S.input + "'").c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "forge-recon: error: %s\n", e.what());
        return 1;
    }
}
