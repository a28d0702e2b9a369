#include <cstdio>
#include "forge/Operators/dft/Gdft.h"
int main() {  // 8x8 image, 64 Cartesian k-space samples (cycles/FOV), pixel positions in FOV units
    arma::uword N = 8, n = N * N;
    arma::fvec kx(n), ky(n), kz(n, arma::fill::zeros), ix(n), iy(n), iz(n, arma::fill::zeros);
    for (arma::uword j = 0; j < n; ++j) { kx[j] = float(j % N) - N / 2; ky[j] = float(j / N) - N / 2; ix[j] = kx[j] / N; iy[j] = ky[j] / N; }
    arma::fvec field_map(n, arma::fill::zeros), t(n, arma::fill::zeros);  // field map (rad/s), sample times (s)
    forge::Gdft<float> G(n, n, kx, ky, kz, ix, iy, iz, field_map, t);     // G * x: image -> k-space, G / y: adjoint
    arma::cx_fvec image(n, arma::fill::randn), kspace = G * image, back = G / kspace;
    std::printf("|G'G x| / |x| = %.4f (expected n = %llu)\n", arma::norm(back) / arma::norm(image), (unsigned long long)n);
}
