// GPU tests of CudaDftPipeline, GPU-resident Gdft/GdftR2 and device forgeCol arithmetic.
// References: the CPU operators (float, checked against float64 brute force by the CPU suite) and
// float64 brute-force sums computed here.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef FORGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

#include "DftTestProblem.h"
#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"

using namespace forge;
using forge_test::complex_normal;
using forge_test::rel_error;
using forge_test::uniform;
using cvec = forgeCol<forgeComplex<float>>;

namespace {

using Problem = forge_test::DftProblem;
using forge_test::error_vs_float64;
using forge_test::make_dft_problem;

Gdft<float> make_gdft(const Problem& p) {
    return Gdft<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t);
}
GdftR2<float> make_gdftr2(const Problem& p) {
    return GdftR2<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, p.nx, p.ny, p.nz);
}

// The plan's geometry for problem p: its pixels and samples, the field map already in turns per second.
cuda::DftGeometry dft_geometry(const Problem& p, const arma::fvec& fmTurns) {
    cuda::DftGeometry g;
    g.ix = p.ix.memptr();
    g.iy = p.iy.memptr();
    g.iz = p.iz.memptr();
    g.fm_turns = fmTurns.memptr();
    g.kx = p.kx.memptr();
    g.ky = p.ky.memptr();
    g.kz = p.kz.memptr();
    g.t = p.t.memptr();
    g.n1 = p.n1;
    g.n2 = p.n2;
    return g;
}

cvec on_gpu(const arma::cx_fvec& v) {
    cvec c(v);
    c.put_on_gpu();
    return c;
}
arma::cx_fvec to_host(cvec c) {
    c.get_from_gpu();
    return c.to_arma();
}

// Forward, adjoint and normal on the GPU against the CPU operator; results stay on the GPU.
template <typename Op>
void check_cpu_vs_gpu(const Op& G, const Problem& p) {
    REQUIRE(G.gpu_enabled());
    REQUIRE(G.n2() == p.n2);
    forge_test::check_host_device(G, 1e-4);
}

}  // namespace

TEST_CASE("GPU Gdft matches the CPU operator on random 2D and 3D problems", "[gpu][gdft]") {
    FORGE_INFO_SEED();
    const Problem p2 = make_dft_problem(24, 20, 1, 1500);
    check_cpu_vs_gpu(make_gdft(p2), p2);
    const Problem p3 = make_dft_problem(16, 12, 6, 2000);
    check_cpu_vs_gpu(make_gdft(p3), p3);
}

TEST_CASE("GPU GdftR2 matches the CPU operator on random 2D and 3D problems", "[gpu][gdftr2]") {
    FORGE_INFO_SEED();
    const Problem p2 = make_dft_problem(24, 20, 1, 1500);
    check_cpu_vs_gpu(make_gdftr2(p2), p2);
    const Problem p3 = make_dft_problem(16, 12, 6, 2000);
    check_cpu_vs_gpu(make_gdftr2(p3), p3);
}

TEST_CASE("GPU Gdft forward matches a float64 brute-force sum", "[gpu][gdft]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(32, 32, 8, 9000);  // large enough that the inner sum is split across blocks
    const Gdft<float> G = make_gdft(p);
    const arma::cx_fvec x = complex_normal<float>(p.n2);
    const double err = error_vs_float64(p, true, x, to_host(G * on_gpu(x)), 0, 64);
    INFO("rel. error vs float64: " << err);
    CHECK(err < 2e-5);
}

TEST_CASE("GPU Gdft and GdftR2 are adjoint: <Gx,y> = <x,G^H y>", "[gpu][adjoint]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(20, 16, 4, 3000);
    // |<Gx,y> - <x,G^H y>| / (|Gx||y|), applies on the GPU, sums in float64
    forge_test::check_adjoint(make_gdft(p), 1e-5, forge_test::DotScale::Norms, 1, Residency::Device);
    forge_test::check_adjoint(make_gdftr2(p), 1e-5, forge_test::DotScale::Norms, 1, Residency::Device);
}

TEST_CASE("GPU batched transforms equal one-by-one transforms", "[gpu][batch]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 16, 2, 1200);
    const Gdft<float> G = make_gdft(p);
    const GdftR2<float> R = make_gdftr2(p);
    for (uword nb : {1u, 3u, 8u, 11u}) {
        const arma::cx_fvec xs = complex_normal<float>(p.n2 * nb), ys = complex_normal<float>(p.n1 * nb);
        const arma::cx_fvec fb = to_host(G.forward_batch(on_gpu(xs), nb));
        const arma::cx_fvec ab = to_host(R.adjoint_batch(on_gpu(ys), nb));
        for (uword b = 0; b < nb; ++b) {
            const arma::cx_fvec f1 = to_host(G * on_gpu(xs.subvec(b * p.n2, (b + 1) * p.n2 - 1)));
            const arma::cx_fvec a1 = to_host(R / on_gpu(ys.subvec(b * p.n1, (b + 1) * p.n1 - 1)));
            INFO("batch " << nb << ", vector " << b);
            // Gdft batches of 4 and more run on the tensor cores (another summation, float32 accuracy
            // either way); GdftR2 batches and 1-3 vectors evaluate each pair as one vector does.
            CHECK(rel_error(fb.subvec(b * p.n1, (b + 1) * p.n1 - 1), f1) < (nb >= 4 ? 2e-5 : 1e-6));
            CHECK(rel_error(ab.subvec(b * p.n2, (b + 1) * p.n2 - 1), a1) < 1e-6);
        }
    }
}

TEST_CASE("GPU coil batches (tensor cores) match float64 for any vector scale", "[gpu][batch][mma]") {
    FORGE_INFO_SEED();
    // 15 x 16 x 3 = 720 pixels and 1999 samples: neither a whole number of 64-input tiles; every phase from its
    // own coordinates. 16 x 16 x 3 = 768 pixels: rows of 16, so the wgmma kernels step the phase along x
    // (input pixel pairs forward, rows 8 pixels apart adjoint).
    const auto rowLength = GENERATE(15, 16);
    INFO("pixels " << rowLength << " x 16 x 3");
    const Problem p = make_dft_problem(rowLength, 16, 3, 1999);
    const Gdft<float> G = make_gdft(p);
    for (uword nb : {4u, 5u, 8u, 13u, 16u, 32u, 39u}) {
        // Vectors from 1e-30 to 1e30 times a unit scale, and one zero vector: the FP16 operands are scaled per
        // vector, so every vector keeps float32 accuracy on its own scale.
        arma::cx_fvec xs = complex_normal<float>(p.n2 * nb), ys = complex_normal<float>(p.n1 * nb);
        for (uword b = 0; b < nb; ++b) {
            const float scale = std::pow(10.0f, float(int(b % 7) * 10 - 30));
            xs.subvec(b * p.n2, (b + 1) * p.n2 - 1) *= scale;
            ys.subvec(b * p.n1, (b + 1) * p.n1 - 1) *= scale;
        }
        xs.subvec(p.n2, 2 * p.n2 - 1).zeros();
        ys.subvec(p.n1, 2 * p.n1 - 1).zeros();
        const arma::cx_fvec fb = to_host(G.forward_batch(on_gpu(xs), nb));
        const arma::cx_fvec ab = to_host(G.adjoint_batch(on_gpu(ys), nb));
        CHECK(fb.is_finite());
        CHECK(ab.is_finite());
        for (uword b = 0; b < nb; ++b) {
            INFO("batch " << nb << ", vector " << b);
            if (b == 1) {
                CHECK(arma::norm(fb.subvec(p.n1, 2 * p.n1 - 1)) == 0.0);
                CHECK(arma::norm(ab.subvec(p.n2, 2 * p.n2 - 1)) == 0.0);
                continue;
            }
            CHECK(error_vs_float64(p, true, xs, fb, b, 24) < 2e-5);
            CHECK(error_vs_float64(p, false, ys, ab, b, 24) < 2e-5);
        }
    }
}

namespace {
// Plan options asking for the batch kernel batch_kernel() names.
cuda::PlanOptions batch_kernel_request(const std::string& k) {
    cuda::PlanOptions o;
    o.dft_kernel = k == "wgmma" ? DftKernel::wgmma : k == "mma.sync" ? DftKernel::mma_sync : DftKernel::fp32;
    return o;
}
}  // namespace

TEST_CASE("GPU coil batches: every batch kernel the device runs matches float64", "[gpu][batch][mma]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(15, 16, 3, 1999);
    const arma::fvec fmTurns = p.FM / float(2 * M_PI);
    const std::string best = cuda::CudaDftPipeline(dft_geometry(p, fmTurns)).batch_kernel();
    INFO("fastest batch kernel here: " << best);
    const std::vector<std::string> all = {"wgmma", "mma.sync", "fp32"};
    const auto first = std::find(all.begin(), all.end(), best);
    REQUIRE(first != all.end());
    {
        cuda::PlanOptions bogus;
        bogus.dft_kernel = DftKernel(7);  // not a kernel
        CHECK_THROWS_AS(cuda::CudaDftPipeline(dft_geometry(p, fmTurns), bogus), forge::invalid_argument);
    }
    if (first != all.begin()) {  // a faster kernel than the device or build has: refused
        CHECK_THROWS_AS(cuda::CudaDftPipeline(dft_geometry(p, fmTurns), batch_kernel_request(first[-1])),
                        forge::invalid_argument);
    }
    // 13 vectors: one launch of 8 and one of 4 on the tensor-core kernels, then one vector on the FP32 one.
    const uword nb = 13;
    arma::cx_fvec xs = complex_normal<float>(p.n2 * nb), ys = complex_normal<float>(p.n1 * nb);
    for (uword b = 0; b < nb; ++b) {
        xs.subvec(b * p.n2, (b + 1) * p.n2 - 1) *= std::pow(10.0f, float(int(b % 5) * 5 - 10));
        ys.subvec(b * p.n1, (b + 1) * p.n1 - 1) *= std::pow(10.0f, float(int(b % 5) * 5 - 10));
    }
    for (auto k = first; k != all.end(); ++k) {
        cuda::CudaDftPipeline plan(dft_geometry(p, fmTurns), batch_kernel_request(*k));
        CHECK(plan.batch_kernel() == *k);
        arma::cx_fvec fb(p.n1 * nb), ab(p.n2 * nb);
        plan.execute_host(cuda::Direction::forward, reinterpret_cast<const float*>(xs.memptr()),
                          reinterpret_cast<float*>(fb.memptr()), nb);
        plan.execute_host(cuda::Direction::adjoint, reinterpret_cast<const float*>(ys.memptr()),
                          reinterpret_cast<float*>(ab.memptr()), nb);
        for (uword b = 0; b < nb; ++b) {
            INFO("kernel " << *k << ", vector " << b);
            CHECK(error_vs_float64(p, true, xs, fb, b, 24) < 2e-5);
            CHECK(error_vs_float64(p, false, ys, ab, b, 24) < 2e-5);
        }
    }
}

TEST_CASE("GPU coil batches (tensor cores) are adjoint and deterministic", "[gpu][batch][mma][adjoint]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(24, 20, 1, 3000);
    const Gdft<float> G = make_gdft(p);
    const uword nb = 12;
    // Relative to ||A x|| ||y||: |<A x, y>| of random vectors is about that / sqrt(n1 nb) but can come arbitrarily
    // close to 0, which made a bound relative to it fail for unlucky draws. 1e-5 / sqrt(n1 nb) is the bound
    // 1e-5 relative to |<A x, y>| at its typical size, whatever the draw.
    forge_test::check_adjoint(G, 1e-5 / std::sqrt(double(p.n1 * nb)), forge_test::DotScale::Norms, nb,
                              Residency::Device);
    const arma::cx_fvec x = complex_normal<float>(p.n2 * nb);
    const arma::cx_fvec Gx = to_host(G.forward_batch(on_gpu(x), nb));
    // Fixed summation order: a second call gives the same bits.
    const arma::cx_fvec again = to_host(G.forward_batch(on_gpu(x), nb));
    CHECK(arma::approx_equal(again, Gx, "absdiff", 0.0f));
}

TEST_CASE("GPU pipeline host wrappers equal the device API", "[gpu][pipeline]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 8, 4, 700);
    const arma::fvec fmTurns = p.FM / float(2 * M_PI);
    cuda::CudaDftPipeline pipe(dft_geometry(p, fmTurns));
    const arma::cx_fvec x = complex_normal<float>(p.n2);
    arma::cx_fvec yHost(p.n1);
    pipe.execute_host(cuda::Direction::forward, reinterpret_cast<const float*>(x.memptr()),
                      reinterpret_cast<float*>(yHost.memptr()));
    const Gdft<float> G = make_gdft(p);
    CHECK(rel_error(yHost, to_host(G * on_gpu(x))) < 1e-6);
    CHECK(rel_error(yHost, arma::cx_fvec(G * x)) < 1e-4);
    CHECK_THROWS_AS(pipe.execute(cuda::Direction::forward, nullptr, nullptr), std::invalid_argument);
}

TEST_CASE("DFT plan: set_points gives the result of a fresh plan with those points", "[gpu][pipeline][points]") {
    FORGE_INFO_SEED();
    const Problem a = make_dft_problem(16, 12, 2, 900);
    // Same pixels, another trajectory: fewer samples (the allocation is reused), then more (it grows).
    for (uword n1b : {uword(500), uword(1700)}) {
        Problem b = make_dft_problem(16, 12, 2, n1b);
        b.ix = a.ix;
        b.iy = a.iy;
        b.iz = a.iz;
        b.FM = a.FM;
        const arma::fvec fmTurns = a.FM / float(2 * M_PI);
        cuda::CudaDftPipeline reused(dft_geometry(a, fmTurns)), fresh(dft_geometry(b, fmTurns));
        reused.set_points(b.kx.memptr(), b.ky.memptr(), b.kz.memptr(), b.t.memptr(), b.n1);
        CHECK(reused.num_samples() == b.n1);
        CHECK(reused.point_uploads() == 2);
        const uword nb = 3;
        const cvec x = on_gpu(complex_normal<float>(a.n2 * nb)), y = on_gpu(complex_normal<float>(b.n1 * nb));
        cvec f1 = cvec::device_uninitialized(b.n1 * nb), f2 = cvec::device_uninitialized(b.n1 * nb);
        cvec a1 = cvec::device_uninitialized(a.n2 * nb), a2 = cvec::device_uninitialized(a.n2 * nb);
        auto fp = [](const cvec& v) { return reinterpret_cast<const float*>(v.device_memptr()); };
        auto mp = [](cvec& v) { return reinterpret_cast<float*>(v.device_memptr()); };
        reused.execute(cuda::Direction::forward, fp(x), mp(f1), nb);
        fresh.execute(cuda::Direction::forward, fp(x), mp(f2), nb);
        reused.execute(cuda::Direction::adjoint, fp(y), mp(a1), nb);
        fresh.execute(cuda::Direction::adjoint, fp(y), mp(a2), nb);
        reused.synchronize();
        fresh.synchronize();
        const arma::cx_fvec F1 = to_host(f1), F2 = to_host(f2), A1 = to_host(a1), A2 = to_host(a2);
        INFO("n1 after set_points = " << n1b);
        // Same kernels on the same data: bit-identical.
        CHECK(std::memcmp(F1.memptr(), F2.memptr(), F1.n_elem * sizeof(std::complex<float>)) == 0);
        CHECK(std::memcmp(A1.memptr(), A2.memptr(), A1.n_elem * sizeof(std::complex<float>)) == 0);
        // And the CPU operator with b's samples agrees (first vector of the batch).
        const Gdft<float> Gb = make_gdft(b);
        const arma::cx_fvec x0 = to_host(x).subvec(0, a.n2 - 1);
        CHECK(rel_error(arma::cx_fvec(F1.subvec(0, b.n1 - 1)), arma::cx_fvec(Gb * x0)) < 1e-4);

        // A device-resident sample set bound by pointer gives the same result and moves no data.
        const auto pts = reused.upload_points(a.kx.memptr(), a.ky.memptr(), a.kz.memptr(), a.t.memptr(), a.n1);
        device::reset_transfer_stats();
        reused.set_points(pts);
        cvec f3 = cvec::device_uninitialized(a.n1);
        reused.execute(cuda::Direction::forward, fp(x), mp(f3), 1);
        reused.synchronize();
        CHECK(device::transfer_stats().host_to_device_count == 0);
        CHECK(rel_error(to_host(f3), arma::cx_fvec(make_gdft(a) * x0)) < 1e-4);
    }
}

#ifdef FORGE_HAS_CUDA
TEST_CASE("DFT plan: options.stream, options.device and options.max_batch are honoured", "[gpu][pipeline][options]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 8, 2, 800);
    const arma::fvec fmTurns = p.FM / float(2 * M_PI);
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking) == cudaSuccess);
    {
        cuda::PlanOptions opts;
        opts.stream = user;
        opts.max_batch = 4;
        cuda::CudaDftPipeline plan(dft_geometry(p, fmTurns), opts);
        CHECK(plan.stream() == user);
        CHECK(plan.max_batch() == 4);
        int current = -1;
        REQUIRE(cudaGetDevice(&current) == cudaSuccess);
        CHECK(plan.device() == current);
        const cvec x = on_gpu(complex_normal<float>(p.n2 * 4));
        cvec y = cvec::device_uninitialized(p.n1 * 4);
        // Nothing else runs on the user stream: once it is synchronised, the result is complete.
        plan.execute(cuda::Direction::forward, reinterpret_cast<const float*>(x.device_memptr()),
                     reinterpret_cast<float*>(y.device_memptr()), 4);
        REQUIRE(cudaStreamSynchronize(user) == cudaSuccess);
        CHECK(cudaStreamQuery(user) == cudaSuccess);
        const Gdft<float> G = make_gdft(p);
        CHECK(rel_error(to_host(y), to_host(G.forward_batch(x, 4))) < 1e-6);
        CHECK_THROWS_AS(plan.execute(cuda::Direction::forward, reinterpret_cast<const float*>(x.device_memptr()),
                                     reinterpret_cast<float*>(y.device_memptr()), 5),
                        forge::invalid_argument);
    }
    // The plan leaves a stream it was given alive.
    CHECK(cudaStreamQuery(user) == cudaSuccess);
    CHECK(cudaStreamDestroy(user) == cudaSuccess);
    cuda::PlanOptions bad;
    bad.device = 1 << 20;
    CHECK_THROWS_WITH(cuda::CudaDftPipeline(dft_geometry(p, fmTurns), bad), Catch::Contains("options.device"));
}
#endif

TEST_CASE("GPU Gdft gives identical results over 1000 repeated calls", "[gpu][determinism]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 16, 2, 1000);
    const Gdft<float> G = make_gdft(p);
    const cvec x = on_gpu(complex_normal<float>(p.n2));
    const arma::cx_fvec first = to_host(G * x);
    const arma::cx_fvec firstAdj = to_host(G / on_gpu(first));
    cvec y = G * x, z = G / y;
    for (int i = 0; i < 999; ++i) {
        y = G * x;
        z = G / y;
    }
    const arma::cx_fvec last = to_host(y), lastAdj = to_host(z);
    CHECK(std::memcmp(first.memptr(), last.memptr(), first.n_elem * sizeof(std::complex<float>)) == 0);
    CHECK(std::memcmp(firstAdj.memptr(), lastAdj.memptr(), firstAdj.n_elem * sizeof(std::complex<float>)) == 0);
}

TEST_CASE("Two GPU operators used from two host threads give the right answers", "[gpu][threads]") {
    FORGE_INFO_SEED();
    const Problem pa = make_dft_problem(16, 16, 2, 1500), pb = make_dft_problem(12, 20, 3, 1800);
    const Gdft<float> A = make_gdft(pa);
    const GdftR2<float> B = make_gdftr2(pb);
    const arma::cx_fvec xa = complex_normal<float>(pa.n2), xb = complex_normal<float>(pb.n2);
    const arma::cx_fvec refA = A * xa, refB = B * xb;  // CPU references
    std::atomic<int> bad{0};
    auto worker = [&](const auto& G, const arma::cx_fvec& x, const arma::cx_fvec& ref) {
        for (int i = 0; i < 50; ++i) {
            if (rel_error(to_host(G * on_gpu(x)), ref) > 1e-4) ++bad;
        }
    };
    std::thread ta([&] { worker(A, xa, refA); });
    std::thread tb([&] { worker(B, xb, refB); });
    ta.join();
    tb.join();
    CHECK(bad == 0);
}

TEST_CASE("Copies and moves of a GPU operator share the pipeline safely", "[gpu][lifetime]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(12, 12, 1, 500);
    const arma::cx_fvec x = complex_normal<float>(p.n2);
    arma::cx_fvec ref;
    auto copy = std::make_unique<Gdft<float>>(make_gdft(p));
    {
        Gdft<float> original = make_gdft(p);
        ref = to_host(original * on_gpu(x));
        Gdft<float> moved = std::move(original);
        *copy = moved;  // copy-assign from the moved-to operator, then let both die
    }
    CHECK(rel_error(to_host(*copy * on_gpu(x)), ref) < 1e-6);
}

TEST_CASE("A solver-style loop on device-resident data makes no host/device copies", "[gpu][transfers]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(16, 16, 2, 1000);
    const Gdft<float> G = make_gdft(p);
    cvec x = on_gpu(complex_normal<float>(p.n2));
    const cvec W = on_gpu(arma::cx_fvec(arma::ones<arma::cx_fvec>(p.n1)));
    device::reset_transfer_stats();
    for (int i = 0; i < 20; ++i) {
        cvec y = G * x;
        y = y % W;
        cvec g = G / y;
        const float step = 1.0f / std::max(1.0f, norm(g));
        axpy(forgeComplex<float>(-step), g, x);
        x *= forgeComplex<float>(0.5f);
    }
    const device::TransferStats s = device::transfer_stats();
    CHECK(s.host_to_device_count == 0);
    CHECK(s.device_to_host_count == 0);
    CHECK(x.on_gpu());
    // The counter does count: bringing x back is one device-to-host copy.
    x.get_from_gpu();
    CHECK(device::transfer_stats().device_to_host_count == 1);
}

TEST_CASE("Device forgeCol arithmetic equals the host results", "[gpu][forgecol]") {
    FORGE_INFO_SEED();
    const uword n = 100003;  // not a multiple of the block size
    const arma::cx_fvec a = complex_normal<float>(n), b = complex_normal<float>(n);
    const arma::fvec w = uniform<float>(n, 0.5, 2.0);
    const cvec ha(a), hb(b);
    const forgeCol<float> hw(w);
    cvec da = ha, db = hb;
    forgeCol<float> dw = hw;
    da.put_on_gpu();
    db.put_on_gpu();
    dw.put_on_gpu();
    const forgeComplex<float> s(0.7f, -1.3f);
    auto same = [](cvec dev, const cvec& host) {
        dev.get_from_gpu();
        return rel_error(dev.to_arma(), host.to_arma());
    };
    CHECK(same(da + db, ha + hb) < 1e-7);
    CHECK(same(da - db, ha - hb) < 1e-7);
    CHECK(same(da % db, ha % hb) < 1e-7);
    CHECK(same(da / db, ha / hb) < 1e-6);
    CHECK(same(da % dw, ha % hw) < 1e-7);
    CHECK(same(da * s, ha * s) < 1e-7);
    CHECK(same(s - da, s - ha) < 1e-7);
    CHECK(same(conj(da), conj(ha)) < 1e-7);
    cvec dy = db, hy = hb;
    axpy(s, da, dy);
    axpy(s, ha, hy);
    CHECK(same(dy, hy) < 1e-7);
    forgeCol<float> dabs = abs(da);
    dabs.get_from_gpu();
    CHECK(arma::norm(dabs.to_arma() - abs(ha).to_arma()) / arma::norm(abs(ha).to_arma()) < 1e-6);
    const std::complex<double> dd = std::complex<float>(cdot(da, db)), hd = std::complex<float>(cdot(ha, hb));
    CHECK(std::abs(dd - hd) / std::abs(hd) < 1e-5);
    CHECK(std::abs(norm(da) - norm(ha)) / norm(ha) < 1e-6);
    // Two real inner products from one pass: the bits of each alone.
    const std::pair<double, double> two =
        device::re_dot2(da.device_memptr(), db.device_memptr(), db.device_memptr(), da.device_memptr(), n);
    const double ab = device::dot(da.device_memptr(), db.device_memptr(), n).re,
                 ba = device::dot(db.device_memptr(), da.device_memptr(), n).re;
    CHECK(float(two.first) == float(ab));
    CHECK(float(two.second) == float(ba));
    CHECK(std::abs(two.first - double(hd.real())) <= 1e-5 * std::abs(hd));
    const std::complex<double> ds = std::complex<float>(sum(da)), hs = std::complex<float>(sum(ha));
    CHECK(std::abs(ds - hs) / std::abs(hs) < 1e-5);
    // Mixing host and device operands is an error, not a silent copy.
    CHECK_THROWS_AS(da + hb, forge::residency_error);
    CHECK_THROWS_AS(da.memptr(), forge::residency_error);
}

TEST_CASE("A device allocation larger than the GPU's memory throws a clear error", "[gpu][memory]") {
    const uword huge = uword(1) << 46;  // 64 Ti elements of 8 bytes: far beyond any GPU
    try {
        (void)cvec::device_uninitialized(huge);
        FAIL("no exception");
    } catch (const forge::cuda_error& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find(std::to_string(huge * sizeof(forgeComplex<float>))) != std::string::npos);
        CHECK(msg.find("GiB") != std::string::npos);
    }
}

#ifdef FORGE_HAS_CUDA  // queues copies on a stream of its own (CUDA runtime)
TEST_CASE("A device buffer goes back to the memory pool only after the work queued on it", "[gpu][memory]") {
    // Copies queued on a (blocking) stream of the caller's into buffer a; a is freed at once and a buffer of the
    // same size made and filled. Had the freed block been handed out again before those copies ran, they would
    // overwrite the new buffer's contents.
    const uword n = uword(64) << 20;  // bytes
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreate(&user) == cudaSuccess);
    DeviceBuffer source(n);
    REQUIRE(cudaMemset(source.get(), 0x5A, n) == cudaSuccess);
    void* first = nullptr;
    {
        DeviceBuffer a(n);
        first = a.get();
        for (int k = 0; k < 40; ++k)
            REQUIRE(cudaMemcpyAsync(a.get(), source.get(), n, cudaMemcpyDeviceToDevice, user) == cudaSuccess);
    }
    DeviceBuffer b(n);
    INFO("the new buffer " << (b.get() == first ? "reuses" : "does not reuse") << " the freed block");
    REQUIRE(cudaMemset(b.get(), 0x11, n) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<unsigned char> host(n);
    device::copy_to_host(host.data(), b.get(), n);
    CHECK(std::count(host.begin(), host.end(), 0x11) == std::ptrdiff_t(n));
    REQUIRE(cudaStreamDestroy(user) == cudaSuccess);
}

TEST_CASE("A DFT plan on a non-blocking stream: the buffers it writes are safe to free at once", "[gpu][memory]") {
    // A large batch written on the caller's non-blocking stream into y; y is freed as soon as the call returns and
    // a buffer of its size made and filled on the legacy stream. Had the legacy stream not waited for the plan,
    // the transform would still be writing into the block the new buffer reuses. Also a fresh block's previous
    // owner's work: the input x is made on the legacy stream just before the call.
    const Problem p = make_dft_problem(64, 64, 1, 60000);
    const arma::fvec fmTurns = p.FM / float(2 * M_PI);
    cudaStream_t user = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking) == cudaSuccess);
    {
        cuda::PlanOptions opts;
        opts.stream = user;
        cuda::CudaDftPipeline plan(dft_geometry(p, fmTurns), opts);
        const uword batch = 8, bytes = p.n1 * batch * sizeof(forgeComplex<float>);
        const arma::cx_fvec x0 = complex_normal<float>(p.n2 * batch);
        const cvec x = on_gpu(x0);
        void* first = nullptr;
        {
            cvec y = cvec::device_uninitialized(p.n1 * batch);
            first = y.device_memptr();
            plan.execute(cuda::Direction::forward, reinterpret_cast<const float*>(x.device_memptr()),
                         reinterpret_cast<float*>(y.device_memptr()), batch);
        }
        DeviceBuffer b(bytes);
        INFO("the new buffer " << (b.get() == first ? "reuses" : "does not reuse") << " the freed block");
        REQUIRE(cudaMemset(b.get(), 0x11, bytes) == cudaSuccess);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        std::vector<unsigned char> host(bytes);
        device::copy_to_host(host.data(), b.get(), bytes);
        CHECK(std::count(host.begin(), host.end(), 0x11) == std::ptrdiff_t(bytes));
    }  // the plan before its stream
    REQUIRE(cudaStreamDestroy(user) == cudaSuccess);
}
#endif

TEST_CASE("CudaDftPipeline refuses sample and pixel counts beyond its 32-bit kernel indices",
          "[gpu][pipeline][sizes]") {
    // The sizes are checked before any array is read: a few valid floats stand in for the geometry.
    const arma::fvec a(8, arma::fill::zeros);
    const float* p = a.memptr();
    cuda::DftGeometry g;
    g.ix = g.iy = g.iz = g.fm_turns = g.kx = g.ky = g.kz = g.t = p;
    g.n1 = cuda::CudaDftPipeline::kMaxLength + 1;
    g.n2 = 1;
    CHECK_THROWS_AS(cuda::CudaDftPipeline(g), forge::invalid_argument);
    CHECK_THROWS_WITH(cuda::CudaDftPipeline(g),
                      Catch::Contains("n1 (k-space samples) = 2147483137 exceeds 2147483136"));
    // 2^32 pixels would have become 0 as an int.
    g.Gx = g.Gy = g.Gz = p;
    g.n1 = 1;
    g.n2 = uword(1) << 32;
    g.nx = uword(1) << 32;
    CHECK_THROWS_WITH(cuda::CudaDftPipeline(g), Catch::Contains("n2 (pixels) = 4294967296"));
}
