// Gdft, GdftR2 and SENSE on several GPUs (DftOptions::devices, forge/Operators/dft/cuda/CudaMultiDft.h) against the
// same operator on one GPU: forward and adjoint, single vectors and coil batches, with the device list
// {0, 0} (two parts on one GPU: the split and gather logic on any machine) and {0, 1} when there are two
// devices; input on device 0 and, with two devices, on device 1. Errors for device numbers that do not exist.
#include "DftTestProblem.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"
#include "forge/Operators/SENSE.h"

using namespace forge;
using forge_test::complex_normal;
using forge_test::rel_error;
using cvec = forgeCol<forgeComplex<float>>;

namespace {

using Problem = forge_test::DftProblem;
using forge_test::make_dft_problem;

cvec on_device0(const arma::cx_fvec& v) {
    cvec c(v);
    c.put_on_gpu();
    return c;
}
arma::cx_fvec to_host(cvec c) {
    c.get_from_gpu();
    return c.to_arma();
}

// The device lists to test: {0, 0} always, {0, 1} and {1, 0, 1} with two devices.
std::vector<std::vector<int>> device_lists() {
    std::vector<std::vector<int>> lists{{0, 0}};
    if (device::device_count() >= 2) {
        lists.push_back({0, 1});
        lists.push_back({1, 0, 1});
    }
    return lists;
}

// make(options): Op on one GPU vs Op on 'devices': forward and adjoint of one vector and of a batch of 3, input on
// device 'home'.
template <typename Make>
void check_multi_vs_single(const Make& make, const std::vector<int>& devices, int home) {
    const auto single = make(DftOptions{});
    const auto multi = make(DftOptions{nullptr, devices});
    REQUIRE(multi.devices() == devices);
    const uword n1 = single.n1(), n2 = single.n2();
    for (uword batch : {uword(1), uword(3)}) {
        const arma::cx_fvec x = complex_normal<float>(n2 * batch), y = complex_normal<float>(n1 * batch);
        const arma::cx_fvec fs = to_host(single.forward(on_device0(x), batch)),
                            as = to_host(single.adjoint(on_device0(y), batch));
        // The multi-GPU operator with its input, output and temporaries on device 'home' (the current one).
        arma::cx_fvec fm, am;
        device::set_device(home);
        {
            cvec xm(x), ym(y);
            xm.put_on_gpu();
            ym.put_on_gpu();
            fm = to_host(multi.forward(xm, batch));
            am = to_host(multi.adjoint(ym, batch));
        }
        device::set_device(0);
        const double ef = rel_error(fm, fs), ea = rel_error(am, as);
        INFO("devices " << devices.size() << " entries, input on device " << home << ", batch " << batch
                        << ": forward rel. difference " << ef << ", adjoint " << ea);
        CHECK(ef <= 1e-6);
        CHECK(ea <= 1e-6);
    }
}

std::vector<int> homes() {
    std::vector<int> h{0};
    if (device::device_count() >= 2) h.push_back(1);
    return h;
}

}  // namespace

TEST_CASE("Gdft on several GPUs equals Gdft on one", "[gpu][multigpu]") {
    FORGE_INFO_SEED();
    const Problem p2 = make_dft_problem(31, 24, 1, 2999), p3 = make_dft_problem(16, 13, 6, 4001);
    for (const auto& devices : device_lists())
        for (int home : homes()) {
            for (const Problem* p : {&p2, &p3})
                check_multi_vs_single(
                    [p](const DftOptions& o) {
                        return Gdft<float>(p->n1, p->n2, p->kx, p->ky, p->kz, p->ix, p->iy, p->iz, p->FM, p->t, o);
                    },
                    devices, home);
        }
}

TEST_CASE("GdftR2 on several GPUs equals GdftR2 on one", "[gpu][multigpu]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(20, 17, 3, 2501);
    for (const auto& devices : device_lists())
        check_multi_vs_single(
            [&p](const DftOptions& o) {
                return GdftR2<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, p.nx, p.ny, p.nz, o);
            },
            devices, 0);
}

TEST_CASE("SENSE on a multi-GPU Gdft equals SENSE on one GPU", "[gpu][multigpu]") {
    FORGE_INFO_SEED();
    const Problem p = make_dft_problem(24, 24, 1, 3001);
    const uword nc = 5;
    const arma::cx_fvec maps = complex_normal<float>(p.n2 * nc);
    Gdft<float> G(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t);
    const SENSE<float, Gdft<float>> one(G, maps, nc);
    const arma::cx_fvec x = complex_normal<float>(p.n2), y = complex_normal<float>(p.n1 * nc);
    const arma::cx_fvec f1 = to_host(one * on_device0(x)), a1 = to_host(one / on_device0(y));
    for (const auto& devices : device_lists()) {
        const Gdft<float> Gm(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, DftOptions{nullptr, devices});
        const SENSE<float, Gdft<float>> multi(Gm, maps, nc);
        const double ef = rel_error(to_host(multi * on_device0(x)), f1);
        const double ea = rel_error(to_host(multi / on_device0(y)), a1);
        INFO("devices " << devices.size() << " entries: forward rel. difference " << ef << ", adjoint " << ea);
        CHECK(ef <= 1e-6);
        CHECK(ea <= 1e-6);
    }
}

TEST_CASE("Multi-GPU Gdft refuses device numbers that do not exist", "[gpu][multigpu]") {
    const Problem p = make_dft_problem(8, 8, 1, 100);
    auto make = [&p](std::vector<int> devices) {
        return Gdft<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, DftOptions{nullptr, devices});
    };
    const int count = device::device_count();
    CHECK_THROWS_WITH(make({0, count}),
                      Catch::Matchers::Contains("devices[1] = " + std::to_string(count)) &&
                          Catch::Matchers::Contains("expected a device number in [0, " + std::to_string(count) + ")"));
    CHECK_THROWS_AS(make({-1}), invalid_argument);
    CHECK(make({0}).devices() == std::vector<int>{0});
    CHECK(make({}).devices().empty());
}
