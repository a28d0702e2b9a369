// GPU tests of the device sort of Gnufft<float>'s GPU plan (CudaNufftPipeline::set_trajectory, DeviceSort.cu): the
// same sector order and transforms as the host presort of stencils computed here by the documented formula; the
// operator against Gnufft<double> on the host; set_points growing and shrinking against fresh plans; crowded sectors
// split into subproblems; samples on both band edges; the lazily made host plan; bad samples named as on the host.
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <vector>

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge_test;
using arma::uword;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;
using RVec = forge::forgeCol<float>;

namespace {
forge::Trajectory<float> random_samples(const forge::ImageGrid& g, uword n1) {
    auto axis = [&](uword N) {
        return N > 1 ? uniform<float>(n1, -double(N) / 2, double(N) / 2) : arma::fvec(n1, arma::fill::zeros);
    };
    return forge::Trajectory<float>(axis(g.nx), axis(g.ny), axis(g.nz));
}
// Nine in ten samples within +-1.5 cycles/FOV of the centre (a few sectors hold most entries: split subproblems), and
// samples on both band edges of every axis.
forge::Trajectory<float> clustered_samples(const forge::ImageGrid& g, uword n1) {
    forge::Trajectory<float> k = random_samples(g, n1);
    const uword N[3] = {g.nx, g.ny, g.nz};
    arma::fvec* c[3] = {&k.kx, &k.ky, &k.kz};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 1) continue;
        for (uword j = 0; j < n1; ++j)
            if (j % 10 != 0) (*c[d])(j) = (*c[d])(j) / float(N[d]) * 3.f;
        for (uword j = 1; j < 40; j += 2) (*c[d])(j) = (j % 4 == 1 ? 1.f : -1.f) * float(N[d] / 2);
    }
    return k;
}
arma::cx_fvec on_gpu(const forge::Gnufft<float>& G, const arma::cx_fvec& v, bool forward) {
    FVec d(v);
    d.put_on_gpu();
    FVec out = forward ? G.forward(d) : G.adjoint(d);
    REQUIRE(out.on_gpu());
    out.get_from_gpu();
    return out.to_arma();
}
arma::cx_vec to_double(const arma::cx_fvec& v) { return arma::conv_to<arma::cx_vec>::from(v); }

// Two pipelines on the same samples: stencils from the documented formula (host presort) and k (device sort).
struct PipelinePair {
    std::vector<int> first[3];
    std::vector<float> offset[3], deapod[3];
    forge::cuda::NufftGeometry geometry(const forge::Gnufft<float>& G, const forge::Trajectory<float>& k) {
        forge::cuda::NufftGeometry g{};
        const uword n1 = k.n_samples();
        const arma::fvec* kc[3] = {&k.kx, &k.ky, &k.kz};
        const double W = double(G.kernel_width());
        for (int d = 0; d < 3; ++d) {
            const uword N = d == 0 ? G.Nx() : (d == 1 ? G.Ny() : G.Nz());
            g.N[d] = N;
            g.G[d] = G.grid_size(d);
            first[d].assign(n1, 0);
            offset[d].assign(n1, 0.f);
            deapod[d].assign(N, 1.f);
            for (uword j = 0; N > 1 && j < n1; ++j) {
                // u = k G / N wrapped into [0, G); stencil start ceil(u - W/2); offset 2 (u - start) - (W - 1).
                double u = double((*kc[d])(j)) * double(g.G[d]) / double(N);
                if (u < 0) u += double(g.G[d]);
                if (u >= double(g.G[d])) u = 0;
                const double f = std::ceil(u - W / 2);
                first[d][j] = int(f);
                offset[d][j] = float(std::min(1.0, std::max(-1.0, 2 * (u - f) - (W - 1))));
            }
            g.first[d] = first[d].data();
            g.offset[d] = offset[d].data();
            g.deapod[d] = deapod[d].data();
        }
        g.W = G.kernel_width();
        g.n1 = n1;
        g.coef = G.kernel_coefficients().data();
        g.degree = G.kernel_degree();
        return g;
    }
};

FVec device_vector(const arma::cx_fvec& v) {
    FVec d(v);
    d.put_on_gpu();
    return d;
}
arma::cx_fvec run(const forge::cuda::CudaNufftPipeline& p, forge::cuda::Direction dir, const arma::cx_fvec& in,
                  uword nout) {
    FVec din = device_vector(in);
    FVec dout = device_vector(arma::cx_fvec(nout, arma::fill::zeros));
    p.execute(dir, reinterpret_cast<const float*>(din.device_memptr()), reinterpret_cast<float*>(dout.device_memptr()));
    p.synchronize();
    dout.get_from_gpu();
    return dout.to_arma();
}

void check_device_sort_equals_host_presort(const forge::ImageGrid& grid, const forge::Trajectory<float>& k,
                                           bool expectSplit) {
    const forge::Gnufft<float> G(grid, k);  // for the kernel polynomials and grid sizes
    PipelinePair pair;
    forge::cuda::NufftGeometry g = pair.geometry(G, k);
    const forge::cuda::CudaNufftPipeline host(g);  // host presort of the stencils
    g.k[0] = k.kx.memptr();
    g.k[1] = k.ky.memptr();
    g.k[2] = k.kz.memptr();
    const forge::cuda::CudaNufftPipeline dev(g);  // device sort of k
    CHECK(dev.has_trajectory());
    CHECK_FALSE(host.has_trajectory());
    CHECK(dev.num_sectors() == host.num_sectors());
    CHECK(dev.sector_entries() == host.sector_entries());
    CHECK(dev.sector_entries() >= (long long)k.n_samples());
    CHECK(dev.num_subproblems() == host.num_subproblems());
    const uword n1 = k.n_samples(), n2 = grid.n_pixels();
    const arma::cx_fvec x = complex_normal<float>(n2), y = complex_normal<float>(n1);
    // Forward: one thread per sample, the same stencils: bit for bit. Adjoint: shared-memory atomics (rounding).
    CHECK(arma::all(run(dev, forge::cuda::Direction::forward, x, n1) ==
                    run(host, forge::cuda::Direction::forward, x, n1)));
    CHECK(rel_error(run(dev, forge::cuda::Direction::adjoint, y, n2),
                    run(host, forge::cuda::Direction::adjoint, y, n2)) < 1e-6);
    // The samples come back as given.
    arma::fvec back[3] = {arma::fvec(n1), arma::fvec(n1), arma::fvec(n1)};
    float* const bp[3] = {back[0].memptr(), back[1].memptr(), back[2].memptr()};
    dev.copy_trajectory(bp);
    CHECK(arma::all(back[0] == k.kx));
    CHECK(arma::all(back[1] == k.ky));
    CHECK(arma::all(back[2] == k.kz));
    // Crowded sectors are split over several subproblems (runs of at most 1024 samples).
    if (expectSplit) CHECK(dev.num_subproblems() > dev.num_sectors());
}

// Gnufft<float> on the GPU (device sort) against Gnufft<double> on the host, forward and adjoint.
void check_against_double(const forge::ImageGrid& grid, const forge::Trajectory<float>& k) {
    const forge::Gnufft<float> G(grid, k);
    REQUIRE(G.gpu_enabled());
    const forge::Trajectory<double> kd(arma::conv_to<arma::vec>::from(k.kx), arma::conv_to<arma::vec>::from(k.ky),
                                       arma::conv_to<arma::vec>::from(k.kz));
    const forge::Gnufft<double> D(grid, kd);
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(k.n_samples());
    const arma::cx_vec fd = D * to_double(x), ad = D / to_double(y);
    const double ef = rel_error(to_double(on_gpu(G, x, true)), fd), ea = rel_error(to_double(on_gpu(G, y, false)), ad);
    INFO("GPU float vs host double: forward " << ef << ", adjoint " << ea);
    CHECK(ef < 1e-5);
    CHECK(ea < 1e-5);
}
}  // namespace

TEST_CASE("GPU device sort: the same sector order and transforms as the host presort of the same stencils",
          "[gpu][Gnufft][device_sort]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(64, 48), forge::ImageGrid(24, 20, 16)}) {
        INFO("grid " << grid.to_string());
        SECTION("random") { check_device_sort_equals_host_presort(grid, random_samples(grid, 20000), false); }
        SECTION("clustered: crowded sectors, band edges") {
            check_device_sort_equals_host_presort(grid, clustered_samples(grid, 30000), true);
        }
    }
}

TEST_CASE("GPU device sort: Gnufft<float> on the GPU equals Gnufft<double> on the host within float rounding",
          "[gpu][Gnufft][device_sort]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid :
         {forge::ImageGrid(64, 48), forge::ImageGrid(24, 20, 16), forge::ImageGrid(20, 1, 12)}) {
        INFO("grid " << grid.to_string());
        check_against_double(grid, random_samples(grid, 15000));
        check_against_double(grid, clustered_samples(grid, 25000));
    }
}

TEST_CASE("GPU device sort: set_points growing and shrinking equals a fresh plan, in the same plan memory",
          "[gpu][Gnufft][device_sort][set_points]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(48, 40), forge::ImageGrid(20, 18, 12)}) {
        INFO("grid " << grid.to_string());
        forge::Gnufft<float> G(grid, random_samples(grid, 5000));
        const forge::cuda::CudaNufftPipeline* plan = G.gpu_plan();
        for (const uword n1 : {uword(40000), uword(700), uword(25000), uword(1)}) {
            INFO(n1 << " samples");
            const forge::Trajectory<float> k = n1 == 25000 ? clustered_samples(grid, n1) : random_samples(grid, n1);
            G.set_points(k);
            CHECK(G.gpu_plan() == plan);
            CHECK(G.n1() == n1);
            const forge::Gnufft<float> fresh(grid, k);
            CHECK(G.gpu_plan()->sector_entries() == fresh.gpu_plan()->sector_entries());
            const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(n1);
            CHECK(arma::all(on_gpu(G, x, true) == on_gpu(fresh, x, true)));
            CHECK(rel_error(on_gpu(G, y, false), on_gpu(fresh, y, false)) < 1e-6);
            // The host transforms of the GPU operator (its host plan made now, from the plan's copy of k).
            CHECK(rel_error(on_gpu(G, x, true), arma::cx_fvec(G * x)) < 1e-5);
            CHECK(rel_error(on_gpu(G, y, false), arma::cx_fvec(G / y)) < 1e-5);
        }
    }
}

TEST_CASE("GPU Gnufft: the host plan is made on the first host transform, from the device's copy of k",
          "[gpu][Gnufft][device_sort][lazy]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(40, 32, 8);
    const forge::Trajectory<float> k = clustered_samples(grid, 30000);
    const forge::Gnufft<float> G(grid, k);
    REQUIRE(G.gpu_enabled());
    forge::Gnufft<float>::PlanTimes t = G.plan_times();
    CHECK(t.device_sort > 0);
    CHECK(t.upload > 0);
    CHECK(t.gpu_plan > 0);
    CHECK(t.host_check == 0);
    CHECK(t.host_sort == 0);
    CHECK(t.fft_plan == 0);
    const forge::Gnufft<float> copy = G;  // shares the host plan that is not made yet
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels());
    const arma::cx_fvec hx = G * x;
    t = G.plan_times();
    CHECK(t.host_sort > 0);
    CHECK(t.fft_plan > 0);
    CHECK(arma::all(arma::cx_fvec(copy * x) == hx));
    // Positions in grid units as the formula gives them from the original k (the device kept k exactly).
    const arma::fvec* kc[3] = {&k.kx, &k.ky, &k.kz};
    const uword N[3] = {grid.nx, grid.ny, grid.nz};
    uword wrong = 0;
    for (int d = 0; d < 3; ++d) {
        const double Gd = double(G.grid_size(d));
        for (uword j = 0; j < k.n_samples(); ++j) {
            double u = double((*kc[d])(j)) * Gd / double(N[d]);
            if (u < 0) u += Gd;
            float want = float(u);
            if (want >= float(Gd)) want = 0.f;
            wrong += G.grid_positions(d)[j] != want;
        }
    }
    CHECK(wrong == 0);
    // The host transform agrees with the host transform of Gnufft<double>.
    const forge::Gnufft<double> D(grid, forge::Trajectory<double>(arma::conv_to<arma::vec>::from(k.kx),
                                                                  arma::conv_to<arma::vec>::from(k.ky),
                                                                  arma::conv_to<arma::vec>::from(k.kz)));
    CHECK(rel_error(to_double(hx), D * to_double(x)) < 1e-5);
}

TEST_CASE("GPU device sort: bad samples are named as the host names them, and set_points keeps the plan",
          "[gpu][Gnufft][device_sort][validation]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(32, 32, 16);
    const forge::Trajectory<float> good = random_samples(grid, 30000);
    forge::Gnufft<float> G(grid, good);
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels());
    const arma::cx_fvec before = on_gpu(G, x, true);
    forge::Trajectory<float> k = good;
    k.kz(20000) = -8.5f;
    CHECK_THROWS_WITH(G.set_points(k),
                      Catch::Contains(
                          "Gnufft::set_points: kz[20000] = -8.5 is outside [-8, 8] cycles/FOV (grid size z = 16)"));
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, k),
                      Catch::Contains("Gnufft: kz[20000] = -8.5 is outside [-8, 8] cycles/FOV (grid size z = 16)"));
    k.ky(29999) = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(G.set_points(k), Catch::Contains("Gnufft::set_points: ky[29999] is inf"));
    k.kz(20000) = 0.f;
    k.ky(29999) = 0.f;
    k.kx(7) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, k), Catch::Contains("Gnufft: kx[7] is nan"));
    // The refused trajectories left the operator and its plan as they were.
    CHECK(G.n1() == good.n_samples());
    CHECK(arma::all(on_gpu(G, x, true) == before));
    arma::fvec back[3] = {arma::fvec(G.n1()), arma::fvec(G.n1()), arma::fvec(G.n1())};
    float* const bp[3] = {back[0].memptr(), back[1].memptr(), back[2].memptr()};
    G.gpu_plan()->copy_trajectory(bp);
    CHECK(arma::all(back[2] == good.kz));
}

TEST_CASE("GPU CudaNufftPipeline::set_trajectory from device arrays equals the same from host arrays",
          "[gpu][Gnufft][device_sort]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(24, 20, 16);
    const forge::Trajectory<float> k0 = random_samples(grid, 3000), k = clustered_samples(grid, 20000);
    const forge::Gnufft<float> G(grid, k0);
    PipelinePair pair;
    forge::cuda::NufftGeometry g = pair.geometry(G, k0);
    g.k[0] = k0.kx.memptr();
    g.k[1] = k0.ky.memptr();
    g.k[2] = k0.kz.memptr();
    forge::cuda::CudaNufftPipeline fromHost(g), fromDevice(g);
    const float* hk[3] = {k.kx.memptr(), k.ky.memptr(), k.kz.memptr()};
    REQUIRE(fromHost.set_trajectory(k.n_samples(), hk, false));
    RVec dk[3] = {RVec(k.kx), RVec(k.ky), RVec(k.kz)};
    for (RVec& v : dk) v.put_on_gpu();
    const float* dp[3] = {dk[0].device_memptr(), dk[1].device_memptr(), dk[2].device_memptr()};
    REQUIRE(fromDevice.set_trajectory(k.n_samples(), dp, true));
    CHECK(fromDevice.n1() == k.n_samples());
    CHECK(fromDevice.sector_entries() == fromHost.sector_entries());
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(k.n_samples());
    CHECK(arma::all(run(fromDevice, forge::cuda::Direction::forward, x, k.n_samples()) ==
                    run(fromHost, forge::cuda::Direction::forward, x, k.n_samples())));
    CHECK(rel_error(run(fromDevice, forge::cuda::Direction::adjoint, y, grid.n_pixels()),
                    run(fromHost, forge::cuda::Direction::adjoint, y, grid.n_pixels())) < 1e-6);
    // A refused trajectory (one sample outside the band) returns false and leaves the plan as it was.
    arma::fvec bad = k.kx;
    bad(123) = 12.5f;
    const float* bk[3] = {bad.memptr(), k.ky.memptr(), k.kz.memptr()};
    CHECK_FALSE(fromHost.set_trajectory(k.n_samples(), bk, false));
    CHECK(arma::all(run(fromHost, forge::cuda::Direction::forward, x, k.n_samples()) ==
                    run(fromDevice, forge::cuda::Direction::forward, x, k.n_samples())));
}

TEST_CASE("GPU Gnufft::set_points from samples on the GPU: no copy of k through the host, equal to host samples",
          "[gpu][Gnufft][device_sort][set_points]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(48, 40), forge::ImageGrid(20, 18, 12)}) {
        INFO("grid " << grid.to_string());
        forge::Gnufft<float> G(grid, random_samples(grid, 4000));
        const forge::cuda::CudaNufftPipeline* plan = G.gpu_plan();
        const forge::Trajectory<float> k = clustered_samples(grid, 30000);
        RVec dk[3] = {RVec(k.kx), RVec(k.ky), RVec(k.kz)};
        for (RVec& v : dk) v.put_on_gpu();
        forge::device::reset_transfer_stats();
        G.set_points(dk[0], dk[1], dk[2]);
        const forge::device::TransferStats st = forge::device::transfer_stats();
        // Only the small subproblem tables go up; nothing of the size of k moves either way.
        CHECK(st.host_to_device_bytes < k.n_samples() * sizeof(float));
        CHECK(st.device_to_host_bytes == 0);
        CHECK(G.gpu_plan() == plan);
        CHECK(G.n1() == k.n_samples());
        const forge::Gnufft<float> fresh(grid, k);
        const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(k.n_samples());
        CHECK(arma::all(on_gpu(G, x, true) == on_gpu(fresh, x, true)));
        CHECK(rel_error(on_gpu(G, y, false), on_gpu(fresh, y, false)) < 1e-6);
        CHECK(rel_error(arma::cx_fvec(G * x), arma::cx_fvec(fresh * x)) == 0);  // the host plan from the device's k
        // A bad sample on the device: the host's message, the operator unchanged.
        arma::fvec bad = k.ky;
        bad(777) = float(grid.ny) / 2 + 0.25f;
        RVec dbad(bad);
        dbad.put_on_gpu();
        std::ostringstream want;
        want << "Gnufft::set_points: ky[777] = " << double(bad(777)) << " is outside";
        CHECK_THROWS_WITH(G.set_points(dk[0], dbad, dk[2]), Catch::Contains(want.str()));
        CHECK(G.n1() == k.n_samples());
        CHECK(arma::all(on_gpu(G, x, true) == on_gpu(fresh, x, true)));
        // Mixed residency is refused.
        RVec hostKz(k.kz);
        CHECK_THROWS_AS(G.set_points(dk[0], dk[1], hostKz), forge::residency_error);
    }
}

TEST_CASE("GPU Gnufft constructed from samples on the GPU: no copy of k through the host, equal to host samples",
          "[gpu][Gnufft][device_sort][set_points]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(48, 40), forge::ImageGrid(20, 18, 12)}) {
        INFO("grid " << grid.to_string());
        const forge::Trajectory<float> k = clustered_samples(grid, 30000);
        RVec dk[3] = {RVec(k.kx), RVec(k.ky), RVec(k.kz)};
        for (RVec& v : dk) v.put_on_gpu();
        forge::device::reset_transfer_stats();
        const forge::Gnufft<float> G(k.n_samples(), grid.nx, grid.ny, grid.nz, dk[0], dk[1], dk[2]);
        const forge::device::TransferStats st = forge::device::transfer_stats();
        CHECK(st.host_to_device_bytes < k.n_samples() * sizeof(float));  // tables only, nothing of the size of k
        CHECK(st.device_to_host_bytes == 0);
        REQUIRE(G.gpu_enabled());
        const forge::Gnufft<float> fresh(grid, k);
        const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(k.n_samples());
        CHECK(arma::all(on_gpu(G, x, true) == on_gpu(fresh, x, true)));
        CHECK(rel_error(on_gpu(G, y, false), on_gpu(fresh, y, false)) < 1e-6);
        CHECK(rel_error(arma::cx_fvec(G * x), arma::cx_fvec(fresh * x)) == 0);  // the host plan from the device's k
        // A bad sample on the device: the host constructor's message.
        arma::fvec bad = k.kx;
        bad(321) = -float(grid.nx) / 2 - 0.5f;
        RVec dbad(bad);
        dbad.put_on_gpu();
        std::ostringstream want;
        want << "Gnufft: kx[321] = " << double(bad(321)) << " is outside";
        CHECK_THROWS_WITH(forge::Gnufft<float>(k.n_samples(), grid.nx, grid.ny, grid.nz, dbad, dk[1], dk[2]),
                          Catch::Contains(want.str()));
        RVec hostKz(k.kz);
        CHECK_THROWS_AS(forge::Gnufft<float>(k.n_samples(), grid.nx, grid.ny, grid.nz, dk[0], dk[1], hostKz),
                        forge::residency_error);
    }
}
