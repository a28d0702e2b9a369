// GPU tests of Gfft, Gnufft (CudaNufftPipeline) and TimeSegmentation: CPU == GPU, GPU vs the exact DFT,
// adjointness on the device (OperatorChecks.h), and no host transfers inside device-resident transforms.
#include <array>
#include <cmath>
#include <complex>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/TimeSegmentation.h"

using namespace forge_test;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;

namespace {
template <typename Op, typename V>
arma::Col<std::complex<float>> on_gpu_fwd(const Op& G, const V& x) {
    FVec d(x);
    d.put_on_gpu();
    FVec out = G * d;
    REQUIRE(out.on_gpu());
    out.get_from_gpu();
    return out.to_arma();
}
template <typename Op, typename V>
arma::Col<std::complex<float>> on_gpu_adj(const Op& G, const V& y) {
    FVec d(y);
    d.put_on_gpu();
    FVec out = G / d;
    REQUIRE(out.on_gpu());
    out.get_from_gpu();
    return out.to_arma();
}
void nufft_case(arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1,
                forge::NufftOptions opt = forge::NufftOptions(), double exactTol = 1e-3, double cpuGpuTol = 1e-5) {
    FORGE_INFO_SEED();
    INFO("grid " << Nx << " x " << Ny << " x " << Nz << ", " << n1 << " samples, W " << opt.kernel_width << ", tol "
                 << opt.tolerance);
    arma::fvec kx = uniform<float>(n1, -double(Nx / 2), double(Nx / 2)),
               ky = uniform<float>(n1, -double(Ny / 2), double(Ny / 2)),
               kz = Nz > 1 ? uniform<float>(n1, -double(Nz / 2), double(Nz / 2)) : arma::fvec(n1, arma::fill::zeros);
    kx(0) = -float(Nx / 2);
    forge::Gnufft<float> G(n1, Nx, Ny, Nz, kx, ky, kz, opt);
    REQUIRE(G.gpu_enabled());
    arma::cx_fvec x = complex_normal<float>(G.n2()), y = complex_normal<float>(G.n1());
    arma::cx_fvec fc = G * x, ac = G / y;
    arma::cx_fvec fg = on_gpu_fwd(G, x), ag = on_gpu_adj(G, y);
    INFO("cpu/gpu fwd " << rel_error(fg, fc) << " adj " << rel_error(ag, ac));
    CHECK(rel_error(fg, fc) < cpuGpuTol);
    CHECK(rel_error(ag, ac) < cpuGpuTol);
    // Against the exact DFT (float64 brute force on the CPU).
    forge::Gfft<double> cart(Nx, Ny, Nz);
    arma::mat r = cart.image_coords();
    arma::vec FM(G.n2(), arma::fill::zeros), t(n1, arma::fill::zeros);
    forge::Gdft<double> ref(n1, G.n2(), arma::conv_to<arma::vec>::from(kx), arma::conv_to<arma::vec>::from(ky),
                            arma::conv_to<arma::vec>::from(kz), r.col(0), r.col(1), r.col(2), FM, t);
    const double ef = rel_error(fg, ref * arma::conv_to<arma::cx_vec>::from(x)),
                 ea = rel_error(ag, ref / arma::conv_to<arma::cx_vec>::from(y));
    INFO("gpu vs exact fwd " << ef << " adj " << ea);
    CHECK(ef < exactTol);
    CHECK(ea < exactTol);
    // Adjointness on the device, and no host transfers inside the device-resident transforms.
    FVec dx(x), dy(y);
    dx.put_on_gpu();
    dy.put_on_gpu();
    forge::device::reset_transfer_stats();
    FVec Gx = G * dx, Ghy = G / dy;
    auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    // Relative to ||A x|| ||y|| / sqrt(n1), the typical size of |<A x, y>| for random vectors, rather than to
    // |<A x, y>| itself, which an unlucky draw brings near 0 (the bound is then no longer about the operator).
    check_adjoint(G, 1e-4 / std::sqrt(double(n1)), DotScale::Norms, 1, forge::Residency::Device);
}
}  // namespace

TEST_CASE("GPU Gnufft 2D: CPU == GPU and GPU vs Gdft", "[gpu][Gnufft]") { nufft_case(64, 48, 1, 20000); }
TEST_CASE("GPU Gnufft 3D: CPU == GPU and GPU vs Gdft", "[gpu][Gnufft]") { nufft_case(24, 20, 16, 12000); }
TEST_CASE("GPU Gnufft 3D with samples at every grid border", "[gpu][Gnufft]") { nufft_case(32, 32, 32, 50000); }
TEST_CASE("GPU Gnufft with all samples near the centre (sectors split over several blocks): CPU == GPU",
          "[gpu][Gnufft]") {
    FORGE_INFO_SEED();
    for (arma::uword Nz : {1u, 16u}) {
        const arma::uword N = 48, n1 = 60000;
        arma::fvec kx = uniform<float>(n1, -3, 3), ky = uniform<float>(n1, -3, 3),
                   kz = Nz > 1 ? uniform<float>(n1, -2, 2) : arma::fvec(n1, arma::fill::zeros);
        forge::Gnufft<float> G(n1, N, N, Nz, kx, ky, kz, forge::NufftOptions::for_tolerance(1e-4));
        REQUIRE(G.gpu_enabled());
        INFO("Nz " << Nz << ": " << G.gpu_plan()->sector_entries() << " entries in " << G.gpu_plan()->num_sectors()
                   << " sectors");
        arma::cx_fvec x = complex_normal<float>(G.n2()), y = complex_normal<float>(n1);
        CHECK(rel_error(on_gpu_fwd(G, x), arma::cx_fvec(G * x)) < 1e-5);
        CHECK(rel_error(on_gpu_adj(G, y), arma::cx_fvec(G / y)) < 1e-5);
    }
}
TEST_CASE("GPU Gnufft at requested tolerances: CPU == GPU, error within the tolerance", "[gpu][Gnufft][tolerance]") {
    for (double tol : {1e-2, 1e-3, 1e-5}) {
        nufft_case(64, 48, 1, 20000, forge::NufftOptions::for_tolerance(tol), tol);
        nufft_case(24, 20, 16, 12000, forge::NufftOptions::for_tolerance(tol), tol);
    }
}
TEST_CASE("GPU Gnufft with the widest kernel, 1.25 oversampling and an axis of length 1 inside", "[gpu][Gnufft]") {
    nufft_case(32, 24, 1, 8000, forge::NufftOptions{2.0, 16}, 1e-5);
    // A 7-wide 3D kernel (343 taps per sample) at oversampling 1.25: CPU and GPU sum in different orders and
    // their float adjoints differ by 1.2-1.4e-5 (measured on an H100), far inside the accuracy bound 1e-3.
    nufft_case(32, 24, 16, 8000, forge::NufftOptions{1.25, 7}, 1e-3, 5e-5);
    nufft_case(32, 1, 16, 8000, forge::NufftOptions{2.0, 6}, 1e-4);  // x and z: the y loops take one tap
}

// Grids as short as the kernel (G = W): a sample's padded tile wraps onto the grid more than once.
TEST_CASE("GPU Gnufft on grids as short as its kernel: CPU == GPU and GPU vs Gdft", "[gpu][Gnufft]") {
    nufft_case(4, 6, 1, 3000, forge::NufftOptions{2.0, 8}, 1e-4);
    nufft_case(4, 6, 4, 3000, forge::NufftOptions{2.0, 8}, 1e-4);
}

// Tiles over 48 KiB need the kernel's shared-memory limit raised; plans of one width with different tiles share the
// kernel, so one made later (a smaller tile) must not lower the limit under an earlier plan's.
TEST_CASE("GPU Gnufft plans of one width with different tiles, made in turn, all run: CPU == GPU", "[gpu][Gnufft]") {
    FORGE_INFO_SEED();
    const forge::NufftOptions opt{2.0, 8};
    auto plan = [&](arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1) {
        const arma::fvec kx = uniform<float>(n1, -double(Nx / 2), double(Nx / 2)),
                         ky = uniform<float>(n1, -double(Ny / 2), double(Ny / 2)),
                         kz = uniform<float>(n1, -double(Nz / 2), double(Nz / 2));
        return forge::Gnufft<float>(n1, Nx, Ny, Nz, kx, ky, kz, opt);
    };
    const forge::Gnufft<float> big = plan(32, 32, 32, 4000);   // 23^3-cell tiles (95 KiB)
    const forge::Gnufft<float> small = plan(32, 32, 4, 4000);  // 23 x 23 x 15 cells (62 KiB), made second
    REQUIRE(big.gpu_enabled());
    REQUIRE(small.gpu_enabled());
    for (const forge::Gnufft<float>* G : {&big, &small, &big}) {
        const arma::cx_fvec y = complex_normal<float>(G->n1());
        CHECK(rel_error(on_gpu_adj(*G, y), arma::cx_fvec(*G / y)) < 1e-5);
    }
}

// k = +N/2 is the sample at -N/2 (the image grid is periodic in k): the GPU plan takes it at the same grid
// position, so its values equal those of -N/2, the CPU's and the exact DFT's.
TEST_CASE("GPU Gnufft at the band edge k = +N/2: equal to -N/2, to the CPU and to the exact DFT",
          "[gpu][Gnufft][edges]") {
    FORGE_INFO_SEED();
    for (auto dims : {std::array<arma::uword, 3>{64, 48, 1}, std::array<arma::uword, 3>{24, 20, 16}}) {
        const arma::uword Nx = dims[0], Ny = dims[1], Nz = dims[2], n1 = 6000;
        arma::fvec kx = uniform<float>(n1, -double(Nx / 2), double(Nx / 2)),
                   ky = uniform<float>(n1, -double(Ny / 2), double(Ny / 2)),
                   kz =
                       Nz > 1 ? uniform<float>(n1, -double(Nz / 2), double(Nz / 2)) : arma::fvec(n1, arma::fill::zeros);
        const float hx = float(Nx / 2), hy = float(Ny / 2), hz = Nz > 1 ? float(Nz / 2) : 0.5f;
        for (arma::uword j = 0; j < 600; ++j) {  // on the +N/2 edges, alone and together
            if (j % 3 == 0 || j % 5 == 0) kx(j) = hx;
            if (j % 3 == 1 || j % 5 == 0) ky(j) = hy;
            if (j % 3 == 2 || j % 5 == 0) kz(j) = hz;
        }
        arma::fvec mx = kx, my = ky, mz = kz;
        mx.replace(hx, -hx);
        my.replace(hy, -hy);
        mz.replace(hz, -hz);
        const forge::NufftOptions o = forge::NufftOptions::for_tolerance(1e-5);
        forge::Gnufft<float> Gp(n1, Nx, Ny, Nz, kx, ky, kz, o), Gm(n1, Nx, Ny, Nz, mx, my, mz, o);
        REQUIRE(Gp.gpu_enabled());
        const arma::cx_fvec x = complex_normal<float>(Gp.n2()), y = complex_normal<float>(n1);
        const arma::cx_fvec fp = on_gpu_fwd(Gp, x), ap = on_gpu_adj(Gp, y);
        INFO(Nx << "x" << Ny << "x" << Nz);
        CHECK(rel_error(fp, on_gpu_fwd(Gm, x)) < 1e-6);
        CHECK(rel_error(ap, on_gpu_adj(Gm, y)) < 1e-6);
        CHECK(rel_error(fp, arma::cx_fvec(Gp * x)) < 1e-5);
        CHECK(rel_error(ap, arma::cx_fvec(Gp / y)) < 1e-5);
        forge::Gfft<double> cart(Nx, Ny, Nz);
        const arma::mat r = cart.image_coords();
        const arma::vec FM(Gp.n2(), arma::fill::zeros), t(n1, arma::fill::zeros);
        const forge::Gdft<double> ref(n1, Gp.n2(), arma::conv_to<arma::vec>::from(kx),
                                      arma::conv_to<arma::vec>::from(ky), arma::conv_to<arma::vec>::from(kz), r.col(0),
                                      r.col(1), r.col(2), FM, t);
        CHECK(rel_error(fp, ref * arma::conv_to<arma::cx_vec>::from(x)) < 1e-5);
        CHECK(rel_error(ap, ref / arma::conv_to<arma::cx_vec>::from(y)) < 1e-5);
    }
}

TEST_CASE("GPU Gfft: CPU == GPU, float and double", "[gpu][Gfft]") {
    FORGE_INFO_SEED();
    forge::Gfft<float> G(32, 24, 8);
    arma::cx_fvec x = complex_normal<float>(G.n2());
    CHECK(rel_error(on_gpu_fwd(G, x), G * x) < 1e-5);
    CHECK(rel_error(on_gpu_adj(G, x), G / x) < 1e-5);
    forge::Gfft<double> Gd(64, 64);
    arma::cx_vec xd = complex_normal<double>(Gd.n2());
    forge::forgeCol<forge::forgeComplex<double>> dd(xd);
    dd.put_on_gpu();
    auto yd = Gd * dd;
    yd.get_from_gpu();
    CHECK(rel_error(yd.to_arma(), Gd * xd) < 1e-12);
}

TEST_CASE("GPU TimeSegmentation(Gnufft): CPU == GPU", "[gpu][TimeSegmentation]") {
    FORGE_INFO_SEED();
    const arma::uword N = 64, n1 = 30000;
    arma::fvec kx = uniform<float>(n1, -32, 32), ky = uniform<float>(n1, -32, 32), kz(n1, arma::fill::zeros);
    arma::fvec t = uniform<float>(n1, 0, 0.02), fm = uniform<float>(N * N, -300, 300);
    forge::Gnufft<float> G(n1, N, N, 1, kx, ky, kz);
    forge::TimeSegmentation<float, forge::Gnufft<float>> A(G, fm, t, 8, forge::TSInterp::MinMax);
    arma::cx_fvec x = complex_normal<float>(A.n2()), y = complex_normal<float>(A.n1());
    CHECK(rel_error(on_gpu_fwd(A, x), A * x) < 1e-5);
    CHECK(rel_error(on_gpu_adj(A, y), A / y) < 1e-5);
}

TEST_CASE("CudaNufftPipeline refuses sizes beyond its 32-bit kernel indices", "[gpu][Gnufft][sizes]") {
    // Checked before any array is read: a few valid floats stand in for the trajectory and tables.
    const arma::fvec a(64, arma::fill::zeros);
    const std::vector<int> f(8, 0);
    forge::cuda::NufftGeometry g{};
    for (int d = 0; d < 3; ++d) {
        g.N[d] = g.G[d] = 1;
        g.offset[d] = g.deapod[d] = a.memptr();
        g.first[d] = f.data();
    }
    g.N[0] = g.N[1] = 16;
    g.G[0] = g.G[1] = 32;
    g.W = 5;
    g.coef = a.memptr();
    g.degree = 0;
    g.n1 = arma::uword(1) << 32;  // would have been 0 as an int
    CHECK_THROWS_AS(forge::cuda::CudaNufftPipeline(g), forge::invalid_argument);
    CHECK_THROWS_WITH(forge::cuda::CudaNufftPipeline(g), Catch::Contains("n1 (k-space samples) = 4294967296"));
    g.n1 = 4;
    g.G[1] = arma::uword(1) << 31;
    CHECK_THROWS_WITH(forge::cuda::CudaNufftPipeline(g), Catch::Contains("oversampled grid size y"));
}
