// GPU tests of the batched transforms and of the NUFFT plan: Gnufft, Gfft and GfftSampled batches on the
// GPU equal one transform per vector and the CPU; CudaNufftPipeline's set_points equals a fresh plan with
// those points; its options (stream, max_batch) are honoured.
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "TestHelpers.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/nufft/Gnufft.h"

using namespace forge_test;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;
using DVec = forge::forgeCol<forge::forgeComplex<double>>;

namespace {
template <typename T>
forge::forgeCol<forge::forgeComplex<T>> up(const arma::Col<std::complex<T>>& a) {
    forge::forgeCol<forge::forgeComplex<T>> v(a);
    v.put_on_gpu();
    return v;
}
template <typename T>
arma::Col<std::complex<T>> down(forge::forgeCol<forge::forgeComplex<T>> v) {
    REQUIRE(v.on_gpu());
    v.get_from_gpu();
    return v.to_arma();
}

// For an operator G with forward_batch/adjoint_batch: the GPU batch equals the GPU transforms of its
// vectors one by one (to tolSingle) and the CPU batch (to tolCpu).
template <typename T, typename Op>
void check_batch(const Op& G, arma::uword nb, double tolSingle, double tolCpu) {
    using Vec = forge::forgeCol<forge::forgeComplex<T>>;
    const arma::uword n1 = G.n1(), n2 = G.n2();
    const arma::Col<std::complex<T>> xs = complex_normal<T>(n2 * nb), ys = complex_normal<T>(n1 * nb);
    forge::device::reset_transfer_stats();
    const Vec fbDev = G.forward_batch(up(xs), nb), abDev = G.adjoint_batch(up(ys), nb);
    // Two uploads (the inputs), nothing else: the batch runs on the device.
    CHECK(forge::device::transfer_stats().host_to_device_count == 2);
    CHECK(forge::device::transfer_stats().device_to_host_count == 0);
    const arma::Col<std::complex<T>> fb = down(fbDev), ab = down(abDev);
    const arma::Col<std::complex<T>> fc = G.forward_batch(Vec(xs), nb).to_arma();
    const arma::Col<std::complex<T>> ac = G.adjoint_batch(Vec(ys), nb).to_arma();
    INFO("batch " << nb << ": GPU vs CPU forward " << rel_error(fb, fc) << ", adjoint " << rel_error(ab, ac));
    CHECK(rel_error(fb, fc) < tolCpu);
    CHECK(rel_error(ab, ac) < tolCpu);
    for (arma::uword b = 0; b < nb; ++b) {
        const arma::Col<std::complex<T>> xb = xs.subvec(b * n2, (b + 1) * n2 - 1);
        const arma::Col<std::complex<T>> yb = ys.subvec(b * n1, (b + 1) * n1 - 1);
        const arma::Col<std::complex<T>> f1 = down(Vec(G * up(xb))), a1 = down(Vec(G / up(yb)));
        INFO("vector " << b);
        CHECK(rel_error(arma::Col<std::complex<T>>(fb.subvec(b * n1, (b + 1) * n1 - 1)), f1) < tolSingle);
        CHECK(rel_error(arma::Col<std::complex<T>>(ab.subvec(b * n2, (b + 1) * n2 - 1)), a1) < tolSingle);
    }
}

// A NUFFT geometry on an Nx x Ny x Nz image (2x oversampled, width 5) with a smooth positive kernel polynomial
// and deapodization factors of 1: the plan tests compare plans with each other, so any kernel will do.
// Stencil starts and offsets are made from u as CudaNufftPipeline::set_points(n1, ux, uy, uz) makes them.
struct NufftSetup {
    forge::cuda::NufftGeometry g{};
    std::vector<float> coef, ones;
    arma::fvec u[3];
    std::vector<int> first[3];
    std::vector<float> offset[3];
};
void make_setup(NufftSetup& s, arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1) {
    const arma::uword N[3] = {Nx, Ny, Nz};
    const int W = 5, stride = forge::cuda::NufftGeometry::kCoefStride;
    s.coef.assign(3 * stride, 0.f);
    for (int a = 0; a < W; ++a) {
        s.coef[a] = 1.f + 0.1f * float(a);
        s.coef[stride + a] = 0.2f - 0.05f * float(a);
        s.coef[2 * stride + a] = -0.1f;
    }
    s.ones.assign(std::max({Nx, Ny, Nz}), 1.f);
    for (int d = 0; d < 3; ++d) {
        s.g.N[d] = N[d];
        s.g.G[d] = N[d] > 1 ? 2 * N[d] : 1;
        s.u[d] = N[d] > 1 ? uniform<float>(n1, 0.0, double(s.g.G[d]) - 1e-3) : arma::fvec(n1, arma::fill::zeros);
        s.first[d].assign(n1, 0);
        s.offset[d].assign(n1, 0.f);
        if (N[d] > 1) {
            for (arma::uword j = 0; j < n1; ++j) {
                const double uj = s.u[d][j], fj = std::ceil(uj - W / 2.0);
                s.first[d][j] = int(fj);
                s.offset[d][j] = float(std::min(1.0, std::max(-1.0, 2 * (uj - fj) - (W - 1))));
            }
        }
        s.g.first[d] = s.first[d].data();
        s.g.offset[d] = s.offset[d].data();
        s.g.deapod[d] = s.ones.data();
    }
    s.g.W = arma::uword(W);
    s.g.n1 = n1;
    s.g.coef = s.coef.data();
    s.g.degree = 2;
}

// Runs plan P forward and adjoint on nb vectors; returns (forward, adjoint) on the host.
std::pair<arma::cx_fvec, arma::cx_fvec> run_plan(const forge::cuda::CudaNufftPipeline& P, arma::uword n2,
                                                 const arma::cx_fvec& xs, const arma::cx_fvec& ys, arma::uword nb) {
    const FVec dx = up(xs), dy = up(ys);
    FVec f = FVec::device_uninitialized(P.n1() * nb), a = FVec::device_uninitialized(n2 * nb);
    P.execute(forge::cuda::Direction::forward, reinterpret_cast<const float*>(dx.device_memptr()),
              reinterpret_cast<float*>(f.device_memptr()), nb);
    P.execute(forge::cuda::Direction::adjoint, reinterpret_cast<const float*>(dy.device_memptr()),
              reinterpret_cast<float*>(a.device_memptr()), nb);
    P.synchronize();
    return {down(f), down(a)};
}
}  // namespace

TEST_CASE("GPU Gnufft batch equals one transform per vector and the CPU", "[gpu][Gnufft][batch]") {
    FORGE_INFO_SEED();
    // 11 vectors: more than one pass of the default pass size (8).
    for (arma::uword nb : {1u, 3u, 11u}) {
        const arma::uword n1 = 6000;
        {
            forge::Gnufft<float> G(n1, 48, 40, 1, uniform<float>(n1, -24, 24), uniform<float>(n1, -20, 20),
                                   arma::fvec(n1, arma::fill::zeros));
            REQUIRE(G.gpu_enabled());
            check_batch<float>(G, nb, 1e-6, 1e-5);
        }
        {
            forge::Gnufft<float> G(n1, 20, 16, 12, uniform<float>(n1, -10, 10), uniform<float>(n1, -8, 8),
                                   uniform<float>(n1, -6, 6));
            check_batch<float>(G, nb, 1e-6, 1e-5);
        }
    }
}

TEST_CASE("GPU Gfft batch equals one transform per vector and the CPU, float and double", "[gpu][Gfft][batch]") {
    FORGE_INFO_SEED();
    for (arma::uword nb : {1u, 4u, 7u}) {
        check_batch<float>(forge::Gfft<float>(32, 24, 1), nb, 1e-6, 1e-5);
        check_batch<float>(forge::Gfft<float>(16, 12, 8), nb, 1e-6, 1e-5);
        check_batch<double>(forge::Gfft<double>(24, 16, 1), nb, 1e-14, 1e-12);
    }
}

TEST_CASE("GPU GfftSampled batch equals one transform per vector and the CPU", "[gpu][GfftSampled][batch]") {
    FORGE_INFO_SEED();
    // Half the lines of a 32 x 24 image on a readout-oversampled 64 x 24 grid, some samples twice.
    std::vector<float> vx, vy;
    for (int y = 0; y < 24; y += 2)
        for (int x = 0; x < 64; ++x) vx.push_back(0.5f * float(x - 32)), vy.push_back(float(y - 12));
    for (int j = 0; j < 40; ++j) vx.push_back(vx[std::size_t(j) * 7]), vy.push_back(vy[std::size_t(j) * 7]);
    const arma::fvec kx(vx), ky(vy), kz(vx.size(), arma::fill::zeros);
    const forge::GfftSampled<float> G(32, 24, 1, 64, 24, 1, kx, ky, kz);
    for (arma::uword nb : {1u, 5u}) check_batch<float>(G, nb, 1e-6, 1e-5);
}

TEST_CASE("NUFFT plan: set_points gives the result of a fresh plan with those points", "[gpu][Gnufft][points]") {
    FORGE_INFO_SEED();
    for (int dims : {2, 3}) {
        const arma::uword Nx = 32, Ny = 24, Nz = dims == 3 ? 16 : 1;
        NufftSetup a, b, c;
        make_setup(a, Nx, Ny, Nz, 5000);
        make_setup(b, Nx, Ny, Nz, 3000);  // fewer samples: the arrays are reused
        make_setup(c, Nx, Ny, Nz, 9000);  // more: they grow
        forge::cuda::CudaNufftPipeline reused(a.g);
        const arma::uword n2 = Nx * Ny * Nz, nb = 3;
        for (NufftSetup* s : {&b, &c}) {
            reused.set_points(s->g.n1, s->u[0].memptr(), s->u[1].memptr(), s->u[2].memptr());
            CHECK(reused.n1() == s->g.n1);
            const forge::cuda::CudaNufftPipeline fresh(s->g);
            CHECK(reused.sector_entries() == fresh.sector_entries());
            const arma::cx_fvec xs = complex_normal<float>(n2 * nb), ys = complex_normal<float>(s->g.n1 * nb);
            const auto r1 = run_plan(reused, n2, xs, ys, nb), r2 = run_plan(fresh, n2, xs, ys, nb);
            INFO(dims << "D, n1 = " << s->g.n1);
            // Forward: one thread per sample, no atomics: identical. Adjoint: shared-memory atomics may add
            // in another order.
            CHECK(std::memcmp(r1.first.memptr(), r2.first.memptr(), r1.first.n_elem * sizeof(std::complex<float>)) ==
                  0);
            CHECK(rel_error(r1.second, r2.second) < 1e-6);
        }
    }
}

#ifdef FORGE_HAS_CUDA
TEST_CASE("NUFFT plan: options.stream and options.max_batch are honoured", "[gpu][Gnufft][options]") {
    FORGE_INFO_SEED();
    NufftSetup s;
    make_setup(s, 32, 32, 1, 4000);
    const arma::uword n2 = 32 * 32;
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking) == cudaSuccess);
    const arma::cx_fvec xs = complex_normal<float>(n2 * 5), ys = complex_normal<float>(s.g.n1 * 5);
    {
        forge::cuda::PlanOptions opts;
        opts.stream = user;
        opts.max_batch = 2;
        forge::cuda::CudaNufftPipeline P(s.g, opts);
        const forge::cuda::CudaNufftPipeline ref(s.g);
        CHECK(P.stream() == user);
        CHECK(P.max_batch() == 2);
        CHECK(P.pass_size(2) == 2);
        CHECK(ref.pass_size(20) == forge::cuda::CudaNufftPipeline::kDefaultPass);
        const FVec dx = up(xs);
        FVec f = FVec::device_uninitialized(s.g.n1 * 2);
        P.execute(forge::cuda::Direction::forward, reinterpret_cast<const float*>(dx.device_memptr()),
                  reinterpret_cast<float*>(f.device_memptr()), 2);
        // Only the user stream carries the work: once it is synchronised the result is complete.
        REQUIRE(cudaStreamSynchronize(user) == cudaSuccess);
        const auto r =
            run_plan(ref, n2, arma::cx_fvec(xs.subvec(0, 2 * n2 - 1)), arma::cx_fvec(ys.subvec(0, 2 * s.g.n1 - 1)), 2);
        const arma::cx_fvec fh = down(f);
        CHECK(std::memcmp(fh.memptr(), r.first.memptr(), fh.n_elem * sizeof(std::complex<float>)) == 0);
        CHECK_THROWS_AS(P.execute(forge::cuda::Direction::forward, reinterpret_cast<const float*>(dx.device_memptr()),
                                  reinterpret_cast<float*>(f.device_memptr()), 3),
                        forge::invalid_argument);
        // A batch of 5 on the default plan runs in one pass; its first two vectors equal the batch of 2.
        const auto r5 = run_plan(ref, n2, xs, ys, 5);
        CHECK(rel_error(arma::cx_fvec(r5.first.subvec(0, 2 * s.g.n1 - 1)), r.first) < 1e-6);
        CHECK(rel_error(arma::cx_fvec(r5.second.subvec(0, 2 * n2 - 1)), r.second) < 1e-6);
    }
    CHECK(cudaStreamQuery(user) == cudaSuccess);  // still alive: the plan never destroys a stream it was given
    CHECK(cudaStreamDestroy(user) == cudaSuccess);
}
#endif
