// GPU tests of the GdftR2 sinc factor sincPG(k/N + G t) where its arguments pass one (the kernel's
// reduction by the nearest even integer and the shared division) and where an axis has argument 0 for
// every pair (2D): the GPU operator against the CPU operator and against a float64 brute-force sum.
#include <cmath>
#include <complex>

#include "TestHelpers.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/GdftR2.h"

using forge::uword;
using cvec = forgeCol<forgeComplex<float>>;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct SincProblem {
    uword nx, ny, nz, n1, n2;
    arma::fvec kx, ky, kz, t, ix, iy, iz, FM, gx, gy, gz;
};

// Gradient maps uniform in [-gmax, gmax] cycles/s per voxel, readouts up to 20 ms: with gmax = 300 the sinc
// arguments reach about 6.5. On a 2D grid (nz = 1) kz and Gz are 0.
SincProblem make_sinc_problem(uword nx, uword ny, uword nz, uword n1, double gmax) {
    using forge_test::uniform;
    SincProblem p{nx, ny, nz, n1, nx * ny * nz, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    p.kx = uniform<float>(n1, -0.5 * nx, 0.5 * nx);
    p.ky = uniform<float>(n1, -0.5 * ny, 0.5 * ny);
    p.kz = nz > 1 ? uniform<float>(n1, -0.5 * nz, 0.5 * nz) : arma::fvec(n1, arma::fill::zeros);
    p.t = uniform<float>(n1, 0.0, 0.02);
    p.ix.set_size(p.n2);
    p.iy.set_size(p.n2);
    p.iz.set_size(p.n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                p.ix[i] = float((double(x) - double(nx / 2)) / double(nx));
                p.iy[i] = float((double(y) - double(ny / 2)) / double(ny));
                p.iz[i] = float((double(z) - double(nz / 2)) / double(nz));
            }
    p.FM = uniform<float>(p.n2, -2 * kPi * 100, 2 * kPi * 100);
    p.gx = uniform<float>(p.n2, -gmax, gmax);
    p.gy = uniform<float>(p.n2, -gmax, gmax);
    p.gz = nz > 1 ? uniform<float>(p.n2, -gmax, gmax) : arma::fvec(p.n2, arma::fill::zeros);
    return p;
}

forge::GdftR2<float> make_op(const SincProblem& p) {
    return forge::GdftR2<float>(p.n1, p.n2, p.kx, p.ky, p.kz, p.ix, p.iy, p.iz, p.FM, p.t, p.gx, p.gy, p.gz, p.nx,
                                p.ny, p.nz);
}

double sinc_ref(double x) { return x == 0.0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

// ||y - y64|| / ||y64|| over 64 evenly spaced samples of the forward transform, y64 in float64.
double forward_error_vs_float64(const SincProblem& p, const arma::cx_fvec& x, const arma::cx_fvec& y) {
    double num = 0, den = 0;
    for (uword r = 0; r < 64; ++r) {
        const uword j = r * (p.n1 / 64);
        const double tj = p.t[j];
        std::complex<double> s = 0;
        for (uword k = 0; k < p.n2; ++k) {
            const double ph = 2 * kPi * (double(p.kx[j]) * p.ix[k] + double(p.ky[j]) * p.iy[k] +
                                         double(p.kz[j]) * p.iz[k]) +
                              double(p.FM[k]) * tj;
            const double b = sinc_ref(double(p.kx[j]) / double(p.nx) + double(p.gx[k]) * tj) *
                             sinc_ref(double(p.ky[j]) / double(p.ny) + double(p.gy[k]) * tj) *
                             sinc_ref(double(p.kz[j]) / double(p.nz) + double(p.gz[k]) * tj);
            s += std::complex<double>(x[k]) * std::polar(b, -ph);
        }
        num += std::norm(s - std::complex<double>(y[j]));
        den += std::norm(s);
    }
    return std::sqrt(num / den);
}

arma::cx_fvec run_gpu(const forge::GdftR2<float>& G, const arma::cx_fvec& v, bool forward) {
    cvec d(v);
    d.put_on_gpu();
    cvec r = forward ? G * d : G / d;
    REQUIRE(r.on_gpu());
    r.get_from_gpu();
    return r.to_arma();
}

void check(const SincProblem& p) {
    const forge::GdftR2<float> G = make_op(p);
    REQUIRE(G.gpu_enabled());
    const arma::cx_fvec x = forge_test::complex_normal<float>(p.n2);
    const arma::cx_fvec y = forge_test::complex_normal<float>(p.n1);
    const arma::cx_fvec fGpu = run_gpu(G, x, true), aGpu = run_gpu(G, y, false);
    const arma::cx_fvec fCpu = G * x, aCpu = G / y;
    const double ef = forge_test::rel_error(fGpu, fCpu), ea = forge_test::rel_error(aGpu, aCpu);
    const double e64 = forward_error_vs_float64(p, x, fGpu);
    INFO("GPU vs CPU: forward " << ef << ", adjoint " << ea << "; GPU forward vs float64 " << e64);
    CHECK(ef < 1e-4);
    CHECK(ea < 1e-4);
    CHECK(e64 < 5e-5);
}

}  // namespace

TEST_CASE("GPU GdftR2 with sinc arguments beyond one matches the CPU operator and float64", "[gpu][gdftr2][sinc]") {
    FORGE_INFO_SEED();
    check(make_sinc_problem(16, 12, 6, 2000, 300.0));  // 3D: all three arguments pass one
    check(make_sinc_problem(24, 20, 1, 1500, 300.0));  // 2D: the z argument is 0 for every pair
}
