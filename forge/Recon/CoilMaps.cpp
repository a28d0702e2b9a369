#include "forge/Recon/CoilMaps.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>

#include "forge/Core/Exceptions.h"
#include "forge/Operators/nufft/DensityCompensation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Recon/Reconstruct.h"

namespace forge {
namespace recon {

namespace {

using cxf = std::complex<float>;

// In-place sum over a (2 half + 1)^d window (clipped at the faces) of an Nx x Ny x Nz image, by running
// sums along each axis.
template <typename T>
void box_sum(T* img, std::size_t Nx, std::size_t Ny, std::size_t Nz, std::size_t half) {
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    std::vector<T> line, prefix;
    for (int d = 0; d < 3; ++d) {
        const std::size_t n = N[d];
        if (n == 1 || half == 0) continue;
        line.resize(n);
        prefix.assign(n + 1, T(0));
        const std::size_t total = Nx * Ny * Nz;
        for (std::size_t start = 0; start < total; ++start) {
            if ((start / stride[d]) % n != 0) continue;  // the first pixel of each line along d
            for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + img[start + i * stride[d]];
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t lo = i >= half ? i - half : 0, hi = std::min(n - 1, i + half);
                line[i] = prefix[hi + 1] - prefix[lo];
            }
            for (std::size_t i = 0; i < n; ++i) img[start + i * stride[d]] = line[i];
        }
    }
}

// 1 where 'inside', plus every pixel the background (outside pixels connected to a face of the grid) cannot
// reach: holes the object encloses.
arma::uvec fill_holes(const std::vector<char>& inside, std::size_t Nx, std::size_t Ny, std::size_t Nz) {
    const std::size_t n2 = Nx * Ny * Nz;
    std::vector<char> background(n2, 0);
    std::vector<std::size_t> stack;
    auto push = [&](std::size_t i) {
        if (!inside[i] && !background[i]) {
            background[i] = 1;
            stack.push_back(i);
        }
    };
    for (std::size_t z = 0; z < Nz; ++z)
        for (std::size_t y = 0; y < Ny; ++y)
            for (std::size_t x = 0; x < Nx; ++x) {
                const bool face = x == 0 || x == Nx - 1 || y == 0 || y == Ny - 1 || (Nz > 1 && (z == 0 || z == Nz - 1));
                if (face) push(x + Nx * (y + Ny * z));
            }
    while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        const std::size_t x = i % Nx, y = (i / Nx) % Ny, z = i / (Nx * Ny);
        if (x > 0) push(i - 1);
        if (x + 1 < Nx) push(i + 1);
        if (y > 0) push(i - Nx);
        if (y + 1 < Ny) push(i + Nx);
        if (z > 0) push(i - Nx * Ny);
        if (z + 1 < Nz) push(i + Nx * Ny);
    }
    arma::uvec mask(n2);
    for (std::size_t i = 0; i < n2; ++i) mask[i] = background[i] ? 0 : 1;
    return mask;
}

// Half-width (cycles/FOV) of the fully sampled centre along one axis of Cartesian samples: the distinct k
// values around 0 that follow each other at the lattice's step.
double sampled_centre_half_width(const arma::fvec& k, double step) {
    std::vector<double> v(k.begin(), k.end());
    for (auto& x : v) x = std::round(x * 1e4) / 1e4;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() < 2) return 0;
    std::size_t c = 0;
    for (std::size_t i = 1; i < v.size(); ++i)
        if (std::fabs(v[i]) < std::fabs(v[c])) c = i;
    if (std::fabs(v[c]) > 0.5 * step) return 0;
    std::size_t lo = c, hi = c;
    while (lo > 0 && v[lo] - v[lo - 1] <= 1.5 * step) --lo;
    while (hi + 1 < v.size() && v[hi + 1] - v[hi] <= 1.5 * step) ++hi;
    return std::min(std::fabs(v[lo]), std::fabs(v[hi]));
}

void check_options(const CoilMapOptions& o) {
    if (!(o.calibration >= 4) || !std::isfinite(o.calibration))
        throw invalid_argument("coil maps: calibration is " + std::to_string(o.calibration) +
                               " (expected a width of at least 4 cycles/FOV)");
    if (o.kernel < 1 || o.kernel % 2 == 0 || o.kernel > 63)
        throw invalid_argument("coil maps: kernel is " + std::to_string(o.kernel) + " (expected an odd width 1 to 63)");
    if (!(o.threshold >= 0 && o.threshold < 1))
        throw invalid_argument("coil maps: threshold is " + std::to_string(o.threshold) + " (expected 0 <= t < 1)");
}

}  // namespace

arma::cx_fvec coil_maps_from_images(const arma::cx_fmat& X, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                                    const CoilMapOptions& options, arma::uvec* maskOut) {
    check_options(options);
    const std::size_t n2 = Nx * Ny * Nz, nc = X.n_cols;
    if (n2 == 0 || X.n_rows != n2 || nc == 0)
        throw invalid_argument("coil_maps_from_images: coilImages is " + std::to_string(X.n_rows) + "x" +
                               std::to_string(X.n_cols) + " (expected n2 = Nx*Ny*Nz = " + std::to_string(n2) +
                               " rows and at least one coil)");
    const std::size_t half = static_cast<std::size_t>(options.kernel / 2);
    // window sums of x (for the phase) and of every coil pair's products (the covariance)
    arma::cx_fmat xs = X;
    for (std::size_t c = 0; c < nc; ++c) box_sum(xs.colptr(c), Nx, Ny, Nz, half);
    const std::size_t npairs = nc * (nc + 1) / 2;
    arma::cx_fmat R(n2, npairs);
    {
        std::size_t p = 0;
        for (std::size_t i = 0; i < nc; ++i)
            for (std::size_t j = i; j < nc; ++j, ++p) {
                cxf* r = R.colptr(p);
                const cxf *xi = X.colptr(i), *xj = X.colptr(j);
                for (std::size_t k = 0; k < n2; ++k) r[k] = xi[k] * std::conj(xj[k]);
                box_sum(r, Nx, Ny, Nz, half);
            }
    }
    auto pair_index = [nc](std::size_t i, std::size_t j) { return i * nc - i * (i - 1) / 2 + (j - i); };
    // mask: window amplitude above threshold x its maximum, holes filled
    arma::vec amp(n2);
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += R(k, pair_index(c, c)).real();
        amp[k] = std::sqrt(std::max(e, 0.0));
    }
    const double ampMax = amp.max();
    std::vector<char> inside(n2);
    for (std::size_t k = 0; k < n2; ++k) inside[k] = ampMax > 0 && amp[k] > options.threshold * ampMax;
    const arma::uvec mask = options.threshold > 0 ? fill_holes(inside, Nx, Ny, Nz) : arma::uvec(n2, arma::fill::ones);
    // reference direction for pixels whose combined value vanishes: the dominant eigenvector of all of them
    arma::cx_mat total(nc, nc, arma::fill::zeros);
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t j = i; j < nc; ++j) {
            std::complex<double> s = 0;
            const cxf* r = R.colptr(pair_index(i, j));
            for (std::size_t k = 0; k < n2; ++k)
                if (mask[k]) s += std::complex<double>(r[k]);
            if (i == j) s = s.real();
            total(i, j) = s;
            total(j, i) = std::conj(s);
        }
    arma::vec tval;
    arma::cx_mat tvec;
    arma::eig_sym(tval, tvec, total);
    const arma::cx_vec u0 = tvec.col(nc - 1);

    arma::cx_fvec maps(n2 * nc, arma::fill::zeros);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long kk = 0; kk < (long long)n2; ++kk) {
        const std::size_t k = static_cast<std::size_t>(kk);
        if (!mask[k]) continue;
        arma::cx_mat Rk(nc, nc);
        for (std::size_t i = 0; i < nc; ++i)
            for (std::size_t j = i; j < nc; ++j) {
                std::complex<double> v(R(k, pair_index(i, j)));
                if (i == j) v = v.real();
                Rk(i, j) = v;
                Rk(j, i) = std::conj(v);
            }
        arma::vec val;
        arma::cx_mat vec;
        if (!arma::eig_sym(val, vec, Rk)) continue;
        arma::cx_vec v = vec.col(nc - 1);
        std::complex<double> z = 0;  // v^H (window sum of x)
        for (std::size_t c = 0; c < nc; ++c) z += std::conj(v[c]) * std::complex<double>(xs(k, c));
        double zn = std::abs(z), vn = 0;
        for (std::size_t c = 0; c < nc; ++c) vn += std::abs(xs(k, c));
        if (zn > 1e-6 * vn && zn > 0) {
            v *= z / zn;
        } else {
            const std::complex<double> r = arma::cdot(u0, v);
            if (std::abs(r) > 0) v *= std::conj(r) / std::abs(r);
        }
        for (std::size_t c = 0; c < nc; ++c) maps[c * n2 + k] = cxf(v[c]);
    }
    if (maskOut) *maskOut = mask;
    return maps;
}

arma::cx_fmat low_resolution_coil_images(const ReconProblem& P, const ReconFrame& fr, const CoilMapOptions& options,
                                         std::array<double, 3>* usedWidth) {
    check_options(options);
    const std::size_t n1 = fr.kx.n_elem, n2 = P.n2();
    if (fr.y.n_elem != n1 * P.nc)
        throw invalid_argument("low_resolution_coil_images: the frame holds " + std::to_string(fr.y.n_elem) +
                               " values (expected samples x coils = " + std::to_string(n1 * P.nc) + ")");
    const std::size_t N[3] = {P.Nx, P.Ny, P.Nz};
    const arma::fvec* K[3] = {&fr.kx, &fr.ky, &fr.kz};
    double half[3];
    // Cartesian data: no wider than the fully sampled centre (an accelerated scan's calibration region)
    ReconProblem one;
    one.Nx = P.Nx;
    one.Ny = P.Ny;
    one.Nz = P.Nz;
    one.fovRatio = P.fovRatio;
    one.frames.push_back(fr);
    const std::array<std::size_t, 3> grid = fft_grid(one);
    const bool cartesian = grid[0] > 0;
    for (int d = 0; d < 3; ++d) {
        half[d] = std::min(options.calibration / 2, double(N[d]) / 2);
        if (N[d] == 1) continue;
        if (cartesian) {
            // lattice step: 1 cycle per encoded FOV, in cycles per recon FOV
            const double h = sampled_centre_half_width(*K[d], double(N[d]) / double(grid[d]));
            if (2 * h < 6)
                throw invalid_argument("coil maps: the fully sampled centre of k-space along " +
                                       std::string(1, "xyz"[d]) + " is " + std::to_string(int(2 * h + 1)) +
                                       " line(s) wide; estimating coil maps needs at least 7 (acquire a calibration "
                                       "region, or give the maps)");
            half[d] = std::min(half[d], h);
        }
    }
    if (usedWidth) *usedWidth = {{2 * half[0], 2 * half[1], P.Nz > 1 ? 2 * half[2] : 0.0}};
    // Cartesian: the box (the calibration region is a box); otherwise the inscribed ellipse (ellipsoid), which
    // radial and spiral trajectories cover evenly up to its edge
    auto radius = [&](std::size_t j, double extra) {
        double r2 = 0;
        for (int d = 0; d < 3; ++d)
            if (N[d] > 1) r2 += std::pow((*K[d])[j] / (half[d] + extra), 2);
        return std::sqrt(r2);
    };
    std::vector<arma::uword> sel;
    for (std::size_t j = 0; j < n1; ++j) {
        bool in = true;
        if (cartesian) {
            for (int d = 0; d < 3; ++d)
                if (N[d] > 1 && std::fabs((*K[d])[j]) > half[d] + 1e-4) in = false;
        } else {
            in = radius(j, 0) <= 1 + 1e-6;
        }
        if (in) sel.push_back(j);
    }
    if (sel.size() < 2)
        throw invalid_argument("coil maps: no samples within the central " + std::to_string(options.calibration) +
                               " cycles/FOV of k-space");
    const arma::uvec idx(sel);
    const arma::fvec kx = fr.kx.elem(idx), ky = fr.ky.elem(idx), kz = fr.kz.elem(idx);
    Gnufft<float> G(idx.n_elem, P.Nx, P.Ny, P.Nz, kx, ky, kz);
    arma::fvec w = density_compensation<float>(G, 20);
    const arma::fvec* Ks[3] = {&kx, &ky, &kz};
    for (arma::uword j = 0; j < idx.n_elem; ++j) {
        if (cartesian) {
            for (int d = 0; d < 3; ++d)
                if (N[d] > 1) w[j] *= float(0.5 * (1 + std::cos(M_PI * (*Ks[d])[j] / (half[d] + 1))));
        } else {
            w[j] *= float(0.5 * (1 + std::cos(M_PI * std::min(1.0, radius(idx[j], 1)))));
        }
    }
    arma::cx_fmat X(n2, P.nc);
    // With a field map: the exact adjoint (conjugate phase), while it costs at most kFieldCorrectedLimit
    // sample-pixel products; its blur would otherwise mix the coils' signals where the field varies.
    constexpr double kFieldCorrectedLimit = 2e9;
    const bool withField = fr.slice < P.fieldmap.size() && P.fieldmap[fr.slice].n_elem == n2 &&
                           double(idx.n_elem) * double(n2) * double(P.nc) <= kFieldCorrectedLimit;
    std::unique_ptr<Gdft<float>> D;
    if (withField) {
        const arma::fvec t = fr.t.elem(idx);
        D.reset(new Gdft<float>(idx.n_elem, n2, kx, ky, kz, P.ix, P.iy, P.iz, P.fieldmap[fr.slice], t));
    }
    for (std::size_t c = 0; c < P.nc; ++c) {
        arma::cx_fvec yc = fr.y.subvec(c * n1, (c + 1) * n1 - 1);
        arma::cx_fvec ys = yc.elem(idx) % arma::conv_to<arma::cx_fvec>::from(w);
        X.col(c) = withField ? arma::cx_fvec(*D / ys) : arma::cx_fvec(G / ys);
    }
    return X;
}

std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem& P, const CoilMapOptions& options,
                                              std::vector<arma::uvec>* masks, std::array<double, 3>* usedWidth) {
    std::vector<arma::cx_fvec> maps(P.nslices);
    if (masks) masks->assign(P.nslices, arma::uvec());
    std::vector<char> done(P.nslices, 0);
    for (const auto& fr : P.frames) {  // frame-major: the first frame holding each slice
        if (fr.slice >= P.nslices || done[fr.slice]) continue;
        const arma::cx_fmat X = low_resolution_coil_images(P, fr, options, usedWidth);
        maps[fr.slice] = coil_maps_from_images(X, P.Nx, P.Ny, P.Nz, options, masks ? &(*masks)[fr.slice] : nullptr);
        done[fr.slice] = 1;
    }
    for (std::size_t s = 0; s < P.nslices; ++s)
        if (!done[s]) throw invalid_argument("estimate_coil_maps: slice " + std::to_string(s) + " has no frame");
    return maps;
}

}  // namespace recon
}  // namespace forge
