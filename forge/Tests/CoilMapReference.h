#pragma once
// Independent float64 references for map estimation's tests (host and GPU): coil images of a simulated phantom,
// the window covariance summed out pixel by pixel in double, its eigen-decomposition, and the maps with
// CoilMaps.h's phase convention; the separable-quadratic-surrogate field map's objective.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

#include <armadillo>

#include "TestHelpers.h"
#include "forge/Sim/Coils.h"

namespace forge_test {

struct ImageGrid3 {
    std::size_t Nx, Ny, Nz;
    std::size_t n2() const { return Nx * Ny * Nz; }
};

// Coil images (n2 x nc) of a smooth ellipsoidal object (value 1 inside, a tanh edge, an inner ellipse at 0.4)
// times Gaussian coil maps around it, plus complex Gaussian noise of 'noise' x the object's value. 2D (Nz = 1)
// or 3D.
inline arma::cx_fmat phantom_coil_images(const ImageGrid3& g, std::size_t nc, double noise) {
    const std::size_t n2 = g.n2();
    arma::vec ix(n2), iy(n2), iz(n2);
    arma::vec obj(n2);
    for (std::size_t z = 0; z < g.Nz; ++z)
        for (std::size_t y = 0; y < g.Ny; ++y)
            for (std::size_t x = 0; x < g.Nx; ++x) {
                const std::size_t k = x + g.Nx * (y + g.Ny * z);
                ix[k] = (double(x) - double(g.Nx / 2)) / double(g.Nx);
                iy[k] = (double(y) - double(g.Ny / 2)) / double(g.Ny);
                iz[k] = g.Nz > 1 ? (double(z) - double(g.Nz / 2)) / double(g.Nz) : 0.0;
                const double r = std::sqrt(std::pow(ix[k] / 0.38, 2) + std::pow(iy[k] / 0.32, 2) +
                                           (g.Nz > 1 ? std::pow(iz[k] / 0.36, 2) : 0.0));
                const double ri = std::sqrt(std::pow((ix[k] - 0.05) / 0.12, 2) + std::pow(iy[k] / 0.1, 2));
                obj[k] = 0.5 * (1 - std::tanh((r - 1) * 12)) * (1 - 0.6 * 0.5 * (1 - std::tanh((ri - 1) * 8)));
            }
    const arma::cx_vec maps = forge::sim::gaussian_coil_maps(ix, iy, nc);
    arma::cx_fmat X(n2, nc);
    const arma::cx_vec nz = complex_normal<double>(n2 * nc);
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t k = 0; k < n2; ++k) {
            // a z-dependent phase ramp per coil, so 3D maps vary along z too
            const std::complex<double> zr = std::polar(1.0, 1.5 * iz[k] * double(c + 1));
            X(k, c) = std::complex<float>(maps[c * n2 + k] * zr * obj[k] + noise * nz[c * n2 + k]);
        }
    return X;
}

// Per pixel: the window covariance R (nc x nc) and the window sum of x, summed out in double over the
// (2 half + 1)^d window clipped at the faces.
struct PixelCovariance {
    arma::cx_mat R;
    arma::cx_vec xs;
};
inline PixelCovariance pixel_covariance(const arma::cx_fmat& X, const ImageGrid3& g, std::size_t k, std::size_t half) {
    const std::size_t nc = X.n_cols, x0 = k % g.Nx, y0 = (k / g.Nx) % g.Ny, z0 = k / (g.Nx * g.Ny);
    auto range = [half](std::size_t c, std::size_t n, std::size_t& lo, std::size_t& hi) {
        lo = c >= half ? c - half : 0;
        hi = std::min(n - 1, c + half);
    };
    std::size_t xl, xh, yl, yh, zl, zh;
    range(x0, g.Nx, xl, xh);
    range(y0, g.Ny, yl, yh);
    range(z0, g.Nz, zl, zh);
    PixelCovariance p{arma::cx_mat(nc, nc, arma::fill::zeros), arma::cx_vec(nc, arma::fill::zeros)};
    for (std::size_t z = zl; z <= zh; ++z)
        for (std::size_t y = yl; y <= yh; ++y)
            for (std::size_t x = xl; x <= xh; ++x) {
                const std::size_t q = x + g.Nx * (y + g.Ny * z);
                arma::cx_vec v(nc);
                for (std::size_t c = 0; c < nc; ++c) v[c] = std::complex<double>(X(q, c));
                p.R += v * v.t();
                p.xs += v;
            }
    return p;
}

// The reference maps (nc x n2, coil-major, double) inside 'mask', and each pixel's eigenvalue gap relative to
// the trace, (lambda_1 - lambda_2) / tr R (lambda_1 / tr R = 1 for one coil). Float's rounding of the covariance
// (the products x_i conj(x_j), each window sum) perturbs R by a few 2^-24 tr R (Frobenius norm), which moves the
// leading eigenvector by up to that over lambda_1 - lambda_2: a map's float error times this gap is a few 1e-8: the
// leading eigenvector of R, its phase making v^H xs real and positive (where that vanishes: u0^H v, u0 the dominant
// eigenvector of the masked sum of R).
struct ReferenceMaps {
    arma::cx_vec maps;
    arma::vec gap;    // (lambda_1 - lambda_2) / tr R: how well rounding can determine the direction
    arma::vec phase;  // |z| / sum_c |xs_c| of the phase's reference z (v^H xs, or u0^H v): how well it fixes the phase
};
inline ReferenceMaps reference_coil_maps(const arma::cx_fmat& X, const ImageGrid3& g, std::size_t half,
                                         const arma::uvec& mask) {
    const std::size_t n2 = g.n2(), nc = X.n_cols;
    ReferenceMaps out{arma::cx_vec(n2 * nc, arma::fill::zeros), arma::vec(n2, arma::fill::ones),
                      arma::vec(n2, arma::fill::ones)};
    std::vector<PixelCovariance> cov(n2);
    arma::cx_mat total(nc, nc, arma::fill::zeros);
    for (std::size_t k = 0; k < n2; ++k)
        if (mask[k]) {
            cov[k] = pixel_covariance(X, g, k, half);
            total += cov[k].R;
        }
    arma::vec tv;
    arma::cx_mat tV;
    arma::eig_sym(tv, tV, arma::cx_mat(0.5 * (total + total.t())));
    const arma::cx_vec u0 = tV.col(nc - 1);
    for (std::size_t k = 0; k < n2; ++k) {
        if (!mask[k]) continue;
        arma::vec val;
        arma::cx_mat V;
        arma::eig_sym(val, V, arma::cx_mat(0.5 * (cov[k].R + cov[k].R.t())));
        arma::cx_vec v = V.col(nc - 1);
        const double tr = arma::accu(val);
        out.gap[k] = tr > 0 ? (val[nc - 1] - (nc > 1 ? val[nc - 2] : 0.0)) / tr : 0.0;
        const std::complex<double> z = arma::cdot(v, cov[k].xs);
        double vn = 0;
        for (std::size_t c = 0; c < nc; ++c) vn += std::abs(cov[k].xs[c]);
        if (std::abs(z) > 1e-6 * vn && std::abs(z) > 0) {
            v *= z / std::abs(z);
            out.phase[k] = std::abs(z) / vn;
        } else {
            const std::complex<double> r = arma::cdot(u0, v);
            if (std::abs(r) > 0) v *= std::conj(r) / std::abs(r);
            out.phase[k] = std::abs(r);
        }
        for (std::size_t c = 0; c < nc; ++c) out.maps[c * n2 + k] = v[c];
    }
    return out;
}

// Window amplitude sqrt(sum_c R_cc) per pixel in double: the quantity the mask thresholds.
inline arma::vec window_amplitude(const arma::cx_fmat& X, const ImageGrid3& g, std::size_t half) {
    arma::vec amp(g.n2());
    for (std::size_t k = 0; k < g.n2(); ++k)
        amp[k] = std::sqrt(std::real(arma::trace(pixel_covariance(X, g, k, half).R)));
    return amp;
}

// RMS over 'inside' of the sine of the angle between estimated and true coil vectors (both of unit norm): 0 when
// they agree up to each pixel's phase, as maps of an object with a phase of its own do (they carry its
// low-resolution phase).
inline double map_direction_error(const arma::cx_fvec& est, const arma::cx_fvec& truth, const arma::uvec& inside,
                                  std::size_t nc) {
    const std::size_t n2 = inside.n_elem;
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < n2; ++k) {
        if (!inside[k]) continue;
        std::complex<double> dot = 0;
        double ee = 0, tt = 0;
        for (std::size_t c = 0; c < nc; ++c) {
            const std::complex<double> e(est[c * n2 + k]), t(truth[c * n2 + k]);
            dot += std::conj(e) * t;
            ee += std::norm(e);
            tt += std::norm(t);
        }
        sum += ee > 0 && tt > 0 ? std::max(0.0, 1 - std::norm(dot) / (ee * tt)) : 1.0;
        ++n;
    }
    return std::sqrt(sum / double(n));
}

}  // namespace forge_test
