#include "forge/Operators/DensityCompensation.h"

#include <cmath>
#include <vector>

#include "forge/Core/Exceptions.h"

namespace forge {

template <typename T1>
arma::Col<T1> calc3DDensityCompensation(const Gnufft<T1>& G, uword iterations) {
    if (iterations == 0) throw invalid_argument("calc3DDensityCompensation: iterations must be at least 1, got 0");
    const uword n1 = G.n1();
    std::vector<std::complex<T1>> w(n1, std::complex<T1>(1)), cw(n1), grid(G.grid_elems());
    for (uword it = 0; it < iterations; ++it) {
        G.spread(w.data(), grid.data());
        G.interpolate(grid.data(), cw.data());
        for (uword j = 0; j < n1; ++j) {
            const T1 c = cw[j].real();
            // C W > 0 always (the sample itself contributes K(0)^2-ish); guard against round-off anyway.
            w[j] = c > T1(0) ? std::complex<T1>(w[j].real() / c) : w[j];
        }
    }
    // Fixed point C W = 1. A density-compensated W_true (sum_j W_true,j f(k_j) ~= integral of f) has
    // C W_true ~= prod_d Kint^2 / alpha_d, Kint = integral of the 1D kernel, alpha_d = G_d / N_d.
    const double kint = G.kernel_integral();
    const uword N[3] = {G.Nx(), G.Ny(), G.Nz()};
    double scale = 1.0 / double(G.n2());
    for (int d = 0; d < 3; ++d)
        if (N[d] > 1) scale *= kint * kint * double(N[d]) / double(G.grid_size(d));
    arma::Col<T1> out(n1);
    for (uword j = 0; j < n1; ++j) out(j) = T1(double(w[j].real()) * scale);
    return out;
}

template <typename T1>
arma::Col<T1> calc3DDensityCompensation(uword n1, uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx,
                                        const arma::Col<T1>& ky, const arma::Col<T1>& kz, uword iterations) {
    return calc3DDensityCompensation(Gnufft<T1>(n1, Nx, Ny, Nz, kx, ky, kz), iterations);
}

template arma::Col<float> calc3DDensityCompensation(const Gnufft<float>&, uword);
template arma::Col<double> calc3DDensityCompensation(const Gnufft<double>&, uword);
template arma::Col<float> calc3DDensityCompensation(uword, uword, uword, uword, const arma::Col<float>&,
                                                    const arma::Col<float>&, const arma::Col<float>&, uword);
template arma::Col<double> calc3DDensityCompensation(uword, uword, uword, uword, const arma::Col<double>&,
                                                     const arma::Col<double>&, const arma::Col<double>&, uword);

}  // namespace forge
