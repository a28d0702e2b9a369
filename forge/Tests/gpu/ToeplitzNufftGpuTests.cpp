// ToeplitzNormal's kernels built on the GPU by NUFFT (Gnufft<float>'s device plan, one batched adjoint) against the
// exact float64 G^H W G and the same segmentation in float64, and against the host's NUFFT build; the exact GPU build
// whose pair kernels one launch combines (more pairs than one chunk of cuda/KernelCombine.cu); Auto's GPU choice.
#include <complex>

#include "ToeplitzTestProblem.h"
#include "forge/Core/DeviceMemory.h"

using namespace toeplitz_test;

namespace {

using FVec = forgeCol<forgeComplex<float>>;

forge::ToeplitzOptions options(forge::KernelSource source, bool host) {
    forge::ToeplitzOptions o;
    o.build = host ? forge::KernelBuild::Host : forge::KernelBuild::Auto;
    o.source = source;
    return o;
}

forge::ToeplitzNormal<float> make(const Grid& g, const Trajectory& tr, const arma::vec& fm, uword L,
                                  const forge::ToeplitzOptions& o) {
    if (L == 0)
        return forge::ToeplitzNormal<float>(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                            as<float>(tr.W), o);
    return forge::ToeplitzNormal<float>(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                        as<float>(tr.W), as<float>(fm), as<float>(tr.t), L, forge::TSInterp::MinMax, o);
}

}  // namespace

TEST_CASE("GPU ToeplitzNormal with NUFFT kernels equals the exact G^H W G and the host's NUFFT build",
          "[gpu][Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    for (const Grid& g : {Grid{32, 24, 1}, Grid{15, 11, 7}, Grid{16, 12, 8}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 2 * g.n2(), 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const auto gpu = make(g, tr, fm, 0, options(forge::KernelSource::Nufft, false));
        const auto host = make(g, tr, fm, 0, options(forge::KernelSource::Nufft, true));
        CHECK(gpu.kernels_built_on_gpu());
        CHECK(gpu.kernel_source() == forge::KernelSource::Nufft);
        CHECK(gpu.grouped_axis() == 3);
        const arma::cx_vec x = complex_normal<double>(g.n2());
        const ExactNormal exact(g, tr, arma::zeros(g.n2()));
        const arma::cx_vec ref = exact(x);
        const double tol = toeplitz_tolerance(gpu, tr.kx.n_elem, 1e-6);
        CHECK(rel_error(on_device(gpu, x), ref) <= tol);
        CHECK(rel_error(on_device(gpu, x), on_device(host, x)) <= tol);

        // Field map, L = 6: 28 pairs (two chunks of the combination), against the same segmentation in float64.
        const auto fgpu = make(g, tr, fm, 6, options(forge::KernelSource::Nufft, false));
        CHECK(fgpu.kernels_built_on_gpu());
        CHECK(fgpu.kernel_count() == 28);
        const SegmentedNormal seg(g, tr, fm, 6, float());
        CHECK(rel_error(on_device(fgpu, x), arma::cx_vec(seg(x))) <= toeplitz_tolerance(fgpu, tr.kx.n_elem, 1e-6));
    }
}

TEST_CASE("GPU ToeplitzNormal, exact kernels: the one-launch pair combination equals the host build",
          "[gpu][Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    for (const Grid& g : {Grid{24, 20, 1}, Grid{12, 10, 6}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 2 * g.n2(), 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 100);
        for (uword L : {uword(0), uword(2), uword(6)}) {
            INFO("L = " << L);
            const auto gpu = make(g, tr, fm, L, options(forge::KernelSource::Exact, false));
            CHECK(gpu.kernels_built_on_gpu());
            CHECK(gpu.kernel_source() == forge::KernelSource::Exact);
            const arma::cx_vec x = complex_normal<double>(g.n2());
            CHECK(rel_error(on_device(gpu, x), arma::cx_vec(SegmentedNormal(g, tr, fm, L, float())(x))) <=
                  toeplitz_tolerance(gpu, tr.kx.n_elem));
        }
    }
}

TEST_CASE("GPU ToeplitzNormal, KernelSource::Auto: exact for small builds, NUFFT where the exact DFTs cost more",
          "[gpu][Toeplitz][nufft-kernels]") {
    FORGE_INFO_SEED();
    const Grid small{24, 20, 1};
    const Trajectory trs = random_trajectory(small, 2000, 0);
    const auto s = make(small, trs, arma::vec(), 0, options(forge::KernelSource::Auto, false));
    CHECK(s.kernel_source() == forge::KernelSource::Exact);
    // 64 x 64 x 32 with 400000 samples: the exact DFTs (4e11 sample-cell phases) are estimated at about 0.36 s on
    // an H100, several times the NUFFT's.
    const Grid big{64, 64, 32};
    const Trajectory trb = random_trajectory(big, 400000, 0);
    const auto b = make(big, trb, arma::vec(), 0, options(forge::KernelSource::Auto, false));
    CHECK(b.kernel_source() == forge::KernelSource::Nufft);
    CHECK(b.kernels_built_on_gpu());
    const auto h = make(big, trb, arma::vec(), 0, options(forge::KernelSource::Nufft, true));
    const arma::cx_vec x = complex_normal<double>(big.n2());
    CHECK(rel_error(on_device(b, x), on_device(h, x)) <= toeplitz_tolerance(b, trb.kx.n_elem, 1e-6));
}

TEST_CASE("GPU ToeplitzNormal for a field-map band: another map's operator takes the device kernels",
          "[gpu][Toeplitz][band]") {
    FORGE_INFO_SEED();
    const Grid g{32, 24, 1};
    const Trajectory tr = random_trajectory(g, 2 * g.n2(), 10e-3);
    const arma::vec fm1 = smooth_field_map(g, 2 * kPi * 100), fm2 = smooth_field_map(g, 2 * kPi * 100) - 2 * kPi * 30;
    const forge::FieldBand band{std::max(forge::ToeplitzNormal<float>::field_band(as<float>(fm1)).half_width,
                                         forge::ToeplitzNormal<float>::field_band(as<float>(fm2)).half_width)};
    const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(tr.t), band, 1e-3);
    for (forge::KernelSource source : {forge::KernelSource::Exact, forge::KernelSource::Nufft}) {
        INFO((source == forge::KernelSource::Exact ? "exact" : "NUFFT") << " kernels, L = " << L);
        const forge::ToeplitzNormal<float> N1(forge::ImageGrid(g.Nx, g.Ny, g.Nz), trajectory_of<float>(tr),
                                              as<float>(tr.W), as<float>(fm1), band, L, options(source, false));
        CHECK(N1.kernels_built_on_gpu());
        const arma::cx_vec x = complex_normal<double>(g.n2());
        const arma::cx_vec before = on_device(N1, x);
        const forge::ToeplitzNormal<float> N2 = N1.with_field_map(as<float>(fm2));
        const arma::cx_vec r2 = on_device(N2, x);
        // within the requested error of each map's exact G^H W G; the first operator untouched by the second
        CHECK(rel_error(r2, ExactNormal(g, tr, fm2)(x)) <= 1e-3);
        CHECK(rel_error(on_device(N1, x), ExactNormal(g, tr, fm1)(x)) <= 1e-3);
        CHECK(rel_error(on_device(N1, x), before) == 0);
        // the same as a host apply of the same operator
        CHECK(rel_error(r2, arma::conv_to<arma::cx_vec>::from(
                                N2 * arma::cx_fvec(arma::conv_to<arma::cx_fvec>::from(x)))) <= 1e-5);
    }
}
