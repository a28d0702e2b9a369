#pragma once
// The field-corrected multi-coil problem forge's GPU benchmarks share: a stack of Archimedean spirals (Nz
// partitions of n1/Nz samples out to Nx/2, 10 ms readouts), a smooth field map of +-100 Hz, nc Gaussian coil
// maps with a linear phase, and a disc phantom.
#include <cmath>
#include <complex>

#include <armadillo>

namespace forge_bench {

struct Problem {
    arma::uword Nx, Ny, Nz, n2, n1, nc;
    arma::fvec kx, ky, kz, ix, iy, iz, field_map, t;
    arma::cx_fvec maps, image;
};

inline Problem make_problem(arma::uword Nx, arma::uword Ny, arma::uword Nz, arma::uword n1, arma::uword nc) {
    constexpr double kPi = 3.14159265358979323846;
    Problem p{Nx, Ny, Nz, Nx * Ny * Nz, n1, nc, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    p.kx.set_size(n1);
    p.ky.set_size(n1);
    p.kz.set_size(n1);
    p.t.set_size(n1);
    // Stack of spirals: Nz partitions, each an Archimedean spiral of n1/Nz samples out to Nx/2, 10 ms readout.
    const arma::uword per = n1 / Nz;
    for (arma::uword z = 0; z < Nz; ++z)
        for (arma::uword j = 0; j < per; ++j) {
            const arma::uword i = z * per + j;
            const double tau = std::sqrt((j + 0.5) / double(per));
            const double r = 0.999 * (Nx / 2.0) * tau, th = 2 * kPi * (Nx / 2.0) * tau;
            p.kx(i) = float(r * std::cos(th));
            p.ky(i) = float(r * std::sin(th) * double(Ny) / double(Nx));
            p.kz(i) = float(double(z) - Nz / 2.0);
            p.t(i) = float(10e-3 * j / double(per));
        }
    p.ix.set_size(p.n2);
    p.iy.set_size(p.n2);
    p.iz.set_size(p.n2);
    p.field_map.set_size(p.n2);
    p.image.set_size(p.n2);
    p.maps.set_size(p.n2 * nc);
    for (arma::uword z = 0; z < Nz; ++z)
        for (arma::uword y = 0; y < Ny; ++y)
            for (arma::uword x = 0; x < Nx; ++x) {
                const arma::uword k = x + Nx * (y + Ny * z);
                const double fx = (double(x) - Nx / 2.0) / Nx, fy = (double(y) - Ny / 2.0) / Ny,
                             fz = Nz > 1 ? (double(z) - Nz / 2.0) / Nz : 0.0;
                p.ix(k) = float(fx);
                p.iy(k) = float(fy);
                p.iz(k) = float(fz);
                p.field_map(k) = float(2 * kPi * 100 * std::sin(kPi * fx) * std::cos(kPi * fy) * std::cos(kPi * fz));
                p.image(k) = (fx * fx + fy * fy < 0.16) ? std::complex<float>(1.0f + float(fz), 0.2f) : 0.0f;
                for (arma::uword c = 0; c < nc; ++c) {
                    const double a = 2 * kPi * c / nc, dx = fx - 0.5 * std::cos(a), dy = fy - 0.5 * std::sin(a);
                    p.maps(c * p.n2 + k) = std::polar(float(std::exp(-(dx * dx + dy * dy) / 0.3)), float(a + dx));
                }
            }
    return p;
}

}  // namespace forge_bench
