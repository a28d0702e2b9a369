// forge_mrd_cfl: the bridge scripts/compare-bart.sh uses between ISMRMRD files and BART's .cfl/.hdr arrays, and
// the small file tools of the CLI tests.
//
//   forge_mrd_cfl kspace IN.h5 OUT [REPETITION]   Cartesian k-space of one repetition (default 0), zero-filled,
//                                                 as OUT.cfl/.hdr of dims [encoded x, encoded y, 1, coils]
//   forge_mrd_cfl nrmse IN.h5 IMAGE               NRMSE and PSNR of |IMAGE.cfl| (Nx x Ny) against the file's
//                                                 /dataset/phantom, as forge-recon computes them
//   forge_mrd_cfl mrd TRAJ KSPACE OUT.h5 MAPS [REF]
//                                                 BART's non-Cartesian arrays as an ISMRMRD file: TRAJ [3, samples,
//                                                 spokes] (cycles/FOV), KSPACE [1, samples, spokes, coils], MAPS
//                                                 [N, N, 1, coils] (stored as /dataset/csm; N from them), REF [N, N]
//                                                 (|REF| stored as /dataset/phantom); one acquisition per spoke
//   forge_mrd_cfl scale IN.h5 OUT.h5 DATA MAPS    IN.h5 with its acquisitions' data times DATA and its /dataset/csm
//                                                 times MAPS (its fieldmap and phantom copied)
//   forge_mrd_cfl orient IN.h5 OUT.h5 RX RY RZ PX PY PZ CX CY CZ SPACING [FOVX FOVY]
//                                                 IN.h5 with read_dir R, phase_dir P, slice_dir R x P and slice s
//                                                 centred at C + s SPACING (R x P), mm, and the FOV (encoded and
//                                                 recon) FOVX x FOVY mm (csm, fieldmap, phantom copied)
//   forge_mrd_cfl bart IN.h5 OUT                  the first slice and repetition of a non-Cartesian file as BART's
//                                                 arrays: OUT_k [1, samples, readouts, coils], OUT_t [3, samples,
//                                                 readouts] (cycles/FOV), OUT_times [1, samples, readouts] (seconds:
//                                                 TE + (j - center_sample) dwell), OUT_s [Nx, Ny, 1, coils] from
//                                                 /dataset/csm; prints "dwell D te T" (seconds, every digit)
//   forge_mrd_cfl compare A.nii B.nii             ||a B - A|| / ||A|| with a the least-squares scale (B's
//                                                 magnitudes fitted to A's): 0 when B is A in other units
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/IO/Cfl.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/Nifti.h"
#include "forge/Recon/Metrics.h"

namespace {

void write_cfl(const std::string& base, const std::vector<std::size_t>& dims,
               const std::vector<std::complex<float>>& v) {
    forge::io::write_cfl(base, dims, v);
}

std::vector<std::complex<float>> read_cfl(const std::string& base, std::vector<std::size_t>& dims) {
    forge::io::CflArray a = forge::io::read_cfl(base);
    dims.assign(a.dims.begin(), a.dims.end());
    return std::move(a.data);
}

// BART's radial (or any non-Cartesian 2D) arrays as an ISMRMRD file with maps and a reference.
int to_mrd(const std::string& trajBase, const std::string& kBase, const std::string& out, const std::string& mapsBase,
           const std::string& refBase) {
    std::vector<std::size_t> td, kd, md, rd;
    const auto traj = read_cfl(trajBase, td);
    const auto k = read_cfl(kBase, kd);
    const auto maps = read_cfl(mapsBase, md);
    const std::size_t ns = td[1], spokes = td[2], nc = kd[3], N = md[0];
    if (td[0] != 3 || kd[1] != ns || kd[2] != spokes || md[1] != N || md[3] != nc) {
        std::fprintf(stderr, "forge_mrd_cfl mrd: the arrays' dimensions do not fit together\n");
        return 2;
    }
    forge::io::MrdHeader h;
    h.encoded_matrix = {N, N, 1};
    h.recon_matrix = {N, N, 1};
    h.encoded_fov_mm = {256, 256, 5};
    h.recon_fov_mm = {256, 256, 5};
    h.trajectory = "radial";
    h.receiver_channels = nc;
    std::vector<forge::io::MrdAcquisition> acqs(spokes);
    for (std::size_t s = 0; s < spokes; ++s) {
        forge::io::MrdAcquisition& a = acqs[s];
        a.samples = uint16_t(ns);
        a.channels = uint16_t(nc);
        a.traj_dims = 2;
        a.center_sample = uint16_t(ns / 2);
        a.dwell_us = 4;
        a.e1 = uint16_t(s);
        a.read_dir = {1, 0, 0};
        a.phase_dir = {0, 1, 0};
        a.slice_dir = {0, 0, 1};
        a.data.resize(ns * nc);
        a.traj.resize(2 * ns);
        for (std::size_t j = 0; j < ns; ++j) {
            // ISMRMRD's normalised units: k / encoded matrix
            a.traj[2 * j] = traj[3 * (j + ns * s)].real() / float(N);
            a.traj[2 * j + 1] = traj[3 * (j + ns * s) + 1].real() / float(N);
            for (std::size_t c = 0; c < nc; ++c) a.data[c * ns + j] = k[j + ns * (s + spokes * c)];
        }
    }
    std::vector<forge::io::MrdNamedArray> arrays(1);
    arrays[0].name = "csm";
    arrays[0].dims = {N, N, 1, nc};
    arrays[0].data = maps;
    if (!refBase.empty()) {
        const auto ref = read_cfl(refBase, rd);
        forge::io::MrdNamedArray r;
        r.name = "phantom";
        r.dims = {N, N, 1};
        for (const auto& v : ref) r.data.emplace_back(std::abs(v), 0.0f);
        arrays.push_back(r);
    }
    forge::io::write_mrd(out, forge::io::make_mrd_header_xml(h, "bart"), acqs, arrays);
    return 0;
}

// IN.h5 with 'edit' applied to each imaging acquisition, its csm scaled by 'mapScale' (fieldmap and phantom copied).
// 'fov' > 0: the header's encoded and recon FOV x and y set to it (mm).
template <typename Edit>
int copy_mrd(const std::string& in, const std::string& out, float mapScale, const Edit& edit,
             const std::array<double, 2>& fov = {{0, 0}}) {
    forge::io::MrdFile F = forge::io::read_mrd(in);
    for (int k = 0; k < 2; ++k)
        if (fov[k] > 0) F.header.encoded_fov_mm[k] = F.header.recon_fov_mm[k] = fov[k];
    std::vector<forge::io::MrdAcquisition> acqs = F.noise;
    for (auto& a : F.acquisitions) {
        edit(a);
        acqs.push_back(std::move(a));
    }
    std::vector<forge::io::MrdNamedArray> arrays;
    for (const char* name : {"csm", "fieldmap", "phantom"}) {
        const std::string object = std::string("/dataset/") + name;
        if (!forge::io::hdf5_has_object(in, object)) continue;
        const forge::io::Array a = forge::io::read_hdf5_array(in, object);
        forge::io::MrdNamedArray m;
        m.name = name;
        m.dims = a.dims;
        const double f = std::string(name) == "csm" ? double(mapScale) : 1.0;
        for (const auto& v : a.data) m.data.emplace_back(std::complex<float>(v * f));
        arrays.push_back(m);
    }
    forge::io::write_mrd(out, forge::io::make_mrd_header_xml(F.header, "forge-edited"), acqs, arrays);
    return 0;
}

int scale_mrd(const std::string& in, const std::string& out, float dataScale, float mapScale) {
    return copy_mrd(in, out, mapScale, [dataScale](forge::io::MrdAcquisition& a) {
        for (auto& v : a.data) v *= dataScale;
    });
}

// Every acquisition of slice s: read_dir R, phase_dir P, slice_dir R x P, position C + s * spacing * slice_dir.
int orient_mrd(const std::string& in, const std::string& out, char** v, const std::array<double, 2>& fov) {
    float n[10];
    for (int i = 0; i < 10; ++i) n[i] = std::stof(v[i]);
    const std::array<float, 3> R{{n[0], n[1], n[2]}}, P{{n[3], n[4], n[5]}};
    const std::array<float, 3> S{{R[1] * P[2] - R[2] * P[1], R[2] * P[0] - R[0] * P[2], R[0] * P[1] - R[1] * P[0]}};
    return copy_mrd(
        in, out, 1.0f,
        [&](forge::io::MrdAcquisition& a) {
            a.read_dir = R;
            a.phase_dir = P;
            a.slice_dir = S;
            for (int k = 0; k < 3; ++k) a.position[k] = n[6 + k] + float(a.slice) * n[9] * S[k];
        },
        fov);
}

int compare_nifti(const std::string& a, const std::string& b) {
    const forge::io::NiftiVolume A = forge::io::read_nifti(a), B = forge::io::read_nifti(b);
    if (A.data.size() != B.data.size()) {
        std::fprintf(stderr, "forge_mrd_cfl compare: %zu and %zu voxels\n", A.data.size(), B.data.size());
        return 2;
    }
    arma::fvec x(A.data.size()), y(B.data.size());
    for (std::size_t i = 0; i < x.n_elem; ++i) {
        x[i] = float(std::abs(A.data[i]));
        y[i] = float(std::abs(B.data[i]));
    }
    // magnitude_quality fits the scale of its first argument to the second
    std::printf("relative difference %.3e\n", forge::recon::magnitude_quality({y}, {x}).nrmse);
    return 0;
}

int to_bart(const std::string& in, const std::string& out) {
    const forge::io::MrdFile F = forge::io::read_mrd(in);
    std::vector<const forge::io::MrdAcquisition*> acqs;
    for (const auto& a : F.acquisitions)
        if (a.slice == 0 && a.repetition == 0 && a.contrast == 0 && a.traj_dims >= 2) acqs.push_back(&a);
    if (acqs.empty()) throw std::runtime_error(in + " has no non-Cartesian acquisition of slice 0");
    const std::size_t ns = acqs[0]->samples, nc = acqs[0]->channels, nr = acqs.size(), td = acqs[0]->traj_dims;
    const double te = F.header.has_te ? F.header.te_ms * 1e-3 : 0.0, dwell = acqs[0]->dwell_us * 1e-6;
    std::vector<std::complex<float>> k(ns * nr * nc), t(3 * ns * nr, {0, 0}), times(ns * nr);
    for (std::size_t r = 0; r < nr; ++r) {
        const auto& a = *acqs[r];
        if (a.samples != ns || a.channels != nc || a.traj_dims != td || a.center_sample != acqs[0]->center_sample ||
            a.dwell_us != acqs[0]->dwell_us)
            throw std::runtime_error(in + ": the readouts differ in samples, coils, trajectory or timing");
        for (std::size_t j = 0; j < ns; ++j) {
            for (std::size_t d = 0; d < td; ++d)
                t[(r * ns + j) * 3 + d] = float(double(a.traj[j * td + d]) * double(F.header.encoded_matrix[d]));
            times[r * ns + j] = float(te + (double(j) - double(a.center_sample)) * dwell);
            for (std::size_t c = 0; c < nc; ++c) k[(c * nr + r) * ns + j] = a.data[c * ns + j];
        }
    }
    write_cfl(out + "_k", {1, ns, nr, nc}, k);
    write_cfl(out + "_t", {3, ns, nr}, t);
    write_cfl(out + "_times", {1, ns, nr}, times);
    const forge::io::Array csm = forge::io::read_hdf5_array(in, "/dataset/csm");
    const std::size_t nx = F.header.recon_matrix[0], ny = F.header.recon_matrix[1];
    if (csm.size() < nx * ny * nc) throw std::runtime_error(in + ": /dataset/csm is smaller than the coils' maps");
    std::vector<std::complex<float>> m(nx * ny * nc);
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = std::complex<float>(csm.data[i]);  // x fastest, then y, coil
    write_cfl(out + "_s", {nx, ny, 1, nc}, m);
    std::printf("dwell %.17g te %.17g\n", dwell, te);
    return 0;
}

int run(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: forge_mrd_cfl kspace IN.h5 OUT [REPETITION] | nrmse IN.h5 IMAGE | mrd TRAJ KSPACE OUT.h5 "
                     "MAPS [REF] | scale IN.h5 OUT.h5 DATA MAPS | orient IN.h5 OUT.h5 R3 P3 C3 SPACING [FOVX FOVY] | "
                     "compare A.nii B.nii | bart IN.h5 OUT\n");
        return 2;
    }
    const std::string mode = argv[1], in = argv[2], out = argv[3];
    forge::io::quiet_hdf5_errors();
    if (mode == "kspace") {
        const unsigned rep = argc > 4 ? unsigned(std::stoul(argv[4])) : 0;
        const forge::io::MrdFile F = forge::io::read_mrd(in);
        const std::size_t nx = F.header.encoded_matrix[0], ny = F.header.encoded_matrix[1];
        const std::size_t nc = F.acquisitions.front().channels;
        std::vector<std::complex<float>> k(nx * ny * nc, {0, 0});
        for (const auto& a : F.acquisitions) {
            if (a.repetition != rep || a.samples != nx || a.e1 >= ny) continue;
            for (std::size_t c = 0; c < nc; ++c)
                for (std::size_t x = 0; x < nx; ++x) k[(c * ny + a.e1) * nx + x] = a.data[c * a.samples + x];
        }
        write_cfl(out, {nx, ny, 1, nc}, k);
        return 0;
    }
    if (mode == "nrmse") {
        std::vector<std::size_t> dims;
        const auto img = read_cfl(out, dims);
        const forge::io::Array ref = forge::io::read_hdf5_array(in, "/dataset/phantom");
        if (ref.size() != img.size()) {
            std::fprintf(stderr, "forge_mrd_cfl: image has %zu values, the phantom %zu\n", img.size(), ref.size());
            return 1;
        }
        arma::fvec a(img.size()), r(img.size());
        for (std::size_t i = 0; i < img.size(); ++i) {
            a[i] = std::abs(img[i]);
            r[i] = float(std::abs(ref.data[i]));
        }
        const forge::recon::Quality q = forge::recon::magnitude_quality({a}, {r});
        std::printf("NRMSE %.6f  PSNR %.2f dB\n", q.nrmse, q.psnr);
        return 0;
    }
    if (mode == "mrd" && argc >= 6) return to_mrd(in, out, argv[4], argv[5], argc > 6 ? argv[6] : "");
    if (mode == "scale" && argc == 6) return scale_mrd(in, out, std::stof(argv[4]), std::stof(argv[5]));
    if (mode == "compare") return compare_nifti(in, out);
    if (mode == "bart") return to_bart(in, out);
    if (mode == "orient" && (argc == 14 || argc == 16))
        return orient_mrd(in, out, argv + 4,
                          argc == 16 ? std::array<double, 2>{{std::stod(argv[14]), std::stod(argv[15])}}
                                     : std::array<double, 2>{{0, 0}});
    std::fprintf(stderr, "forge_mrd_cfl: unknown mode '%s'\n", mode.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "forge_mrd_cfl: %s\n", e.what());
        return 1;
    }
}
