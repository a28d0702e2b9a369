// forge-recon's file stages at the demo's sizes, without its simulation: the demo's spiral and field-map scan
// (forge::sim::demo_acquisition with simulate = false, random data) written as forge-recon --demo writes them
// (ISMRMRD with the csm, fieldmap and phantom arrays), read back as forge-recon reads a file (read_mrd,
// problem_from_mrd, the csm array), and the images written as NIfTI. Prints seconds and MB/s per stage.
//
//   bench_recon_io [N] [slices] [coils] [folder]     (defaults 256 4 16 /tmp)
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "BenchCommon.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"
#include "forge/IO/Nifti.h"
#include "forge/Sim/DemoAcquisition.h"

namespace {

using cxf = std::complex<float>;

// One scan as forge-recon --demo stores it (apps/forge-recon/Demo.cpp, mrd_file), its data random.
forge::io::MrdFile mrd_file(const forge::sim::DemoAcquisition& d, const forge::sim::SimulatedScan& scan,
                            std::mt19937& rng) {
    std::normal_distribution<float> g;
    forge::io::MrdFile F;
    forge::io::MrdHeader& H = F.header;
    H.encoded_matrix = H.recon_matrix = {d.N, d.N, 1};
    H.encoded_fov_mm = H.recon_fov_mm = {d.fov_mm, d.fov_mm, d.thickness_mm};
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
        a.data.resize(r.data.size());
        for (auto& v : a.data) v = cxf(g(rng), g(rng));
        F.acquisitions.push_back(std::move(a));
    }
    return F;
}

double file_mb(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? double(st.st_size) / 1e6 : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
    forge::sim::DemoOptions o;
    o.size = argc > 1 ? std::size_t(std::atoi(argv[1])) : 256;
    o.slices = argc > 2 ? std::size_t(std::atoi(argv[2])) : 4;
    o.coils = argc > 3 ? std::size_t(std::atoi(argv[3])) : 16;
    const std::string dir = argc > 4 ? argv[4] : "/tmp";
    o.simulate = false;
    forge::io::quiet_hdf5_errors();
    std::printf("bench_recon_io: %zux%zu x %zu slices x %zu coils; %s\n", o.size, o.size, o.slices, o.coils,
                forge_bench::machine_line().c_str());
    forge_bench::CpuTimer t;
    const forge::sim::DemoAcquisition d = forge::sim::demo_acquisition(o);
    const double tObjects = t.seconds();
    std::mt19937 rng(1);
    t.reset();
    const forge::io::MrdFile F = mrd_file(d, d.spiral, rng), FF = mrd_file(d, d.field_map_scan, rng);
    const double tAcq = t.seconds();
    const std::size_t N = d.N, ns = d.slices, nc = d.coils;
    std::vector<forge::io::MrdNamedArray> arrays(3);
    arrays[0] = {"csm", {N, N, ns, nc}, std::vector<cxf>(N * N * ns * nc, cxf(0.5f, 0.25f))};
    arrays[1] = {"fieldmap", {N, N, ns}, std::vector<cxf>(N * N * ns, cxf(10, 0))};
    arrays[2] = {"phantom", {N, N, ns}, std::vector<cxf>(N * N * ns, cxf(1, 0))};
    const std::string spiral = dir + "/bench_recon_io.h5", scan = dir + "/bench_recon_io_fieldmap_scan.h5";
    const std::string nii = dir + "/bench_recon_io.nii";

    std::printf("%-44s %9s %9s %9s\n", "stage", "seconds", "MB", "MB/s");
    auto row = [](const char* what, double s, double mb) {
        std::printf("%-44s %9.3f %9.1f %9.0f\n", what, s, mb, mb > 0 && s > 0 ? mb / s : 0.0);
    };
    row("demo objects, readouts, frames (no simulation)", tObjects, 0);
    row("acquisitions (MrdAcquisition copies)", tAcq, 0);
    t.reset();
    forge::io::write_mrd(spiral, forge::io::make_mrd_header_xml(F.header), F.acquisitions, arrays);
    row("write_mrd spiral + csm, fieldmap, phantom", t.seconds(), file_mb(spiral));
    t.reset();
    forge::io::write_mrd(scan, forge::io::make_mrd_header_xml(FF.header), FF.acquisitions, {});
    row(("write_mrd field-map scan (" + std::to_string(FF.acquisitions.size()) + " acquisitions)").c_str(), t.seconds(),
        file_mb(scan));
    t.reset();
    const forge::io::MrdFile R = forge::io::read_mrd(spiral);
    row("read_mrd spiral", t.seconds(), file_mb(spiral));
    t.reset();
    const forge::io::MrdFile RF = forge::io::read_mrd(scan);
    row("read_mrd field-map scan", t.seconds(), file_mb(scan));
    t.reset();
    forge::recon::ReconProblem P = forge::io::problem_from_mrd(R, "spiral");
    row("problem_from_mrd spiral", t.seconds(), 0);
    t.reset();
    forge::io::problem_from_mrd(RF, "field-map scan");
    row("problem_from_mrd field-map scan", t.seconds(), 0);
    t.reset();
    forge::io::attach_smaps(
        P, [&](const forge::io::DimsCheck& c) { return forge::io::read_hdf5_array(spiral, "/dataset/csm", c); }, "csm");
    const double mbMaps = double(N * N * ns * nc) * 8 / 1e6;
    row("attach_smaps (read /dataset/csm)", t.seconds(), mbMaps);
    std::vector<float> vol(N * N * ns, 1.0f);
    t.reset();
    for (int i = 0; i < 4; ++i) forge::io::write_nifti(nii, vol, {{N, N, ns, 1}}, P.affine, "bench");
    row("write_nifti x4 (magnitude volumes)", t.seconds(), 4 * file_mb(nii));
    std::remove(spiral.c_str());
    std::remove(scan.c_str());
    std::remove(nii.c_str());
    return 0;
}
