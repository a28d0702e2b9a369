#include "forge/Recon/CoilMaps.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <type_traits>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/DensityCompensation.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Recon/cuda/MapKernels.h"
#include "forge/Solvers/recon_solve.h"

namespace forge {
namespace recon {

namespace {

using cxf = std::complex<float>;

// In-place sum over a (2 half + 1)^d window (clipped at the faces) of an Nx x Ny x Nz complex<float> image, by
// prefix sums along each axis, accumulated in double (float prefix sums would lose the small values of a line
// to the rounding of its total), each axis's result stored in float.
void box_sum(cxf* img, std::size_t Nx, std::size_t Ny, std::size_t Nz, std::size_t half) {
    using cxd = std::complex<double>;
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    std::vector<cxd> prefix;
    std::vector<cxf> line;
    for (int d = 0; d < 3; ++d) {
        const std::size_t n = N[d];
        if (n == 1 || half == 0) continue;
        line.resize(n);
        prefix.assign(n + 1, cxd(0));
        const std::size_t total = Nx * Ny * Nz;
        for (std::size_t start = 0; start < total; ++start) {
            if ((start / stride[d]) % n != 0) continue;  // the first pixel of each line along d
            for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cxd(img[start + i * stride[d]]);
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t lo = i >= half ? i - half : 0, hi = std::min(n - 1, i + half);
                line[i] = cxf(prefix[hi + 1] - prefix[lo]);
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

namespace {

std::size_t pair_index(std::size_t i, std::size_t j, std::size_t nc) { return i * nc - i * (i - 1) / 2 + (j - i); }

// Whether the maps of nc coils are computed on the GPU for 'device' (recon_solve's rule: Auto takes a usable
// GPU). More coils than the device kernel takes stay on the host under Auto and are refused under GPU.
bool maps_on_gpu(ReconDevice device, std::size_t nc, const char* who) {
    const bool gpu = solver_detail::recon_on_gpu<float>(device, who);
    if (gpu && nc > cuda::kMaxDeviceCoils) {
        if (device == ReconDevice::GPU)
            throw invalid_argument(std::string(who) + ": " + std::to_string(nc) + " coils with device = GPU (the GPU " +
                                   "path takes at most " + std::to_string(cuda::kMaxDeviceCoils) +
                                   "; compress the coils or use the host)");
        return false;
    }
    return gpu;
}

// The mask from the window amplitudes: above threshold x their maximum, holes filled.
arma::uvec mask_from_amplitude(const double* amp, std::size_t Nx, std::size_t Ny, std::size_t Nz, double threshold) {
    const std::size_t n2 = Nx * Ny * Nz;
    if (!(threshold > 0)) return arma::uvec(n2, arma::fill::ones);
    double ampMax = 0;
    for (std::size_t k = 0; k < n2; ++k) ampMax = std::max(ampMax, amp[k]);
    std::vector<char> inside(n2);
    for (std::size_t k = 0; k < n2; ++k) inside[k] = ampMax > 0 && amp[k] > threshold * ampMax;
    return fill_holes(inside, Nx, Ny, Nz);
}

// The reference direction for pixels whose combined value vanishes: the dominant eigenvector of the masked
// covariance total (npairs sums, the host's pair order).
arma::cx_vec reference_direction(const std::complex<double>* pairTotal, std::size_t nc) {
    arma::cx_mat total(nc, nc);
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t j = i; j < nc; ++j) {
            std::complex<double> v = pairTotal[pair_index(i, j, nc)];
            if (i == j) v = v.real();
            total(i, j) = v;
            total(j, i) = std::conj(v);
        }
    arma::vec tval;
    arma::cx_mat tvec;
    arma::eig_sym(tval, tvec, total);
    return tvec.col(nc - 1);
}

// The map of pixel k (writes maps[c * n2 + k]) from the window sums 'cols' (n2 x (nc + npairs): the summed
// coil images, then the covariance pairs): the leading eigenvector of the window covariance, its phase fixed.
// Leaves the pixel untouched where eig_sym fails.
void pixel_map(const cxf* cols, std::size_t n2, std::size_t nc, std::size_t k, const arma::cx_vec& u0, cxf* maps) {
    arma::cx_mat Rk(nc, nc);
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t j = i; j < nc; ++j) {
            std::complex<double> v(cols[(nc + pair_index(i, j, nc)) * n2 + k]);
            if (i == j) v = v.real();
            Rk(i, j) = v;
            Rk(j, i) = std::conj(v);
        }
    arma::vec val;
    arma::cx_mat vec;
    if (!arma::eig_sym(val, vec, Rk)) return;
    arma::cx_vec v = vec.col(nc - 1);
    std::complex<double> z = 0;  // v^H (window sum of x)
    double vn = 0;
    for (std::size_t c = 0; c < nc; ++c) {
        z += std::conj(v[c]) * std::complex<double>(cols[c * n2 + k]);
        vn += std::abs(cols[c * n2 + k]);
    }
    const double zn = std::abs(z);
    if (zn > 1e-6 * vn && zn > 0) {
        v *= z / zn;
    } else {
        const std::complex<double> r = arma::cdot(u0, v);
        if (std::abs(r) > 0) v *= std::conj(r) / std::abs(r);
    }
    for (std::size_t c = 0; c < nc; ++c) maps[c * n2 + k] = cxf(v[c]);
}

arma::cx_fvec coil_maps_host(const arma::cx_fmat& X, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                             const CoilMapOptions& options, arma::uvec* maskOut) {
    const std::size_t n2 = Nx * Ny * Nz, nc = X.n_cols, npairs = nc * (nc + 1) / 2;
    const std::size_t half = static_cast<std::size_t>(options.kernel / 2);
    // window sums of x (for the phase) and of every coil pair's products (the covariance), as columns
    arma::cx_fmat cols(n2, nc + npairs);
    cols.cols(0, nc - 1) = X;
    {
        std::size_t p = nc;
        for (std::size_t i = 0; i < nc; ++i)
            for (std::size_t j = i; j < nc; ++j, ++p) {
                cxf* r = cols.colptr(p);
                const cxf *xi = X.colptr(i), *xj = X.colptr(j);
                for (std::size_t k = 0; k < n2; ++k) r[k] = xi[k] * std::conj(xj[k]);
            }
    }
#pragma omp parallel for schedule(dynamic, 1) if (n2 * (nc + npairs) > 65536)
    for (long long c = 0; c < (long long)(nc + npairs); ++c) box_sum(cols.colptr(std::size_t(c)), Nx, Ny, Nz, half);
    // mask: window amplitude above threshold x its maximum, holes filled
    std::vector<double> amp(n2);
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += cols(k, nc + pair_index(c, c, nc)).real();
        amp[k] = std::sqrt(std::max(e, 0.0));
    }
    const arma::uvec mask = mask_from_amplitude(amp.data(), Nx, Ny, Nz, options.threshold);
    std::vector<std::complex<double>> pairTotal(npairs, 0.0);
    for (std::size_t p = 0; p < npairs; ++p) {
        const cxf* r = cols.colptr(nc + p);
        for (std::size_t k = 0; k < n2; ++k)
            if (mask[k]) pairTotal[p] += std::complex<double>(r[k]);
    }
    const arma::cx_vec u0 = reference_direction(pairTotal.data(), nc);
    arma::cx_fvec maps(n2 * nc, arma::fill::zeros);
#pragma omp parallel for schedule(dynamic, 64)
    for (long long kk = 0; kk < (long long)n2; ++kk)
        if (mask[std::size_t(kk)]) pixel_map(cols.memptr(), n2, nc, std::size_t(kk), u0, maps.memptr());
    if (maskOut) *maskOut = mask;
    return maps;
}

// The same on the GPU from coil images already there (dX: nc x n2, coil-major). The mask's flood fill and
// the reference direction's small eigenproblem run on the host between the kernels; pixels the device
// flags (see coil_leading_eigenvectors) are recomputed on the host from the device's window sums.
arma::cx_fvec coil_maps_device(const forgeComplex<float>* dX, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                               std::size_t nc, const CoilMapOptions& options, arma::uvec* maskOut) {
    using fc = forgeComplex<float>;
    const std::size_t n2 = Nx * Ny * Nz, npairs = nc * (nc + 1) / 2, ncols = nc + npairs;
    const cuda::MapGrid grid{Nx, Ny, Nz};
    DeviceBuffer cols(n2 * ncols * sizeof(fc));
    {
        DeviceBuffer scratch(n2 * ncols * sizeof(fc));
        cuda::coil_covariance(dX, cols.as<fc>(), scratch.as<fc>(), grid, nc, std::size_t(options.kernel / 2));
    }
    DeviceBuffer ampDev(n2 * sizeof(double));
    cuda::coil_window_amplitude(cols.as<fc>(), ampDev.as<double>(), grid, nc);
    std::vector<double> amp(n2);
    device::copy_to_host(amp.data(), ampDev.get(), n2 * sizeof(double));
    const arma::uvec mask = mask_from_amplitude(amp.data(), Nx, Ny, Nz, options.threshold);
    std::vector<unsigned char> maskBytes(n2);
    for (std::size_t k = 0; k < n2; ++k) maskBytes[k] = mask[k] ? 1 : 0;
    DeviceBuffer maskDev(n2);
    device::copy_to_device(maskDev.get(), maskBytes.data(), n2);
    DeviceBuffer totalDev(npairs * sizeof(forgeComplex<double>));
    cuda::coil_covariance_total(cols.as<fc>(), maskDev.as<unsigned char>(), totalDev.as<forgeComplex<double>>(), grid,
                                nc);
    std::vector<std::complex<double>> pairTotal(npairs);
    device::copy_to_host(pairTotal.data(), totalDev.get(), npairs * sizeof(std::complex<double>));
    const arma::cx_vec u0 = reference_direction(pairTotal.data(), nc);
    DeviceBuffer u0Dev(nc * sizeof(std::complex<double>));
    device::copy_to_device(u0Dev.get(), u0.memptr(), nc * sizeof(std::complex<double>));
    DeviceBuffer mapsDev(n2 * nc * sizeof(fc)), flagsDev(n2);
    cuda::coil_leading_eigenvectors(cols.as<fc>(), maskDev.as<unsigned char>(), u0Dev.as<forgeComplex<double>>(),
                                    mapsDev.as<fc>(), flagsDev.as<unsigned char>(), grid, nc);
    arma::cx_fvec maps(n2 * nc);
    device::copy_to_host(maps.memptr(), mapsDev.get(), n2 * nc * sizeof(fc));
    std::vector<unsigned char> flags(n2);
    device::copy_to_host(flags.data(), flagsDev.get(), n2);
    std::vector<std::size_t> flagged;
    for (std::size_t k = 0; k < n2; ++k)
        if (flags[k]) flagged.push_back(k);
    if (!flagged.empty()) {
        arma::cx_fmat hostCols(n2, ncols);
        device::copy_to_host(hostCols.memptr(), cols.get(), n2 * ncols * sizeof(fc));
        for (std::size_t k : flagged) {
            for (std::size_t c = 0; c < nc; ++c) maps[c * n2 + k] = cxf(0);
            pixel_map(hostCols.memptr(), n2, nc, k, u0, maps.memptr());
        }
    }
    if (maskOut) *maskOut = mask;
    return maps;
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
    if (!maps_on_gpu(options.device, nc, "coil_maps_from_images"))
        return coil_maps_host(X, Nx, Ny, Nz, options, maskOut);
    forgeCol<forgeComplex<float>> dX(arma::cx_fvec(const_cast<cxf*>(X.memptr()), n2 * nc, false, true));
    dX.put_on_gpu();
    return coil_maps_device(dX.device_memptr(), Nx, Ny, Nz, nc, options, maskOut);
}

namespace {

// The gridding operator and the tapered density compensation of one calibration selection. Frames of the same
// trajectory (the slices of a multi-slice scan) select the same samples: the second one reuses them.
struct Calibration {
    arma::fvec kx, ky, kz;
    double half[3] = {0, 0, 0};
    std::shared_ptr<Gnufft<float>> G;
    arma::fvec w;
    bool same(const arma::fvec& x, const arma::fvec& y, const arma::fvec& z, const double h[3]) const {
        return G && h[0] == half[0] && h[1] == half[1] && h[2] == half[2] && x.n_elem == kx.n_elem &&
               arma::all(x == kx) && arma::all(y == ky) && arma::all(z == kz);
    }
};

// Low-resolution coil images (nc x n2, coil-major) of one frame: on the GPU (one batched adjoint over the
// coils, the result left there) when 'gpu', else on the host coil by coil.
forgeCol<forgeComplex<float>> low_resolution_images(const ReconProblem& P, const ReconFrame& fr,
                                                    const CoilMapOptions& options, std::array<double, 3>* usedWidth,
                                                    bool gpu, Calibration& cache) {
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
    if (!cache.same(kx, ky, kz, half)) {
        cache.G = std::make_shared<Gnufft<float>>(idx.n_elem, P.Nx, P.Ny, P.Nz, kx, ky, kz);
        arma::fvec w = density_compensation<float>(*cache.G, 20);
        const arma::fvec* Ks[3] = {&kx, &ky, &kz};
        for (arma::uword j = 0; j < idx.n_elem; ++j) {
            if (cartesian) {
                for (int d = 0; d < 3; ++d)
                    if (N[d] > 1) w[j] *= float(0.5 * (1 + std::cos(M_PI * (*Ks[d])[j] / (half[d] + 1))));
            } else {
                w[j] *= float(0.5 * (1 + std::cos(M_PI * std::min(1.0, radius(idx[j], 1)))));
            }
        }
        cache.kx = kx;
        cache.ky = ky;
        cache.kz = kz;
        for (int d = 0; d < 3; ++d) cache.half[d] = half[d];
        cache.w = w;
    }
    const Gnufft<float>& G = *cache.G;
    const arma::cx_fvec wc = arma::conv_to<arma::cx_fvec>::from(cache.w);
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
    const std::size_t ns = idx.n_elem;
    if (gpu) {
        arma::cx_fvec ys(ns * P.nc);
        for (std::size_t c = 0; c < P.nc; ++c)
            ys.subvec(c * ns, (c + 1) * ns - 1) = fr.y.subvec(c * n1, (c + 1) * n1 - 1).eval().elem(idx) % wc;
        forgeCol<forgeComplex<float>> yDev(ys);
        yDev.put_on_gpu();
        return withField ? D->adjoint(yDev, P.nc) : G.adjoint(yDev, P.nc);
    }
    arma::cx_fvec X(n2 * P.nc);
    for (std::size_t c = 0; c < P.nc; ++c) {
        arma::cx_fvec yc = fr.y.subvec(c * n1, (c + 1) * n1 - 1);
        arma::cx_fvec ys = yc.elem(idx) % wc;
        X.subvec(c * n2, (c + 1) * n2 - 1) = withField ? arma::cx_fvec(*D / ys) : arma::cx_fvec(G / ys);
    }
    return forgeCol<forgeComplex<float>>(X);
}

}  // namespace

arma::cx_fmat low_resolution_coil_images(const ReconProblem& P, const ReconFrame& fr, const CoilMapOptions& options,
                                         std::array<double, 3>* usedWidth) {
    check_options(options);
    const bool gpu = solver_detail::recon_on_gpu<float>(options.device, "low_resolution_coil_images");
    Calibration cache;
    forgeCol<forgeComplex<float>> X = low_resolution_images(P, fr, options, usedWidth, gpu, cache);
    if (X.on_gpu()) X.get_from_gpu();
    return arma::cx_fmat(reinterpret_cast<const cxf*>(X.memptr()), P.n2(), P.nc);
}

std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem& P, const CoilMapOptions& options,
                                              std::vector<arma::uvec>* masks, std::array<double, 3>* usedWidth) {
    std::vector<arma::cx_fvec> maps(P.nslices);
    if (masks) masks->assign(P.nslices, arma::uvec());
    std::vector<char> done(P.nslices, 0);
    check_options(options);
    // the images stay where they are made: on the GPU, the maps' kernels read them there
    const bool gpu = maps_on_gpu(options.device, P.nc, "estimate_coil_maps");
    Calibration cache;
    for (const auto& fr : P.frames) {  // frame-major: the first frame holding each slice
        if (fr.slice >= P.nslices || done[fr.slice]) continue;
        forgeCol<forgeComplex<float>> X = low_resolution_images(P, fr, options, usedWidth, gpu, cache);
        arma::uvec* mask = masks ? &(*masks)[fr.slice] : nullptr;
        if (gpu) {
            maps[fr.slice] = coil_maps_device(X.device_memptr(), P.Nx, P.Ny, P.Nz, P.nc, options, mask);
        } else {
            const arma::cx_fmat Xh(reinterpret_cast<const cxf*>(X.memptr()), P.n2(), P.nc);
            maps[fr.slice] = coil_maps_from_images(Xh, P.Nx, P.Ny, P.Nz, options, mask);
        }
        done[fr.slice] = 1;
    }
    for (std::size_t s = 0; s < P.nslices; ++s)
        if (!done[s]) throw invalid_argument("estimate_coil_maps: slice " + std::to_string(s) + " has no frame");
    return maps;
}

}  // namespace recon
}  // namespace forge
