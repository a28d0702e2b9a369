// ToeplitzNormal: the normal operator G^H W G by FFTs on a 2x grid, against the exact Gdft (float64 reference
// sums), and solve_pwls_pcg_normal against solve_pwls_pcg.
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "TestHelpers.h"
#include "apps/forge-recon/Progress.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/pcSENSE.h"
#include "forge/Penalties/QuadPenalty.h"
#include "forge/Solvers/solve_pwls_pcg.h"

using namespace forge_test;
using arma::uword;

namespace {
constexpr double kPi = 3.14159265358979323846;

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
Trajectory random_trajectory(const Grid& g, uword n1, double readout) {
    Trajectory tr;
    tr.kx = uniform<double>(n1, -double(g.Nx) / 2, double(g.Nx) / 2);
    tr.ky = g.Ny > 1 ? uniform<double>(n1, -double(g.Ny) / 2, double(g.Ny) / 2) : arma::vec(n1, arma::fill::zeros);
    tr.kz = g.Nz > 1 ? uniform<double>(n1, -double(g.Nz) / 2, double(g.Nz) / 2) : arma::vec(n1, arma::fill::zeros);
    tr.t = arma::linspace<arma::vec>(0, readout, n1);
    tr.W = uniform<double>(n1, 0.2, 1.5);
    return tr;
}

// A smooth field map (rad/s) with max |FM| = peak.
arma::vec smooth_field_map(const Grid& g, double peak) {
    const arma::vec x = g.axis(0), y = g.axis(1), c = uniform<double>(4, -1, 1);
    arma::vec fm = c(0) + c(1) * x + c(2) * y + c(3) * arma::exp(-(arma::square(x - 0.1) + arma::square(y)) * 8);
    return fm * (peak / arma::abs(fm).max());
}

template <typename T>
arma::Col<T> as(const arma::vec& v) {
    return arma::conv_to<arma::Col<T>>::from(v);
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
}  // namespace

TEST_CASE("ToeplitzNormal without a field map equals Gdft^H W Gdft", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid grids[] = {{16, 16, 1}, {15, 13, 1}, {8, 6, 4}, {7, 5, 3}};
    for (const Grid& g : grids) {
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz);
        const Trajectory tr = random_trajectory(g, 3 * g.n2(), 0);
        const ExactNormal ref(g, tr, arma::zeros(g.n2()));
        const forge::ToeplitzNormal<float> Nf(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                              as<float>(tr.W));
        const forge::ToeplitzNormal<double> Nd(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
        CHECK(Nf.kernel_count() == 1);
        CHECK(Nf.grouped_axis() == 3);  // random k: no Cartesian axis
        CHECK(Nf.padded_size(0) == 2 * g.Nx);
        CHECK(Nf.padded_size(2) == (g.Nz > 1 ? 2 * g.Nz : 1));
        CHECK(normal_error(Nf, ref) <= 1e-5);
        CHECK(normal_error(Nd, ref) <= 1e-11);
        // The operator's own normal() is N N.
        const arma::cx_vec x = complex_normal<double>(g.n2());
        CHECK(rel_error(Nd.normal(x), arma::cx_vec(Nd * arma::cx_vec(Nd * x))) <= 1e-12);
    }
}

// Samples on integer coordinates k = m - N/2 (m = 0..N-1) along 'axis', the other coordinates random: a stack of
// spirals or stars along z, EPI-like lines along x or y.
Trajectory cartesian_along(const Grid& g, int axis, uword n1, double readout) {
    Trajectory tr = random_trajectory(g, n1, readout);
    const uword N[3] = {g.Nx, g.Ny, g.Nz};
    arma::vec& k = axis == 0 ? tr.kx : axis == 1 ? tr.ky : tr.kz;
    const arma::vec u = uniform<double>(n1, 0, double(N[axis]));
    for (uword j = 0; j < n1; ++j) k[j] = std::min(std::floor(u[j]), double(N[axis] - 1)) - double(N[axis] / 2);
    return tr;
}

TEST_CASE("ToeplitzNormal groups a Cartesian axis: equal to Gdft^H W Gdft and to the full build", "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        int axis;
    };
    // z: stacks (even and odd Nz); y: EPI in 2D and a 3D case with slabs on both sides; x: lines along x.
    const Case cases[] = {{{10, 8, 6}, 2}, {{9, 7, 5}, 2},  {{16, 12, 1}, 1}, {{15, 11, 1}, 1},
                          {{6, 8, 5}, 1},  {{12, 9, 1}, 0}, {{7, 6, 4}, 0}};
    for (const Case& c : cases) {
        const Grid& g = c.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", Cartesian along axis " << c.axis);
        const Trajectory tr = cartesian_along(g, c.axis, 3 * g.n2(), 8e-3);
        const ExactNormal ref(g, tr, arma::zeros(g.n2()));
        const forge::ToeplitzNormal<float> Nf(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                              as<float>(tr.W), forge::KernelBuild::Host);
        const forge::ToeplitzNormal<double> Nd(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
        CHECK(Nf.grouped_axis() == uword(c.axis));
        CHECK(Nd.grouped_axis() == uword(c.axis));
        CHECK(normal_error(Nf, ref) <= 1e-5);
        CHECK(normal_error(Nd, ref) <= 1e-11);

        // With a field map: the grouped build equals the full DFT's (same segmentation, so only rounding differs).
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), 1e-3);
        const forge::ToeplitzNormal<float> grouped(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky),
                                                   as<float>(tr.kz), as<float>(tr.W), as<float>(fm), as<float>(tr.t), L,
                                                   forge::TSInterp::MinMax, forge::KernelBuild::Host);
        const forge::ToeplitzNormal<float> full(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                as<float>(tr.W), as<float>(fm), as<float>(tr.t), L,
                                                forge::TSInterp::MinMax, forge::KernelBuild::Host,
                                                forge::AxisGrouping::Off);
        CHECK(grouped.grouped_axis() == uword(c.axis));
        CHECK(full.grouped_axis() == 3);
        CHECK(grouped.dft_count() == full.dft_count());
        const arma::cx_fvec x = complex_normal<float>(g.n2());
        const double e = rel_error(arma::cx_fvec(grouped * x), arma::cx_fvec(full * x));
        INFO("L = " << L << ": grouped vs full " << e);
        CHECK(e <= 1e-5);
        const forge::ToeplitzNormal<double> groupedD(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L);
        const forge::ToeplitzNormal<double> fullD(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L,
                                                  forge::TSInterp::MinMax, forge::KernelBuild::Host,
                                                  forge::AxisGrouping::Off);
        const arma::cx_vec xd = arma::conv_to<arma::cx_vec>::from(x);
        CHECK(rel_error(arma::cx_vec(groupedD * xd), arma::cx_vec(fullD * xd)) <= 1e-12);
    }

    // Too many distinct values (more than half the padded axis) or a single-cell axis: the full DFT.
    const Grid g{8, 6, 1};
    Trajectory tr = cartesian_along(g, 1, 300, 0);
    tr.ky = arma::regspace<arma::vec>(0, 299) / 300.0 * 6 - 3;  // 300 distinct values on 12 cells
    tr.kz.fill(2);                                              // z has a single cell whatever k says
    const forge::ToeplitzNormal<double> N(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W);
    CHECK(N.grouped_axis() == 3);
    tr = cartesian_along(g, 1, 300, 0);
    tr.ky(arma::span(0, 6)) += 0.5;  // a seventh value or more on 12 cells
    CHECK(forge::ToeplitzNormal<double>(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W).grouped_axis() == 3);
}

TEST_CASE("ToeplitzNormal with a field map: error falls with L and meets the requested bound", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{24, 20, 1};
    const Trajectory tr = random_trajectory(g, 1500, 10e-3);  // 10 ms readout
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 100);  // +-100 Hz
    const ExactNormal ref(g, tr, fm);
    for (forge::TSInterp type : {forge::TSInterp::MinMax, forge::TSInterp::Hanning}) {
        INFO((type == forge::TSInterp::MinMax ? "min-max" : "Hanning"));
        double previous = 1e300;
        for (uword L : {2, 4, 8}) {
            const forge::ToeplitzNormal<double> N(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, L, type);
            const double e = normal_error(N, ref, 2);
            INFO("L = " << L << ": error " << e);
            // Until the interpolators' own floor (their field binning, a few 1e-6) is reached.
            CHECK((e < previous || e < 1e-5));
            previous = e;
        }
        if (type == forge::TSInterp::Hanning) {
            // Hanning segments overlap only with their neighbours: 2L + 1 kernels. Their error falls slowly
            // with L (no L <= 64 reaches 1e-2 for some of these maps), so the bounds below are min-max's.
            const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                 as<float>(tr.W), as<float>(fm), as<float>(tr.t), 8, type);
            CHECK(N.kernel_count() == 17);
            continue;
        }
        for (double target : {1e-2, 1e-3}) {
            const uword L = forge::ToeplitzNormal<float>::choose_segments(as<float>(fm), as<float>(tr.t), target, type);
            const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                                 as<float>(tr.W), as<float>(fm), as<float>(tr.t), L, type);
            const double e = normal_error(N, ref, 2);
            INFO("target " << target << ": L = " << L << ", " << N.kernel_count() << " kernels from " << N.dft_count()
                           << " DFTs, error " << e);
            CHECK(e <= target);
            CHECK(N.segments() == L);
            CHECK(N.dft_count() <= N.kernel_count());
            CHECK(N.kernel_bytes() <= forge::ToeplitzNormal<float>::kernel_bytes(g.Nx, g.Ny, g.Nz, L));
        }
    }
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
        const forge::TSFactors f = forge::TimeSegmentationCore<T>::segment_factors(fmT, as<T>(tr.t), L,
                                                                                   forge::TSInterp::MinMax);
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

TEST_CASE("ToeplitzNormal's host apply (pruned FFTs, threaded, batched) equals the segmented normal in float64",
          "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Case {
        Grid g;
        uword L, nv;
    };
    // 2D and 3D, even and odd sizes, field-free (L = 0) and segmented, several vectors (the first three take the
    // threaded path: at least 2^17 padded cells times segments and vectors); a 1D grid and one with a single column.
    const Case cases[] = {{{48, 40, 1}, 4, 4}, {{12, 10, 8}, 2, 6}, {{15, 11, 7}, 0, 15}, {{25, 19, 1}, 3, 5},
                          {{10, 9, 5}, 3, 1},  {{64, 1, 1}, 2, 3},  {{1, 20, 6}, 2, 2}};
    for (const Case& c : cases) {
        const Grid& g = c.g;
        INFO("grid " << g.Nx << " x " << g.Ny << " x " << g.Nz << ", L = " << c.L << ", " << c.nv << " vectors");
        const Trajectory tr = random_trajectory(g, g.n2() + 200, 8e-3);
        const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
        const SegmentedNormal refF(g, tr, fm, c.L, float()), refD(g, tr, fm, c.L, double());
        auto make = [&](auto T) {
            using TN = forge::ToeplitzNormal<decltype(T)>;
            using Col = arma::Col<decltype(T)>;
            if (c.L == 0) return TN(g.Nx, g.Ny, g.Nz, as<decltype(T)>(tr.kx), as<decltype(T)>(tr.ky),
                                    as<decltype(T)>(tr.kz), as<decltype(T)>(tr.W), forge::KernelBuild::Host);
            return TN(g.Nx, g.Ny, g.Nz, as<decltype(T)>(tr.kx), as<decltype(T)>(tr.ky), as<decltype(T)>(tr.kz),
                      as<decltype(T)>(tr.W), Col(as<decltype(T)>(fm)), as<decltype(T)>(tr.t), c.L,
                      forge::TSInterp::MinMax, forge::KernelBuild::Host);
        };
        const forge::ToeplitzNormal<float> Nf = make(float());
        const forge::ToeplitzNormal<double> Nd = make(double());
        const double ef = batch_error(Nf, refF, c.nv), ed = batch_error(Nd, refD, c.nv);
        INFO("float " << ef << ", double " << ed);
        CHECK(ef <= 1e-5);
        CHECK(ed <= 1e-12);
    }
}

TEST_CASE("ToeplitzNormal: concurrent host applies on one operator give each its own result", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{48, 40, 1};
    const Trajectory tr = random_trajectory(g, 3000, 8e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 80));
    const forge::ToeplitzNormal<float> N(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                         as<float>(tr.W), fm, as<float>(tr.t), 4, forge::TSInterp::MinMax,
                                         forge::KernelBuild::Host);
    using FC = forgeCol<forgeComplex<float>>;
    const uword nv[2] = {4, 5};  // both on the threads (2^17 padded cells times segments and vectors, and more)
    const FC x[2] = {FC(complex_normal<float>(g.n2() * nv[0])), FC(complex_normal<float>(g.n2() * nv[1]))};
    const arma::cx_fvec expected[2] = {N.forward(x[0], nv[0]).to_arma(), N.forward(x[1], nv[1]).to_arma()};
    std::atomic<int> wrong{0}, runs{0};
    auto worker = [&](int i) {
        for (int r = 0; r < 12; ++r) {
            const arma::cx_fvec y = N.forward(x[i], nv[i]).to_arma();
            if (arma::any(y != expected[i])) ++wrong;
            ++runs;
        }
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join();
    b.join();
    CHECK(runs == 24);
    CHECK(wrong == 0);  // bit for bit: each apply's items are computed the same way whatever thread takes them
}

TEST_CASE("ToeplitzNormal reports its kernel build's progress: steps 0 .. total, in order", "[Toeplitz]") {
    FORGE_INFO_SEED();
    struct Call {
        uword done, total;
        double seconds;
    };
    // Checks the calls of one build: done = 0 first, then one call per step up to total.
    auto check_calls = [](const std::vector<Call>& calls) {
        REQUIRE(calls.size() >= 3);
        const uword total = calls.front().total;
        CHECK(calls.front().done == 0);
        CHECK(calls.back().done == total);
        CHECK(calls.size() == total + 1);
        for (std::size_t i = 1; i < calls.size(); ++i) {
            CHECK(calls[i].total == total);
            CHECK(calls[i].done > calls[i - 1].done);
            CHECK(calls[i].seconds >= calls[i - 1].seconds);
        }
    };
    std::vector<Call> calls;
    const forge::ToeplitzBuildProgress record = [&](uword d, uword n, double s) { calls.push_back({d, n, s}); };

    // Full DFT in parts of the padded grid's cells (96 x 88 cells: two parts), field-free and with a field map; the
    // parts make the exact kernels.
    const Grid g{48, 44, 1};
    const Trajectory tr = random_trajectory(g, 2500, 8e-3);
    const forge::ToeplitzNormal<float> free(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                            as<float>(tr.W), forge::KernelBuild::Host, forge::AxisGrouping::Auto,
                                            record);
    check_calls(calls);
    CHECK(calls.size() == 5);  // start, pair data, two parts of the DFT, FFTs
    CHECK(normal_error(free, ExactNormal(g, tr, arma::zeros(g.n2()))) <= 1e-5);
    calls.clear();
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 80);
    const forge::ToeplitzNormal<double> field(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, tr.W, fm, tr.t, 3,
                                              forge::TSInterp::MinMax, forge::KernelBuild::Host,
                                              forge::AxisGrouping::Auto, record);
    check_calls(calls);
    CHECK(batch_error(field, SegmentedNormal(g, tr, fm, 3, double()), 1) <= 1e-11);

    // Grouped along a Cartesian z: one step per group.
    calls.clear();
    const Grid g3{10, 8, 6};
    const Trajectory stack = cartesian_along(g3, 2, 900, 0);
    const forge::ToeplitzNormal<float> grouped(g3.Nx, g3.Ny, g3.Nz, as<float>(stack.kx), as<float>(stack.ky),
                                               as<float>(stack.kz), as<float>(stack.W), forge::KernelBuild::Host,
                                               forge::AxisGrouping::Auto, record);
    CHECK(grouped.grouped_axis() == 2);
    check_calls(calls);
    CHECK(calls.size() == arma::uvec(arma::find_unique(stack.kz)).n_elem + 3);
}

TEST_CASE("forge-recon's progress: the ETA extrapolates the iterations, not the Toeplitz kernel build", "[Toeplitz]") {
    forge_recon::Progress p(10, true);  // quiet: counts without printing
    p.build("recon", 0, 4, 0.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    p.build("recon", 4, 4, 0.3);
    p.iteration("recon", 1, 10, 1.0, 1.0);  // an iteration that took no time
    INFO("ETA " << p.eta() << " s after a 0.3 s build and one instant iteration of 10");
    CHECK(p.eta() < 0.25);  // counting the build as the first iteration's time would give 9 x 0.3 s
    CHECK(p.eta() >= 0.0);
}

TEST_CASE("ToeplitzNormal is Hermitian and positive semidefinite", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 3};
    const Trajectory tr = random_trajectory(g, 900, 8e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 80));
    const forge::ToeplitzNormal<float> free(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                            as<float>(tr.W));
    const forge::ToeplitzNormal<float> field(g.Nx, g.Ny, g.Nz, as<float>(tr.kx), as<float>(tr.ky), as<float>(tr.kz),
                                             as<float>(tr.W), fm, as<float>(tr.t), 5);
    for (const auto* N : {&free, &field}) {
        INFO((N == &free ? "field-free" : "field map, L = 5"));
        for (int i = 0; i < 3; ++i) {
            const arma::cx_fvec x = complex_normal<float>(g.n2()), y = complex_normal<float>(g.n2());
            const arma::cx_fvec Nx = *N * x, Ny = *N * y;
            const std::complex<double> xNy =
                arma::cdot(arma::cx_vec(arma::conv_to<arma::cx_vec>::from(x)), arma::conv_to<arma::cx_vec>::from(Ny));
            const std::complex<double> yNx =
                arma::cdot(arma::conv_to<arma::cx_vec>::from(y), arma::conv_to<arma::cx_vec>::from(Nx));
            const double scale =
                arma::norm(arma::conv_to<arma::cx_vec>::from(x)) * arma::norm(arma::conv_to<arma::cx_vec>::from(Ny));
            CHECK(std::abs(xNy - std::conj(yNx)) <= 1e-6 * scale);
            const std::complex<double> xNx =
                arma::cdot(arma::conv_to<arma::cx_vec>::from(x), arma::conv_to<arma::cx_vec>::from(Nx));
            const double xscale =
                arma::norm(arma::conv_to<arma::cx_vec>::from(x)) * arma::norm(arma::conv_to<arma::cx_vec>::from(Nx));
            CHECK(std::abs(xNx.imag()) <= 1e-6 * xscale);
            CHECK(xNx.real() >= -1e-6 * xscale);
            // The adjoint is the forward.
            CHECK(arma::norm(arma::conv_to<arma::cx_vec>::from(arma::cx_fvec(*N / x) - Nx)) == 0.0);
        }
    }
}

TEST_CASE("ToeplitzNormal as the normal of SENSE: sum_c S_c^H N S_c with the coils batched", "[Toeplitz]") {
    FORGE_INFO_SEED();
    const Grid g{16, 12, 1};
    const uword nc = 4;
    const Trajectory tr = random_trajectory(g, 800, 6e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 60);
    auto G = std::make_shared<forge::Gdft<double>>(tr.kx.n_elem, g.n2(), tr.kx, tr.ky, tr.kz, g.axis(0), g.axis(1),
                                                   g.axis(2), fm, tr.t);
    const arma::cx_vec maps = complex_normal<double>(g.n2() * nc);
    // Unit weights: SENSE's exact normal is then G^H G per coil.
    auto T = std::make_shared<forge::ToeplitzNormal<double>>(g.Nx, g.Ny, g.Nz, tr.kx, tr.ky, tr.kz, arma::vec(), fm,
                                                             tr.t, 12);
    const forge::SENSE<double> exact(G, maps, nc);
    const forge::SENSE<double> fast(forge::with_normal<double>(G, T), maps, nc);
    const arma::cx_vec x = complex_normal<double>(g.n2());
    CHECK(rel_error(fast * x, exact * x) == 0.0);  // forward and adjoint stay exact
    const arma::cx_vec y = complex_normal<double>(exact.n_data());
    CHECK(rel_error(fast / y, exact / y) == 0.0);
    const double e = rel_error(fast.normal(x), exact.normal(x));
    INFO("SENSE normal error " << e);
    CHECK(e <= 1e-4);
    CHECK(e > 0);  // the Toeplitz path was taken
    // Batched normals: each vector as alone.
    const arma::cx_vec x2 = arma::join_cols(x, arma::cx_vec(complex_normal<double>(g.n2())));
    const forge::NormalOf<double> N(forge::share(fast));
    const forgeCol<forgeComplex<double>> both = N.forward(forgeCol<forgeComplex<double>>(x2), 2);
    CHECK(rel_error(both.to_arma().head(g.n2()), fast.normal(x)) <= 1e-14);

    CHECK_THROWS_WITH(forge::with_normal<double>(G, std::make_shared<forge::ToeplitzNormal<double>>(g.Nx + 1, g.Ny,
                                                                                                    g.Nz, tr.kx, tr.ky,
                                                                                                    tr.kz, tr.W)),
                      Catch::Contains("WithNormal: N (ToeplitzNormal) maps 204 to 204 entries"));
}

TEST_CASE("solve_pwls_pcg_normal: the exact normal reproduces solve_pwls_pcg; the Toeplitz normal its image",
          "[Toeplitz][solver]") {
    FORGE_INFO_SEED();
    const Grid g{20, 20, 1};
    const uword nc = 3;
    const Trajectory tr = random_trajectory(g, 1600, 10e-3);
    const arma::fvec fm = as<float>(smooth_field_map(g, 2 * kPi * 100));
    const arma::fvec kx = as<float>(tr.kx), ky = as<float>(tr.ky), kz = as<float>(tr.kz), t = as<float>(tr.t),
                     W = as<float>(tr.W);
    auto G = std::make_shared<forge::Gdft<float>>(kx.n_elem, g.n2(), kx, ky, kz, as<float>(g.axis(0)),
                                                  as<float>(g.axis(1)), as<float>(g.axis(2)), fm, t);
    // Smooth coil maps and a smooth object, data from the exact operator plus noise.
    arma::cx_fvec maps(g.n2() * nc);
    const arma::vec px = g.axis(0), py = g.axis(1);
    for (uword c = 0; c < nc; ++c)
        for (uword i = 0; i < g.n2(); ++i)
            maps[c * g.n2() + i] = std::polar(float(std::exp(-std::pow(px[i] - 0.4 * std::cos(2.1 * c), 2) -
                                                             std::pow(py[i] - 0.4 * std::sin(2.1 * c), 2))),
                                              float(c + px[i]));
    const forge::SENSE<float> S(G, maps, nc);
    arma::cx_fvec object(g.n2(), arma::fill::zeros);
    for (uword i = 0; i < g.n2(); ++i)
        if (px[i] * px[i] + py[i] * py[i] < 0.16) object[i] = std::complex<float>(1.0f + float(px[i]), 0.3f);
    arma::cx_fvec y = S * object;
    y += complex_normal<float>(y.n_elem) * float(0.01 * arma::norm(y) / std::sqrt(double(y.n_elem)));
    const arma::fvec Wc = arma::repmat(W, nc, 1);
    const forge::QuadPenalty<float> R(g.Nx, g.Ny, 1, 1.0f);
    const arma::cx_fvec x0(g.n2(), arma::fill::zeros);
    const uword niter = 10;
    const arma::cx_fvec exact = forge::solve_pwls_pcg<float>(x0, S, Wc, y, R, niter);
    const arma::cx_fvec b = S / arma::cx_fvec(y % arma::conv_to<arma::cx_fvec>::from(Wc));

    // The exact weighted normal S^H W S as an operator: the same iterates.
    auto weights = std::make_shared<forge::StackedDiagonal<float>>(arma::conv_to<arma::cx_fvec>::from(Wc), 1, "W");
    const auto Sp = forge::share(S);
    const forge::Chain<float> exactNormal(forge::chain<float>(Sp, weights),
                                          std::make_shared<forge::AdjointOf<float>>(Sp));
    const arma::cx_fvec viaNormal = forge::solve_pwls_pcg_normal<float>(x0, exactNormal, b, R, niter);
    CHECK(rel_error(viaNormal, exact) <= 1e-4);

    // Toeplitz for 1e-3, with SENSE's normal through with_normal.
    const uword L = forge::ToeplitzNormal<float>::choose_segments(fm, t, 1e-3);
    auto T = std::make_shared<forge::ToeplitzNormal<float>>(g.Nx, g.Ny, g.Nz, kx, ky, kz, W, fm, t, L);
    const forge::SENSE<float> St(forge::with_normal<float>(G, T), maps, nc);
    double lastCost = 1e300;
    bool monotone = true;
    forge::PcgOptions<float> opts;
    opts.callback = [&](const forge::PcgIterationInfo& info) {
        monotone = monotone && info.cost <= lastCost;
        lastCost = info.cost;
    };
    const arma::cx_fvec fast =
        forge::solve_pwls_pcg_normal<float>(x0, forge::NormalOf<float>(forge::share(St)), b, R, niter, opts);
    const double e = rel_error(fast, exact);
    INFO("L = " << L << ", NRMSE Toeplitz vs exact solution " << e);
    CHECK(e <= 1e-2);
    CHECK(monotone);

    CHECK_THROWS_WITH(forge::solve_pwls_pcg_normal<float>(x0, *T, arma::cx_fvec(g.n2() + 1), R, niter),
                      Catch::Contains("solve_pwls_pcg_normal: b has 401 entries"));
}

TEST_CASE("ToeplitzNormal refuses bad input with a clear message", "[Toeplitz]") {
    const arma::fvec k = uniform<float>(50, -4, 4), W(50, arma::fill::ones),
                     t = arma::linspace<arma::fvec>(0, 1e-3, 50);
    using N = forge::ToeplitzNormal<float>;
    CHECK_THROWS_WITH(N(8, 8, 1, k, k.head(49), k, W),
                      Catch::Contains("ky has 49 entries, expected the length of kx = 50"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W.head(3)), Catch::Contains("W has 3 entries"));
    arma::fvec bad = k;
    bad[7] = NAN;
    CHECK_THROWS_WITH(N(8, 8, 1, bad, k, k, W), Catch::Contains("kx"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, arma::fvec(-W)), Catch::Contains("W must be non-negative"));
    CHECK_THROWS_WITH(N(8, 0, 1, k, k, k, W), Catch::Contains("each of Nx, Ny, Nz must be at least 1"));
    CHECK_THROWS_WITH(N(8, 8, 1, arma::fvec(), arma::fvec(), arma::fvec(), arma::fvec()),
                      Catch::Contains("kx is empty"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W, arma::fvec(63, arma::fill::zeros), t, 2),
                      Catch::Contains("fieldMap has 63 entries, expected Nx * Ny * Nz = 64"));
    CHECK_THROWS_WITH(N(8, 8, 1, k, k, k, W, arma::fvec(64, arma::fill::zeros), t.head(10), 2),
                      Catch::Contains("timeVec has 10 entries"));
    // Kernels that cannot fit are refused before anything of their size is allocated: at 256^3 pixels and
    // L = 40 they would take 925 GB, more than half of any machine's memory this runs on (at 128^3, 115 GB,
    // fit in half of a 256 GiB machine).
    const double need = N::kernel_bytes(128, 128, 128, 40);
    CHECK(need == 861.0 * 256 * 256 * 256 * 8);
    CHECK(N::kernel_bytes(256, 256, 256, 40) == 861.0 * 512 * 512 * 512 * 8);
    CHECK_THROWS_WITH(N(256, 256, 256, k, k, k, W, arma::fvec(256 * 256 * 256, arma::fill::zeros), t, 40),
                      Catch::Contains("the kernels of L = 40 segments would take up to"));
    CHECK_THROWS_WITH(N::choose_segments(arma::fvec(64, arma::fill::zeros), t, 0), Catch::Contains("targetError"));
}

TEST_CASE("pcSENSE with per-shot Toeplitz normals: sum_c S_c^H sum_s D_s^H N_s D_s S_c", "[Toeplitz][pcSENSE]") {
    FORGE_INFO_SEED();
    const Grid g{12, 10, 1};
    const uword nc = 3, nshots = 3, per = 300;
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 50);
    arma::mat kx(per, nshots), ky(per, nshots), kz(per, nshots, arma::fill::zeros), t(per, nshots),
        phases(g.n2(), nshots);
    for (uword s = 0; s < nshots; ++s) {
        const Trajectory tr = random_trajectory(g, per, 5e-3);
        kx.col(s) = tr.kx;
        ky.col(s) = tr.ky;
        t.col(s) = tr.t + 1e-4 * double(s);
        phases.col(s) = uniform<double>(g.n2(), -kPi, kPi);
    }
    const arma::cx_vec maps = complex_normal<double>(g.n2() * nc);
    forge::pcSENSE<double> exact(kx, ky, kz, t, g.axis(0), g.axis(1), g.axis(2), fm, maps, phases, nc);
    forge::pcSENSE<double> fast(kx, ky, kz, t, g.axis(0), g.axis(1), g.axis(2), fm, maps, phases, nc);
    std::vector<forge::OperatorPtr<double>> normals;
    for (uword s = 0; s < nshots; ++s)
        normals.push_back(std::make_shared<forge::ToeplitzNormal<double>>(g.Nx, g.Ny, g.Nz, arma::vec(kx.col(s)),
                                                                          arma::vec(ky.col(s)), arma::vec(kz.col(s)),
                                                                          arma::vec(), fm, arma::vec(t.col(s)), 10));
    fast.set_shot_normals(normals);
    const arma::cx_vec x = complex_normal<double>(g.n2());
    CHECK(rel_error(fast * x, exact * x) == 0.0);
    const double e = rel_error(fast.normal(x), exact.normal(x));
    INFO("pcSENSE normal error " << e);
    CHECK(e <= 1e-5);
    CHECK(e > 0);
    fast.set_shot_normals({});
    CHECK(rel_error(fast.normal(x), exact.normal(x)) <= 1e-14);
    CHECK_THROWS_WITH(fast.set_shot_normals({normals[0]}),
                      Catch::Contains("pcSENSE::set_shot_normals: 1 normal operators, expected one per shot (3)"));
}
