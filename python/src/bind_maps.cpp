// forge._native: map estimation and coil preprocessing (float32 host arrays): coil maps, field maps, noise
// covariance and whitening, coil compression.
#include <array>
#include <cstdint>
#include <vector>

#include <nanobind/stl/vector.h>

#include "forge/Recon/CoilMaps.h"
#include "forge/Recon/CoilPreprocessing.h"
#include "forge/Recon/FieldMapEstimation.h"
#include "forge/Recon/FieldMapExtension.h"
#include "forge/Recon/ReconProblem.h"

#include "bindings.h"

namespace forge_python {
using namespace nb::literals;

namespace {

using CF = std::complex<float>;
using CHostF = nb::ndarray<const CF, nb::c_contig, nb::device::cpu>;
using RHostF = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using CHostD = nb::ndarray<const std::complex<double>, nb::c_contig, nb::device::cpu>;
template <typename T>
using HostOut = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

// A C-ordered (rows, cols) array as an arma matrix of the same orientation (a transposed copy).
template <typename T, typename A>
arma::Mat<T> c_order_matrix(const A& a, const char* where, const char* arg) {
    if (a.ndim() != 2) {
        std::ostringstream m;
        m << where << ": " << arg << " must be a 2-D array, got " << a.ndim() << " dimensions";
        throw forge::invalid_argument(m.str());
    }
    return arma::Mat<T>(const_cast<T*>(a.data()), a.shape(1), a.shape(0), false, true).st();
}
// An arma matrix into a C-ordered (rows, cols) output array.
template <typename T, typename A>
void write_c_order(const arma::Mat<T>& M, A& out, const char* where) {
    if (out.ndim() != 2 || out.shape(0) != M.n_rows || out.shape(1) != M.n_cols) {
        std::ostringstream m;
        m << where << ": out must have shape (" << M.n_rows << ", " << M.n_cols << ")";
        throw forge::invalid_argument(m.str());
    }
    const arma::Mat<T> Mt = M.st();
    std::memcpy(out.data(), Mt.memptr(), Mt.n_elem * sizeof(T));
}
// (n_echoes, n2) echo images as the library's list of vectors.
std::vector<arma::cx_fvec> echo_list(const CHostF& echoes, const char* where) {
    if (echoes.ndim() != 2) {
        std::ostringstream m;
        m << where << ": echoes must be a 2-D array (n_echoes, n_pixels), got " << echoes.ndim() << " dimensions";
        throw forge::invalid_argument(m.str());
    }
    std::vector<arma::cx_fvec> v;
    for (std::size_t e = 0; e < echoes.shape(0); ++e)
        v.emplace_back(const_cast<CF*>(echoes.data()) + e * echoes.shape(1), echoes.shape(1), true, false);
    return v;
}

}  // namespace

void bind_maps(nb::module_& m) {
    namespace fr = forge::recon;
    m.def(
        "coil_maps_from_images",
        [](CHostF images, uword nx, uword ny, uword nz, int kernel, double threshold, HostOut<CF> maps,
           HostOut<std::uint8_t> mask) {
            const char* w = "coil_maps_from_images";
            // (n_coils, n2) C order is n2 x n_coils column-major: the coil images as the library takes them.
            if (images.ndim() != 2)
                throw forge::invalid_argument(std::string(w) + ": images must be 2-D (n_coils, n_pixels)");
            const arma::cx_fmat imgs(const_cast<CF*>(images.data()), images.shape(1), images.shape(0), false, true);
            require_size(maps, images.size(), w, "maps", "n_coils * n_pixels");
            require_size(mask, images.shape(1), w, "mask", "n_pixels");
            fr::CoilMapOptions o;
            o.kernel = kernel;
            o.threshold = threshold;
            arma::uvec msk;
            arma::cx_fvec s;
            {
                nb::gil_scoped_release release;
                s = fr::coil_maps_from_images(imgs, nx, ny, nz, o, &msk);
            }
            std::memcpy(maps.data(), s.memptr(), s.n_elem * sizeof(CF));
            for (uword i = 0; i < msk.n_elem; ++i) mask.data()[i] = std::uint8_t(msk[i] != 0);
        },
        "images"_a, "nx"_a, "ny"_a, "nz"_a, "kernel"_a, "threshold"_a, "maps"_a.noconvert(), "mask"_a.noconvert());

    m.def(
        "coil_maps",
        [](CHostF data, RHostF kx, RHostF ky, RHostF kz, uword nx, uword ny, uword nz, uword nc, double calibration,
           int kernel, double threshold, double maxDroppedEnergy, HostOut<CF> maps, HostOut<std::uint8_t> mask) {
            const char* w = "coil_maps";
            const uword n1 = kx.size();
            require_size(ky, n1, w, "ky", "the length of kx");
            require_size(kz, n1, w, "kz", "the length of kx");
            require_size(data, forge::checked_product(w, {{"n_coils", nc}, {"samples", n1}}), w, "data",
                         "n_coils * samples");
            fr::ReconProblem P;
            P.Nx = nx;
            P.Ny = ny;
            P.Nz = nz;
            P.nc = nc;
            P.source = "forge.coil_maps";
            fr::set_pixel_grid(P);
            fr::ReconFrame f;
            f.kx = arma::fvec(const_cast<float*>(kx.data()), n1);
            f.ky = arma::fvec(const_cast<float*>(ky.data()), n1);
            f.kz = arma::fvec(const_cast<float*>(kz.data()), n1);
            f.t = arma::fvec(n1, arma::fill::zeros);
            f.y = arma::cx_fvec(const_cast<CF*>(data.data()), data.size());
            P.frames.push_back(std::move(f));
            P.n1total = P.n1max = n1;
            require_size(maps, forge::checked_product(w, {{"n_coils", nc}, {"pixels", P.n2()}}), w, "maps",
                         "n_coils * nx * ny * nz");
            require_size(mask, P.n2(), w, "mask", "nx * ny * nz");
            fr::CoilMapOptions o;
            o.calibration = calibration;
            o.kernel = kernel;
            o.threshold = threshold;
            o.max_dropped_energy = maxDroppedEnergy;
            std::vector<arma::uvec> masks;
            std::array<double, 3> used{{0, 0, 0}};
            std::vector<fr::CoilMapStats> stats;
            std::vector<arma::cx_fvec> s;
            {
                nb::gil_scoped_release release;
                s = fr::estimate_coil_maps(P, o, &masks, &used, &stats);
            }
            std::memcpy(maps.data(), s[0].memptr(), s[0].n_elem * sizeof(CF));
            for (uword i = 0; i < masks[0].n_elem; ++i) mask.data()[i] = std::uint8_t(masks[0][i] != 0);
            const fr::CoilMapStats& st = stats[0];
            nb::dict d;
            d["calibration_width"] = nb::make_tuple(used[0], used[1], used[2]);
            d["dropped_energy"] = st.dropped_energy;
            d["mask_dropped"] = st.mask_dropped;
            d["outliers"] = st.outliers;
            d["level"] = st.level;
            d["map_grid"] = nb::make_tuple(st.grid[0], st.grid[1], st.grid[2]);
            return d;
        },
        "data"_a, "kx"_a, "ky"_a, "kz"_a, "nx"_a, "ny"_a, "nz"_a, "n_coils"_a, "calibration"_a, "kernel"_a,
        "threshold"_a, "max_dropped_energy"_a, "maps"_a.noconvert(), "mask"_a.noconvert());

    m.def(
        "estimate_field_map",
        [](CHostF echoes, std::vector<double> times, uword nx, uword ny, uword nz, double beta, int iterations,
           int init_kernel, HostOut<float> out) {
            const char* w = "estimate_field_map";
            const auto e = echo_list(echoes, w);
            require_size(out, echoes.ndim() == 2 ? echoes.shape(1) : 0, w, "out", "n_pixels");
            fr::FieldMapOptions o;
            o.beta = beta;
            o.iterations = iterations;
            o.init_kernel = init_kernel;
            std::vector<double> cost;
            arma::fvec fm;
            {
                nb::gil_scoped_release release;
                fm = fr::estimate_field_map(e, times, nx, ny, nz, o, &cost);
            }
            std::memcpy(out.data(), fm.memptr(), fm.n_elem * sizeof(float));
            return cost;
        },
        "echoes"_a, "times"_a, "nx"_a, "ny"_a, "nz"_a, "beta"_a, "iterations"_a, "init_kernel"_a, "out"_a.noconvert());

    m.def(
        "phase_difference_field_map",
        [](CHostF echoes, std::vector<double> times, HostOut<float> out) {
            const char* w = "phase_difference_field_map";
            const auto e = echo_list(echoes, w);
            require_size(out, echoes.ndim() == 2 ? echoes.shape(1) : 0, w, "out", "n_pixels");
            const arma::fvec fm = fr::phase_difference_field_map(e, times);
            std::memcpy(out.data(), fm.memptr(), fm.n_elem * sizeof(float));
        },
        "echoes"_a, "times"_a, "out"_a.noconvert());

    m.def(
        "extend_field_map",
        [](RHostF fieldmap, nb::ndarray<const std::uint8_t, nb::c_contig, nb::device::cpu> support, bool useSupport,
           uword nx, uword ny, uword nz, int iterations, HostOut<float> out) {
            const char* w = "extend_field_map";
            const uword n2 = fieldmap.size();
            require_size(out, n2, w, "out", "field_map.size");
            const arma::fvec fm(const_cast<float*>(fieldmap.data()), n2, false, true);
            fr::FieldMapExtensionOptions o;
            o.iterations = iterations;
            arma::fvec e;
            if (useSupport) {
                if (support.size() != n2)
                    throw forge::invalid_argument("extend_field_map: support has " + std::to_string(support.size()) +
                                                  " entries, expected field_map.size = " + std::to_string(n2));
                const std::vector<unsigned char> s(support.data(), support.data() + n2);
                nb::gil_scoped_release release;
                e = fr::extend_field_map(fm, s, nx, ny, nz, o);
            } else {
                nb::gil_scoped_release release;
                e = fr::extend_field_map(fm, nx, ny, nz, o);
            }
            std::memcpy(out.data(), e.memptr(), e.n_elem * sizeof(float));
        },
        "fieldmap"_a, "support"_a, "use_support"_a, "nx"_a, "ny"_a, "nz"_a, "iterations"_a, "out"_a.noconvert());

    // Coil matrices in the orientation of the math (y' = A y for a coil vector y), as C-ordered arrays.
    m.def(
        "noise_covariance",
        [](CHostF noise, HostOut<std::complex<double>> out) {
            // (n_coils, n_samples) C order is samples x coils column-major: the library's layout.
            if (noise.ndim() != 2)
                throw forge::invalid_argument("noise_covariance: noise must be 2-D (n_coils, n_samples)");
            const arma::cx_fmat N(const_cast<CF*>(noise.data()), noise.shape(1), noise.shape(0), false, true);
            write_c_order(fr::noise_covariance(N), out, "noise_covariance");
        },
        "noise"_a, "out"_a.noconvert());
    m.def(
        "whitening_matrix",
        [](CHostD covariance, HostOut<std::complex<double>> out) {
            const arma::cx_mat C = c_order_matrix<std::complex<double>>(covariance, "whitening_matrix", "covariance");
            write_c_order(fr::whitening_matrix(C), out, "whitening_matrix");
        },
        "covariance"_a, "out"_a.noconvert());
    m.def(
        "coil_compression_matrix",
        [](CHostF data, uword nv, HostOut<std::complex<double>> out) {
            if (data.ndim() != 2)
                throw forge::invalid_argument("coil_compression_matrix: data must be 2-D (n_coils, n_samples)");
            const arma::cx_fmat Y(const_cast<CF*>(data.data()), data.shape(1), data.shape(0), false, true);
            double energy = 0;
            arma::cx_mat A;
            {
                nb::gil_scoped_release release;
                A = fr::coil_compression_matrix(Y, nv, &energy);
            }
            write_c_order(A, out, "coil_compression_matrix");
            return energy;
        },
        "data"_a, "n_virtual"_a, "out"_a.noconvert());
}

}  // namespace forge_python
