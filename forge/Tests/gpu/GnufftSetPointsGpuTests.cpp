// GPU tests of Gnufft::set_points (the plan re-sorts its sectors and keeps its FFT plan) and of NufftOptions' stream
// and device, against freshly made operators and the host transforms.
#include <complex>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge_test;
using arma::uword;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;

namespace {
forge::Trajectory<float> random_samples(const forge::ImageGrid& g, uword n1) {
    auto axis = [&](uword N) {
        return N > 1 ? uniform<float>(n1, -double(N) / 2, double(N) / 2) : arma::fvec(n1, arma::fill::zeros);
    };
    return forge::Trajectory<float>(axis(g.nx), axis(g.ny), axis(g.nz));
}
arma::cx_fvec on_gpu(const forge::Gnufft<float>& G, const arma::cx_fvec& v, bool forward) {
    FVec d(v);
    d.put_on_gpu();
    FVec out = forward ? G.forward(d) : G.adjoint(d);
    REQUIRE(out.on_gpu());
    out.get_from_gpu();
    return out.to_arma();
}
}  // namespace

TEST_CASE("GPU Gnufft::set_points: the same plan, equal to a fresh operator and to the host", "[gpu][Gnufft][set_points]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid grid : {forge::ImageGrid(64, 48), forge::ImageGrid(24, 20, 16)}) {
        INFO("grid " << grid.to_string());
        forge::Gnufft<float> G(grid, random_samples(grid, 5000));
        REQUIRE(G.gpu_enabled());
        const forge::cuda::CudaNufftPipeline* plan = G.gpu_plan();
        for (const uword n1 : {uword(12000), uword(3000)}) {
            INFO(n1 << " samples");
            const forge::Trajectory<float> k = random_samples(grid, n1);
            G.set_points(k);
            CHECK(G.gpu_plan() == plan);  // new points, same plan (FFT plan, deapodization, workspace)
            CHECK(G.gpu_plan()->n1() == n1);
            const forge::Gnufft<float> fresh(grid, k);
            const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(n1);
            // Forward: one thread per sample, a fixed sum: bit for bit. Adjoint: shared-memory atomics (rounding).
            CHECK(arma::all(on_gpu(G, x, true) == on_gpu(fresh, x, true)));
            CHECK(rel_error(on_gpu(G, y, false), on_gpu(fresh, y, false)) < 1e-6);
            CHECK(rel_error(on_gpu(G, x, true), arma::cx_fvec(G * x)) < 1e-5);
            CHECK(rel_error(on_gpu(G, y, false), arma::cx_fvec(G / y)) < 1e-5);
        }
    }
}

TEST_CASE("GPU Gnufft::set_points on a copy: the copy gets a plan of its own, the original keeps its samples",
          "[gpu][Gnufft][set_points]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(48, 40);
    const forge::Trajectory<float> k1 = random_samples(grid, 4000), k2 = random_samples(grid, 6000);
    const forge::Gnufft<float> G(grid, k1);
    forge::Gnufft<float> copy = G;
    REQUIRE(copy.gpu_plan() == G.gpu_plan());
    copy.set_points(k2);
    CHECK(copy.gpu_plan() != G.gpu_plan());
    CHECK(G.gpu_plan()->n1() == 4000);
    const arma::cx_fvec x = complex_normal<float>(grid.n_pixels());
    CHECK(arma::all(on_gpu(G, x, true) == on_gpu(forge::Gnufft<float>(grid, k1), x, true)));
    CHECK(arma::all(on_gpu(copy, x, true) == on_gpu(forge::Gnufft<float>(grid, k2), x, true)));
}

#ifdef FORGE_HAS_CUDA
TEST_CASE("GPU Gnufft: NufftOptions stream and device reach the plan", "[gpu][Gnufft][options]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid grid(32, 32);
    const forge::Trajectory<float> k = random_samples(grid, 6000);
    const forge::Gnufft<float> ref(grid, k);
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreate(&user) == cudaSuccess);  // blocking: ordered with the legacy default stream
    {
        forge::NufftOptions o;
        o.stream = user;
        o.device = forge::device::current_device();
        const forge::Gnufft<float> G(grid, k, o);
        REQUIRE(G.gpu_enabled());
        CHECK(G.gpu_plan()->stream() == user);
        CHECK(G.gpu_plan()->device() == o.device);
        const arma::cx_fvec x = complex_normal<float>(grid.n_pixels()), y = complex_normal<float>(6000);
        CHECK(arma::all(on_gpu(G, x, true) == on_gpu(ref, x, true)));
        CHECK(rel_error(on_gpu(G, y, false), on_gpu(ref, y, false)) < 1e-6);
    }
    CHECK(cudaStreamQuery(user) == cudaSuccess);  // the caller's stream outlives the operator
    CHECK(cudaStreamDestroy(user) == cudaSuccess);

    cudaStream_t nonBlocking = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking) == cudaSuccess);
    forge::NufftOptions o;
    o.stream = nonBlocking;
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, k, o), Catch::Contains("cudaStreamNonBlocking"));
    CHECK(cudaStreamDestroy(nonBlocking) == cudaSuccess);

    o = forge::NufftOptions();
    o.device = forge::device::device_count();
    CHECK_THROWS_WITH(forge::Gnufft<float>(grid, k, o), Catch::Contains("options.device"));
}
#endif
