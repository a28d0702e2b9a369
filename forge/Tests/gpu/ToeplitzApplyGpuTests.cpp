// The fused device apply of ToeplitzNormal (DeviceApply.cpp, cuda/ToeplitzApply.cu): against the time-segmented
// normal in float64 (its only approximation being the segmentation, the same), against the host apply, and against
// the exact G^H W G; batches of 1, 3 and 8 vectors, 2D, 3D, 1D and single-column grids, field-free and with odd and
// even segment counts (the register kernel product up to 8 segments, the general one above, Hanning's tables with
// empty pairs); batch sizes that change between applies on one operator (the scratch kept between them), batches
// in several chunks, applies from two threads at once, and a PCG solve on the GPU that makes no host/device copies.
#include <cmath>
#include <complex>
#include <thread>
#include <vector>

#include "ToeplitzTestProblem.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace toeplitz_test;

namespace {

template <typename T>
using Vec = forgeCol<forgeComplex<T>>;

// N applied on the GPU to the nv images in x (n2 nv entries, float64), back on the host in float64.
template <typename T>
arma::cx_vec device_apply(const forge::ToeplitzNormal<T>& N, const arma::cx_vec& x, uword nv) {
    Vec<T> d(arma::conv_to<arma::Col<std::complex<T>>>::from(x));
    d.put_on_gpu();
    Vec<T> y = N.forward(d, nv);
    REQUIRE(y.on_gpu());
    y.get_from_gpu();
    return arma::conv_to<arma::cx_vec>::from(y.to_arma());
}
template <typename T>
arma::cx_vec host_apply(const forge::ToeplitzNormal<T>& N, const arma::cx_vec& x, uword nv) {
    const Vec<T> y = N.forward(Vec<T>(arma::conv_to<arma::Col<std::complex<T>>>::from(x)), nv);
    return arma::conv_to<arma::cx_vec>::from(y.to_arma());
}

// The largest relative error over the nv vectors of y against r (n2 nv entries each).
double worst_error(const arma::cx_vec& y, const arma::cx_vec& r, uword n2, uword nv) {
    double worst = 0;
    for (uword v = 0; v < nv; ++v) {
        const arma::span s(v * n2, (v + 1) * n2 - 1);
        worst = std::max(worst, rel_error(arma::cx_vec(y(s)), arma::cx_vec(r(s))));
    }
    return worst;
}

template <typename T>
forge::ToeplitzNormal<T> make_operator(const Grid& g, const Trajectory& tr, const arma::vec& fm, uword L,
                                       forge::TSInterp type, const forge::ToeplitzOptions& o = {}) {
    if (L == 0)
        return forge::ToeplitzNormal<T>(g.Nx, g.Ny, g.Nz, as<T>(tr.kx), as<T>(tr.ky), as<T>(tr.kz), as<T>(tr.W), o);
    return forge::ToeplitzNormal<T>(g.Nx, g.Ny, g.Nz, as<T>(tr.kx), as<T>(tr.ky), as<T>(tr.kz), as<T>(tr.W),
                                    arma::Col<T>(as<T>(fm)), as<T>(tr.t), L, type, o);
}

}  // namespace

TEST_CASE("ToeplitzNormal's fused device apply equals the segmented normal in float64 and the host apply",
          "[gpu][Toeplitz][apply]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        uword L, nv;
        forge::TSInterp type;
    };
    const auto M = forge::TSInterp::MinMax, H = forge::TSInterp::Hanning;
    // S = L + 1 segments: 1 (field-free), 3, 4, 5, 7 (the benchmark's), 8, 9 (the general kernel product), Hanning's 5
    // with empty pairs; 2D (run as Nx x 1 x Ny), 3D with even and odd sizes, 1D along x, a single column in 3D and in
    // 2D.
    const Case cases[] = {{{48, 40, 1}, 4, 8, M}, {{12, 10, 8}, 2, 3, M}, {{15, 11, 7}, 0, 8, M},
                          {{25, 19, 1}, 6, 1, M}, {{16, 12, 6}, 6, 8, M}, {{10, 9, 5}, 8, 3, M},
                          {{13, 9, 5}, 4, 3, H},  {{64, 1, 1}, 2, 3, M},  {{1, 20, 6}, 2, 2, M},
                          {{11, 7, 3}, 3, 1, M},  {{9, 8, 4}, 7, 8, M},   {{1, 24, 1}, 2, 3, M}};
    for (const Case& c : cases) {
        const Grid& g = c.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", L = " << c.L << ", " << c.nv << " vectors"
                     << (c.type == H ? ", Hanning" : ""));
        const Trajectory tr = random_trajectory(g, g.n2() + 200, 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        // Float kernels built on the GPU (used in place) where its build is tested (grids with x and y), else on
        // the host (uploaded); double kernels on the host.
        const bool gpuBuild = g.Nx > 1 && g.Ny > 1;
        const forge::ToeplitzNormal<float> Nf =
            make_operator<float>(g, tr, fm, c.L, c.type, gpuBuild ? forge::ToeplitzOptions{} : host_build());
        const forge::ToeplitzNormal<double> Nd = make_operator<double>(g, tr, fm, c.L, c.type, host_build());
        const arma::cx_vec x = complex_normal<double>(g.n2() * c.nv);
        const arma::cx_vec yf = device_apply(Nf, x, c.nv), yd = device_apply(Nd, x, c.nv);
        if (c.type == M) {  // SegmentedNormal has min-max factors
            const arma::cx_mat X = arma::reshape(x, g.n2(), c.nv);
            const arma::cx_vec rf = arma::vectorise(SegmentedNormal(g, tr, fm, c.L, float())(X));
            const arma::cx_vec rd = arma::vectorise(SegmentedNormal(g, tr, fm, c.L, double())(X));
            const double ef = worst_error(yf, rf, g.n2(), c.nv), ed = worst_error(yd, rd, g.n2(), c.nv);
            INFO("against the float64 segmented normal: float " << ef << ", double " << ed);
            CHECK(ef <= toeplitz_tolerance(Nf, tr.kx.n_elem));
            CHECK(ed <= 1e-12);
        }
        const double hf = worst_error(yf, host_apply(Nf, x, c.nv), g.n2(), c.nv);
        const double hd = worst_error(yd, host_apply(Nd, x, c.nv), g.n2(), c.nv);
        INFO("against the host apply: float " << hf << ", double " << hd);
        CHECK(hf <= toeplitz_tolerance(Nf, tr.kx.n_elem));
        CHECK(hd <= 1e-12);
        // The last vector of the batch equals the same vector alone (cuFFT may pick other algorithms for another
        // batch count: equal to rounding).
        if (c.nv > 1) {
            const uword v = c.nv - 1;
            const arma::span s(v * g.n2(), (v + 1) * g.n2() - 1);
            CHECK(rel_error(device_apply(Nf, arma::cx_vec(x(s)), 1), arma::cx_vec(yf(s))) <= 1e-6);
        }
    }
}

TEST_CASE("ToeplitzNormal's fused device apply against the exact G^H W G", "[gpu][Toeplitz][apply]") {
    FORGE_INFO_SEED();
    for (const Grid& g : {Grid{24, 20, 1}, Grid{12, 10, 6}}) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 1500, 10e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 100);
        const uword nv = 3;
        const arma::cx_vec x = complex_normal<double>(g.n2() * nv);
        // Field-free: exact to rounding.
        const forge::ToeplitzNormal<float> N0 = make_operator<float>(g, tr, fm, 0, forge::TSInterp::MinMax);
        const ExactNormal exact0(g, tr, arma::zeros(g.n2()));
        arma::cx_vec r0(g.n2() * nv), r(g.n2() * nv);
        const ExactNormal exact(g, tr, fm);
        for (uword v = 0; v < nv; ++v) {
            const arma::span s(v * g.n2(), (v + 1) * g.n2() - 1);
            r0(s) = exact0(arma::cx_vec(x(s)));
            r(s) = exact(arma::cx_vec(x(s)));
        }
        CHECK(worst_error(device_apply(N0, x, nv), r0, g.n2(), nv) <= toeplitz_tolerance(N0, tr.kx.n_elem));
        // With the field map and L for a 1e-3 error of the normal operator.
        const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), 1e-3);
        const forge::ToeplitzNormal<float> N = make_operator<float>(g, tr, fm, L, forge::TSInterp::MinMax);
        const double e = worst_error(device_apply(N, x, nv), r, g.n2(), nv);
        INFO("L = " << L << ": error " << e);
        CHECK(e <= 1e-3);
    }
}

TEST_CASE("ToeplitzNormal's device apply: batch sizes changing between applies, several chunks, two threads at once",
          "[gpu][Toeplitz][apply]") {
    FORGE_INFO_SEED();
    const Grid g{14, 12, 6};  // 3D: the scratch's planes z >= Nz must stay zero whatever the previous batch wrote
    const Trajectory tr = random_trajectory(g, 1500, 8e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
    const forge::ToeplitzNormal<float> N = make_operator<float>(g, tr, fm, 4, forge::TSInterp::MinMax);
    for (uword nv : {8, 3, 8, 1, 5}) {
        INFO(nv << " vectors");
        const arma::cx_vec x = complex_normal<double>(g.n2() * nv);
        CHECK(worst_error(device_apply(N, x, nv), host_apply(N, x, nv), g.n2(), nv) <=
              toeplitz_tolerance(N, tr.kx.n_elem));
    }
    // A batch in several chunks (the limit per chunk lowered for this small grid): 8 vectors as 3 + 3 + 2, 7 as
    // 2 + 2 + 2 + 1.
    const double perVector = 5.0 * double(N.padded_size(0) * N.padded_size(1) * N.padded_size(2)) * 8;
    for (uword nv : {8, 7}) {
        forge::toeplitz::set_device_chunk_bytes(nv == 8 ? 3.5 * perVector : 2.5 * perVector);
        INFO(nv << " vectors in chunks");
        const arma::cx_vec x = complex_normal<double>(g.n2() * nv);
        const arma::cx_vec y = device_apply(N, x, nv);
        forge::toeplitz::set_device_chunk_bytes(0);  // back to the default
        CHECK(worst_error(y, host_apply(N, x, nv), g.n2(), nv) <= toeplitz_tolerance(N, tr.kx.n_elem));
    }
    // Two threads applying the operator (and a copy, which shares its kernels and scratch pool) at once: each gets
    // the result of its own input (a race on shared scratch would mix the two far above rounding).
    const forge::ToeplitzNormal<float> copy = N;
    const uword nv = 3;
    const arma::cx_vec x1 = complex_normal<double>(g.n2() * nv), x2 = complex_normal<double>(g.n2() * nv);
    const arma::cx_vec ref1 = device_apply(N, x1, nv), ref2 = device_apply(N, x2, nv);
    std::vector<arma::cx_vec> got1, got2;
    std::thread t1([&] {
        for (int r = 0; r < 4; ++r) got1.push_back(device_apply(N, x1, nv));
    });
    std::thread t2([&] {
        for (int r = 0; r < 4; ++r) got2.push_back(device_apply(copy, x2, nv));
    });
    t1.join();
    t2.join();
    for (const arma::cx_vec& y : got1) CHECK(rel_error(y, ref1) <= 1e-6);
    for (const arma::cx_vec& y : got2) CHECK(rel_error(y, ref2) <= 1e-6);
}

TEST_CASE("PCG on the Toeplitz normal of 3D field-corrected SENSE with 8 coils: no host/device copies, GPU equals host",
          "[gpu][Toeplitz][apply][solver]") {
    FORGE_INFO_SEED();
    const Grid g{16, 14, 6};
    const uword nc = 8, L = 5, n2 = g.n2();  // S = 6 segments
    const Trajectory tr = random_trajectory(g, 2500, 8e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 80));
    auto G = std::make_shared<forge::Gdft<float>>(tr.kx.n_elem, n2, as<float>(tr.kx), as<float>(tr.ky),
                                                  as<float>(tr.kz), as<float>(g.axis(0)), as<float>(g.axis(1)),
                                                  as<float>(g.axis(2)), fm, as<float>(tr.t));
    auto T = std::make_shared<forge::ToeplitzNormal<float>>(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky),
                                                            as<float>(tr.kz), as<float>(tr.W), fm, as<float>(tr.t), L);
    const arma::cx_fvec maps = complex_normal<float>(n2 * nc);
    const forge::SENSE<float> S(forge::with_normal<float>(G, T), maps, nc);
    const forge::NormalOf<float> N(forge::share(S));
    const arma::cx_fvec b = complex_normal<float>(n2);
    const forge::QuadPenalty<float> R(g.Nx, g.Ny, g.Nz, 2.0f);
    const arma::cx_fvec x0(n2, arma::fill::zeros);
    const uword niter = 8;
    const arma::cx_fvec xhost = forge::solve_pwls_pcg_normal<float>(x0, N, b, R, niter);

    Vec<float> gx0(x0), gb(b);
    gx0.put_on_gpu();
    gb.put_on_gpu();
    N.prepare_device();
    forge::device::reset_transfer_stats();
    Vec<float> xg = forge::solve_pwls_pcg_normal<float>(gx0, N, gb, R, niter);
    const auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    REQUIRE(xg.on_gpu());
    xg.get_from_gpu();
    CHECK(rel_error(xg.to_arma(), xhost) <= 1e-3);
}
