// Map estimation on the GPU (forge/Recon/cuda) against the host path and float64 references: coil maps from the
// same coil images (2D and 3D, 4, 8 and 16 coils) equal the host's to float rounding after the same phase
// convention, masks equal except within rounding of the threshold; pixels the device hands back to the host
// (zero covariance) equal the host's bit for bit; estimate_coil_maps end to end (images by the GPU NUFFT); the
// penalized field map equals the host's for the same iterations, and its cost never increases on the device.
#include <cmath>
#include <complex>
#include <vector>

#include "CoilMapReference.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"
#include "forge/Solvers/recon_solve.h"

using forge::ReconDevice;
using forge_test::ImageGrid3;

namespace {

forge::recon::CoilMapOptions on(ReconDevice d, double threshold = 0.05) {
    forge::recon::CoilMapOptions o;
    o.device = d;
    o.threshold = threshold;
    return o;
}

// Slice s of a fully sampled N x N Cartesian scan of phantom coil images: their k-space by the exact DFT on the grid
// (x fastest; sample j = kx + N ky), plus complex noise of 1% of the RMS.
forge::recon::ReconFrame cartesian_coil_frame(std::size_t N, std::size_t nc, std::size_t s = 0) {
    const std::size_t n2 = N * N;
    const forge::sim::Trajectory2D k = forge::sim::cartesian_grid(N, N);
    const arma::cx_fmat X = forge_test::phantom_coil_images({N, N, 1}, nc, 0.0);
    forge::recon::ReconFrame fr;
    fr.slice = s;
    fr.kx = arma::conv_to<arma::fvec>::from(k.kx);
    fr.ky = arma::conv_to<arma::fvec>::from(k.ky);
    fr.kz.zeros(n2);
    fr.t.zeros(n2);
    fr.y.set_size(n2 * nc);
    for (std::size_t c = 0; c < nc; ++c) {
        const arma::cx_fmat Fc = arma::fft2(arma::cx_fmat(X.colptr(c), N, N));
        for (std::size_t j = 0; j < n2; ++j) {
            const long kx = std::lround(fr.kx[j]), ky = std::lround(fr.ky[j]);
            const std::complex<float> v = Fc((kx + long(N)) % long(N), (ky + long(N)) % long(N));
            fr.y[c * n2 + j] = ((kx + ky) % 2 != 0) ? -v : v;
        }
    }
    fr.y += arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(n2 * nc) *
                                               (0.01 * arma::norm(fr.y) / std::sqrt(2.0 * n2 * nc)));
    return fr;
}

// Compares device maps with host maps (and both with the float64 reference) inside both masks; masks equal
// except where the window amplitude is within 1e-5 of the threshold.
void check_maps_match(const arma::cx_fmat& X, const ImageGrid3& g, std::size_t nc, double threshold) {
    const std::size_t n2 = g.n2();
    arma::uvec mh, md;
    const arma::cx_fvec Sh =
        forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, g.Nz, on(ReconDevice::Host, threshold), &mh);
    forge::device::reset_transfer_stats();
    const arma::cx_fvec Sd =
        forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, g.Nz, on(ReconDevice::GPU, threshold), &md);
    CHECK(forge::device::transfer_stats().host_to_device_count > 0);  // it did run on the device
    REQUIRE(Sd.n_elem == n2 * nc);
    const arma::vec amp = forge_test::window_amplitude(X, g, 2);
    std::size_t maskDiffer = 0;
    for (std::size_t k = 0; k < n2; ++k)
        if (mh[k] != md[k]) {
            ++maskDiffer;
            REQUIRE(std::fabs(amp[k] - threshold * amp.max()) <= 1e-5 * amp.max());
        }
    const arma::uvec both = mh % md;
    const forge_test::ReferenceMaps ref = forge_test::reference_coil_maps(X, g, 2, both);
    double dHD = 0, dHDscaled = 0, dDR = 0;
    for (std::size_t k = 0; k < n2; ++k)
        for (std::size_t c = 0; c < nc; ++c) {
            const std::size_t i = c * n2 + k;
            if (!md[k]) {
                REQUIRE(Sd[i] == std::complex<float>(0));
                continue;
            }
            if (!both[k]) continue;
            const double d = std::abs(Sd[i] - Sh[i]);
            dHD = std::max(dHD, d);
            dHDscaled = std::max(dHDscaled, d * ref.gap[k]);
            // against the reference the phase's conditioning too (CoilMapReferenceTests.cpp)
            dDR =
                std::max(dDR, std::abs(std::complex<double>(Sd[i]) - ref.maps[i]) * std::min(ref.gap[k], ref.phase[k]));
        }
    INFO(g.Nx << "x" << g.Ny << "x" << g.Nz << ", " << nc << " coils, threshold " << threshold
              << ": max |S_gpu - S_cpu| " << dHD << " (x gap/trace " << dHDscaled << "), |S_gpu - S_ref| x gap/trace "
              << dDR << ", masks differ at " << maskDiffer << " pixels");
    // the same float covariance on both sides (window sums in double, rounded per axis as the host does) and
    // the eigenvector in double: float's rounding of the entries, plus rare one-ulp differences of a window sum
    CHECK(dHDscaled <= 4e-7);
    CHECK(dHD <= 1e-5);
    CHECK(dDR <= 4e-6);  // the host's bound against the float64 reference (CoilMapReferenceTests.cpp)
    CHECK(maskDiffer <= n2 / 1000 + 2);
}

}  // namespace

TEST_CASE("GPU coil maps equal the host's to float rounding (2D and 3D, 4/8/16 coils)", "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    const ImageGrid3 grids[2] = {{48, 40, 1}, {16, 14, 12}};
    for (const ImageGrid3& g : grids)
        for (std::size_t nc : {4, 8, 16}) {
            const arma::cx_fmat X = forge_test::phantom_coil_images(g, nc, 0.01);
            check_maps_match(X, g, nc, 0.05);
        }
}

TEST_CASE("GPU coil maps: 32 coils, kernel 1 and 7, and one coil", "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    const ImageGrid3 g{24, 20, 1};
    check_maps_match(forge_test::phantom_coil_images(g, 32, 0.01), g, 32, 0.05);
    const arma::cx_fmat X1 = forge_test::phantom_coil_images(g, 1, 0.01);
    arma::uvec mh, md;
    const arma::cx_fvec h = forge::recon::coil_maps_from_images(X1, g.Nx, g.Ny, 1, on(ReconDevice::Host), &mh);
    const arma::cx_fvec d = forge::recon::coil_maps_from_images(X1, g.Nx, g.Ny, 1, on(ReconDevice::GPU), &md);
    CHECK(arma::abs(h - d).max() <= 1e-6);  // |S| = 1, the phase of the window sum
    const arma::cx_fmat X = forge_test::phantom_coil_images(g, 8, 0.01);
    for (int kernel : {1, 7}) {
        forge::recon::CoilMapOptions oh = on(ReconDevice::Host), od = on(ReconDevice::GPU);
        oh.kernel = od.kernel = kernel;
        const arma::cx_fvec Sh = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, oh, &mh);
        const arma::cx_fvec Sd = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, od, &md);
        double worst = 0;
        for (std::size_t k = 0; k < g.n2(); ++k)
            if (mh[k] && md[k])
                for (std::size_t c = 0; c < 8; ++c)
                    worst = std::max(worst, double(std::abs(Sh[c * g.n2() + k] - Sd[c * g.n2() + k])));
        INFO("kernel " << kernel << ": max |S_gpu - S_cpu| " << worst);
        // kernel 1: R = x x^H is rank one, its eigenvector x / |x| in one squaring
        CHECK(worst <= 1e-5);
    }
}

TEST_CASE("GPU coil maps: pixels of zero covariance go back to the host and equal its maps bit for bit",
          "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    const ImageGrid3 g{32, 32, 1};
    arma::cx_fmat X = forge_test::phantom_coil_images(g, 6, 0.01);
    for (std::size_t y = 0; y < 12; ++y)  // a corner with no signal at all: R = 0 there, in every window
        for (std::size_t x = 0; x < 12; ++x) X.row(x + g.Nx * y).zeros();
    arma::uvec mh, md;
    const arma::cx_fvec h = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, on(ReconDevice::Host, 0.0), &mh);
    const arma::cx_fvec d = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, on(ReconDevice::GPU, 0.0), &md);
    CHECK(arma::all(mh == md));  // threshold 0: every pixel
    for (std::size_t y = 0; y < 10; ++y)
        for (std::size_t x = 0; x < 10; ++x)
            for (std::size_t c = 0; c < 6; ++c) REQUIRE(d[c * g.n2() + x + g.Nx * y] == h[c * g.n2() + x + g.Nx * y]);
}

TEST_CASE("GPU coil maps: more coils than the device kernel takes", "[gpu][maps][coils]") {
    const ImageGrid3 g{12, 12, 1};
    const arma::cx_fmat X = forge_test::phantom_coil_images(g, 33, 0.01);
    CHECK_THROWS_AS(forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, on(ReconDevice::GPU)),
                    forge::invalid_argument);
    // Auto: the host, to the same bits as Host
    const arma::cx_fvec a = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, on(ReconDevice::Auto));
    const arma::cx_fvec h = forge::recon::coil_maps_from_images(X, g.Nx, g.Ny, 1, on(ReconDevice::Host));
    CHECK(arma::all(a == h));
}

TEST_CASE("GPU estimate_coil_maps (batched GPU NUFFT adjoint of the calibration) equals the host's",
          "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    const std::size_t N = 48, nc = 8, n2 = N * N;
    for (std::size_t slices : {1, 3}) {
        forge::recon::ReconProblem P;
        P.Nx = P.Ny = N;
        P.nc = nc;
        P.nslices = slices;
        forge::recon::set_pixel_grid(P);
        for (std::size_t s = 0; s < slices; ++s) P.frames.push_back(cartesian_coil_frame(N, nc, s));
        std::vector<arma::uvec> mh, md;
        const auto h = forge::recon::estimate_coil_maps(P, on(ReconDevice::Host), &mh);
        const auto d = forge::recon::estimate_coil_maps(P, on(ReconDevice::GPU), &md);
        for (std::size_t s = 0; s < slices; ++s) {
            // the coil images differ by the GPU and CPU NUFFTs' float rounding (about 1e-6 relative)
            std::size_t maskDiffer = 0;
            double worst = 0;
            for (std::size_t q = 0; q < n2; ++q) {
                maskDiffer += mh[s][q] != md[s][q];
                if (mh[s][q] && md[s][q])
                    for (std::size_t c = 0; c < nc; ++c)
                        worst = std::max(worst, double(std::abs(h[s][c * n2 + q] - d[s][c * n2 + q])));
            }
            INFO(slices << " slice(s), slice " << s << ": max |S_gpu - S_cpu| " << worst << ", masks differ at "
                        << maskDiffer << " pixels");
            CHECK(worst <= 1e-4);
            CHECK(maskDiffer <= 5);
        }
    }
}

TEST_CASE("GPU estimate_coil_maps through one CoilMapCache, call after call with other samples, equals it without",
          "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    const std::size_t N = 48, nc = 8, n2 = N * N;
    forge::recon::ReconProblem full;
    full.Nx = full.Ny = N;
    full.nc = nc;
    forge::recon::set_pixel_grid(full);
    full.frames.push_back(cartesian_coil_frame(N, nc));
    const forge::recon::ReconFrame& fr = full.frames[0];
    // every second line outside a 15-line centre: fewer samples, another calibration region
    forge::recon::ReconProblem under = full;
    std::vector<arma::uword> keep;
    for (std::size_t j = 0; j < n2; ++j)
        if (std::lround(fr.ky[j]) % 2 == 0 || std::abs(std::lround(fr.ky[j])) < 8) keep.push_back(j);
    const arma::uvec idx(keep);
    forge::recon::ReconFrame& u = under.frames[0];
    u.kx = fr.kx.elem(idx), u.ky = fr.ky.elem(idx), u.kz = fr.kz.elem(idx), u.t = fr.t.elem(idx);
    u.y.set_size(idx.n_elem * nc);
    for (std::size_t c = 0; c < nc; ++c)
        u.y.subvec(c * idx.n_elem, (c + 1) * idx.n_elem - 1) = fr.y.subvec(c * n2, (c + 1) * n2 - 1).eval().elem(idx);
    // each call through the cache against one without it (the GPU's gridding adds by atomics: equal to rounding)
    forge::recon::CoilMapCache cache;
    int call = 0;
    for (const forge::recon::ReconProblem* P : {&full, &under, &full, &under}) {
        std::vector<arma::uvec> mh, md;
        const auto h = forge::recon::estimate_coil_maps(*P, on(ReconDevice::GPU), &mh);
        const auto d = forge::recon::estimate_coil_maps(*P, on(ReconDevice::GPU), &md, nullptr, nullptr, &cache);
        std::size_t maskDiffer = 0;
        double worst = 0;
        for (std::size_t q = 0; q < n2; ++q) {
            maskDiffer += mh[0][q] != md[0][q];
            if (mh[0][q] && md[0][q])
                for (std::size_t c = 0; c < nc; ++c)
                    worst = std::max(worst, double(std::abs(h[0][c * n2 + q] - d[0][c * n2 + q])));
        }
        INFO("call " << call++ << " (" << P->frames[0].kx.n_elem << " samples): max |S_cached - S_uncached| " << worst
                     << ", masks differ at " << maskDiffer << " pixels");
        CHECK(worst <= 1e-4);
        CHECK(maskDiffer <= 5);
    }
}

TEST_CASE("GPU estimate_coil_maps of a radial scan with many calibration samples (Pipe's iteration by GPU NUFFTs) "
          "agrees with the host's and keeps the object",
          "[gpu][maps][coils]") {
    FORGE_INFO_SEED();
    // 128^2, 8 coils, 96 radial spokes of 256 samples: about 9000 samples within the default 48-wide calibration,
    // over the 4096 from which the GPU computes the density weights itself.
    const std::size_t N = 128, nc = 8, n2 = N * N, spokes = 96, ns = 256;
    const arma::cx_fmat X = forge_test::phantom_coil_images({N, N, 1}, nc, 0.0);
    arma::fvec kx(spokes * ns), ky(spokes * ns);
    for (std::size_t s = 0; s < spokes; ++s)
        for (std::size_t j = 0; j < ns; ++j) {
            const double a = M_PI * double(s) / double(spokes),
                         r = (double(j) - double(ns / 2)) * double(N) / double(ns);
            kx[s * ns + j] = float(r * std::cos(a));
            ky[s * ns + j] = float(r * std::sin(a));
        }
    forge::recon::ReconProblem P;
    P.Nx = P.Ny = N;
    P.nc = nc;
    forge::recon::set_pixel_grid(P);
    forge::recon::ReconFrame fr;
    fr.kx = kx;
    fr.ky = ky;
    fr.kz.zeros(kx.n_elem);
    fr.t.zeros(kx.n_elem);
    {
        const forge::Gnufft<float> G(kx.n_elem, N, N, 1, fr.kx, fr.ky, fr.kz);
        fr.y.set_size(kx.n_elem * nc);
        for (std::size_t c = 0; c < nc; ++c)
            fr.y.subvec(c * kx.n_elem, (c + 1) * kx.n_elem - 1) = G * arma::cx_fvec(X.col(c));
        fr.y += arma::conv_to<arma::cx_fvec>::from(forge_test::complex_normal<double>(fr.y.n_elem) *
                                                   (0.005 * arma::norm(fr.y) / std::sqrt(2.0 * fr.y.n_elem)));
    }
    P.frames.push_back(fr);
    std::vector<arma::uvec> mh, md;
    std::vector<forge::recon::CoilMapStats> sh, sd;
    const auto h = forge::recon::estimate_coil_maps(P, on(ReconDevice::Host), &mh, nullptr, &sh);
    const auto d = forge::recon::estimate_coil_maps(P, on(ReconDevice::GPU), &md, nullptr, &sd);
    // the object: where the coil images' root-sum-of-squares is over 5% of its largest (the background's maps
    // follow the noise, differently for the two weightings)
    const arma::fvec rss = arma::sqrt(arma::sum(arma::square(arma::abs(X)), 1));
    const arma::uvec object = rss > 0.05f * rss.max();
    std::size_t differ = 0, objectOut = 0;
    for (std::size_t q = 0; q < n2; ++q) {
        differ += mh[0][q] != md[0][q];
        if (object[q] && !md[0][q]) ++objectOut;
    }
    const double sinRms = forge_test::map_direction_error(h[0], d[0], object, nc);
    INFO("masks differ at " << differ << " of " << n2 << " pixels; object pixels outside the GPU's mask " << objectOut
                            << "; rms sine of the angle between the maps on the object " << sinRms << "; dropped "
                            << sh[0].dropped_energy << " (host), " << sd[0].dropped_energy << " (GPU)");
    CHECK(differ <= n2 / 10);  // at the masks' edges, in the background
    CHECK(objectOut == 0);
    CHECK(sinRms <= 0.05);
    CHECK(sd[0].dropped_energy <= 0.01);
    CHECK_FALSE(sd[0].mask_dropped);
}

namespace {

// Echo images of a smooth field map (up to ~100 Hz) with 1% noise: 'ne' echoes 2.0 ms apart from 2.0 ms.
std::vector<arma::cx_fvec> echo_images(const ImageGrid3& g, std::size_t ne, std::vector<double>& times) {
    const arma::cx_fmat X = forge_test::phantom_coil_images(g, 1, 0.0);
    const std::size_t n2 = g.n2();
    std::vector<arma::cx_fvec> echoes;
    times.clear();
    for (std::size_t e = 0; e < ne; ++e) {
        times.push_back(2e-3 * double(e + 1));
        arma::cx_fvec y(n2);
        const arma::cx_vec nz = forge_test::complex_normal<double>(n2);
        for (std::size_t k = 0; k < n2; ++k) {
            const double x = double(k % g.Nx) / double(g.Nx), yy = double((k / g.Nx) % g.Ny) / double(g.Ny);
            const double w = 2 * M_PI * (80 * std::sin(3 * x) * std::cos(2 * yy) + 20);
            y[k] = std::complex<float>(std::abs(std::complex<double>(X(k, 0))) * std::polar(1.0, -w * times[e]) +
                                       0.01 * nz[k]);
        }
        echoes.push_back(y);
    }
    return echoes;
}

}  // namespace

TEST_CASE("GPU field map equals the host's for the same iterations; its cost never increases",
          "[gpu][maps][fieldmap]") {
    FORGE_INFO_SEED();
    const ImageGrid3 grids[2] = {{40, 36, 1}, {14, 12, 10}};
    for (const ImageGrid3& g : grids)
        for (std::size_t ne : {2, 3}) {
            std::vector<double> times;
            const std::vector<arma::cx_fvec> echoes = echo_images(g, ne, times);
            forge::recon::FieldMapOptions oh, od;
            oh.device = ReconDevice::Host;
            od.device = ReconDevice::GPU;
            oh.iterations = od.iterations = 60;
            std::vector<double> ch, cd;
            const arma::fvec wh = forge::recon::estimate_field_map(echoes, times, g.Nx, g.Ny, g.Nz, oh, &ch);
            const arma::fvec wd = forge::recon::estimate_field_map(echoes, times, g.Nx, g.Ny, g.Nz, od, &cd);
            REQUIRE(cd.size() == ch.size());
            double worst = 0;
            for (std::size_t k = 0; k < g.n2(); ++k)
                worst =
                    std::max(worst, std::fabs(double(wd[k]) - double(wh[k])) / std::max(1.0, std::fabs(double(wh[k]))));
            INFO(g.Nx << "x" << g.Ny << "x" << g.Nz << ", " << ne << " echoes: max |w_gpu - w_cpu| / max(1, |w_cpu|) "
                      << worst << ", cost " << ch.back() << " (host) " << cd.back() << " (device)");
            // both in double (sin, atan2 and the sums' order differ by ulps), each rounded to float once
            CHECK(worst <= 2.5e-7);
            for (std::size_t i = 1; i < cd.size(); ++i) REQUIRE(cd[i] <= cd[i - 1] * (1 + 1e-12) + 1e-15);
            for (std::size_t i = 0; i < cd.size(); ++i)
                REQUIRE(std::fabs(cd[i] - ch[i]) <= 1e-9 * std::fabs(ch[i]) + 1e-15);
            // iterations 0: the start (window-summed phase difference) alone
            oh.iterations = od.iterations = 0;
            const arma::fvec sh = forge::recon::estimate_field_map(echoes, times, g.Nx, g.Ny, g.Nz, oh);
            const arma::fvec sd = forge::recon::estimate_field_map(echoes, times, g.Nx, g.Ny, g.Nz, od);
            CHECK(arma::abs(sh - sd).max() <= 2.5e-7 * std::max(1.0f, arma::abs(sh).max()));
        }
}
