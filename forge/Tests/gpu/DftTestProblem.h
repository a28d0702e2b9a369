#pragma once
// A random field-corrected DFT problem for the GPU tests of the exact DFT (one GPU and several).
#include <cmath>
#include <complex>

#include "TestHelpers.h"

namespace forge_test {

struct DftProblem {
    arma::uword nx, ny, nz, n1, n2;
    arma::fvec kx, ky, kz, ix, iy, iz, FM, t;
};

// Random trajectory inside the grid's k-space extent, pixel centres of an nx x ny x nz grid in FOV
// units, a smooth-plus-random field map up to +-150 Hz (in rad/s) and readout times up to 20 ms.
inline DftProblem make_dft_problem(arma::uword nx, arma::uword ny, arma::uword nz, arma::uword n1) {
    DftProblem p{nx, ny, nz, n1, nx * ny * nz, {}, {}, {}, {}, {}, {}, {}, {}};
    p.kx = uniform<float>(n1, -double(nx) / 2, double(nx) / 2);
    p.ky = uniform<float>(n1, -double(ny) / 2, double(ny) / 2);
    p.kz = nz > 1 ? uniform<float>(n1, -double(nz) / 2, double(nz) / 2) : arma::fvec(n1, arma::fill::zeros);
    p.t = uniform<float>(n1, 0.0, 0.02);
    p.ix.set_size(p.n2);
    p.iy.set_size(p.n2);
    p.iz.set_size(p.n2);
    p.FM.set_size(p.n2);
    const arma::fvec noise = uniform<float>(p.n2, -1.0, 1.0);
    for (arma::uword z = 0; z < nz; ++z)
        for (arma::uword y = 0; y < ny; ++y)
            for (arma::uword x = 0; x < nx; ++x) {
                const arma::uword i = x + nx * (y + ny * z);
                p.ix[i] = (float(x) - nx / 2.0f) / nx;
                p.iy[i] = (float(y) - ny / 2.0f) / ny;
                p.iz[i] = nz > 1 ? (float(z) - nz / 2.0f) / nz : 0.0f;
                p.FM[i] = float(2 * M_PI * (100.0 * std::sin(3.0 * p.ix[i] + 2.0 * p.iy[i]) + 50.0 * noise[i]));
            }
    return p;
}

// Float64 brute force (independent of forge's kernels) of vector b of a batch at 'rows' outputs spread over the
// range: forward (samples) or adjoint (pixels), phase 2 pi k.r + FM t with sign - forward, + adjoint. Returns
// ||out - ref|| / ||ref||, or ||out|| when the reference is zero.
inline double error_vs_float64(const DftProblem& p, bool forward, const arma::cx_fvec& in, const arma::cx_fvec& out,
                               arma::uword b, arma::uword rows) {
    const arma::uword nOut = forward ? p.n1 : p.n2, nIn = forward ? p.n2 : p.n1;
    double num = 0, den = 0;
    for (arma::uword r = 0; r < rows; ++r) {
        const arma::uword o = (r * nOut) / rows + (b % 3);
        std::complex<double> s = 0;
        for (arma::uword i = 0; i < nIn; ++i) {
            const arma::uword j = forward ? o : i, k = forward ? i : o;
            const double ph =
                2 * M_PI * (double(p.kx[j]) * p.ix[k] + double(p.ky[j]) * p.iy[k] + double(p.kz[j]) * p.iz[k]) +
                double(p.FM[k]) * p.t[j];
            s += std::complex<double>(in[b * nIn + i]) * std::polar(1.0, forward ? -ph : ph);
        }
        num += std::norm(s - std::complex<double>(out[b * nOut + o]));
        den += std::norm(s);
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace forge_test
