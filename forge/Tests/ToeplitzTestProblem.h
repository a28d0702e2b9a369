#pragma once
// What the ToeplitzNormal tests share (ToeplitzTests.cpp, ToeplitzBuildTests.cpp, ToeplitzCompositeTests.cpp): image
// grids, random trajectories, smooth field maps, the options of a host kernel build, and the references: the exact
// G^H W G by the float64 Gdft and the time-segmented normal with ToeplitzNormal's own segmentation.
#include <algorithm>
#include <cmath>
#include <complex>

#include <armadillo>

#include "TestHelpers.h"
#include "ToeplitzTolerance.h"
#include "forge/Operators/TimeSegmentation.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

namespace toeplitz_test {

using namespace forge_test;
using arma::uword;

inline constexpr double kPi = 3.14159265358979323846;

// Options that build the kernels on the host (the CPU build under test), with the given axis grouping and progress.
inline forge::ToeplitzOptions host_build(forge::AxisGrouping grouping = forge::AxisGrouping::Auto,
                                         const forge::ToeplitzBuildProgress& progress = nullptr) {
    forge::ToeplitzOptions o;
    o.build = forge::KernelBuild::Host;
    o.grouping = grouping;
    o.progress = progress;
    return o;
}

// Pixel positions of an Nx x Ny x Nz grid, x fastest, spacing 1/N per axis, centred at N/2.
struct Grid {
    uword Nx, Ny, Nz;
    uword n2() const { return Nx * Ny * Nz; }
    arma::vec axis(int a) const {
        const uword N[3] = {Nx, Ny, Nz};
        arma::vec r(n2());
        for (uword z = 0; z < Nz; ++z)
            for (uword y = 0; y < Ny; ++y)
                for (uword x = 0; x < Nx; ++x) {
                    const uword c[3] = {x, y, z};
                    r[x + Nx * (y + Ny * z)] = (double(c[a]) - double(N[a] / 2)) / double(N[a]);
                }
        return r;
    }
};

// A trajectory of n1 random samples inside the grid's k-space box, readout times over 'readout' seconds.
struct Trajectory {
    arma::vec kx, ky, kz, t, W;
};
inline Trajectory random_trajectory(const Grid& g, uword n1, double readout) {
    Trajectory tr;
    tr.kx = uniform<double>(n1, -double(g.Nx) / 2, double(g.Nx) / 2);
    tr.ky = g.Ny > 1 ? uniform<double>(n1, -double(g.Ny) / 2, double(g.Ny) / 2) : arma::vec(n1, arma::fill::zeros);
    tr.kz = g.Nz > 1 ? uniform<double>(n1, -double(g.Nz) / 2, double(g.Nz) / 2) : arma::vec(n1, arma::fill::zeros);
    tr.t = arma::linspace<arma::vec>(0, readout, n1);
    tr.W = uniform<double>(n1, 0.2, 1.5);
    return tr;
}

// A smooth field map (rad/s) with max |FM| = peak.
inline arma::vec smooth_field_map(const Grid& g, double peak) {
    const arma::vec x = g.axis(0), y = g.axis(1), c = uniform<double>(4, -1, 1);
    arma::vec fm = c(0) + c(1) * x + c(2) * y + c(3) * arma::exp(-(arma::square(x - 0.1) + arma::square(y)) * 8);
    return fm * (peak / arma::abs(fm).max());
}

template <typename T>
arma::Col<T> as(const arma::vec& v) {
    return arma::conv_to<arma::Col<T>>::from(v);
}

// Host-build options with a kernel source (and axis grouping).
inline forge::ToeplitzOptions with_source(forge::KernelSource source,
                                          forge::AxisGrouping grouping = forge::AxisGrouping::Auto) {
    forge::ToeplitzOptions o = host_build(grouping);
    o.source = source;
    return o;
}

template <typename T>
forge::ToeplitzNormal<T> field_free(const Grid& g, const Trajectory& tr, const forge::ToeplitzOptions& o) {
    return forge::ToeplitzNormal<T>(g.Nx, g.Ny, g.Nz, as<T>(tr.kx), as<T>(tr.ky), as<T>(tr.kz), as<T>(tr.W), o);
}

template <typename T>
forge::ToeplitzNormal<T> field_corrected(const Grid& g, const Trajectory& tr, const arma::vec& fm, uword L,
                                         const forge::ToeplitzOptions& o) {
    return forge::ToeplitzNormal<T>(g.Nx, g.Ny, g.Nz, as<T>(tr.kx), as<T>(tr.ky), as<T>(tr.kz), as<T>(tr.W), as<T>(fm),
                                    as<T>(tr.t), L, forge::TSInterp::MinMax, o);
}

template <typename T>
forge::Trajectory<T> trajectory_of(const Trajectory& tr) {
    return forge::Trajectory<T>(as<T>(tr.kx), as<T>(tr.ky), as<T>(tr.kz), as<T>(tr.t));
}

// The time-segmented NUFFT of the trajectory (L segments, min-max) whose Toeplitz normal
// ToeplitzNormal(grid, k, W, segmented) builds.
template <typename T>
forge::TimeSegmentation<T, forge::Gnufft<T>> segmented_nufft(const Grid& g, const Trajectory& tr, const arma::vec& fm,
                                                             uword L) {
    const forge::Trajectory<T> k = trajectory_of<T>(tr);
    return forge::TimeSegmentation<T, forge::Gnufft<T>>(forge::Gnufft<T>(forge::ImageGrid(g.Nx, g.Ny, g.Nz), k),
                                                        as<T>(fm), k.t, L, forge::TSInterp::MinMax);
}

// N x applied on the GPU, back on the host in double (GPU tests).
inline arma::cx_vec on_device(const forge::LinearOperator<float>& N, const arma::cx_vec& x) {
    forgeCol<forgeComplex<float>> d(arma::conv_to<arma::cx_fvec>::from(x));
    d.put_on_gpu();
    forgeCol<forgeComplex<float>> r = N.forward(d);
    REQUIRE(r.on_gpu());
    r.get_from_gpu();
    return arma::conv_to<arma::cx_vec>::from(r.to_arma());
}

// The exact G^H W G of the trajectory in float64 (Gdft<double>).
struct ExactNormal {
    forge::Gdft<double> G;
    arma::vec W;
    ExactNormal(const Grid& g, const Trajectory& tr, const arma::vec& fm)
        : G(tr.kx.n_elem, g.n2(), tr.kx, tr.ky, tr.kz, g.axis(0), g.axis(1), g.axis(2), fm, tr.t), W(tr.W) {}
    arma::cx_vec operator()(const arma::cx_vec& x) const { return G / arma::cx_vec((G * x) % W); }
};

// sqrt(sum ||N x_i - ref x_i||^2 / sum ||ref x_i||^2) over random images.
template <typename T>
double normal_error(const forge::ToeplitzNormal<T>& N, const ExactNormal& ref, int probes = 3) {
    double e = 0, r = 0;
    for (int i = 0; i < probes; ++i) {
        const arma::cx_vec x = complex_normal<double>(N.n2());
        const arma::cx_vec rx = ref(x);
        const arma::cx_vec nx =
            arma::conv_to<arma::cx_vec>::from(N * arma::conv_to<arma::Col<std::complex<T>>>::from(x));
        e += std::pow(arma::norm(nx - rx), 2);
        r += std::pow(arma::norm(rx), 2);
    }
    return std::sqrt(e / r);
}

// Samples on integer coordinates k = m - N/2 (m = 0..N-1) along 'axis', the other coordinates random: a stack of
// spirals or stars along z, EPI-like lines along x or y.
inline Trajectory cartesian_along(const Grid& g, int axis, uword n1, double readout) {
    Trajectory tr = random_trajectory(g, n1, readout);
    const uword N[3] = {g.Nx, g.Ny, g.Nz};
    arma::vec& k = axis == 0 ? tr.kx : axis == 1 ? tr.ky : tr.kz;
    const arma::vec u = uniform<double>(n1, 0, double(N[axis]));
    for (uword j = 0; j < n1; ++j) k[j] = std::min(std::floor(u[j]), double(N[axis] - 1)) - double(N[axis] / 2);
    return tr;
}

// A stack along 'axis': the same n0 random in-plane samples (one readout of 'readout' seconds) in every plane of
// integer coordinate along the axis, as a stack of spirals or stars acquires them.
inline Trajectory shared_stack(const Grid& g, int axis, uword n0, double readout) {
    const uword N[3] = {g.Nx, g.Ny, g.Nz};
    const Trajectory plane = random_trajectory(g, n0, readout);
    const uword planes = N[axis];
    Trajectory tr;
    tr.kx.set_size(n0 * planes);
    tr.ky.set_size(n0 * planes);
    tr.kz.set_size(n0 * planes);
    tr.t.set_size(n0 * planes);
    tr.W.set_size(n0 * planes);
    for (uword p = 0; p < planes; ++p)
        for (uword j = 0; j < n0; ++j) {
            const uword q = p * n0 + j;
            tr.kx[q] = plane.kx[j], tr.ky[q] = plane.ky[j], tr.kz[q] = plane.kz[j], tr.t[q] = plane.t[j];
            tr.W[q] = plane.W[j];
            arma::vec& k = axis == 0 ? tr.kx : axis == 1 ? tr.ky : tr.kz;
            k[q] = double(p) - double(N[axis] / 2);
        }
    return tr;
}

// The time-segmented normal G^H W G, G = sum_m diag(a_m) F diag(b_m), by the float64 DFT F (field-free Gdft<double>),
// with the factors a_m, b_m = exp(-i FM tau_m) that ToeplitzNormal<T> takes (TimeSegmentationCore<T>'s for the same
// inputs; L = 0: one segment, a = b = 1). The Toeplitz operator equals it up to rounding: its only approximation, the
// segmentation, is the same (float kernels also drop the pair data's directions below 1e-5 of the largest).
struct SegmentedNormal {
    forge::Gdft<double> F;
    arma::cx_mat a, b;  // n1 x S, n2 x S
    arma::vec W;
    template <typename T>
    SegmentedNormal(const Grid& g, const Trajectory& tr, const arma::vec& fm, uword L, T)
        : F(tr.kx.n_elem, g.n2(), tr.kx, tr.ky, tr.kz, g.axis(0), g.axis(1), g.axis(2), arma::zeros(g.n2()),
            arma::zeros(tr.kx.n_elem)),
          W(tr.W) {
        if (L == 0) {
            a = arma::ones<arma::cx_mat>(tr.kx.n_elem, 1);
            b = arma::ones<arma::cx_mat>(g.n2(), 1);
            return;
        }
        const arma::Col<T> fmT = as<T>(fm);
        const forge::TSFactors f =
            forge::TimeSegmentationCore<T>::segment_factors(fmT, as<T>(tr.t), L, forge::TSInterp::MinMax);
        a = f.a;
        b.set_size(g.n2(), L + 1);
        for (uword l = 0; l <= L; ++l)
            for (uword k = 0; k < g.n2(); ++k) b(k, l) = std::polar(1.0, -double(fmT[k]) * f.tau(l));
    }
    // N x for the nv images in x (n2 x nv), one batch of nv S through F and F^H.
    arma::cx_mat operator()(const arma::cx_mat& x) const {
        using FC = forgeCol<forgeComplex<double>>;
        const uword S = a.n_cols, nv = x.n_cols, n1 = a.n_rows, n2 = b.n_rows;
        arma::cx_mat bx(n2, S * nv), ar(n1, S * nv), y(n2, nv);
        for (uword v = 0; v < nv; ++v) bx.cols(v * S, v * S + S - 1) = b.each_col() % x.col(v);
        const arma::cx_mat Fb(F.forward(FC(arma::cx_vec(arma::vectorise(bx))), S * nv).to_arma().memptr(), n1, S * nv);
        for (uword v = 0; v < nv; ++v) {
            const arma::cx_vec r = arma::sum(a % Fb.cols(v * S, v * S + S - 1), 1) % W;  // W G x
            ar.cols(v * S, v * S + S - 1) = arma::conj(a).eval().each_col() % r;
        }
        const arma::cx_mat Fr(F.adjoint(FC(arma::cx_vec(arma::vectorise(ar))), S * nv).to_arma().memptr(), n2, S * nv);
        for (uword v = 0; v < nv; ++v) y.col(v) = arma::sum(arma::conj(b) % Fr.cols(v * S, v * S + S - 1), 1);
        return y;
    }
};

// The largest relative error, over nv random vectors applied in one batch, of N against the reference.
template <typename T>
double batch_error(const forge::ToeplitzNormal<T>& N, const SegmentedNormal& ref, uword nv) {
    const arma::cx_vec x = complex_normal<double>(N.n2() * nv);
    const forgeCol<forgeComplex<T>> y =
        N.forward(forgeCol<forgeComplex<T>>(arma::conv_to<arma::Col<std::complex<T>>>::from(x)), nv);
    const arma::cx_vec yd = arma::conv_to<arma::cx_vec>::from(y.to_arma());
    const arma::cx_mat r = ref(arma::reshape(x, N.n2(), nv));
    double worst = 0;
    for (uword v = 0; v < nv; ++v)
        worst = std::max(worst, rel_error(arma::cx_vec(yd(arma::span(v * N.n2(), (v + 1) * N.n2() - 1))),
                                          arma::cx_vec(r.col(v))));
    return worst;
}

// The operator's columns at the grid's first and last pixel: the kernel q(r - r0) at every offset of either sign.
template <typename T>
arma::cx_vec kernel_columns(const forge::ToeplitzNormal<T>& N) {
    const uword n2 = N.n2();
    arma::Col<std::complex<T>> e0(n2, arma::fill::zeros), e1(n2, arma::fill::zeros);
    e0[0] = 1;
    e1[n2 - 1] = 1;
    return arma::join_cols(arma::conv_to<arma::cx_vec>::from(arma::Col<std::complex<T>>(N * e0)),
                           arma::conv_to<arma::cx_vec>::from(arma::Col<std::complex<T>>(N * e1)));
}

}  // namespace toeplitz_test
