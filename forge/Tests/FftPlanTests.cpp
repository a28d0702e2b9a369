// FftPlan and FftLines (forge/CUDA/FftPlan.h), the FFT plan facade of Gfft, GfftSampled, Gnufft and ToeplitzNormal,
// on host data: against DFT sums written out here in double, batches against single grids, and the refusals.
#include <cmath>
#include <complex>
#include <vector>

#include "TestHelpers.h"
#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Geometry.h"

using namespace forge_test;
using arma::uword;

namespace {
constexpr double kPi = 3.14159265358979323846;

// sum_r x(r) exp(sign i 2 pi k . r / N) over an Nx x Ny x Nz grid (x fastest), in double; 'centred' indexes k and
// r from -N/2 (Gfft's convention), else from 0.
arma::cx_vec dft(const arma::cx_vec& x, uword Nx, uword Ny, uword Nz, double sign, bool centred) {
    const uword N[3] = {Nx, Ny, Nz};
    auto coord = [&](uword i, int a) { return centred && N[a] > 1 ? double(i) - double(N[a] / 2) : double(i); };
    arma::cx_vec y(x.n_elem, arma::fill::zeros);
    for (uword kz = 0; kz < Nz; ++kz)
        for (uword ky = 0; ky < Ny; ++ky)
            for (uword kx = 0; kx < Nx; ++kx) {
                std::complex<double> s = 0;
                for (uword z = 0; z < Nz; ++z)
                    for (uword yy = 0; yy < Ny; ++yy)
                        for (uword xx = 0; xx < Nx; ++xx) {
                            const double ph = coord(kx, 0) * coord(xx, 0) / double(Nx) +
                                              coord(ky, 1) * coord(yy, 1) / double(Ny) +
                                              coord(kz, 2) * coord(z, 2) / double(Nz);
                            s += x[xx + Nx * (yy + Ny * z)] * std::polar(1.0, sign * 2 * kPi * ph);
                        }
                y[kx + Nx * (ky + Ny * kz)] = s;
            }
    return y;
}

template <typename T>
arma::Col<std::complex<T>> run_host(const forge::FftPlan<T>& F, const arma::Col<std::complex<T>>& x, bool forward,
                                    uword nbatch, bool centred) {
    arma::Col<std::complex<T>> y(x.n_elem);
    auto* out = reinterpret_cast<forge::forgeComplex<T>*>(y.memptr());
    if (centred) {
        F.centred(forge::FftMemory::host, reinterpret_cast<const forge::forgeComplex<T>*>(x.memptr()), out, forward,
                  nbatch);
    } else {
        y = x;
        F.execute(forge::FftMemory::host, out, forward, nbatch);
    }
    return y;
}
}  // namespace

TEMPLATE_TEST_CASE("FftPlan on host data: plain and centred, forward and backward, equal the DFT sums", "[FftPlan][fft]",
                   float, double) {
    FORGE_INFO_SEED();
    const double tol = std::is_same<TestType, float>::value ? 2e-6 : 1e-13;
    const uword sizes[][3] = {{6, 1, 1}, {8, 6, 1}, {4, 6, 8}, {2, 1, 4}};
    for (const auto& s : sizes) {
        INFO("grid " << s[0] << " x " << s[1] << " x " << s[2]);
        const forge::FftPlan<TestType> F(forge::ImageGrid(s[0], s[1], s[2]));
        CHECK(F.size() == s[0] * s[1] * s[2]);
        CHECK((F.nx() == s[0] && F.ny() == s[1] && F.nz() == s[2]));
        const arma::Col<std::complex<TestType>> x = complex_normal<TestType>(F.size());
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
        for (const bool forward : {true, false}) {
            const double sign = forward ? -1 : 1;
            CHECK(rel_error(run_host(F, x, forward, 1, false), dft(xd, s[0], s[1], s[2], sign, false)) < tol);
            // The centred transform needs even axes (or 1): every size here has them.
            CHECK(rel_error(run_host(F, x, forward, 1, true), dft(xd, s[0], s[1], s[2], sign, true)) < tol);
        }
    }
}

TEMPLATE_TEST_CASE("FftPlan host batch equals one grid at a time, bit for bit; centred in place too", "[FftPlan][fft]",
                   float, double) {
    FORGE_INFO_SEED();
    const forge::FftPlan<TestType> F(6, 4, 2);
    const uword n = F.size(), nb = 5;
    const arma::Col<std::complex<TestType>> x = complex_normal<TestType>(n * nb);
    for (const bool centred : {false, true})
        for (const bool forward : {true, false}) {
            const arma::Col<std::complex<TestType>> all = run_host(F, x, forward, nb, centred);
            for (uword b = 0; b < nb; ++b) {
                const arma::Col<std::complex<TestType>> one =
                    run_host(F, arma::Col<std::complex<TestType>>(x.subvec(b * n, (b + 1) * n - 1)), forward, 1,
                             centred);
                CHECK(arma::all(all.subvec(b * n, (b + 1) * n - 1) == one));
            }
        }
    arma::Col<std::complex<TestType>> y = x;  // in == out
    auto* p = reinterpret_cast<forge::forgeComplex<TestType>*>(y.memptr());
    F.centred(forge::FftMemory::host, p, p, true, nb);
    CHECK(arma::all(y == run_host(F, x, true, nb, true)));
}

TEMPLATE_TEST_CASE("FftLines: strided 1D transforms of selected lines equal the DFT of each line", "[FftPlan][fft]",
                   float, double) {
    FORGE_INFO_SEED();
    const double tol = std::is_same<TestType, float>::value ? 2e-6 : 1e-13;
    // A 10 x 8 array with row pitch 10: the columns (length 8, stride 10) of the first 6 rows' cells x < 6, in two
    // batches of 3 columns (loops {3, 1} and {2, 3}); the others stay untouched.
    const uword pitch = 10, rows = 8;
    arma::Col<std::complex<TestType>> a = complex_normal<TestType>(pitch * rows);
    const arma::Col<std::complex<TestType>> a0 = a;
    auto* d = reinterpret_cast<forge::forgeComplex<TestType>*>(a.memptr());
    using Loop = typename forge::FftLines<TestType>::Loop;
    const forge::FftLines<TestType> lines(rows, pitch, {Loop{3, 1}, Loop{2, 3}}, true, d);
    lines.run(d);
    for (uword c = 0; c < pitch; ++c) {
        arma::cx_vec col(rows);
        for (uword r = 0; r < rows; ++r) col[r] = std::complex<double>(a0[c + pitch * r]);
        const arma::cx_vec ref = c < 6 ? dft(col, rows, 1, 1, -1, false) : col;
        arma::cx_vec got(rows);
        for (uword r = 0; r < rows; ++r) got[r] = std::complex<double>(a[c + pitch * r]);
        INFO("column " << c);
        CHECK(rel_error(got, ref) < tol);
    }
    // A line of length 1 is no transform at all.
    const forge::FftLines<TestType> none(1, 1, {Loop{4, 1}}, false, d);
    const arma::Col<std::complex<TestType>> before = a;
    none.run(d);
    CHECK(arma::all(a == before));
}

TEST_CASE("FftPlan refuses empty axes, axes FFTW cannot take, host data on a device-only plan", "[FftPlan][fft][errors]") {
    CHECK_THROWS_WITH(forge::FftPlan<float>(4, 0, 1), Catch::Contains("Ny = 0"));
    CHECK_THROWS_WITH(forge::FftPlan<double>(forge::uword(1) << 31, 1, 1),
                      Catch::Contains("Nx = 2147483648 exceeds 2147483647"));
    forge::FftPlanOptions o;
    o.host = false;
    const forge::FftPlan<float> F(4, 4, 1, o);
    std::vector<forge::forgeComplex<float>> x(16);
    CHECK_THROWS_WITH(F.execute(forge::FftMemory::host, x.data(), true), Catch::Contains("device-only plan"));
    CHECK_THROWS_AS(F.centred(forge::FftMemory::host, x.data(), x.data(), true), forge::invalid_argument);
    CHECK_FALSE(F.has_device_plan());
    if (!forge::device::built_with_cuda()) {
        // The CPU-only build reaches cuFFT only through device data, which it cannot have: a plan for it throws.
        CHECK_THROWS_AS(F.prepare_device(), forge::cuda_error);
        CHECK_FALSE(F.has_device_plan());
    }
    CHECK_THROWS_WITH(forge::detail::require_centred_grid("here", 6, 3, 1), Catch::Contains("here: Ny = 3"));
}
