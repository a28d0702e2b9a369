#include "forge/IO/MrdProblem.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include <sys/stat.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"
#include "forge/IO/Cfl.h"
#include "forge/IO/ImageGeometry.h"
#include "forge/IO/Nifti.h"

namespace forge {
namespace io {

namespace {

// The pages of a new array of 'bytes' at 'p' made resident in one system call, where Linux has MADV_POPULATE_WRITE
// (5.14 on), before the samples are copied in: the copy into a 256x256 x 16-coil slice's 12 MB otherwise takes a page
// fault for every 4 KB (3072, 3.3 us each on an H200's host: 10 ms; 7.7 ms with this). Nothing where it is refused.
void populate(void* p, std::size_t bytes) {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    if (bytes < (std::size_t(1) << 20)) return;  // a few pages: the faults cost less than the call
    const long pageSize = sysconf(_SC_PAGESIZE);
    if (pageSize <= 0) return;
    const std::uintptr_t page = std::uintptr_t(pageSize), begin = std::uintptr_t(p);
    const std::uintptr_t first = (begin + page - 1) / page * page, end = (begin + bytes) / page * page;
    if (end > first) (void)madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

using cxf = std::complex<float>;

// Whether every value is finite; on the threads for a slice's worth of samples (forge::detail::parallel_pass).
bool all_finite(const std::vector<cxf>& data) {
    const float* v = reinterpret_cast<const float*>(data.data());
    const long long n = static_cast<long long>(2 * data.size());
    const bool fork = forge::detail::parallel_pass(data.size(), sizeof(cxf));
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (fork)
    for (long long i = 0; i < n; ++i) bad |= !std::isfinite(v[i]);
    return bad == 0;
}

bool is_file(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dims_string(const std::vector<std::size_t>& d) {
    std::ostringstream s;
    std::size_t last = d.size();
    while (last > 1 && d[last - 1] == 1) --last;
    for (std::size_t i = 0; i < last; ++i) s << (i ? "x" : "") << d[i];
    return s.str();
}

// Checks map dims (x, y, then 'rest' values in any trailing shape) and splits per slice.
void check_map_dims(const std::vector<std::size_t>& dims, const recon::ReconProblem& P, std::size_t perPixel,
                    const std::string& what, const std::string& expected) {
    std::size_t rest = 1;
    for (std::size_t k = 2; k < dims.size(); ++k) rest *= dims[k];
    if (dims.size() < 2 || dims[0] != P.Nx || dims[1] != P.Ny || rest != P.Nz * P.nslices * perPixel) {
        throw forge::invalid_argument(what + " has size " + dims_string(dims) + " but this reconstruction needs " +
                                      expected);
    }
}

// NaN or Inf in a map would turn the whole image into NaN (or stop the solver): refused by name.
void check_finite(const Array& a, const std::string& what) {
    for (std::size_t i = 0; i < a.data.size(); ++i)
        if (!std::isfinite(a.data[i].real()) || !std::isfinite(a.data[i].imag()))
            throw forge::invalid_argument(what + " holds a non-finite value (NaN or Inf) at index " +
                                          std::to_string(i));
}

}  // namespace

// "file.nii" | "file.cfl" | "file.h5:/path/in/file" -> array (dims fastest first); 'check' sees the dims before the
// values are read.
Array load_map(const std::string& spec, const std::string& what, const DimsCheck& check) {
    auto ends_with = [](const std::string& s, const std::string& e) {
        return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
    };
    if (ends_with(spec, ".nii")) {
        if (!is_file(spec)) throw forge::invalid_argument(what + " file '" + spec + "' does not exist");
        auto v = read_nifti(spec, check);
        Array a;
        a.dims.assign(v.dims.begin(), v.dims.end());
        a.data = std::move(v.data);
        a.is_complex = v.is_complex;
        return a;
    }
    if (ends_with(spec, ".cfl") || ends_with(spec, ".hdr")) {  // BART's array, its dims as they are
        if (!is_file(cfl_base(spec) + ".hdr"))
            throw forge::invalid_argument(what + " file '" + cfl_base(spec) + ".hdr' does not exist");
        CflArray c = read_cfl(spec, check);
        Array a;
        a.dims.assign(c.dims.begin(), c.dims.end());
        a.data.assign(c.data.begin(), c.data.end());
        a.is_complex = true;
        return a;
    }
    std::string file = spec, object;
    auto colon = spec.rfind(':');
    if (colon != std::string::npos && colon > 0) {
        file = spec.substr(0, colon);
        object = spec.substr(colon + 1);
    }
    if (!is_file(file)) throw forge::invalid_argument(what + " file '" + file + "' does not exist");
    if (object.empty())
        throw forge::invalid_argument(what + " '" + spec + "': give a .nii file or FILE.h5:/path/to/dataset");
    return read_hdf5_array(file, object, check);
}

void attach_field_map(recon::ReconProblem& P, const MapLoader& load, const std::string& origin) {
    const std::string expected = std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                 std::to_string(P.Nz * P.nslices) + " (x, y, slices) in rad/s";
    const Array a =
        load([&](const std::vector<std::size_t>& d) { check_map_dims(d, P, 1, "field map " + origin, expected); });
    check_finite(a, "field map " + origin);
    P.field_map.assign(P.nslices, arma::fvec(P.n2()));
    for (std::size_t s = 0; s < P.nslices; ++s)
        for (std::size_t k = 0; k < P.n2(); ++k) P.field_map[s][k] = static_cast<float>(a.data[s * P.n2() + k].real());
}

void attach_smaps(recon::ReconProblem& P, const MapLoader& load, const std::string& origin,
                  const MrdProblemOptions& options) {
    const std::string expected = std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                 std::to_string(P.Nz * P.nslices) + "x" + std::to_string(P.nc) +
                                 " (x, y, slices, coils), complex";
    const Array a = load([&](const std::vector<std::size_t>& d) {
        check_map_dims(d, P, P.nc, "sensitivity maps " + origin, expected);
        if (options.size_check) options.size_check(P, true);
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

void attach_reference(recon::ReconProblem& P, const MapLoader& load, const std::string& origin) {
    const std::string expected =
        std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" + std::to_string(P.Nz * P.nslices) + " (x, y, slices)";
    const Array a = load(
        [&](const std::vector<std::size_t>& d) { check_map_dims(d, P, 1, "reference image " + origin, expected); });
    check_finite(a, "reference image " + origin);
    P.reference.assign(P.nslices, arma::fvec(P.n2()));
    for (std::size_t s = 0; s < P.nslices; ++s)
        for (std::size_t k = 0; k < P.n2(); ++k)
            P.reference[s][k] = static_cast<float>(std::abs(a.data[s * P.n2() + k]));
}

// Builds the reconstruction problem from ISMRMRD content. Validates the trajectory against the header.
recon::ReconProblem problem_from_mrd(const MrdFile& F, const std::string& source, const MrdProblemOptions& options) {
    const auto& H = F.header;
    recon::ReconProblem P;
    P.source = source;
    const bool is3D = H.encoded_matrix[2] > 1;
    auto pick = [](std::size_t r, std::size_t e) { return r > 0 ? r : e; };
    P.Nx = pick(H.recon_matrix[0], H.encoded_matrix[0]);
    P.Ny = pick(H.recon_matrix[1], H.encoded_matrix[1]);
    P.Nz = is3D ? pick(H.recon_matrix[2], H.encoded_matrix[2]) : 1;
    if (P.Nx < 2 || P.Ny < 2)
        throw forge::invalid_argument("the ISMRMRD header's matrix size is " + std::to_string(P.Nx) + "x" +
                                      std::to_string(P.Ny) + " (need at least 2x2)");
    const std::string matrixField = std::string("the ISMRMRD header's ") +
                                    (H.recon_matrix[0] > 0 && H.recon_matrix[1] > 0 ? "reconSpace" : "encodedSpace") +
                                    "/matrixSize " + std::to_string(P.Nx) + "x" + std::to_string(P.Ny) + "x" +
                                    std::to_string(P.Nz);
    constexpr std::size_t kNiftiMax = 32767;  // NIfTI-1 stores each dimension as int16
    if (P.Nx > kNiftiMax || P.Ny > kNiftiMax || P.Nz > kNiftiMax)
        throw forge::invalid_argument(matrixField + " exceeds the 32767 voxels per axis a NIfTI-1 image holds");
    for (std::size_t n : {P.Nx, P.Ny, P.Nz})
        if (n > 1 && n % 2)
            throw forge::invalid_argument("the ISMRMRD header's recon matrix " + std::to_string(P.Nx) + "x" +
                                          std::to_string(P.Ny) + "x" + std::to_string(P.Nz) +
                                          " has an odd size (forge needs even sizes)");
    // FOV scaling: k in cycles per recon FOV = k in cycles per encoded FOV * reconFOV/encFOV
    for (int k = 0; k < 3; ++k)
        for (const auto& f :
             {std::make_pair("encodedSpace", H.encoded_fov_mm[k]), std::make_pair("reconSpace", H.recon_fov_mm[k])})
            if (!std::isfinite(f.second) || f.second < 0)
                throw forge::invalid_argument(std::string("the ISMRMRD header's ") + f.first + "/fieldOfView_mm/" +
                                              "xyz"[k] + " is " + std::to_string(f.second) +
                                              " (expected a finite, non-negative size in mm)");
    if (H.has_te && !std::isfinite(H.te_ms))
        throw forge::invalid_argument("the ISMRMRD header's sequenceParameters/TE is " + std::to_string(H.te_ms) +
                                      " (expected a finite time in ms)");
    std::array<double, 3> fov_ratio{{1, 1, 1}};
    for (int k = 0; k < 3; ++k) {
        if (H.recon_fov_mm[k] > 0 && H.encoded_fov_mm[k] > 0) fov_ratio[k] = H.recon_fov_mm[k] / H.encoded_fov_mm[k];
        const double fov = H.recon_fov_mm[k] > 0 ? H.recon_fov_mm[k] : H.encoded_fov_mm[k];
        const std::size_t n = k == 0 ? P.Nx : (k == 1 ? P.Ny : P.Nz);
        P.voxel_mm[k] = fov > 0 ? fov / double(n) : 1.0;
    }
    P.fov_ratio = fov_ratio;
    P.accel = H.accel_e1 * H.accel_e2;

    // channels must agree
    const auto& acqs = F.acquisitions;
    P.nc = acqs.front().channels;
    if (P.nc == 0) throw forge::invalid_argument("acquisition 0 of '" + source + "' has no channels");
    const std::size_t traj_dims = acqs.front().traj_dims;
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        if (acqs[i].channels != P.nc)
            throw forge::invalid_argument("acquisition " + std::to_string(i) + " has " +
                                          std::to_string(acqs[i].channels) + " channels but acquisition 0 has " +
                                          std::to_string(P.nc));
        if (acqs[i].traj_dims != traj_dims)
            throw forge::invalid_argument("acquisition " + std::to_string(i) + " has " +
                                          std::to_string(acqs[i].traj_dims) +
                                          " trajectory dimensions but acquisition 0 has " + std::to_string(traj_dims));
        if (acqs[i].samples == 0) throw forge::invalid_argument("acquisition " + std::to_string(i) + " has no samples");
        const auto& a = acqs[i];
        auto finite3 = [](const std::array<float, 3>& v) {
            return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
        };
        if (!std::isfinite(a.dwell_us) || !finite3(a.position) || !finite3(a.read_dir) || !finite3(a.phase_dir) ||
            !finite3(a.slice_dir))
            throw forge::invalid_argument("acquisition " + std::to_string(i) + " of '" + source +
                                          "' has a non-finite (NaN or Inf) sample_time_us, position or direction");
        if (!all_finite(a.data))
            throw forge::invalid_argument("acquisition " + std::to_string(i) + " of '" + source +
                                          "' holds a non-finite sample (NaN or Inf)");
    }
    const bool useTraj = traj_dims > 0 && !options.cartesian;
    const bool cartHeader = H.trajectory == "cartesian" || H.trajectory == "epi";
    if (!cartHeader && traj_dims == 0)
        throw forge::invalid_argument("the header says the trajectory is " + H.trajectory +
                                      " but the acquisitions carry no trajectory (trajectory_dimensions = 0)");
    if (useTraj) {
        const std::size_t need = is3D ? 3 : 2;
        if (traj_dims != need)
            throw forge::invalid_argument(
                "the acquisitions' trajectories have " + std::to_string(traj_dims) +
                " dimensions but the header's encoded matrix " + std::to_string(H.encoded_matrix[0]) + "x" +
                std::to_string(H.encoded_matrix[1]) + "x" + std::to_string(H.encoded_matrix[2]) + " is " +
                (is3D ? "3D (needs 3)" : "2D (needs 2)"));
    }
    if (!useTraj) {
        // k from the encoding counters: a line or a centre outside the encoded matrix puts samples far off the
        // grid, and the image would be wrong without a word
        const std::size_t lines[3] = {0, H.encoded_matrix[1], H.encoded_matrix[2]};
        const std::size_t centres[3] = {0, H.has_center_e1 ? H.center_e1 : 0, H.has_center_e2 ? H.center_e2 : 0};
        for (int d = 1; d <= (is3D ? 2 : 1); ++d)
            if (centres[d] > lines[d])
                throw forge::invalid_argument("the ISMRMRD header's encodingLimits/kspace_encoding_step_" +
                                              std::to_string(d) + "/center " + std::to_string(centres[d]) +
                                              " is outside the encoded matrix's " + std::to_string(lines[d]) +
                                              " lines (k from the encoding counters)");
        for (std::size_t i = 0; i < acqs.size(); ++i) {
            const auto& a = acqs[i];
            const std::string which = "acquisition " + std::to_string(i) + " of '" + source + "'";
            if (a.center_sample > a.samples)
                throw forge::invalid_argument(which + " has center_sample " + std::to_string(a.center_sample) +
                                              " but " + std::to_string(a.samples) +
                                              " samples (k from the encoding counters)");
            const uint16_t step[3] = {0, a.e1, a.e2};
            for (int d = 1; d <= (is3D ? 2 : 1); ++d)
                if (step[d] >= lines[d])
                    throw forge::invalid_argument(which + " has kspace_encode_step_" + std::to_string(d) + " " +
                                                  std::to_string(step[d]) + ", outside the encoded matrix's " +
                                                  std::to_string(lines[d]) + " lines (0 to " +
                                                  std::to_string(lines[d] - 1) + ")");
        }
    }
    // echo time of each contrast (idx.contrast c takes the header's c-th TE; the first when there are fewer)
    for (std::size_t e = 0; e < H.echo_times_ms.size(); ++e)
        if (!std::isfinite(H.echo_times_ms[e]))
            throw forge::invalid_argument("the ISMRMRD header's sequenceParameters/TE[" + std::to_string(e) + "] is " +
                                          std::to_string(H.echo_times_ms[e]) + " (expected a finite time in ms)");
    auto echo_time = [&H](uint16_t contrast) {
        if (contrast < H.echo_times_ms.size()) return H.echo_times_ms[contrast] * 1e-3;
        return H.has_te ? H.te_ms * 1e-3 : 0.0;
    };

    // group into slices x frames (repetition, contrast)
    std::map<uint16_t, std::size_t> sliceIndex;
    std::map<std::pair<uint16_t, uint16_t>, std::size_t> frameIndex;
    for (const auto& a : acqs) {
        sliceIndex.emplace(a.slice, 0);
        frameIndex.emplace(std::make_pair(a.repetition, a.contrast), 0);
    }
    if (is3D && sliceIndex.size() > 1)
        throw forge::invalid_argument("3D data with several slices (slab loops) is not supported");
    {
        std::size_t i = 0;
        for (auto& kv : sliceIndex) kv.second = i++;
        i = 0;
        for (auto& kv : frameIndex) kv.second = i++;
    }
    P.nslices = sliceIndex.size();
    P.nframes = frameIndex.size();
    std::vector<std::vector<const MrdAcquisition*>> groups(P.nslices * P.nframes);
    for (const auto& a : acqs) {
        std::size_t s = sliceIndex[a.slice], f = frameIndex[{a.repetition, a.contrast}];
        groups[f * P.nslices + s].push_back(&a);
    }
    // sizes against the output format, the data present and the memory there is, before anything the
    // size of an image is allocated
    if (P.Nz * P.nslices > kNiftiMax || P.nframes > kNiftiMax)
        throw forge::invalid_argument("'" + source + "' has " + std::to_string(P.Nz * P.nslices) +
                                      " planes (slices x z) and " + std::to_string(P.nframes) +
                                      " frames (repetitions x contrasts); a NIfTI-1 image holds at most 32767 of each");
    for (const auto& g : groups) {
        std::size_t n1 = 0;
        for (auto* a : g) n1 += a->samples;
        P.n1total += n1;
        P.n1max = std::max(P.n1max, n1);
    }
    constexpr double kPixelsPerValue = 1024;  // far beyond any undersampling that reconstructs
    if (double(P.n2()) > kPixelsPerValue * double(P.n1total) * double(P.nc))
        throw forge::invalid_argument(matrixField + " asks for " + std::to_string(P.n2()) + " pixels but '" + source +
                                      "' holds only " + std::to_string(P.n1total * P.nc) + " measured values (" +
                                      std::to_string(P.n1total) + " samples x " + std::to_string(P.nc) +
                                      " coils); forge-recon refuses more than 1024 pixels per value");
    if (options.size_check) options.size_check(P, false);
    const double centreE1 = H.has_center_e1 ? double(H.center_e1) : double(H.encoded_matrix[1] / 2);
    const double centreE2 = H.has_center_e2 ? double(H.center_e2) : double(H.encoded_matrix[2] / 2);
    const double kmax[3] = {double(P.Nx) / 2, double(P.Ny) / 2, double(P.Nz) / 2};
    for (std::size_t f = 0; f < P.nframes; ++f)
        for (std::size_t s = 0; s < P.nslices; ++s) {
            const auto& g = groups[f * P.nslices + s];
            if (g.empty()) continue;
            recon::ReconFrame fr;
            fr.slice = s;
            fr.frame = f;
            fr.contrast = g.front()->contrast;
            fr.echo_time = echo_time(g.front()->contrast);
            const double TE = fr.echo_time;
            std::size_t n1 = 0;
            for (auto* a : g) n1 += a->samples;
            fr.kx.set_size(n1);
            fr.ky.set_size(n1);
            fr.kz.zeros(n1);
            fr.t.set_size(n1);
            if (options.sample_array) fr.y = options.sample_array(n1 * P.nc);
            if (fr.y.n_elem != n1 * P.nc) {
                fr.y.set_size(n1 * P.nc);
                populate(fr.y.memptr(), fr.y.n_elem * sizeof(fr.y[0]));
            }
            std::size_t off = 0;
            for (auto* a : g) {
                const double dwell = a->dwell_us * 1e-6;
                for (std::size_t j = 0; j < a->samples; ++j) {
                    double k[3] = {0, 0, 0};
                    if (useTraj) {
                        for (std::size_t d = 0; d < traj_dims; ++d) {
                            const double v = a->traj[j * traj_dims + d];
                            if (!(std::fabs(v) <= 0.5 + 1e-3)) {
                                std::ostringstream digits;  // every digit, as the stored float has them
                                digits << std::setprecision(9) << v;
                                throw forge::invalid_argument(
                                    "trajectory value " + digits.str() +
                                    " is outside ISMRMRD's normalised range [-0.5, 0.5] (k / encoded matrix size)");
                            }
                            k[d] = v * double(H.encoded_matrix[d]) * fov_ratio[d];
                        }
                    } else {
                        k[0] = (double(j) - double(a->center_sample)) * fov_ratio[0];
                        k[1] = (double(a->e1) - centreE1) * fov_ratio[1];
                        if (is3D) k[2] = (double(a->e2) - centreE2) * fov_ratio[2];
                    }
                    // keep inside [-N/2, N/2) (NUFFT convention), wrapping the +N/2 edge sample
                    for (int d = 0; d < 3; ++d)
                        if (kmax[d] >= 1 && k[d] >= kmax[d] && k[d] <= kmax[d] + 1e-6) k[d] -= 2 * kmax[d];
                    fr.kx[off + j] = float(k[0]);
                    fr.ky[off + j] = float(k[1]);
                    fr.kz[off + j] = float(k[2]);
                    fr.t[off + j] = float(TE + (double(j) - double(a->center_sample)) * dwell);
                }
                // coil-major in both: one contiguous run per coil
                const std::vector<cxf>& from = a->data;
                cxf* to = fr.y.memptr() + off;
                const std::size_t samples = a->samples;
                const bool fork = forge::detail::parallel_pass(from.size(), 2 * sizeof(cxf));  // read and written
#pragma omp parallel for schedule(static) if (fork)
                for (long long c = 0; c < static_cast<long long>(P.nc); ++c)
                    std::copy_n(from.data() + std::size_t(c) * samples, samples, to + std::size_t(c) * n1);
                off += a->samples;
            }
            P.frames.push_back(std::move(fr));
        }
    recon::set_pixel_grid(P);
    P.affine = nifti_affine(image_geometry(F, P));
    return P;
}

}  // namespace io
}  // namespace forge
