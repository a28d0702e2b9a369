// The reconstruction pipeline (Pipeline.h): checks of the data and maps, coil maps by policy, the operator choice,
// and the solves with what a session keeps between groups.
#include "forge/Recon/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Parallel.h"

namespace forge {
namespace recon {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string percent(double share) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g%%", 100 * share);
    return b;
}

bool resolve_gpu(Device d) {
    if (d == Device::GPU) {
        if (!device::available())
            throw cuda_error(std::string("ReconSession: device = GPU was requested but no CUDA device is usable "
                                         "(built with CUDA: ") +
                             (device::built_with_cuda() ? "yes" : "no") + ")");
        return true;
    }
    if (d == Device::Host) return false;
    if (d != Device::Auto)
        throw invalid_argument("ReconSession: request.device = " + std::to_string(int(d)) +
                               "; expected Device::Auto, Host or GPU");
    return device::available();
}

}  // namespace

std::string GroupPlace::slice(std::size_t s) const { return "slice " + std::to_string(first_slice + s); }

std::string GroupPlace::operator()(std::size_t s, std::size_t f) const {
    return slice(s) + (name_frames ? ", frame " + std::to_string(first_frame + f) : std::string());
}

GroupPlace whole_problem(const ReconProblem& P) {
    GroupPlace g;
    g.name_frames = P.nframes > 1;
    return g;
}

ReconSession::ReconSession(ReconRequest request)
    : request_(std::move(request)), gpu_(resolve_gpu(request_.device)),
      operators_(new OperatorCache(request_.cached_operators)) {}

ReconSession::~ReconSession() = default;

const arma::cx_fvec& ReconSession::kept_maps(std::size_t slice) const {
    static const arma::cx_fvec none;
    return slice < maps_.size() ? maps_[slice] : none;
}

CoilMapOptions ReconSession::map_options() const {
    CoilMapOptions o = request_.coil_maps;
    if (!gpu_) o.device = Device::Host;  // a session on the host keeps its estimation there too
    return o;
}

std::vector<std::size_t> check_data(ReconProblem& P, const GroupPlace& place,
                                    const std::function<void(const std::string&)>& warn) {
    const std::vector<std::size_t> spikes = remove_spikes(P);
    for (std::size_t i = 0; i < P.frames.size(); ++i) {
        const ReconFrame& fr = P.frames[i];
        if (spikes[i] > 0 && warn) {
            char b[64];
            std::snprintf(b, sizeof b, "%g", kDataSpikeFactor);
            warn(P.source + ": " + place(fr.slice, fr.frame) + ": " + std::to_string(spikes[i]) +
                 " k-space sample(s) left out as spikes (coil amplitude over " + b +
                 " times the root-sum-of-squares of all the smaller samples: no measurement)");
        }
        // (stops at the first value that is not zero: arma::any of y != 0 built a mask of every value first)
        if (std::none_of(fr.y.begin(), fr.y.end(), [](const std::complex<float>& v) { return v != 0.0f; }))
            throw invalid_argument(P.source + ": " + place(fr.slice, fr.frame) +
                                   ": the k-space data are all zero (expected a measurement: the image would be zero)");
    }
    return spikes;
}

namespace {

// Maps that are not finite, or zero on every pixel of a slice, give no image.
void check_maps(const ReconProblem& P, const GroupPlace& place, const std::string& origin) {
    for (std::size_t s = 0; s < P.smaps.size(); ++s) {
        const arma::cx_fvec& m = P.smaps[s];
        // Both tests in one pass of integer ORs on the floats' bits, which vectorises: an exponent of all ones is
        // Inf or NaN, any bit but the sign a value other than zero (arma's is_finite and a search for a value other
        // than zero took 1.8 ms of a 256x256 x 16-coil slice's maps on the H200's host).
        const auto* bytes = reinterpret_cast<const unsigned char*>(m.memptr());
        std::uint32_t nonFinite = 0, nonZero = 0;
        const long long n = static_cast<long long>(2 * m.n_elem);
        const bool fork = forge::detail::parallel_pass(m.n_elem, sizeof(m[0]));
#pragma omp parallel for schedule(static) reduction(| : nonFinite, nonZero) if (fork)
        for (long long i = 0; i < n; ++i) {
            std::uint32_t b;
            std::memcpy(&b, bytes + 4 * i, 4);
            nonFinite |= std::uint32_t((b & 0x7f800000u) == 0x7f800000u);
            nonZero |= b & 0x7fffffffu;
        }
        if (nonFinite)
            throw invalid_argument(place.slice(s) + ": the coil maps hold a non-finite value (NaN or Inf) (" + origin +
                                   "; expected finite maps)");
        if (!nonZero)
            throw invalid_argument(place.slice(s) + ": the coil maps are zero on every pixel (" + origin +
                                   "; SENSE would give a zero image)");
    }
}

// Given maps against the data's gridded image (uncovered_energy) on the slices whose frame 0 the group holds.
void check_map_coverage(const ReconProblem& P, const GroupPlace& place, const std::string& origin,
                        const CoilMapOptions& options, const std::function<void(const std::string&)>& warn) {
    for (std::size_t s = 0; s < P.smaps.size(); ++s) {
        bool first = false;
        for (const ReconFrame& fr : P.frames) first = first || (fr.slice == s && place.first_frame + fr.frame == 0);
        if (!first) continue;
        double share = 0;
        try {
            share = uncovered_energy(P, s, options);
        } catch (const invalid_argument&) {
            continue;  // no calibration region to grid (accelerated Cartesian data): nothing to compare with
        }
        const std::string what = place.slice(s) + ": the coil maps (" + origin + ") are zero where the data's " +
                                 "gridded image holds " + percent(share) + " of its energy";
        if (share > kUncoveredRefused)
            throw invalid_argument(what + ": they do not cover the object (maps of another scan, slice or "
                                          "orientation?)");
        if (share > kUncoveredWarned && warn) warn(what + ": that part of the object is set to zero");
    }
}

}  // namespace

bool ReconSession::will_estimate(const ReconProblem& P, const GroupPlace& place) const {
    const MapsPolicy m = request_.maps;
    if (m == MapsPolicy::None || m == MapsPolicy::Given) return false;
    if (m == MapsPolicy::Auto && !P.smaps.empty()) return false;
    for (std::size_t s = 0; s < P.nslices; ++s)
        if (kept_maps(place.first_slice + s).is_empty()) return true;
    return false;
}

MapsReport ReconSession::prepare_maps(ReconProblem& P, const GroupPlace& place, const std::string& origin) {
    MapsReport r;
    const MapsPolicy policy = request_.maps;
    if (policy != MapsPolicy::Auto && policy != MapsPolicy::Estimate && policy != MapsPolicy::Given &&
        policy != MapsPolicy::None)
        throw invalid_argument("ReconSession: request.maps = " + std::to_string(int(policy)) +
                               "; expected MapsPolicy::Auto, Estimate, Given or None");
    if (policy == MapsPolicy::None) {
        P.smaps.clear();
        return r;
    }
    if (policy == MapsPolicy::Estimate) P.smaps.clear();
    if (!P.smaps.empty()) {
        check_maps(P, place, origin.empty() ? "estimated from the data" : origin);
        if (!origin.empty()) check_map_coverage(P, place, origin, map_options(), request_.warn);
        r.source = MapsReport::Source::Given;
        return r;
    }
    if (policy == MapsPolicy::Given)
        throw invalid_argument(P.source + ": no coil maps (the request's maps policy is Given)");
    if (!will_estimate(P, place)) {
        for (std::size_t s = 0; s < P.nslices; ++s) P.smaps.push_back(kept_maps(place.first_slice + s));
        r.source = MapsReport::Source::Kept;
        return r;
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
        P.smaps = estimate_coil_maps(P, map_options(), &r.masks, &r.calibration_width, &r.stats, &calibration_);
    } catch (const invalid_argument& e) {
        if (policy == MapsPolicy::Estimate) throw;
        P.smaps.clear();
        r.fell_back = true;
        if (request_.warn) request_.warn(std::string("cannot estimate coil maps (") + e.what() + ")");
        return r;
    }
    r.seconds = seconds_since(t0);
    r.source = MapsReport::Source::Estimated;
    check_maps(P, place, "estimated from the data");
    if (request_.warn)
        for (std::size_t s = 0; s < r.stats.size(); ++s) {
            char buf[300];
            if (r.stats[s].mask_dropped) {
                std::snprintf(buf, sizeof buf,
                              ": slice %zu: the coil maps' mask would drop %.1f%% of the calibration image's energy "
                              "(over 1%%): the maps cover the whole image instead",
                              place.first_slice + s, 100 * r.stats[s].dropped_energy);
                request_.warn(P.source + buf);
            }
            if (r.stats[s].outliers > 0)
                request_.warn(P.source + ": " + place.slice(s) + ": " + std::to_string(r.stats[s].outliers) +
                              " calibration sample(s) left out of the coil maps as spikes (coil amplitude over 1000 "
                              "times the 99th percentile)");
        }
    if (!request_.keep_maps) return r;
    if (maps_.size() < place.first_slice + P.nslices) maps_.resize(place.first_slice + P.nslices);
    for (std::size_t s = 0; s < P.nslices; ++s) maps_[place.first_slice + s] = P.smaps[s];
    return r;
}

OperatorChoice ReconSession::choose(ReconProblem& P) const {
    P.fft_grid = fft_grid(P);
    const EncodingOperator op = request_.settings.op;
    if (!request_.auto_operator) {
        if (op == EncodingOperator::Fft && P.fft_grid[0] == 0)
            throw invalid_argument("operator fft: the samples are not on the k-space grid of an FFT (neither the "
                                   "recon grid nor the encoded FOV's grid); use dft, toeplitz, timeseg or nufft");
        return {op, std::string()};
    }
    return choose_operator(P, request_.settings.iterations, gpu_, !P.field_map.empty() && request_.field_correction,
                           request_.settings.tolerance);
}

ReconResult ReconSession::solve(const ReconProblem& P, EncodingOperator op, const GroupPlace& place,
                                const std::vector<std::size_t>& frames, const std::string& tag) {
    ReconSettings S = request_.settings;
    S.op = op;
    S.gpu = gpu_;
    S.frames = frames;
    S.warm_start = request_.warm_start;
    S.start.clear();
    if (request_.warm_start)
        for (std::size_t s = 0; s < P.nslices; ++s)
            S.start.push_back(place.first_slice + s < lastImage_.size() ? lastImage_[place.first_slice + s]
                                                                        : arma::cx_fvec());
    const bool correct = !P.field_map.empty() && request_.field_correction && op != EncodingOperator::Nufft;
    ReconResult R = forge::recon::reconstruct(P, correct, S, tag, operators_.get());
    // the images of the frames solved (the others stay zero for a distributed run's gather)
    std::vector<std::size_t> solved = frames;
    if (solved.empty())
        for (std::size_t i = 0; i < P.frames.size(); ++i) solved.push_back(i);
    for (const std::size_t i : solved) {
        const ReconFrame& fr = P.frames[i];
        const arma::cx_fvec& x = R.complex_image[fr.frame * P.nslices + fr.slice];
        if (!x.is_finite())
            throw std::runtime_error(place(fr.slice, fr.frame) + ": the reconstructed image holds non-finite values "
                                                                 "(NaN or Inf; nothing is written)");
        if (!arma::any(x != std::complex<float>(0)))
            throw std::runtime_error(place(fr.slice, fr.frame) +
                                     ": the reconstructed image is zero on every pixel (nothing is written)");
        if (request_.warm_start) {
            if (lastImage_.size() < place.first_slice + P.nslices) lastImage_.resize(place.first_slice + P.nslices);
            lastImage_[place.first_slice + fr.slice] = x;  // solved in order: the slice's latest frame last
        }
    }
    return R;
}

std::size_t ReconSession::prepare_operators(const ReconProblem& P, EncodingOperator op,
                                            const std::vector<std::size_t>& frames) {
    ReconSettings S = request_.settings;  // as solve() sets them
    S.op = op;
    S.gpu = gpu_;
    S.frames = frames;
    const bool correct = !P.field_map.empty() && request_.field_correction && op != EncodingOperator::Nufft;
    return recon::prepare_operators(P, correct, S, *operators_);
}

GroupResult ReconSession::reconstruct(ReconProblem& P, const GroupPlace& place, const std::string& tag) {
    GroupResult g;
    g.spikes = check_data(P, place);
    g.maps = prepare_maps(P, place);
    const OperatorChoice c = choose(P);
    g.op = c.op;
    g.op_reason = c.reason;
    g.field_corrected = !P.field_map.empty() && request_.field_correction && c.op != EncodingOperator::Nufft;
    g.images = solve(P, c.op, place, {}, tag);
    return g;
}

}  // namespace recon
}  // namespace forge
