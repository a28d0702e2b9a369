// The LinearOperator contract on the GPU, by the checks of OperatorChecks.h: for every operator with a device path,
// forward, adjoint and normal of device vectors equal the host's and stay on the device, the dot test holds with the
// applies on the device, normal() equals adjoint(forward()) there, and a batch equals its vectors one by one; and the
// host/device check rejects an operator whose device path is off by 1e-3.
#include <complex>
#include <cstring>
#include <memory>
#include <vector>

#include "DftTestProblem.h"
#include "OperatorChecks.h"
#include "TestHelpers.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/dft/GdftR2.h"
#include "forge/Operators/fft/Gfft.h"
#include "forge/Operators/fft/GfftSampled.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

using namespace forge_test;
using forge::Residency;
using Op = forge::LinearOperator<float>;

namespace {

// Bounds of the GPU tests these checks stand beside: CPU == GPU to 1e-4 (GdftGpuTests, SenseGpuTests; the FFT and
// NUFFT operators meet 1e-5 there), the device dot test to adjoint_tolerance<float>() of ||A x|| ||y||
// (OperatorChecks.h; relative to |<A x, y>|, which random probes sometimes make small, chance could fail it), a
// device batch equal to its vectors to 2e-5
// (GdftGpuTests: coil batches take the tensor-core kernels). normal() is adjoint(forward()) by the same kernels; 1e-5
// leaves room for the NUFFT adjoint's atomic sums.
constexpr double kHostDeviceTol = 1e-4;
constexpr double kDeviceNormalTol = 1e-5;
constexpr double kDeviceBatchTol = 2e-5;

void check_on_device(const Op& A) {
    INFO(A.name());
    check_host_device(A, kHostDeviceTol);
    check_host_device(A, kHostDeviceTol, 3);
    check_adjoint(A, forge_test::adjoint_tolerance<float>(), DotScale::Norms, 1, Residency::Device);
    check_normal(A, kDeviceNormalTol, 1, Residency::Device);
    check_batch(A, 3, kDeviceBatchTol, Residency::Device);
}

// A user operator with a device path: a dense matrix applied on the host, the device path copying through it and
// scaling its result by 1 + defect.
class MatrixWithDevicePath : public forge::LinearOperator<float> {
public:
    MatrixWithDevicePath(arma::cx_fmat A, float defect)
        : forge::LinearOperator<float>("MatrixWithDevicePath", A.n_rows, A.n_cols), A_(std::move(A)), defect_(defect) {}

protected:
    void apply_host(const Elem* in, Elem* out, forge::uword nbatch, bool forward) const override {
        const forge::uword nin = forward ? A_.n_cols : A_.n_rows, nout = forward ? A_.n_rows : A_.n_cols;
        for (forge::uword b = 0; b < nbatch; ++b) {
            const arma::cx_fvec x(const_cast<std::complex<float>*>(
                                      reinterpret_cast<const std::complex<float>*>(in + b * nin)),
                                  nin, false, true);
            const arma::cx_fvec y = forward ? arma::cx_fvec(A_ * x) : arma::cx_fvec(A_.t() * x);
            std::memcpy(static_cast<void*>(out + b * nout), y.memptr(), nout * sizeof(std::complex<float>));
        }
    }
    void apply_device(const Elem* in, Elem* out, forge::uword nbatch, bool forward) const override {
        const forge::uword nin = (forward ? A_.n_cols : A_.n_rows) * nbatch;
        const forge::uword nout = (forward ? A_.n_rows : A_.n_cols) * nbatch;
        std::vector<Elem> hin(nin), hout(nout);
        forge::device::copy_to_host(hin.data(), in, nin * sizeof(Elem));
        apply_host(hin.data(), hout.data(), nbatch, forward);
        for (Elem& e : hout) e = e * (1.0f + defect_);
        forge::device::copy_to_device(out, hout.data(), nout * sizeof(Elem));
    }

private:
    arma::cx_fmat A_;
    float defect_;
};

}  // namespace

TEST_CASE("GPU operator contract: the exact DFTs and SENSE", "[gpu][contract]") {
    FORGE_INFO_SEED();
    const DftProblem p = make_dft_problem(16, 12, 2, 1200);
    const auto G = std::make_shared<forge::Gdft<float>>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t);
    check_on_device(*G);
    check_on_device(forge::GdftR2<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, p.nx, p.ny, p.nz));
    check_on_device(forge::SENSE<float>(G, complex_normal<float>(p.n2 * 4), 4));

    const arma::uword ns = 3, per = 400, nc = 2;
    arma::fmat kx(per, ns), ky(per, ns), kz(per, ns, arma::fill::zeros), t(per, ns), phases(p.n2, ns);
    for (arma::uword s = 0; s < ns; ++s) {
        kx.col(s) = uniform<float>(per, -8, 8);
        ky.col(s) = uniform<float>(per, -6, 6);
        t.col(s) = arma::sort(uniform<float>(per, 0, 10e-3));
        phases.col(s) = uniform<float>(p.n2, -3, 3);
    }
    check_on_device(
        forge::pcSENSE<float>(kx, ky, kz, t, p.ix, p.iy, p.iz, p.FM, complex_normal<float>(p.n2 * nc), phases, nc));
}

TEST_CASE("GPU operator contract: the FFT, the NUFFT, time segmentation and the Toeplitz normal", "[gpu][contract]") {
    FORGE_INFO_SEED();
    const arma::uword N = 24, n1 = 3000;
    const arma::fvec kx = uniform<float>(n1, -double(N / 2), double(N / 2)),
                     ky = uniform<float>(n1, -double(N / 2), double(N / 2)), kz(n1, arma::fill::zeros);
    const arma::fvec t = arma::linspace<arma::fvec>(0, 8e-3, n1);
    const arma::fvec fm = uniform<float>(N * N, -2 * 3.14159265f * 60, 2 * 3.14159265f * 60);
    check_on_device(forge::Gfft<float>(N, N, 1));
    const forge::Gnufft<float> G(n1, N, N, 1, kx, ky, kz);
    check_on_device(G);
    check_on_device(forge::TimeSegmentation<float, forge::Gnufft<float>>(G, fm, t, 4, forge::TSInterp::MinMax));
    check_on_device(forge::ToeplitzNormal<float>(N, N, 1, kx, ky, kz, arma::fvec(n1, arma::fill::ones), fm, t, 3));

    // Samples on the lattice of a grid twice as fine along x.
    const arma::fvec gx = arma::round(2 * uniform<float>(500, -double(N / 2), double(N / 2) - 1)) / 2,
                     gy = arma::round(uniform<float>(500, -double(N / 2), double(N / 2) - 1)),
                     gz(500, arma::fill::zeros);
    check_on_device(forge::GfftSampled<float>(N, N, 1, 2 * N, N, 1, gx, gy, gz));
}

TEST_CASE("GPU operator contract: the host/device check rejects a device path off by 1e-3", "[gpu][contract][checks]") {
    FORGE_INFO_SEED();
    const arma::cx_fmat A = arma::cx_fmat(arma::randn<arma::fmat>(30, 20), arma::randn<arma::fmat>(30, 20));
    const MatrixWithDevicePath right(A, 0.0f), wrong(A, 1e-3f);
    CHECK(host_device_test(right).passes(kHostDeviceTol));
    CHECK_FALSE(host_device_test(wrong).passes(kHostDeviceTol));
    CHECK_FALSE(host_device_test(wrong, 3).passes(kHostDeviceTol));
    // Its device path alone is consistent: the dot test and the normal check on the device do not see the defect
    // (it scales forward and adjoint alike), which is why the host/device check exists.
    CHECK(adjoint_test(wrong, DotScale::Norms, 1, Residency::Device).passes(forge_test::adjoint_tolerance<float>()));
    CHECK(normal_test(wrong, 1, Residency::Device).passes(kDeviceNormalTol));
}
