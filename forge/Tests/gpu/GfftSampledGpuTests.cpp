// GPU tests of GfftSampled (cuFFT + pad/crop/gather/sorted-scatter kernels): CPU == GPU, adjointness and
// determinism on the device, no host transfers inside device-resident transforms, SENSE on the device;
// and the solver's device-side weight check.
#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/SENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge_test;
using FVec = forge::forgeCol<forge::forgeComplex<float>>;

namespace {
// Oversampled readout (grid 2N along x), a random subset of the lines, some samples twice, random order.
void oversampled_lines(arma::uword N, arma::fvec& kx, arma::fvec& ky, arma::fvec& kz) {
    std::vector<float> vx, vy;
    const arma::vec keep = uniform<double>(N, 0, 1);
    for (arma::uword y = 0; y < N; ++y) {
        if (keep(y) > 0.6) continue;
        for (arma::uword x = 0; x < 2 * N; ++x) {
            vx.push_back(0.5f * (float(x) - float(N)));
            vy.push_back(float(y) - float(N / 2));
        }
    }
    for (std::size_t j = 0; j < vx.size() / 8; ++j) vx.push_back(vx[j * 3]), vy.push_back(vy[j * 3]);
    std::vector<std::size_t> order(vx.size());
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::shuffle(order.begin(), order.end(), rng());
    kx.set_size(vx.size());
    ky.set_size(vx.size());
    kz.zeros(vx.size());
    for (std::size_t j = 0; j < order.size(); ++j) kx(j) = vx[order[j]], ky(j) = vy[order[j]];
}
arma::cx_fvec down(FVec v) {
    v.get_from_gpu();
    return v.to_arma();
}
FVec up(const arma::cx_fvec& a) {
    FVec v(a);
    v.put_on_gpu();
    return v;
}
}  // namespace

TEST_CASE("GPU GfftSampled: CPU == GPU, adjoint, deterministic, no transfers", "[gpu][GfftSampled]") {
    FORGE_INFO_SEED();
    const arma::uword N = 64;
    arma::fvec kx, ky, kz;
    oversampled_lines(N, kx, ky, kz);
    forge::GfftSampled<float> G(N, N, 1, 2 * N, N, 1, kx, ky, kz);
    const arma::cx_fvec x = complex_normal<float>(G.n2()), y = complex_normal<float>(G.n1());
    const FVec dx = up(x), dy = up(y);
    forge::device::reset_transfer_stats();
    const FVec gx = G * dx, gy = G / dy, gy2 = G / dy;
    const auto st = forge::device::transfer_stats();
    CHECK(st.host_to_device_count == 0);
    CHECK(st.device_to_host_count == 0);
    REQUIRE(gx.on_gpu());
    check_adjoint(G, forge_test::adjoint_tolerance<float>(), DotScale::Norms, 1, forge::Residency::Device);
    const arma::cx_fvec a = down(gy), b = down(gy2);
    CHECK(std::memcmp(a.memptr(), b.memptr(), a.n_elem * sizeof(std::complex<float>)) == 0);
    CHECK(rel_error(down(gx), G * x) < 1e-5);
    CHECK(rel_error(a, G / y) < 1e-5);
    // batches (coils) through SENSE on the device
    const arma::uword nc = 4;
    forge::SENSE<float, forge::GfftSampled<float>> E(G, complex_normal<float>(G.n2() * nc), nc);
    const arma::cx_fvec yc = complex_normal<float>(G.n1() * nc);
    CHECK(rel_error(down(E * dx), E * x) < 1e-5);
    CHECK(rel_error(down(E / up(yc)), E / yc) < 1e-5);
}

TEST_CASE("GPU solve_pwls_pcg rejects negative and NaN device weights", "[gpu][solver][weights]") {
    FORGE_INFO_SEED();
    const arma::uword N = 16;
    arma::fvec kx, ky, kz;
    oversampled_lines(N, kx, ky, kz);
    forge::GfftSampled<float> G(N, N, 1, 2 * N, N, 1, kx, ky, kz);
    forge::QuadPenalty<float> R(N, N, 1, 1.0f);
    const FVec x0 = up(arma::cx_fvec(G.n2(), arma::fill::zeros)), y = up(complex_normal<float>(G.n1()));
    arma::fvec W = uniform<float>(G.n1(), 0.5, 1.5);
    forge::forgeCol<float> dW(W);
    dW.put_on_gpu();
    CHECK_NOTHROW(forge::solve_pwls_pcg<float>(x0, G, dW, y, R, 2));
    for (float v : {-1.0f, std::nanf(""), HUGE_VALF}) {
        INFO("bad weight " << v);
        arma::fvec Wb = W;
        Wb(Wb.n_elem / 2) = v;
        forge::forgeCol<float> dWb(Wb);
        dWb.put_on_gpu();
        CHECK_THROWS_WITH(forge::solve_pwls_pcg<float>(x0, G, dWb, y, R, 2),
                          Catch::Contains("W has a ") && Catch::Contains(">= 0"));
    }
}
