// GPU tests of ToeplitzOptions' stream and device: the device apply on a caller's stream equals the default one bit
// for bit, a non-blocking stream and a device out of range are refused, and host-built kernels apply on the GPU.
#include <complex>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "TestHelpers.h"
#include "ToeplitzTolerance.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

using namespace forge_test;
using arma::uword;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;

namespace {
arma::cx_fvec on_gpu(const forge::ToeplitzNormal<float>& N, const arma::cx_fvec& x, uword nbatch = 1) {
    FVec d(x);
    d.put_on_gpu();
    FVec out = N.forward(d, nbatch);
    REQUIRE(out.on_gpu());
    out.get_from_gpu();
    return out.to_arma();
}
}  // namespace

#ifdef FORGE_HAS_CUDA
TEST_CASE("GPU ToeplitzNormal with ToeplitzOptions stream and device: equal to the defaults",
          "[gpu][Toeplitz][options]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid g(24, 20, 6);
    const uword n1 = 3000;
    const forge::Trajectory<float> k(uniform<float>(n1, -12, 12), uniform<float>(n1, -10, 10),
                                     uniform<float>(n1, -3, 3), arma::linspace<arma::fvec>(0, 5e-3, n1));
    const arma::fvec W = uniform<float>(n1, 0.5, 1.5), fm = uniform<float>(g.n_pixels(), -300, 300);
    const forge::ToeplitzNormal<float> ref(g, k, W, fm, 3);
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreate(&user) == cudaSuccess);
    {
        forge::ToeplitzOptions o;
        o.stream = user;
        o.device = forge::device::current_device();
        const forge::ToeplitzNormal<float> N(g, k, W, fm, 3, forge::TSInterp::MinMax, o);
        CHECK(N.kernels_built_on_gpu() == ref.kernels_built_on_gpu());
        const arma::cx_fvec x = complex_normal<float>(2 * g.n_pixels());
        CHECK(arma::all(on_gpu(N, x, 2) == on_gpu(ref, x, 2)));
        CHECK(rel_error(on_gpu(N, x, 2), arma::cx_fvec(N.forward(FVec(x), 2).to_arma())) < toeplitz_tolerance(N, n1));
    }
    CHECK(cudaStreamQuery(user) == cudaSuccess);
    CHECK(cudaStreamDestroy(user) == cudaSuccess);

    cudaStream_t nonBlocking = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking) == cudaSuccess);
    forge::ToeplitzOptions o;
    o.stream = nonBlocking;
    CHECK_THROWS_WITH(forge::ToeplitzNormal<float>(g, k, W, o), Catch::Contains("cudaStreamNonBlocking"));
    CHECK(cudaStreamDestroy(nonBlocking) == cudaSuccess);
    o = forge::ToeplitzOptions();
    o.device = forge::device::device_count();
    CHECK_THROWS_WITH(forge::ToeplitzNormal<float>(g, k, W, o), Catch::Contains("options.device"));
}
#endif

TEST_CASE("GPU ToeplitzNormal: kernels built on the host (ToeplitzOptions::build) apply on the GPU as on the host",
          "[gpu][Toeplitz][options]") {
    FORGE_INFO_SEED();
    const forge::ImageGrid g(32, 28);
    const uword n1 = 2500;
    const forge::Trajectory<float> k(uniform<float>(n1, -16, 16), uniform<float>(n1, -14, 14), arma::fvec(n1));
    forge::ToeplitzOptions o;
    o.build = forge::KernelBuild::Host;
    const forge::ToeplitzNormal<float> N(g, k, arma::fvec(), o);
    CHECK_FALSE(N.kernels_built_on_gpu());
    N.prepare_device();
    const arma::cx_fvec x = complex_normal<float>(g.n_pixels());
    CHECK(rel_error(on_gpu(N, x), arma::cx_fvec(N * x)) < toeplitz_tolerance(N, n1));
}
