// GPU tests of the FFT plan facade (forge/CUDA/FftPlan.h): cuFFT on device data equals FFTW on the same grids,
// plain and centred, single grids and batches, on a stream of the caller's.
#include <complex>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "TestHelpers.h"
#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"
#include "forge/Core/forgeCol.h"

using namespace forge_test;
using arma::uword;

namespace {
template <typename T>
void check_device_equals_host(const forge::FftPlan<T>& F, double tol) {
    using C = forge::forgeComplex<T>;
    const uword n = F.size(), nb = 3;
    const arma::Col<std::complex<T>> x = complex_normal<T>(n * nb);
    for (const bool centred : {false, true})
        for (const bool forward : {true, false}) {
            INFO((centred ? "centred " : "plain ") << (forward ? "forward" : "backward"));
            forge::forgeCol<C> h(x), d(x), out = forge::forgeCol<C>::device_uninitialized(n * nb);
            d.put_on_gpu();
            if (centred) {
                F.centred(forge::FftMemory::host, h.memptr(), h.memptr(), forward, nb);
                F.centred(forge::FftMemory::device, d.device_memptr(), out.device_memptr(), forward, nb);
            } else {
                F.execute(forge::FftMemory::host, h.memptr(), forward, nb);
                F.execute(forge::FftMemory::device, d.device_memptr(), forward, nb);
            }
            forge::device::synchronize();
            forge::forgeCol<C>& result = centred ? out : d;
            result.get_from_gpu();
            CHECK(rel_error(result.to_arma(), h.to_arma()) < tol);
        }
}
}  // namespace

TEST_CASE("GPU FftPlan: cuFFT equals FFTW, float and double, 2D and 3D, batches", "[gpu][FftPlan][fft]") {
    FORGE_INFO_SEED();
    for (const forge::ImageGrid g : {forge::ImageGrid(64, 48), forge::ImageGrid(16, 12, 8)}) {
        INFO("grid " << g.to_string());
        const forge::FftPlan<float> Ff(g);
        check_device_equals_host(Ff, 1e-5);
        CHECK(Ff.has_device_plan());  // made on first device use
        const forge::FftPlan<double> Fd(g);
        Fd.prepare_device();
        CHECK(Fd.has_device_plan());
        check_device_equals_host(Fd, 1e-12);
    }
}

#ifdef FORGE_HAS_CUDA
TEST_CASE("GPU FftPlan on a stream and device of the caller's", "[gpu][FftPlan][fft]") {
    FORGE_INFO_SEED();
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreate(&user) == cudaSuccess);
    {
        forge::FftPlanOptions o;
        o.stream = user;
        o.device = forge::device::current_device();
        const forge::FftPlan<float> F(32, 32, 1, o);
        CHECK(F.options().stream == user);
        check_device_equals_host(F, 1e-5);
    }
    CHECK(cudaStreamQuery(user) == cudaSuccess);
    CHECK(cudaStreamDestroy(user) == cudaSuccess);
    forge::FftPlanOptions bad;
    bad.device = forge::device::device_count();
    const forge::FftPlan<float> F(8, 8, 1, bad);  // the device plan is made on first use
    CHECK_THROWS_WITH(F.prepare_device(), Catch::Contains("options.device"));
}
#endif
