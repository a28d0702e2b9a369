#include "forge/Recon/CoilMaps.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <future>
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

// The calibration width asked for (CoilMapOptions::calibration; 0: 48 for 2D non-Cartesian data, else 24).
double calibration_width(const CoilMapOptions& o, std::size_t Nz, bool cartesian) {
    if (o.calibration > 0) return o.calibration;
    return Nz > 1 || cartesian ? 24.0 : 48.0;
}

void check_options(const CoilMapOptions& o) {
    if (!(o.calibration >= 4 || o.calibration == 0) || !std::isfinite(o.calibration))
        throw invalid_argument("coil maps: calibration is " + std::to_string(o.calibration) +
                               " (expected a width of at least 4 cycles/FOV, or 0 for the default)");
    if (o.kernel < 1 || o.kernel % 2 == 0 || o.kernel > 63)
        throw invalid_argument("coil maps: kernel is " + std::to_string(o.kernel) + " (expected an odd width 1 to 63)");
    if (!(o.threshold >= 0 && o.threshold < 1))
        throw invalid_argument("coil maps: threshold is " + std::to_string(o.threshold) + " (expected 0 <= t < 1)");
    if (!(o.max_dropped_energy >= 0 && o.max_dropped_energy <= 0.5))
        throw invalid_argument("coil maps: max_dropped_energy is " + std::to_string(o.max_dropped_energy) +
                               " (expected a share 0 to 0.5)");
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

// The mask's window-amplitude level (CoilMaps.h, step 3): the smallest of threshold x the largest amplitude, 2 x
// the background (10th percentile) and the amplitude below which the pixels hold max_dropped_energy of the window
// energy. 0 when either option is 0 (every pixel kept).
double mask_level(const double* amp, std::size_t n2, const CoilMapOptions& o) {
    if (!(o.threshold > 0) || !(o.max_dropped_energy > 0) || n2 == 0) return 0;
    std::vector<double> sorted(amp, amp + n2);
    std::sort(sorted.begin(), sorted.end());
    const double ampMax = sorted.back();
    if (!(ampMax > 0)) return 0;
    const double background = sorted[n2 / 10];
    double total = 0;
    for (double a : sorted) total += a * a;
    // the largest level whose pixels below it hold at most max_dropped_energy of the energy
    double below = 0, energyLevel = 0;
    for (double a : sorted) {
        if (below + a * a > o.max_dropped_energy * total) break;
        below += a * a;
        energyLevel = a;
    }
    return std::min({o.threshold * ampMax, 2 * background, energyLevel});
}

// The mask: window amplitude above 'level' (mask_level), holes filled.
arma::uvec mask_from_amplitude(const double* amp, std::size_t Nx, std::size_t Ny, std::size_t Nz, double level) {
    const std::size_t n2 = Nx * Ny * Nz;
    if (!(level > 0)) return arma::uvec(n2, arma::fill::ones);
    std::vector<char> inside(n2);
    for (std::size_t k = 0; k < n2; ++k) inside[k] = amp[k] > level;
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

// The leading eigenvector of the Hermitian positive semi-definite R by power iteration from 'v' (the window's
// coil vector, which for a covariance dominated by one object is close to it already), normalised, in place.
// Each step costs nc^2 against eig_sym's ~9 nc^3 (32 coils: 1k against 300k multiply-adds); false, v
// untouched, where it has not converged to 1e-13 in kPowerSteps steps (a zero matrix, nearly equal leading
// eigenvalues), and the caller decomposes R.
bool leading_eigenvector(const arma::cx_mat& R, arma::cx_vec& v) {
    constexpr int kPowerSteps = 300;
    const std::size_t nc = R.n_rows;
    double n = arma::norm(v);
    if (!(n > 0) || !std::isfinite(n)) return false;
    arma::cx_vec u = v / n, w(nc);
    for (int step = 0; step < kPowerSteps; ++step) {
        for (std::size_t i = 0; i < nc; ++i) {  // w = R u (R's columns are contiguous: R u = sum_j R(:, j) u_j)
            std::complex<double> acc = 0;
            for (std::size_t j = 0; j < nc; ++j) acc += std::conj(R(j, i)) * u[j];
            w[i] = acc;
        }
        n = arma::norm(w);
        if (!(n > 0) || !std::isfinite(n)) return false;
        w /= n;
        // R is positive semi-definite: u^H R u >= 0, so a converged w has u's phase and the difference vanishes
        double d = 0;
        for (std::size_t i = 0; i < nc; ++i) d += std::norm(w[i] - u[i]);
        u.swap(w);
        if (d < 1e-26) {
            v = u;
            return true;
        }
    }
    return false;
}

// The map of pixel k (writes maps[c * n2 + k]) from the window sums 'cols' (n2 x (nc + npairs): the summed
// coil images, then the covariance pairs): the leading eigenvector of the window covariance (power iteration;
// eig_sym where it does not converge), its phase fixed.
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
    arma::cx_vec v(nc);
    for (std::size_t c = 0; c < nc; ++c) v[c] = std::complex<double>(cols[c * n2 + k]);
    if (!leading_eigenvector(Rk, v)) {
        arma::vec val;
        arma::cx_mat vec;
        if (!arma::eig_sym(val, vec, Rk)) return;
        v = vec.col(nc - 1);
    }
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

// Maps of one grid with their mask and window amplitudes. With 'everyPixel' the eigenvectors of the pixels
// outside the mask are computed too (for interpolation onto a finer grid); otherwise they are 0.
struct GridMaps {
    arma::cx_fvec maps;       // nc x n2, coil-major
    arma::uvec mask;          // n2
    std::vector<double> amp;  // n2 window amplitudes
    double level = 0;         // the mask's amplitude level
};

GridMaps coil_maps_host(const arma::cx_fmat& X, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                        const CoilMapOptions& options, bool everyPixel) {
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
    GridMaps out;
    out.amp.resize(n2);
    for (std::size_t k = 0; k < n2; ++k) {
        double e = 0;
        for (std::size_t c = 0; c < nc; ++c) e += cols(k, nc + pair_index(c, c, nc)).real();
        out.amp[k] = std::sqrt(std::max(e, 0.0));
    }
    out.level = mask_level(out.amp.data(), n2, options);
    out.mask = mask_from_amplitude(out.amp.data(), Nx, Ny, Nz, out.level);
    const arma::uvec& mask = out.mask;
    std::vector<std::complex<double>> pairTotal(npairs, 0.0);
    for (std::size_t p = 0; p < npairs; ++p) {
        const cxf* r = cols.colptr(nc + p);
        for (std::size_t k = 0; k < n2; ++k)
            if (mask[k]) pairTotal[p] += std::complex<double>(r[k]);
    }
    const arma::cx_vec u0 = reference_direction(pairTotal.data(), nc);
    out.maps.zeros(n2 * nc);
#pragma omp parallel for schedule(dynamic, 64)
    for (long long kk = 0; kk < (long long)n2; ++kk)
        if (everyPixel || mask[std::size_t(kk)])
            pixel_map(cols.memptr(), n2, nc, std::size_t(kk), u0, out.maps.memptr());
    return out;
}

// The same on the GPU from coil images already there (dX: nc x n2, coil-major). The mask's flood fill and
// the reference direction's small eigenproblem run on the host between the kernels; pixels the device
// flags (see coil_leading_eigenvectors) are recomputed on the host from the device's window sums.
GridMaps coil_maps_device(const forgeComplex<float>* dX, std::size_t Nx, std::size_t Ny, std::size_t Nz, std::size_t nc,
                          const CoilMapOptions& options, bool everyPixel) {
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
    GridMaps out;
    out.amp.resize(n2);
    device::copy_to_host(out.amp.data(), ampDev.get(), n2 * sizeof(double));
    out.level = mask_level(out.amp.data(), n2, options);
    out.mask = mask_from_amplitude(out.amp.data(), Nx, Ny, Nz, out.level);
    const arma::uvec& mask = out.mask;
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
    if (everyPixel) {  // the eigenvectors of every pixel: the kernel's mask all ones
        std::vector<unsigned char> ones(n2, 1);
        device::copy_to_device(maskDev.get(), ones.data(), n2);
    }
    DeviceBuffer mapsDev(n2 * nc * sizeof(fc)), flagsDev(n2);
    cuda::coil_leading_eigenvectors(cols.as<fc>(), maskDev.as<unsigned char>(), u0Dev.as<forgeComplex<double>>(),
                                    mapsDev.as<fc>(), flagsDev.as<unsigned char>(), grid, nc);
    arma::cx_fvec& maps = out.maps;
    maps.set_size(n2 * nc);
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
    return out;
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
    GridMaps m;
    if (!maps_on_gpu(options.device, nc, "coil_maps_from_images")) {
        m = coil_maps_host(X, Nx, Ny, Nz, options, false);
    } else {
        forgeCol<forgeComplex<float>> dX(arma::cx_fvec(const_cast<cxf*>(X.memptr()), n2 * nc, false, true));
        dX.put_on_gpu();
        m = coil_maps_device(dX.device_memptr(), Nx, Ny, Nz, nc, options, false);
    }
    if (maskOut) *maskOut = m.mask;
    return m.maps;
}

namespace {}  // namespace

// The gridding operator and the tapered density compensation of one calibration selection. Frames of the same
// trajectory (the slices of a multi-slice scan, in one call or, through a CoilMapCache, in several) select the same
// samples: the later ones reuse them.
struct CoilMapCache::Calibration {
    // The calibration region of a frame's trajectory: the samples inside the central box (Cartesian) or ellipse,
    // before the data's spikes are left out, its half-widths and the map grid. It depends on the trajectory, the
    // image grid and the width asked for; the slices of a stream select it again from the same 98,304 samples
    // (1.6 ms of each 256x256 slice's maps on an H200's host).
    struct Region {
        arma::fvec kx, ky, kz;  // the frame's whole trajectory
        std::array<std::size_t, 3> N{{0, 0, 0}};
        std::array<double, 3> fov_ratio{{0, 0, 0}};
        double width_radial = 0, width_cartesian = 0;  // calibration_width() of the options, both kinds
        bool coarse = false;                           // a map grid (otherwise the image grid)
        double half[3] = {0, 0, 0};
        std::array<std::size_t, 3> M{{1, 1, 1}};
        bool cartesian = false;
        std::vector<arma::uword> sel;
        bool same(const ReconFrame& fr, const std::array<std::size_t, 3>& n, const std::array<double, 3>& ratio,
                  double radial, double cart, bool mapGrid) const {
            return !kx.is_empty() && n == N && ratio == fov_ratio && radial == width_radial &&
                   cart == width_cartesian && mapGrid == coarse && fr.kx.n_elem == kx.n_elem &&
                   fr.ky.n_elem == ky.n_elem && fr.kz.n_elem == kz.n_elem &&
                   std::equal(kx.begin(), kx.end(), fr.kx.begin()) && std::equal(ky.begin(), ky.end(), fr.ky.begin()) &&
                   std::equal(kz.begin(), kz.end(), fr.kz.begin());
        }
    } region;
    arma::cx_fvec gathered;  // the calibration samples times their weights, coil-major, for the GPU's upload
    arma::fvec kx, ky, kz;
    std::array<std::size_t, 3> grid{{0, 0, 0}};
    bool gpu = false;  // the density weights' path (the GPU's NUFFT convolution or the host's)
    std::shared_ptr<Gnufft<float>> G;
    arma::fvec w;
    bool same(const arma::fvec& x, const arma::fvec& y, const arma::fvec& z, const std::array<std::size_t, 3>& g,
              bool onGpu) const {
        return G && g == grid && onGpu == gpu && x.n_elem == kx.n_elem && arma::all(x == kx) && arma::all(y == ky) &&
               arma::all(z == kz);
    }
};

CoilMapCache::CoilMapCache() : calibration_(new Calibration) {}
CoilMapCache::~CoilMapCache() = default;

namespace {
using Calibration = CoilMapCache::Calibration;

// The distance of sample j from the centre of k-space, in units of the calibration half-widths widened by 'extra'.
double calibration_radius(const arma::fvec* const K[3], const std::size_t N[3], const double half[3], std::size_t j,
                          double extra) {
    double r2 = 0;
    for (int d = 0; d < 3; ++d)
        if (N[d] > 1) r2 += std::pow((*K[d])[j] / (half[d] + extra), 2);
    return std::sqrt(r2);
}

// The calibration region of frame fr (Calibration::Region): the half-widths, the map grid (with 'mapGrid'; the
// image grid otherwise) and the samples inside. Cartesian data: no wider than the fully sampled centre (an
// accelerated scan's calibration region).
Calibration::Region calibration_region(const ReconProblem& P, const ReconFrame& fr, const CoilMapOptions& options,
                                       bool mapGrid) {
    Calibration::Region r;
    const std::size_t n1 = fr.kx.n_elem;
    const std::size_t N[3] = {P.Nx, P.Ny, P.Nz};
    const arma::fvec* K[3] = {&fr.kx, &fr.ky, &fr.kz};
    ReconProblem one;
    one.Nx = P.Nx;
    one.Ny = P.Ny;
    one.Nz = P.Nz;
    one.fov_ratio = P.fov_ratio;
    one.frames.emplace_back();  // the trajectory alone (fft_grid reads k, not the data)
    one.frames[0].kx = fr.kx;
    one.frames[0].ky = fr.ky;
    one.frames[0].kz = fr.kz;
    const std::array<std::size_t, 3> grid = fft_grid(one);
    const bool cartesian = grid[0] > 0;
    const double width = calibration_width(options, P.Nz, cartesian);
    double* half = r.half;
    for (int d = 0; d < 3; ++d) {
        half[d] = std::min(width / 2, double(N[d]) / 2);
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
    // The map grid: the images hold frequencies up to half (+1 for the taper's edge), their covariance up to twice
    // that; 4 (half + 1) points per axis represent it, rounded up to even. Never finer than the image grid.
    for (int d = 0; d < 3; ++d)
        if (N[d] > 1) r.M[d] = mapGrid ? std::min(N[d], 2 * std::size_t(std::ceil(2 * (half[d] + 1)))) : N[d];
    // Cartesian: the box (the calibration region is a box); otherwise the inscribed ellipse (ellipsoid), which
    // radial and spiral trajectories cover evenly up to its edge
    for (std::size_t j = 0; j < n1; ++j) {
        bool in = true;
        if (cartesian) {
            for (int d = 0; d < 3; ++d)
                if (N[d] > 1 && std::fabs((*K[d])[j]) > half[d] + 1e-4) in = false;
        } else {
            in = calibration_radius(K, N, half, j, 0) <= 1 + 1e-6;
        }
        if (in) r.sel.push_back(j);
    }
    r.kx = fr.kx;
    r.ky = fr.ky;
    r.kz = fr.kz;
    r.N = {{P.Nx, P.Ny, P.Nz}};
    r.fov_ratio = P.fov_ratio;
    r.width_radial = calibration_width(options, P.Nz, false);
    r.width_cartesian = calibration_width(options, P.Nz, true);
    r.coarse = mapGrid;
    r.cartesian = cartesian;
    return r;
}

// Pipe's iterations for the calibration samples' density weights. Fewer leave a pedestal under the images where the
// samples crowd (3D radial's centre: 8 iterations leave 5 to 10% of the maximum over the whole volume, 20 about 2%).
constexpr uword kCalibrationDensityIterations = 20;

// From this many calibration samples on, a GPU estimation runs Pipe's iteration on the GPU with NUFFTs
// (nufft_density_compensation). Measured on an H200 with 16 host cores: a 3D radial centre of 210 000 samples
// costs the host's density convolution about 0.5 s, a 2D radial brain's 6144 samples 0.021 s. Below it both devices
// run the host's, so that small problems give the host's maps on the GPU to float rounding. The two weightings
// give maps of the same quality (the real spiral and brain: 9.5% and 2.5% of the coil images unexplained, against
// 9.3% and 2.5%) and masks up to 8% of the grid apart, at their edges in the background.
constexpr uword kDevicePipeSamples = 4096;

// Pipe and Menon's iteration w <- w / (C w) with C = G diag(h) G^H: G a NUFFT of the samples onto twice the field of
// view (2 M points per axis, k in cycles per that FOV), h a Gaussian of 0.4 FOV per axis over it. C convolves with
// h's transform, positive and about 0.9 cycles/FOV wide, as the host's density convolution does with its kernel's
// autocorrelation. (G G^H on the field of view itself convolves with the grid's Dirichlet kernel, whose negative
// sidelobes leave a pedestal under radial images; a Gaussian narrow enough to end within one FOV is 2 cycles wide,
// too wide for radial's crowded centre.) On the GPU when 'gpu'; the scale of w is immaterial (the maps are ratios).
arma::fvec nufft_density_compensation(const arma::fvec& kx, const arma::fvec& ky, const arma::fvec& kz,
                                      const std::array<std::size_t, 3>& M, uword iterations, bool gpu) {
    std::array<std::size_t, 3> M2{};
    for (int d = 0; d < 3; ++d) M2[d] = M[d] > 1 ? 2 * M[d] : 1;
    const arma::fvec k2[3] = {M[0] > 1 ? arma::fvec(2 * kx) : kx, M[1] > 1 ? arma::fvec(2 * ky) : ky,
                              M[2] > 1 ? arma::fvec(2 * kz) : kz};
    const Gnufft<float> G(kx.n_elem, M2[0], M2[1], M2[2], k2[0], k2[1], k2[2]);
    const std::size_t m2 = M2[0] * M2[1] * M2[2];
    arma::cx_fvec hHost(m2);
    for (std::size_t z = 0, k = 0; z < M2[2]; ++z)
        for (std::size_t y = 0; y < M2[1]; ++y)
            for (std::size_t x = 0; x < M2[0]; ++x, ++k) {
                const std::size_t m[3] = {x, y, z};
                double r2 = 0;  // position in units of the original FOV: 2 (m - M2/2) / M2
                for (int d = 0; d < 3; ++d)
                    if (M2[d] > 1) r2 += std::pow(2 * (double(m[d]) - double(M2[d] / 2)) / double(M2[d]) / 0.4, 2);
                hHost[k] = cxf(float(std::exp(-0.5 * r2)), 0.0f);
            }
    forgeCol<forgeComplex<float>> h(hHost), w(arma::cx_fvec(G.n1(), arma::fill::ones));
    if (gpu) {
        h.put_on_gpu();
        w.put_on_gpu();
    }
    for (uword it = 0; it < iterations; ++it) {
        const forgeCol<forgeComplex<float>> c = G * ((G / w) % h);
        w = w / abs(c);
    }
    if (w.on_gpu()) w.get_from_gpu();
    arma::fvec out(G.n1());
    const forgeComplex<float>* p = w.memptr();
    for (uword j = 0; j < G.n1(); ++j) out[j] = p[j].real();
    return out;
}

// Spike rejection: a calibration sample whose coil amplitude exceeds this multiple of the selection's 99th
// percentile is no measurement (a single 1e25 would otherwise be the whole low-resolution image, or overflow it).
constexpr double kSpikeFactor = 1e3;

// A mask that drops more than this share of the low-resolution images' energy (after step 3's levels, only holes
// that the fill cannot see, such as an object cut by the grid's faces, could) is replaced by the whole grid.
constexpr double kMaxDroppedEnergy = 0.01;

// Low-resolution coil images (nc x m2, coil-major) of one frame on the map grid 'M' (M_d points over the FOV of
// each axis; the image grid itself, or a coarser one): on the GPU (one batched adjoint over the coils, the result
// left there) when 'gpu', else on the host coil by coil. 'half' receives the calibration half-widths used;
// 'outliers' the samples left out as spikes. With 'normalise' the weights are scaled by a power of two that
// brings the largest calibration sample's amplitude into [1, 2) (the maps do not depend on the scale; the
// covariance then stays far from float's range whatever the data's units).
forgeCol<forgeComplex<float>> low_resolution_images(const ReconProblem& P, const ReconFrame& fr,
                                                    const CoilMapOptions& options, double half[3],
                                                    std::array<std::size_t, 3>* mapGrid, bool normalise,
                                                    std::size_t* outliers, bool gpu, Calibration& cache) {
    const std::size_t n1 = fr.kx.n_elem;
    if (fr.y.n_elem != n1 * P.nc)
        throw invalid_argument("low_resolution_coil_images: the frame holds " + std::to_string(fr.y.n_elem) +
                               " values (expected samples x coils = " + std::to_string(n1 * P.nc) + ")");
    const std::size_t N[3] = {P.Nx, P.Ny, P.Nz};
    const arma::fvec* K[3] = {&fr.kx, &fr.ky, &fr.kz};
    Calibration::Region& region = cache.region;
    if (!region.same(fr, {{P.Nx, P.Ny, P.Nz}}, P.fov_ratio, calibration_width(options, P.Nz, false),
                     calibration_width(options, P.Nz, true), mapGrid != nullptr))
        region = calibration_region(P, fr, options, mapGrid != nullptr);
    for (int d = 0; d < 3; ++d) half[d] = region.half[d];
    const bool cartesian = region.cartesian;
    const std::array<std::size_t, 3> M = region.M;
    if (mapGrid) *mapGrid = M;
    auto radius = [&](std::size_t j, double extra) { return calibration_radius(K, N, half, j, extra); };
    std::vector<arma::uword> sel = region.sel;
    // spikes: coil amplitude over kSpikeFactor x the 99th percentile of the selection's
    std::vector<double> amp(sel.size());
    for (std::size_t i = 0; i < sel.size(); ++i) {
        double e = 0;
        for (std::size_t c = 0; c < P.nc; ++c) e += std::norm(std::complex<double>(fr.y[c * n1 + sel[i]]));
        amp[i] = std::sqrt(e);
    }
    double largest = 0;
    if (!sel.empty()) {
        std::vector<double> sorted = amp;
        const std::size_t q = std::min(sorted.size() - 1, std::size_t(0.99 * double(sorted.size())));
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(q), sorted.end());
        const double limit = kSpikeFactor * sorted[q];
        std::vector<arma::uword> kept;
        for (std::size_t i = 0; i < sel.size(); ++i)
            if (!(amp[i] > limit) || !(limit > 0)) {
                kept.push_back(sel[i]);
                largest = std::max(largest, amp[i]);
            }
        if (outliers) *outliers = sel.size() - kept.size();
        sel.swap(kept);
    }
    if (sel.size() < 2)
        throw invalid_argument("coil maps: no samples within the central " +
                               std::to_string(calibration_width(options, P.Nz, cartesian)) + " cycles/FOV of k-space");
    const arma::uvec idx(sel);
    const arma::fvec kx = fr.kx.elem(idx), ky = fr.ky.elem(idx), kz = fr.kz.elem(idx);
    if (!cache.same(kx, ky, kz, M, gpu)) {
        cache.G = std::make_shared<Gnufft<float>>(idx.n_elem, M[0], M[1], M[2], kx, ky, kz);
        const bool viaNufft = gpu && idx.n_elem >= kDevicePipeSamples;
        arma::fvec w = viaNufft ? nufft_density_compensation(kx, ky, kz, M, kCalibrationDensityIterations, gpu)
                                : density_compensation<float>(*cache.G, kCalibrationDensityIterations);
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
        cache.grid = M;
        cache.gpu = gpu;
        cache.w = w;
    }
    const Gnufft<float>& G = *cache.G;
    // a power of two: the scaled images are the unscaled ones exactly, rounding for rounding
    const float scale = normalise && largest > 0 ? std::ldexp(1.0f, -std::ilogb(largest)) : 1.0f;
    const arma::cx_fvec wc = arma::conv_to<arma::cx_fvec>::from(cache.w * scale);
    const std::size_t m2 = M[0] * M[1] * M[2];
    // With a field map: the exact adjoint (conjugate phase) onto the map grid, the map sampled at its pixels,
    // while it costs at most kFieldCorrectedLimit sample-pixel products; its blur would otherwise mix the coils'
    // signals where the field varies.
    constexpr double kFieldCorrectedLimit = 2e9;
    const bool withField = fr.slice < P.field_map.size() && P.field_map[fr.slice].n_elem == P.n2() &&
                           double(idx.n_elem) * double(m2) * double(P.nc) <= kFieldCorrectedLimit;
    std::unique_ptr<Gdft<float>> D;
    if (withField) {
        const arma::fvec t = fr.t.elem(idx);
        arma::fvec ix(m2), iy(m2), iz(m2), fm(m2);
        for (std::size_t z = 0, k = 0; z < M[2]; ++z)
            for (std::size_t y = 0; y < M[1]; ++y)
                for (std::size_t x = 0; x < M[0]; ++x, ++k) {
                    const std::size_t m[3] = {x, y, z};
                    std::size_t src[3];
                    float pos[3];
                    for (int d = 0; d < 3; ++d) {
                        pos[d] = float((double(m[d]) - double(M[d] / 2)) / double(M[d]));
                        // the image pixel nearest this map pixel: image coordinate N (pos) + N/2
                        const long r = std::lround(double(N[d]) * double(pos[d]) + double(N[d] / 2));
                        src[d] = std::size_t(std::min<long>(std::max<long>(r, 0), long(N[d]) - 1));
                    }
                    ix[k] = pos[0];
                    iy[k] = pos[1];
                    iz[k] = pos[2];
                    fm[k] = P.field_map[fr.slice][src[0] + N[0] * (src[1] + N[1] * src[2])];
                }
        D.reset(new Gdft<float>(idx.n_elem, m2, kx, ky, kz, ix, iy, iz, fm, t));
    }
    const std::size_t ns = idx.n_elem;
    if (gpu) {
        // gathered into the cache's array, whose pages stay resident from slice to slice (a new one and its host
        // copy in a forgeCol took 1152 page faults of a 256x256 x 16-coil spiral slice, 2 to 4 ms on an H200's host),
        // and uploaded from there
        arma::cx_fvec& ys = cache.gathered;
        if (ys.n_elem != ns * P.nc) ys.set_size(ns * P.nc);
        for (std::size_t c = 0; c < P.nc; ++c)
            for (std::size_t i = 0; i < ns; ++i) ys[c * ns + i] = fr.y[c * n1 + idx[i]] * wc[i];
        auto yDev = forgeCol<forgeComplex<float>>::device_uninitialized(ys.n_elem);
        device::copy_to_device(yDev.device_memptr(), ys.memptr(), ys.n_elem * sizeof(ys[0]));
        return withField ? D->adjoint(yDev, P.nc) : G.adjoint(yDev, P.nc);
    }
    arma::cx_fvec X(m2 * P.nc);
    for (std::size_t c = 0; c < P.nc; ++c) {
        arma::cx_fvec yc = fr.y.subvec(c * n1, (c + 1) * n1 - 1);
        arma::cx_fvec ys = yc.elem(idx) % wc;
        X.subvec(c * m2, (c + 1) * m2 - 1) = withField ? arma::cx_fvec(*D / ys) : arma::cx_fvec(G / ys);
    }
    return forgeCol<forgeComplex<float>>(X);
}

// The maps of the image grid N from those of the map grid M (every pixel computed there), into 'maps' (n2 nc
// values, allocated by the caller): interpolated, normalised and masked pixel by pixel by interpolate_pixel_maps
// (MapKernels.h). The mask is the map grid's amplitude interpolated (interpolated_amplitude) and held against
// the same level, holes filled; every pixel where the level is 0. On the GPU when 'gpu', one thread a pixel; the
// host's part is then the hole filling.
GridMaps interpolate_maps(const GridMaps& m, const cuda::MapGrid& M, const cuda::MapGrid& N, std::size_t nc, bool gpu,
                          arma::cx_fvec&& maps) {
    using fc = forgeComplex<float>;
    const std::size_t n2 = N.n2(), m2 = M.n2();
    GridMaps out;
    out.level = m.level;
    out.maps = std::move(maps);
    const fc* src = reinterpret_cast<const fc*>(m.maps.memptr());
    fc* dst = reinterpret_cast<fc*>(out.maps.memptr());
    const bool masked = m.level > 0;
    if (gpu) {
        DeviceBuffer maskDev(n2);
        std::vector<char> bytes(n2, 1);  // the kernel's inside flags, then the mask with its holes filled
        if (masked) {
            DeviceBuffer ampDev(m2 * sizeof(double));
            device::copy_to_device(ampDev.get(), m.amp.data(), m2 * sizeof(double));
            cuda::coil_interpolated_inside(ampDev.as<double>(), M, m.level, maskDev.as<unsigned char>(), N);
            device::copy_to_host(bytes.data(), maskDev.get(), n2);
            out.mask = fill_holes(bytes, N.Nx, N.Ny, N.Nz);
            for (std::size_t k = 0; k < n2; ++k) bytes[k] = out.mask[k] ? 1 : 0;
        } else {
            out.mask.ones(n2);
        }
        DeviceBuffer srcDev(m2 * nc * sizeof(fc)), dstDev(n2 * nc * sizeof(fc));
        device::copy_to_device(srcDev.get(), src, m2 * nc * sizeof(fc));
        device::copy_to_device(maskDev.get(), bytes.data(), n2);
        cuda::coil_interpolate_maps(srcDev.as<fc>(), M, maskDev.as<unsigned char>(), dstDev.as<fc>(), N, nc);
        device::copy_to_host(dst, dstDev.get(), n2 * nc * sizeof(fc));
        return out;
    }
    auto corners = [&](std::size_t k) {
        return cuda::pixel_corners(M, N, k % N.Nx, (k / N.Nx) % N.Ny, k / (N.Nx * N.Ny));
    };
    if (masked) {
        std::vector<char> inside(n2);
#pragma omp parallel for schedule(static)
        for (long long k = 0; k < (long long)n2; ++k)
            inside[std::size_t(k)] = cuda::interpolated_amplitude(m.amp.data(), corners(std::size_t(k))) > m.level;
        out.mask = fill_holes(inside, N.Nx, N.Ny, N.Nz);
    } else {
        out.mask.ones(n2);
    }
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < (long long)n2; ++k)
        cuda::interpolate_pixel_maps(src, m2, nc, corners(std::size_t(k)), out.mask[std::size_t(k)] != 0, dst, n2,
                                     std::size_t(k));
    return out;
}

// sum_c |x_c(k)|^2 of the coil images X (nc x m2, coil-major) per pixel, on the GPU where X is.
std::vector<double> coil_energy(const forgeCol<forgeComplex<float>>& X, std::size_t m2, std::size_t nc) {
    std::vector<double> e(m2, 0.0);
    if (X.on_gpu()) {
        DeviceBuffer eDev(m2 * sizeof(double));
        cuda::coil_energy(X.device_memptr(), eDev.as<double>(), cuda::MapGrid{m2, 1, 1}, nc);
        device::copy_to_host(e.data(), eDev.get(), m2 * sizeof(double));
        return e;
    }
    const forgeComplex<float>* x = X.memptr();
    for (std::size_t c = 0; c < nc; ++c)
        for (std::size_t k = 0; k < m2; ++k)
            e[k] += double(x[c * m2 + k].re) * x[c * m2 + k].re + double(x[c * m2 + k].im) * x[c * m2 + k].im;
    return e;
}

// Share of the energy (per pixel, coil_energy) outside 'mask'.
double energy_outside(const std::vector<double>& energy, const arma::uvec& mask) {
    double out = 0, total = 0;
    for (std::size_t k = 0; k < energy.size(); ++k) {
        total += energy[k];
        if (!mask[k]) out += energy[k];
    }
    return total > 0 ? out / total : 0;
}

}  // namespace

arma::cx_fmat low_resolution_coil_images(const ReconProblem& P, const ReconFrame& fr, const CoilMapOptions& options,
                                         std::array<double, 3>* usedWidth) {
    check_options(options);
    const bool gpu = solver_detail::recon_on_gpu<float>(options.device, "low_resolution_coil_images");
    Calibration cache;
    double half[3];
    forgeCol<forgeComplex<float>> X = low_resolution_images(P, fr, options, half, nullptr, false, nullptr, gpu, cache);
    if (usedWidth) *usedWidth = {{2 * half[0], 2 * half[1], P.Nz > 1 ? 2 * half[2] : 0.0}};
    if (X.on_gpu()) X.get_from_gpu();
    return arma::cx_fmat(reinterpret_cast<const cxf*>(X.memptr()), P.n2(), P.nc);
}

std::vector<arma::cx_fvec> estimate_coil_maps(const ReconProblem& P, const CoilMapOptions& options,
                                              std::vector<arma::uvec>* masks, std::array<double, 3>* usedWidth,
                                              std::vector<CoilMapStats>* stats, CoilMapCache* reuse) {
    std::vector<arma::cx_fvec> maps(P.nslices);
    if (masks) masks->assign(P.nslices, arma::uvec());
    if (stats) stats->assign(P.nslices, CoilMapStats{});
    std::vector<char> done(P.nslices, 0);
    check_options(options);
    // the images stay where they are made: on the GPU, the maps' kernels read them there
    const bool gpu = maps_on_gpu(options.device, P.nc, "estimate_coil_maps");
    CoilMapCache own;
    Calibration& cache = *(reuse ? reuse : &own)->calibration_;
    for (const auto& fr : P.frames) {  // frame-major: the first frame holding each slice
        if (fr.slice >= P.nslices || done[fr.slice]) continue;
        // The slice's maps on the image grid (for the interpolation). On the GPU path a second host thread allocates
        // and first touches them while this one waits for the device: in a fresh process the page faults of a
        // 256^2 x 32-coil brain's maps (16 MB) took 10 to 20 ms of the H200 host's time, as long as the GPU's whole
        // estimation. The host path's interpolation touches them first, in parallel.
        std::future<arma::cx_fvec> imageMaps =
            std::async(gpu ? std::launch::async : std::launch::deferred, [n = P.n2() * P.nc, gpu] {
                arma::cx_fvec v;
                if (gpu)
                    v.zeros(n);
                else
                    v.set_size(n);
                return v;
            });
        double half[3];
        std::array<std::size_t, 3> M{};
        std::size_t outliers = 0;
        forgeCol<forgeComplex<float>> X = low_resolution_images(P, fr, options, half, &M, true, &outliers, gpu, cache);
        if (usedWidth) *usedWidth = {{2 * half[0], 2 * half[1], P.Nz > 1 ? 2 * half[2] : 0.0}};
        const std::size_t m2 = M[0] * M[1] * M[2];
        const bool coarse = m2 != P.n2();
        GridMaps m;  // every pixel's eigenvector: for the interpolation, or for a mask that is dropped
        if (gpu) {
            m = coil_maps_device(X.device_memptr(), M[0], M[1], M[2], P.nc, options, true);
        } else {
            const arma::cx_fmat Xh(reinterpret_cast<const cxf*>(X.memptr()), m2, P.nc);
            m = coil_maps_host(Xh, M[0], M[1], M[2], options, true);
        }
        CoilMapStats st;
        st.dropped_energy = energy_outside(coil_energy(X, m2, P.nc), m.mask);
        double ampMax = 0;
        for (double a : m.amp) ampMax = std::max(ampMax, a);
        st.level = ampMax > 0 ? m.level / ampMax : 0;
        st.outliers = outliers;
        st.grid = M;
        if (st.dropped_energy > kMaxDroppedEnergy) {  // the mask would cut the object: none
            st.mask_dropped = true;
            m.level = 0;
            m.mask.ones(m2);
        }
        if (coarse) {
            m = interpolate_maps(m, cuda::MapGrid{M[0], M[1], M[2]}, cuda::MapGrid{P.Nx, P.Ny, P.Nz}, P.nc, gpu,
                                 imageMaps.get());
        } else {
            for (std::size_t k = 0; k < m2; ++k)
                if (!m.mask[k])
                    for (std::size_t c = 0; c < P.nc; ++c) m.maps[c * m2 + k] = cxf(0);
        }
        maps[fr.slice] = std::move(m.maps);
        if (masks) (*masks)[fr.slice] = std::move(m.mask);
        if (stats) (*stats)[fr.slice] = st;
        done[fr.slice] = 1;
    }
    for (std::size_t s = 0; s < P.nslices; ++s)
        if (!done[s]) throw invalid_argument("estimate_coil_maps: slice " + std::to_string(s) + " has no frame");
    return maps;
}

}  // namespace recon
}  // namespace forge
