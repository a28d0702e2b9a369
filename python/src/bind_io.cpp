// forge._native: MRD (ISMRMRD HDF5) files through forge's own reader and writer (forge/IO/Mrd.h, the library
// forge-recon uses): read_mrd gives the parsed header and every acquisition (data, trajectory, the header fields
// forge uses) as NumPy arrays; write_mrd writes them back. Built when the library Forge::IO is (it needs
// ISMRMRD, HDF5, libpng and pugixml); python/forge/io.py turns the lists into stacked arrays.
#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "forge/IO/Mrd.h"
#include "forge/IO/MrdProblem.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

// A NumPy array that owns a copy of n values at p, of the given shape.
template <typename T>
nb::object numpy_copy(const T* p, std::vector<size_t> shape) {
    size_t n = 1;
    for (size_t s : shape) n *= s;
    T* buf = new T[n ? n : 1];
    if (n) std::copy(p, p + n, buf);
    nb::capsule owner(buf, [](void* q) noexcept { delete[] static_cast<T*>(q); });
    return nb::cast(nb::ndarray<nb::numpy, T>(buf, shape.size(), shape.data(), owner));
}

template <typename T, size_t N>
nb::list list_of(const std::array<T, N>& a) {
    nb::list l;
    for (const T& v : a) l.append(v);
    return l;
}

nb::dict header_dict(const forge::io::MrdHeader& h) {
    nb::dict d;
    d["encoded_matrix"] = list_of(h.encoded_matrix);
    d["encoded_fov_mm"] = list_of(h.encoded_fov_mm);
    d["recon_matrix"] = list_of(h.recon_matrix);
    d["recon_fov_mm"] = list_of(h.recon_fov_mm);
    d["trajectory"] = h.trajectory;
    d["acceleration"] = nb::make_tuple(h.accel_e1, h.accel_e2);
    d["echo_times_ms"] = h.echo_times_ms;
    d["te_ms"] = h.has_te ? nb::cast(h.te_ms) : nb::none();
    d["center_e1"] = h.has_center_e1 ? nb::cast(h.center_e1) : nb::none();
    d["center_e2"] = h.has_center_e2 ? nb::cast(h.center_e2) : nb::none();
    d["receiver_channels"] = h.receiver_channels;
    return d;
}

template <typename T, size_t N>
void read_array(const nb::dict& d, const char* key, std::array<T, N>& out) {
    if (!d.contains(key)) return;
    const auto v = nb::cast<std::vector<T>>(d[key]);
    if (v.size() != N)
        throw forge::invalid_argument(std::string("write_mrd: header['") + key + "'] must have " + std::to_string(N) +
                                      " entries, got " + std::to_string(v.size()));
    std::copy(v.begin(), v.end(), out.begin());
}

forge::io::MrdHeader header_of(const nb::dict& d) {
    forge::io::MrdHeader h;
    read_array(d, "encoded_matrix", h.encoded_matrix);
    read_array(d, "encoded_fov_mm", h.encoded_fov_mm);
    read_array(d, "recon_matrix", h.recon_matrix);
    read_array(d, "recon_fov_mm", h.recon_fov_mm);
    if (d.contains("trajectory")) h.trajectory = nb::cast<std::string>(d["trajectory"]);
    if (d.contains("acceleration")) {
        const auto a = nb::cast<std::vector<size_t>>(d["acceleration"]);
        if (a.size() != 2) throw forge::invalid_argument("write_mrd: header['acceleration'] must be (e1, e2)");
        h.accel_e1 = a[0];
        h.accel_e2 = a[1];
    }
    if (d.contains("echo_times_ms")) h.echo_times_ms = nb::cast<std::vector<double>>(d["echo_times_ms"]);
    if (d.contains("te_ms") && !d["te_ms"].is_none()) {
        h.has_te = true;
        h.te_ms = nb::cast<double>(d["te_ms"]);
    } else if (!h.echo_times_ms.empty()) {
        h.has_te = true;
        h.te_ms = h.echo_times_ms.front();
    }
    if (d.contains("center_e1") && !d["center_e1"].is_none()) {
        h.has_center_e1 = true;
        h.center_e1 = nb::cast<size_t>(d["center_e1"]);
    }
    if (d.contains("center_e2") && !d["center_e2"].is_none()) {
        h.has_center_e2 = true;
        h.center_e2 = nb::cast<size_t>(d["center_e2"]);
    }
    if (d.contains("receiver_channels")) h.receiver_channels = nb::cast<size_t>(d["receiver_channels"]);
    return h;
}

nb::dict acquisition_dict(const forge::io::MrdAcquisition& a) {
    nb::dict d;
    d["data"] = numpy_copy(a.data.data(), {a.channels, a.samples});   // samples fastest, then channels
    d["traj"] = numpy_copy(a.traj.data(), {a.samples, a.traj_dims});  // trajectory dimension fastest
    d["center_sample"] = a.center_sample;
    d["dwell_us"] = a.dwell_us;
    d["e1"] = a.e1;
    d["e2"] = a.e2;
    d["slice"] = a.slice;
    d["repetition"] = a.repetition;
    d["contrast"] = a.contrast;
    d["flags"] = a.flags;
    d["position"] = list_of(a.position);
    d["read_dir"] = list_of(a.read_dir);
    d["phase_dir"] = list_of(a.phase_dir);
    d["slice_dir"] = list_of(a.slice_dir);
    return d;
}

using CF = std::complex<float>;

forge::io::MrdAcquisition acquisition_of(const nb::dict& d, size_t i) {
    forge::io::MrdAcquisition a;
    const std::string where = "write_mrd: acquisition " + std::to_string(i);
    const auto data = nb::cast<nb::ndarray<const CF, nb::ndim<2>, nb::c_contig, nb::device::cpu>>(d["data"]);
    const auto traj = nb::cast<nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>>(d["traj"]);
    if (data.shape(0) > 65535 || data.shape(1) > 65535 || traj.shape(1) > 65535)
        throw forge::invalid_argument(where + ": channels, samples and trajectory dimensions must be at most 65535");
    if (traj.shape(1) && traj.shape(0) != data.shape(1))
        throw forge::invalid_argument(where + ": traj has " + std::to_string(traj.shape(0)) + " samples, data " +
                                      std::to_string(data.shape(1)));
    a.channels = uint16_t(data.shape(0));
    a.samples = uint16_t(data.shape(1));
    a.traj_dims = uint16_t(traj.shape(1));
    a.data.assign(data.data(), data.data() + data.size());
    a.traj.assign(traj.data(), traj.data() + traj.size());
    a.center_sample = nb::cast<uint16_t>(d["center_sample"]);
    a.dwell_us = nb::cast<float>(d["dwell_us"]);
    a.e1 = nb::cast<uint16_t>(d["e1"]);
    a.e2 = nb::cast<uint16_t>(d["e2"]);
    a.slice = nb::cast<uint16_t>(d["slice"]);
    a.repetition = nb::cast<uint16_t>(d["repetition"]);
    a.contrast = nb::cast<uint16_t>(d["contrast"]);
    a.flags = nb::cast<uint64_t>(d["flags"]);
    const auto vec3 = [&](const char* key, std::array<float, 3>& out) {
        const auto v = nb::cast<std::vector<float>>(d[key]);
        if (v.size() != 3) throw forge::invalid_argument(where + ": " + key + " must have 3 entries");
        std::copy(v.begin(), v.end(), out.begin());
    };
    vec3("position", a.position);
    vec3("read_dir", a.read_dir);
    vec3("phase_dir", a.phase_dir);
    vec3("slice_dir", a.slice_dir);
    return a;
}

// The reconstruction problem of an MRD file as forge-recon builds it (problem_from_mrd), with the coil maps and
// field map the file stores (<group>/csm, <group>/fieldmap) as they are: per frame its indices and
// k (cycles/FOV), t (s) and y (coils, samples); per slice the maps.
nb::dict problem_dict(const std::string& path, const std::string& group, bool cartesian) {
    forge::recon::ReconProblem P;
    {
        nb::gil_scoped_release release;
        const forge::io::MrdFile f = forge::io::read_mrd(path, group);
        forge::io::MrdProblemOptions o;
        o.cartesian = cartesian;
        P = forge::io::problem_from_mrd(f, path, o);
        const std::string g = "/" + group + "/";
        auto from_input = [&path](const std::string& object) {
            return
                [&path, object](const forge::io::DimsCheck& c) { return forge::io::read_hdf5_array(path, object, c); };
        };
        if (forge::io::hdf5_has_object(path, g + "csm"))
            forge::io::attach_smaps(P, from_input(g + "csm"), "(" + g + "csm in " + path + ")", o);
        if (forge::io::hdf5_has_object(path, g + "fieldmap"))
            forge::io::attach_field_map(P, from_input(g + "fieldmap"), "(" + g + "fieldmap in " + path + ")");
    }
    nb::dict d;
    d["shape"] = nb::make_tuple(P.Nx, P.Ny, P.Nz);
    d["coils"] = P.nc;
    d["slices"] = P.nslices;
    d["frames"] = P.nframes;
    nb::list frames;
    for (const auto& fr : P.frames) {
        nb::dict f;
        f["slice"] = fr.slice;
        f["frame"] = fr.frame;
        f["contrast"] = fr.contrast;
        f["echo_time"] = fr.echo_time;
        f["kx"] = numpy_copy(fr.kx.memptr(), {fr.kx.n_elem});
        f["ky"] = numpy_copy(fr.ky.memptr(), {fr.ky.n_elem});
        f["kz"] = numpy_copy(fr.kz.memptr(), {fr.kz.n_elem});
        f["t"] = numpy_copy(fr.t.memptr(), {fr.t.n_elem});
        f["y"] = numpy_copy(fr.y.memptr(), {P.nc, fr.kx.n_elem});
        frames.append(f);
    }
    d["frame_list"] = frames;
    nb::list smaps, fieldmap;
    for (const auto& m : P.smaps) smaps.append(numpy_copy(m.memptr(), {P.nc, P.Nz, P.Ny, P.Nx}));
    for (const auto& m : P.field_map) fieldmap.append(numpy_copy(m.memptr(), {P.Nz, P.Ny, P.Nx}));
    d["smaps"] = smaps;
    d["fieldmap"] = fieldmap;
    return d;
}

}  // namespace

void bind_io(nb::module_& m) {
    m.def("has_mrd", [] { return true; });
    m.def(
        "read_mrd",
        [](const std::string& path, const std::string& group) {
            forge::io::quiet_hdf5_errors();
            forge::io::MrdFile f;
            {
                nb::gil_scoped_release release;
                f = forge::io::read_mrd(path, group);
            }
            nb::list acqs, noise;
            for (const auto& a : f.acquisitions) acqs.append(acquisition_dict(a));
            for (const auto& a : f.noise) noise.append(acquisition_dict(a));
            nb::dict d;
            d["header"] = header_dict(f.header);
            d["acquisitions"] = acqs;
            d["noise"] = noise;
            return d;
        },
        "path"_a, "group"_a);
    m.def(
        "read_mrd_problem",
        [](const std::string& path, const std::string& group, bool cartesian) {
            forge::io::quiet_hdf5_errors();
            return problem_dict(path, group, cartesian);
        },
        "path"_a, "group"_a, "cartesian"_a);
    m.def(
        "write_mrd",
        [](const std::string& path, const nb::dict& header, const nb::list& acquisitions, const std::string& group) {
            forge::io::quiet_hdf5_errors();
            const std::string xml = forge::io::make_mrd_header_xml(header_of(header));
            std::vector<forge::io::MrdAcquisition> acqs;
            for (size_t i = 0; i < acquisitions.size(); ++i)
                acqs.push_back(acquisition_of(nb::cast<nb::dict>(acquisitions[i]), i));
            nb::gil_scoped_release release;
            forge::io::write_mrd(path, xml, acqs, {}, group);
        },
        "path"_a, "header"_a, "acquisitions"_a, "group"_a);
}

}  // namespace forge_python
