// DftOptions on the GPU: every DftKernel through the operator's options against float64 brute-force sums (the
// bounds of the batch-kernel tests in GdftGpuTests.cpp), kernels the device cannot run refused naming the option,
// the stream option (work queued on the caller's stream, in its order), and devices given as options equal to
// the deprecated set_devices.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "DftTestProblem.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/DftOptions.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

using namespace forge;
using forge_test::complex_normal;
using forge_test::rel_error;
using cvec = forgeCol<forgeComplex<float>>;

namespace {

using Problem = forge_test::DftProblem;
using forge_test::error_vs_float64;
using forge_test::make_dft_problem;

Trajectory<float> trajectory(const Problem& p) { return {p.kx, p.ky, p.kz, p.t}; }
PixelGeometry<float> pixels(const Problem& p) { return {p.ix, p.iy, p.iz, p.FM}; }

cvec on_gpu(const arma::cx_fvec& v) {
    cvec c(v);
    c.put_on_gpu();
    return c;
}
arma::cx_fvec to_host(cvec c) {
    c.get_from_gpu();
    return c.to_arma();
}


// The DftKernel of the plan's batch_kernel() name, and back.
DftKernel kernel_of(const std::string& name) {
    return name == "wgmma" ? DftKernel::wgmma : name == "mma.sync" ? DftKernel::mma_sync : DftKernel::fp32;
}
std::string plan_name(DftKernel k) {
    return k == DftKernel::wgmma ? "wgmma" : k == DftKernel::mma_sync ? "mma.sync" : "fp32";
}

}  // namespace

TEST_CASE("DftOptions::kernel: every batch kernel the device runs matches float64, the others are refused",
          "[gpu][batch][mma][options]") {
    FORGE_INFO_SEED();
    // 15 x 16 x 3 pixels, 1999 samples: no whole number of tiles. 13 vectors: one launch of 8 and one of 4 on the
    // tensor-core kernels, then one vector on the FP32 kernel.
    const Problem p = make_dft_problem(15, 16, 3, 1999);
    const std::string best = Gdft<float>(trajectory(p), pixels(p)).gpu_plan()->batch_kernel();
    INFO("fastest batch kernel here: " << best);
    const std::vector<std::string> all = {"wgmma", "mma.sync", "fp32"};
    const auto first = std::find(all.begin(), all.end(), best);
    REQUIRE(first != all.end());
    for (auto k = all.begin(); k != first; ++k) {  // faster than the device or the build has: refused
        DftOptions o;
        o.kernel = kernel_of(*k);
        INFO("kernel " << *k);
        CHECK_THROWS_AS(Gdft<float>(trajectory(p), pixels(p), o), forge::invalid_argument);
        CHECK_THROWS_WITH(Gdft<float>(trajectory(p), pixels(p), o),
                          Catch::Matchers::Contains("DftOptions::kernel") &&
                              Catch::Matchers::Contains(dft_kernel_name(o.kernel)));
    }
    const uword nb = 13;
    arma::cx_fvec xs = complex_normal<float>(p.n2 * nb), ys = complex_normal<float>(p.n1 * nb);
    for (uword b = 0; b < nb; ++b) {
        xs.subvec(b * p.n2, (b + 1) * p.n2 - 1) *= std::pow(10.0f, float(int(b % 5) * 5 - 10));
        ys.subvec(b * p.n1, (b + 1) * p.n1 - 1) *= std::pow(10.0f, float(int(b % 5) * 5 - 10));
    }
    std::vector<DftKernel> kernels{DftKernel::automatic};
    for (auto k = first; k != all.end(); ++k) kernels.push_back(kernel_of(*k));
    for (DftKernel kernel : kernels) {
        DftOptions o;
        o.kernel = kernel;
        const Gdft<float> G(trajectory(p), pixels(p), o);
        REQUIRE(G.gpu_enabled());
        CHECK(G.gpu_plan()->batch_kernel() == (kernel == DftKernel::automatic ? best : plan_name(kernel)));
        const arma::cx_fvec fb = to_host(G.forward(on_gpu(xs), nb)), ab = to_host(G.adjoint(on_gpu(ys), nb));
        for (uword b = 0; b < nb; ++b) {
            INFO("kernel " << dft_kernel_name(kernel) << ", vector " << b);
            CHECK(error_vs_float64(p, true, xs, fb, b, 24) < 2e-5);
            CHECK(error_vs_float64(p, false, ys, ab, b, 24) < 2e-5);
        }
        // An operator made from G's pixels runs on G's plan, and so on its kernel.
        const Gdft<float> H(G, trajectory(p));
        CHECK(H.gpu_plan() == G.gpu_plan());
        CHECK(H.options().kernel == kernel);
    }
}

TEST_CASE("DftOptions::kernel on GdftR2: its batches run on the FP32 kernel whatever the option",
          "[gpu][batch][options]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(12, 10, 2, 900);
    const ImageGrid grid(p.nx, p.ny, p.nz);
    const GdftR2<float> D(trajectory(p), pixels(p), grid);
    DftOptions o;
    o.kernel = DftKernel::fp32;
    const GdftR2<float> F(trajectory(p), pixels(p), grid, o);
    const uword nb = 5;
    const cvec x = on_gpu(complex_normal<float>(p.n2 * nb)), y = on_gpu(complex_normal<float>(p.n1 * nb));
    const arma::cx_fvec f1 = to_host(D.forward(x, nb)), f2 = to_host(F.forward(x, nb));
    const arma::cx_fvec a1 = to_host(D.adjoint(y, nb)), a2 = to_host(F.adjoint(y, nb));
    CHECK(std::memcmp(f1.memptr(), f2.memptr(), f1.n_elem * sizeof(std::complex<float>)) == 0);
    CHECK(std::memcmp(a1.memptr(), a2.memptr(), a1.n_elem * sizeof(std::complex<float>)) == 0);
}

#ifdef FORGE_HAS_CUDA
TEST_CASE("DftOptions::stream: the transform is queued on the caller's stream, in its order", "[gpu][options]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 12, 2, 1500);
    cudaStream_t s = nullptr, other = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) == cudaSuccess);
    {
        DftOptions o;
        o.stream = s;
        const Gdft<float> G(trajectory(p), pixels(p), o), D(trajectory(p), pixels(p));
        REQUIRE(G.gpu_plan()->stream() == s);
        CHECK(G.options().stream == s);
        for (uword nb : {uword(1), uword(8)}) {
            INFO("batch " << nb);
            const cvec x = on_gpu(complex_normal<float>(p.n2 * nb));
            cvec out = cvec::device_uninitialized(p.n1 * nb);
            const size_t bytes = p.n1 * nb * sizeof(std::complex<float>);
            REQUIRE(cudaMemset(out.device_memptr(), 0, bytes) == cudaSuccess);
            device::synchronize();
            // The caller's stream is held by a host function until the test releases it (at most 20 s).
            std::atomic<bool> release{false};
            auto hold = [](void* flag) {
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (!static_cast<std::atomic<bool>*>(flag)->load() && std::chrono::steady_clock::now() < until)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            };
            REQUIRE(cudaLaunchHostFunc(s, hold, &release) == cudaSuccess);
            G.apply(x.device_memptr(), out.device_memptr(), nb, true, Residency::Device);
            // Queued behind the held host function: nothing written yet.
            CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
            arma::cx_fvec early(p.n1 * nb);
            REQUIRE(cudaMemcpyAsync(early.memptr(), out.device_memptr(), bytes, cudaMemcpyDeviceToHost, other) ==
                    cudaSuccess);
            REQUIRE(cudaStreamSynchronize(other) == cudaSuccess);
            CHECK(arma::norm(early) == 0.0);
            release = true;
            REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
            // Then the same bits as the operator on its own stream.
            const arma::cx_fvec got = to_host(out), want = to_host(D.forward(x, nb));
            CHECK(std::memcmp(got.memptr(), want.memptr(), bytes) == 0);
        }
    }
    // The stream stays the caller's: the operators are gone, the stream still works.
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(other) == cudaSuccess);
}
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("DftOptions::devices equals the deprecated set_devices", "[gpu][multigpu][options]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(20, 12, 2, 1700);
    const std::vector<int> devices{0, 0};
    const Gdft<float> M(trajectory(p), pixels(p), DftOptions{nullptr, devices});
    CHECK(M.devices() == devices);
    CHECK(M.options().devices == devices);
    Gdft<float> S(trajectory(p), pixels(p));
    S.set_devices(devices);
    CHECK(S.options().devices == devices);
    const uword nb = 3;
    const cvec x = on_gpu(complex_normal<float>(p.n2 * nb)), y = on_gpu(complex_normal<float>(p.n1 * nb));
    const arma::cx_fvec fm = to_host(M.forward(x, nb)), fs = to_host(S.forward(x, nb));
    const arma::cx_fvec am = to_host(M.adjoint(y, nb)), as = to_host(S.adjoint(y, nb));
    CHECK(std::memcmp(fm.memptr(), fs.memptr(), fm.n_elem * sizeof(std::complex<float>)) == 0);
    CHECK(std::memcmp(am.memptr(), as.memptr(), am.n_elem * sizeof(std::complex<float>)) == 0);
    // An operator made from M's pixels runs on M's devices.
    const Gdft<float> H(M, trajectory(p));
    CHECK(H.devices() == devices);
    CHECK(rel_error(to_host(H.forward(x, nb)), fm) == 0.0);
    // Device numbers that do not exist, named as options.
    const int count = device::device_count();
    CHECK_THROWS_AS(Gdft<float>(trajectory(p), pixels(p), DftOptions{nullptr, {0, count}}), forge::invalid_argument);
    CHECK_THROWS_WITH(Gdft<float>(trajectory(p), pixels(p), DftOptions{nullptr, {0, count}}),
                      Catch::Matchers::Contains("options.devices") &&
                          Catch::Matchers::Contains("devices[1] = " + std::to_string(count)));
}
#pragma GCC diagnostic pop
