// forge-recon's checks that no image is written that the data do not determine: spikes left out of the data,
// all-zero data, maps that are zero on a whole slice or where the object is, and results that are zero or not
// finite (docs/forge-recon.md, "Images the data do not determine").
#include <cmath>
#include <complex>
#include <cstdio>

#include "ReconApp.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/Cfl.h"

namespace forge_recon {

namespace {
// Given maps zero where the gridded image holds over this share of its energy have removed the object: refused.
constexpr double kUncoveredRefused = 0.5;
// Over this share a part of the object is lost (a mask cut too tight, maps of another position): a warning.
// Masked maps of the object itself leave 0.1 to 2% outside (the gridded image's blur and noise).
constexpr double kUncoveredWarned = 0.05;

std::string percent(double share) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g%%", 100 * share);
    return b;
}
}  // namespace

std::string ImageNames::slice(std::size_t s) const { return "slice " + std::to_string(firstSlice + s); }

std::string ImageNames::operator()(std::size_t s, std::size_t f) const {
    return slice(s) + (frames ? ", frame " + std::to_string(firstFrame + f) : std::string());
}

ImageNames image_names(const ReconProblem& P) {
    ImageNames n;
    n.frames = P.nframes > 1;
    return n;
}

void check_data(ReconProblem& P, const ImageNames& names) {
    const std::vector<std::size_t> spikes = forge::recon::remove_spikes(P);
    for (std::size_t i = 0; i < P.frames.size(); ++i) {
        const forge::recon::ReconFrame& fr = P.frames[i];
        if (spikes[i] > 0) {
            char b[64];
            std::snprintf(b, sizeof b, "%g", forge::recon::kDataSpikeFactor);
            warn(P.source + ": " + names(fr.slice, fr.frame) + ": " + std::to_string(spikes[i]) +
                 " k-space sample(s) left out as spikes (coil amplitude over " + b +
                 " times the root-sum-of-squares of all the smaller samples: no measurement)");
        }
        if (!arma::any(fr.y != std::complex<float>(0)))
            throw UsageError(P.source + ": " + names(fr.slice, fr.frame) +
                             ": the k-space data are all zero (expected a measurement: the image would be zero)");
    }
}

std::string maps_origin(const ReconProblem& P, const Settings& S) {
    if (P.smaps.empty()) return {};
    if (!S.bartMaps.empty()) return "--bart-maps " + forge::io::cfl_base(S.bartMaps) + ".cfl";
    if (!S.smaps.empty() && S.smaps != "none" && S.smaps != "estimate") return "--smaps " + S.smaps;
    return "/" + S.group + "/csm in the input";
}

void check_maps(const ReconProblem& P, const ImageNames& names, const std::string& origin) {
    for (std::size_t s = 0; s < P.smaps.size(); ++s) {
        const arma::cx_fvec& m = P.smaps[s];
        const std::string where = names.slice(s);  // maps are per slice
        if (!m.is_finite())
            throw UsageError(where + ": the coil maps hold a non-finite value (NaN or Inf) (" + origin +
                             "; expected finite maps)");
        if (!arma::any(m != std::complex<float>(0)))
            throw UsageError(where + ": the coil maps are zero on every pixel (" + origin +
                             "; SENSE would give a zero image)");
    }
}

void check_map_coverage(const ReconProblem& P, const Settings& S, const ImageNames& names, const std::string& origin) {
    for (std::size_t s = 0; s < P.smaps.size(); ++s) {
        double share = 0;
        try {
            share = forge::recon::uncovered_energy(P, s, coil_map_options(S));
        } catch (const forge::invalid_argument&) {
            continue;  // no calibration region to grid (accelerated Cartesian data): nothing to compare with
        }
        const std::string where = names.slice(s);
        const std::string what = where + ": the coil maps (" + origin + ") are zero where the data's gridded image " +
                                 "holds " + percent(share) + " of its energy";
        if (share > kUncoveredRefused)
            throw UsageError(what + ": they do not cover the object (maps of another scan, slice or orientation?)");
        if (share > kUncoveredWarned) warn(what + ": that part of the object is set to zero");
    }
}

void check_images(const ReconProblem& P, const forge::recon::ReconResult& R, const ImageNames& names) {
    for (std::size_t i = 0; i < R.complexImage.size(); ++i) {
        const arma::cx_fvec& x = R.complexImage[i];
        const std::string where = names(i % P.nslices, i / P.nslices);
        if (!x.is_finite())
            throw std::runtime_error(where + ": the reconstructed image holds non-finite values (NaN or Inf; nothing is "
                                     "written)");
        if (!arma::any(x != std::complex<float>(0)))
            throw std::runtime_error(where + ": the reconstructed image is zero on every pixel (nothing is written)");
    }
}

}  // namespace forge_recon
