#pragma once
// Image quality against a reference: the one definition forge-recon prints and the tests assert.
//
//   NRMSE = ||x - ref|| / ||ref||
//   PSNR  = 20 log10(max|ref| / RMSE),  RMSE = ||x - ref|| / sqrt(n)   (dB; +inf when x == ref)
//
// magnitude_quality() first fits a real scale a to the magnitudes (least squares, a = <|x|,|ref|> / <|x|,|x|>)
// and compares a|x| with |ref| (docs/forge-recon.md): a reconstruction's overall scale depends on the
// operator's normalisation, its shape does not.
// Sums are accumulated in double whatever the element type.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <vector>

#include <armadillo>

namespace forge {
namespace recon {

struct Quality {
    double nrmse = 0, psnr = 0;
};

// ||x - ref|| / ||ref|| (real or complex columns, any precision).
template <typename A, typename B>
double nrmse(const A& x, const B& ref) {
    const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), rd = arma::conv_to<arma::cx_vec>::from(ref);
    return arma::norm(xd - rd) / arma::norm(rd);
}

// 20 log10(max|ref| / RMSE) in dB.
template <typename A, typename B>
double psnr(const A& x, const B& ref) {
    const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x), rd = arma::conv_to<arma::cx_vec>::from(ref);
    const double mse = std::pow(arma::norm(xd - rd), 2) / double(rd.n_elem);
    return 20 * std::log10(arma::max(arma::abs(rd)) / std::sqrt(mse));
}

// NRMSE and PSNR of magnitude images (one per slice) after the least-squares scale fit, over all slices.
inline Quality magnitude_quality(const std::vector<arma::fvec>& img, const std::vector<arma::fvec>& ref) {
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
    // 10 log10(peak^2 / MSE) = 20 log10(peak / RMSE): the PSNR above
    q.psnr = mse > 0 ? 10.0 * std::log10(peak * peak / mse) : std::numeric_limits<double>::infinity();
    return q;
}

}  // namespace recon
}  // namespace forge
