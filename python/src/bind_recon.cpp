// forge._native: the reconstruction pipeline (forge/Recon/Pipeline.h). ReconSession holds a
// forge::recon::ReconSession made from a request's options; its reconstruct() takes one group of frames as host
// arrays (the frames' trajectories, times and coil-major data; per slice the coil maps and field map), runs the
// pipeline with the GIL released and returns the images with what the pipeline reports. python/forge/_recon.py
// checks the arrays and shapes the images.
#include <complex>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "forge/Recon/Pipeline.h"
#include "forge/Solvers/SolverCommon.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;
namespace fr = forge::recon;

namespace {

using CF = std::complex<float>;
using RArr = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using CArr = nb::ndarray<const CF, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename E, typename A>
arma::Col<E> col(const A& a) {
    return arma::Col<E>(const_cast<E*>(reinterpret_cast<const E*>(a.data())), a.size(), true, false);  // copies
}

fr::EncodingOperator operator_of(const std::string& s) {
    if (s == "dft") return fr::EncodingOperator::Dft;
    if (s == "fft") return fr::EncodingOperator::Fft;
    if (s == "nufft") return fr::EncodingOperator::Nufft;
    if (s == "timeseg") return fr::EncodingOperator::TimeSeg;
    if (s == "toeplitz") return fr::EncodingOperator::Toeplitz;
    throw forge::invalid_argument("ReconSession: operator = '" + s +
                                  "'; expected 'auto', 'dft', 'fft', 'nufft', 'timeseg' or 'toeplitz'");
}

fr::PenaltyKind penalty_of(const std::string& s) {
    if (s == "quad") return fr::PenaltyKind::Quad;
    if (s == "tv") return fr::PenaltyKind::TV;
    if (s == "l1-wavelet") return fr::PenaltyKind::L1Wavelet;
    if (s == "tv-exact") return fr::PenaltyKind::TVExact;
    throw forge::invalid_argument("ReconSession: penalty = '" + s +
                                  "'; expected 'quad', 'tv', 'l1-wavelet' or 'tv-exact'");
}

forge::Device device_of(const std::string& s) {
    if (s == "auto") return forge::Device::Auto;
    if (s == "cpu" || s == "host") return forge::Device::Host;
    if (s == "gpu") return forge::Device::GPU;
    throw forge::invalid_argument("ReconSession: device = '" + s + "'; expected 'auto', 'cpu' or 'gpu'");
}

fr::MapsPolicy maps_of(const std::string& s) {
    if (s == "auto") return fr::MapsPolicy::Auto;
    if (s == "estimate") return fr::MapsPolicy::Estimate;
    if (s == "given") return fr::MapsPolicy::Given;
    if (s == "none") return fr::MapsPolicy::None;
    throw forge::invalid_argument("ReconSession: maps = '" + s + "'; expected 'auto', 'estimate', 'given' or 'none'");
}

const char* maps_source(fr::MapsReport::Source s) {
    switch (s) {
        case fr::MapsReport::Source::None: return "none";
        case fr::MapsReport::Source::Given: return "given";
        case fr::MapsReport::Source::Estimated: return "estimated";
        case fr::MapsReport::Source::Kept: return "kept";
    }
    return "unknown";
}

template <typename T, size_t N>
nb::list list_of(const std::array<T, N>& a) {
    nb::list l;
    for (const T& v : a) l.append(v);
    return l;
}

// A NumPy complex64 array (rows, n) owning the images.
nb::object images_array(const std::vector<arma::cx_fvec>& images, size_t n) {
    const size_t rows = images.size();
    CF* buf = new CF[rows * n > 0 ? rows * n : 1];
    for (size_t i = 0; i < rows; ++i) {
        if (images[i].n_elem == n)
            std::memcpy(static_cast<void*>(buf + i * n), images[i].memptr(), n * sizeof(CF));
        else
            std::fill(buf + i * n, buf + (i + 1) * n, CF(0));
    }
    nb::capsule owner(buf, [](void* q) noexcept { delete[] static_cast<CF*>(q); });
    size_t shape[2] = {rows, n};
    return nb::cast(nb::ndarray<nb::numpy, CF>(buf, 2, shape, owner));
}

class PySession {
public:
    PySession(const std::string& op, const std::string& penalty, double beta, double lam, double delta, int iterations,
              double tolerance, const std::string& device, const std::string& maps, bool field_correction,
              bool warm_start, size_t cached_operators, int segments, double toeplitz_error) {
        fr::ReconRequest r;
        r.auto_operator = op == "auto";
        if (!r.auto_operator) r.settings.op = operator_of(op);
        r.settings.penalty = penalty_of(penalty);
        r.settings.beta = beta;
        r.settings.lambda = lam;
        r.settings.delta = delta;
        r.settings.iterations = iterations;
        r.settings.tolerance = tolerance;
        r.settings.segments = segments;
        r.settings.toeplitz_error = toeplitz_error;
        r.device = device_of(device);
        r.maps = maps_of(maps);
        r.field_correction = field_correction;
        r.warm_start = warm_start;
        r.cached_operators = cached_operators;
        r.warn = [this](const std::string& w) {
            std::lock_guard<std::mutex> lock(mutex_);
            warnings_.push_back(w);
        };
        session_.reset(new fr::ReconSession(std::move(r)));
    }

    bool on_gpu() const { return session_->on_gpu(); }

    // frames: (slice, frame, kx, ky, kz, t, y) per frame; smaps, field_maps: per slice (empty lists: none).
    nb::dict reconstruct(size_t nx, size_t ny, size_t nz, size_t nc, size_t nslices, size_t nframes,
                         const std::vector<std::tuple<size_t, size_t, RArr, RArr, RArr, RArr, CArr>>& frames,
                         const std::vector<CArr>& smaps, const std::vector<RArr>& field_maps, size_t first_slice,
                         size_t first_frame, bool name_frames, const std::string& maps, const std::string& source) {
        fr::ReconProblem P;
        P.Nx = nx;
        P.Ny = ny;
        P.Nz = nz;
        P.nc = nc;
        P.nslices = nslices;
        P.nframes = nframes;
        P.source = source;
        fr::set_pixel_grid(P);
        for (const auto& f : frames) {
            fr::ReconFrame F;
            F.slice = std::get<0>(f);
            F.frame = std::get<1>(f);
            F.kx = col<float>(std::get<2>(f));
            F.ky = col<float>(std::get<3>(f));
            F.kz = col<float>(std::get<4>(f));
            F.t = col<float>(std::get<5>(f));
            F.y = col<CF>(std::get<6>(f));
            const size_t n1 = F.kx.n_elem;
            if (F.ky.n_elem != n1 || F.kz.n_elem != n1 || F.t.n_elem != n1 || F.y.n_elem != nc * n1)
                throw forge::invalid_argument("ReconSession.reconstruct: a frame's kx, ky, kz, t and y (coils x "
                                              "samples) disagree in size");
            if (F.slice >= nslices || F.frame >= nframes)
                throw forge::invalid_argument("ReconSession.reconstruct: a frame's slice or frame index is out of "
                                              "range");
            P.n1total += n1;
            P.n1max = std::max(P.n1max, n1);
            P.frames.push_back(std::move(F));
        }
        for (const auto& m : smaps) {
            require_size(m, nc * P.n2(), "ReconSession.reconstruct", "maps", "coils x pixels");
            P.smaps.push_back(col<CF>(m));
        }
        for (const auto& m : field_maps) {
            require_size(m, P.n2(), "ReconSession.reconstruct", "field_map", "pixels");
            P.field_map.push_back(col<float>(m));
        }
        fr::GroupPlace place;
        place.first_slice = first_slice;
        place.first_frame = first_frame;
        place.name_frames = name_frames;

        const fr::MapsPolicy policy = maps_of(maps);
        fr::GroupResult g;
        {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> busy(busy_);  // one reconstruction of a session at a time
            session_->request().maps = policy;        // per group: maps given to one call, estimated for another
            g = session_->reconstruct(P, place);
        }
        return result_dict(g, P, place);
    }

private:
    nb::dict result_dict(const fr::GroupResult& g, const fr::ReconProblem& P, const fr::GroupPlace& place) {
        nb::dict d;
        d["images"] = images_array(g.images.complex_image, P.n2());
        const fr::ReconRequest& r = session_->request();
        d["device"] = session_->on_gpu() ? "gpu" : "cpu";
        d["operator"] = fr::operator_name(g.op);
        d["operator_reason"] = g.op_reason.empty() ? nb::none() : nb::cast(g.op_reason);
        d["auto_operator"] = r.auto_operator;
        d["field_correction"] = g.field_corrected;
        nb::dict maps;
        maps["source"] = maps_source(g.maps.source);
        maps["seconds"] = g.maps.seconds;
        maps["fell_back"] = g.maps.fell_back;
        if (g.maps.source == fr::MapsReport::Source::Estimated) {
            maps["calibration_width"] = list_of(g.maps.calibration_width);
            nb::list stats;
            for (const auto& s : g.maps.stats) {
                nb::dict st;
                st["dropped_energy"] = s.dropped_energy;
                st["level"] = s.level;
                st["mask_dropped"] = s.mask_dropped;
                st["outliers"] = s.outliers;
                st["grid"] = list_of(s.grid);
                stats.append(st);
            }
            maps["stats"] = stats;
        } else {
            maps["calibration_width"] = nb::none();
            maps["stats"] = nb::list();
        }
        d["maps"] = maps;
        nb::list spikes;
        for (size_t s : g.spikes) spikes.append(s);
        d["spikes"] = spikes;
        nb::list solves;
        size_t iterations = 0;
        for (const auto& s : g.images.solves) {
            const forge::SolverReport& rep = s.report;
            nb::dict j;
            j["label"] = s.label;
            j["slice"] = place.first_slice + s.slice;
            j["frame"] = place.first_frame + s.frame;
            j["coil"] = s.coil < 0 ? nb::none() : nb::cast(s.coil);
            j["segments"] = s.segments ? nb::cast(s.segments) : nb::none();
            j["iterations"] = size_t(rep.iterations);
            j["stop_reason"] = forge::stop_reason_token(rep.stop_reason);
            j["converged"] = rep.converged;
            j["relative_gradient"] =
                rep.initial_gradient_norm > 0 ? rep.final_gradient_norm / rep.initial_gradient_norm : 0.0;
            j["initial_gradient_norm"] = rep.initial_gradient_norm;
            j["final_gradient_norm"] = rep.final_gradient_norm;
            j["seconds"] = s.seconds;
            j["setup_seconds"] = s.setup_seconds;
            j["rhs_seconds"] = s.rhs_seconds;
            j["iteration_seconds"] = s.iteration_seconds;
            iterations += rep.iterations;
            solves.append(j);
        }
        d["iterations"] = iterations;
        d["solves"] = solves;
        d["seconds"] = g.images.seconds;
        d["solve_seconds"] = g.images.solve_seconds;
        d["setup_seconds"] = g.images.setup_seconds;
        d["operators_built"] = g.images.operators_built;
        d["operators_reused"] = g.images.operators_reused;
        nb::list warnings;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& w : warnings_) warnings.append(w);
            warnings_.clear();
        }
        d["warnings"] = warnings;
        return d;
    }

    std::unique_ptr<fr::ReconSession> session_;
    std::mutex mutex_, busy_;
    std::vector<std::string> warnings_;
};

}  // namespace

void bind_recon(nb::module_& m) {
    nb::class_<PySession>(m, "ReconSession")
        .def(nb::init<const std::string&, const std::string&, double, double, double, int, double, const std::string&,
                      const std::string&, bool, bool, size_t, int, double>(),
             "operator"_a, "penalty"_a, "beta"_a, "lam"_a, "delta"_a, "iterations"_a, "tolerance"_a, "device"_a,
             "maps"_a, "field_correction"_a, "warm_start"_a, "cached_operators"_a, "segments"_a, "toeplitz_error"_a)
        .def_prop_ro("on_gpu", &PySession::on_gpu)
        .def("reconstruct", &PySession::reconstruct, "nx"_a, "ny"_a, "nz"_a, "nc"_a, "nslices"_a, "nframes"_a,
             "frames"_a, "smaps"_a, "field_maps"_a, "first_slice"_a, "first_frame"_a, "name_frames"_a, "maps"_a,
             "source"_a);
}

}  // namespace forge_python
