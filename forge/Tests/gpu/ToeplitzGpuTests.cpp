// ToeplitzNormal on the GPU: kernels built by the CudaDftPipeline equal the host's double-precision build, the
// cuFFT apply equals the FFTW apply, batches equal singles, and a PCG loop on the normal operator makes no
// host/device copies; kernels grouped along a Cartesian axis equal the full build.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "ToeplitzTolerance.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge_test;
using arma::uword;

namespace {
constexpr double kPi = 3.14159265358979323846;
using FVec = forgeCol<forgeComplex<float>>;

// Options that build the kernels on the host (the reference for the GPU build), with the given axis grouping.
forge::ToeplitzOptions host_build(forge::AxisGrouping grouping = forge::AxisGrouping::Auto) {
    forge::ToeplitzOptions o;
    o.build = forge::KernelBuild::Host;
    o.grouping = grouping;
    o.source = forge::KernelSource::Exact;  // the reference: exact kernels whatever Auto would choose
    return o;
}

// The GPU's exact build (Auto may take the NUFFT, which has no grouping).
forge::ToeplitzOptions exact_gpu_build() {
    forge::ToeplitzOptions o;
    o.source = forge::KernelSource::Exact;
    return o;
}

struct Case {
    uword Nx, Ny, Nz, n1;
    arma::fvec kx, ky, kz, t, W, fm, ix, iy, iz;
    uword n2() const { return Nx * Ny * Nz; }
};
Case make_case(uword Nx, uword Ny, uword Nz, uword n1) {
    Case c{Nx, Ny, Nz, n1, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    c.kx = uniform<float>(n1, -double(Nx) / 2, double(Nx) / 2);
    c.ky = uniform<float>(n1, -double(Ny) / 2, double(Ny) / 2);
    c.kz = Nz > 1 ? uniform<float>(n1, -double(Nz) / 2, double(Nz) / 2) : arma::fvec(n1, arma::fill::zeros);
    c.t = arma::linspace<arma::fvec>(0, 10e-3, n1);
    c.W = uniform<float>(n1, 0.3, 1.2);
    c.ix.set_size(c.n2());
    c.iy.set_size(c.n2());
    c.iz.set_size(c.n2());
    for (uword z = 0; z < Nz; ++z)
        for (uword y = 0; y < Ny; ++y)
            for (uword x = 0; x < Nx; ++x) {
                const uword i = x + Nx * (y + Ny * z);
                c.ix[i] = (float(x) - float(Nx / 2)) / float(Nx);
                c.iy[i] = (float(y) - float(Ny / 2)) / float(Ny);
                c.iz[i] = Nz > 1 ? (float(z) - float(Nz / 2)) / float(Nz) : 0.0f;
            }
    c.fm = arma::conv_to<arma::fvec>::from(2 * kPi * 100 * arma::sin(3.0 * c.ix + 2.0 * c.iy));
    return c;
}

arma::cx_fvec on_device(const forge::ToeplitzNormal<float>& N, const arma::cx_fvec& x, uword nbatch = 1) {
    FVec d(x);
    d.put_on_gpu();
    FVec r = N.forward(d, nbatch);
    REQUIRE(r.on_gpu());
    r.get_from_gpu();
    return r.to_arma();
}
}  // namespace

TEST_CASE("ToeplitzNormal on the GPU equals the host operator, field-free and field-corrected", "[gpu][Toeplitz]") {
    FORGE_INFO_SEED();
    for (const Case& c : {make_case(32, 24, 1, 3000), make_case(15, 11, 7, 4000)}) {
        INFO("grid " << c.Nx << " x " << c.Ny << " x " << c.Nz);
        const forge::ToeplitzNormal<float> gpu(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W);
        const forge::ToeplitzNormal<float> host(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, host_build());
        CHECK(gpu.kernels_built_on_gpu());
        CHECK_FALSE(host.kernels_built_on_gpu());
        const arma::cx_fvec x = complex_normal<float>(c.n2());
        const arma::cx_fvec ref = host * x;
        const double tol = toeplitz_tolerance(gpu, c.n1);
        CHECK(rel_error(on_device(gpu, x), ref) <= tol);       // GPU kernels, cuFFT
        CHECK(rel_error(on_device(host, x), ref) <= tol);      // host kernels uploaded, cuFFT
        CHECK(rel_error(arma::cx_fvec(gpu * x), ref) <= tol);  // GPU kernels downloaded, FFTW
        // Against the exact float64 G^H W G.
        const forge::Gdft<double> G(c.n1, c.n2(), arma::conv_to<arma::vec>::from(c.kx),
                                    arma::conv_to<arma::vec>::from(c.ky), arma::conv_to<arma::vec>::from(c.kz),
                                    arma::conv_to<arma::vec>::from(c.ix), arma::conv_to<arma::vec>::from(c.iy),
                                    arma::conv_to<arma::vec>::from(c.iz), arma::vec(c.n2(), arma::fill::zeros),
                                    arma::vec(c.n1, arma::fill::zeros));
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
        const arma::cx_vec exact = G / arma::cx_vec((G * xd) % arma::conv_to<arma::vec>::from(c.W));
        CHECK(rel_error(arma::conv_to<arma::cx_vec>::from(on_device(gpu, x)), exact) <= tol);

        const uword L = forge::ToeplitzNormal<float>::choose_segments(c.fm, c.t, 1e-3);
        const forge::ToeplitzNormal<float> fgpu(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, c.fm, c.t, L);
        const forge::ToeplitzNormal<float> fhost(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, c.fm, c.t, L,
                                                 forge::TSInterp::MinMax, host_build());
        CHECK(fgpu.kernels_built_on_gpu());
        const arma::cx_fvec fref = fhost * x;
        const double ftol = toeplitz_tolerance(fgpu, c.n1);
        CHECK(rel_error(on_device(fgpu, x), fref) <= ftol);
        CHECK(rel_error(on_device(fhost, x), fref) <= ftol);
        // A batch of three equals three singles.
        const arma::cx_fvec x3 = complex_normal<float>(3 * c.n2());
        const arma::cx_fvec b3 = on_device(fgpu, x3, 3);
        for (uword v = 0; v < 3; ++v) {
            const arma::cx_fvec one = on_device(fgpu, x3.subvec(v * c.n2(), (v + 1) * c.n2() - 1));
            CHECK(rel_error(arma::cx_fvec(b3.subvec(v * c.n2(), (v + 1) * c.n2() - 1)), one) <= 1e-6);
        }
    }
}

TEST_CASE("ToeplitzNormal on the GPU: kernels grouped along a Cartesian axis equal the host's full build",
          "[gpu][Toeplitz]") {
    FORGE_INFO_SEED();
    struct Grouped {
        uword Nx, Ny, Nz;
        int axis;
    };
    // Stacks along z (even and odd Nz), EPI-like lines along y (2D, and 3D with slabs on both sides), along x.
    for (const Grouped& s : {Grouped{24, 20, 8, 2}, Grouped{15, 11, 7, 2}, Grouped{32, 24, 1, 1}, Grouped{10, 12, 6, 1},
                             Grouped{20, 9, 1, 0}}) {
        Case c = make_case(s.Nx, s.Ny, s.Nz, 3 * s.Nx * s.Ny * s.Nz);
        const uword N[3] = {s.Nx, s.Ny, s.Nz};
        arma::fvec& k = s.axis == 0 ? c.kx : s.axis == 1 ? c.ky : c.kz;
        k = arma::floor(uniform<float>(c.n1, 0, float(N[s.axis]) - 0.01f)) - float(N[s.axis] / 2);
        INFO("grid " << c.Nx << " x " << c.Ny << " x " << c.Nz << ", Cartesian along axis " << s.axis);
        const forge::ToeplitzNormal<float> gpu(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, exact_gpu_build());
        const forge::ToeplitzNormal<float> host(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W,
                                                host_build(forge::AxisGrouping::Off));
        CHECK(gpu.kernels_built_on_gpu());
        CHECK(gpu.grouped_axis() == uword(s.axis));
        CHECK(host.grouped_axis() == 3);
        const arma::cx_fvec x = complex_normal<float>(c.n2());
        const arma::cx_fvec ref = host * x;
        const double tol = toeplitz_tolerance(gpu, c.n1);
        CHECK(rel_error(on_device(gpu, x), ref) <= tol);
        const forge::Gdft<double> G(c.n1, c.n2(), arma::conv_to<arma::vec>::from(c.kx),
                                    arma::conv_to<arma::vec>::from(c.ky), arma::conv_to<arma::vec>::from(c.kz),
                                    arma::conv_to<arma::vec>::from(c.ix), arma::conv_to<arma::vec>::from(c.iy),
                                    arma::conv_to<arma::vec>::from(c.iz), arma::vec(c.n2(), arma::fill::zeros),
                                    arma::vec(c.n1, arma::fill::zeros));
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
        const arma::cx_vec exact = G / arma::cx_vec((G * xd) % arma::conv_to<arma::vec>::from(c.W));
        CHECK(rel_error(arma::conv_to<arma::cx_vec>::from(on_device(gpu, x)), exact) <= tol);

        const uword L = forge::ToeplitzNormal<float>::choose_segments(c.fm, c.t, 1e-3);
        const forge::ToeplitzNormal<float> fgpu(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, c.fm, c.t, L,
                                                forge::TSInterp::MinMax, exact_gpu_build());
        const forge::ToeplitzNormal<float> fhost(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, c.fm, c.t, L,
                                                 forge::TSInterp::MinMax, host_build(forge::AxisGrouping::Off));
        CHECK(fgpu.kernels_built_on_gpu());
        CHECK(fgpu.grouped_axis() == uword(s.axis));
        CHECK(rel_error(on_device(fgpu, x), arma::cx_fvec(fhost * x)) <= toeplitz_tolerance(fgpu, c.n1));
    }
}

TEST_CASE("PCG on the Toeplitz normal of field-corrected SENSE: GPU equals host, no host/device copies",
          "[gpu][Toeplitz][solver]") {
    FORGE_INFO_SEED();
    const Case c = make_case(24, 24, 1, 2000);
    const uword nc = 4;
    auto G = std::make_shared<forge::Gdft<float>>(c.n1, c.n2(), c.kx, c.ky, c.kz, c.ix, c.iy, c.iz, c.fm, c.t);
    const uword L = forge::ToeplitzNormal<float>::choose_segments(c.fm, c.t, 1e-3);
    auto T = std::make_shared<forge::ToeplitzNormal<float>>(c.Nx, c.Ny, c.Nz, c.kx, c.ky, c.kz, c.W, c.fm, c.t, L);
    const arma::cx_fvec maps = complex_normal<float>(c.n2() * nc);
    const forge::SENSE<float> S(forge::with_normal<float>(G, T), maps, nc);
    const forge::NormalOf<float> N(forge::share(S));
    const arma::cx_fvec y = complex_normal<float>(c.n1 * nc);
    const arma::fvec Wc = arma::repmat(c.W, nc, 1);
    const arma::cx_fvec b = S / arma::cx_fvec(y % arma::conv_to<arma::cx_fvec>::from(Wc));
    const forge::QuadPenalty<float> R(c.Nx, c.Ny, 1, 2.0f);
    const arma::cx_fvec x0(c.n2(), arma::fill::zeros);
    const uword niter = 10;
    const arma::cx_fvec xhost = forge::solve_pwls_pcg_normal<float>(x0, N, b, R, niter);

    FVec gx0(x0), gb(b);
    gx0.put_on_gpu();
    gb.put_on_gpu();
    N.prepare_device();
    forge::device::reset_transfer_stats();
    FVec xg = forge::solve_pwls_pcg_normal<float>(gx0, N, gb, R, niter);
    const auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(xg.to_arma(), xhost) <= 1e-3);
}
