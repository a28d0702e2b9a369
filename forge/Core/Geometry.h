#pragma once
// Geometry values the operators take, so that constructors read alike and no size repeats a vector's length:
//
//   ImageGrid          the Cartesian image: nx x ny x nz pixels, x fastest (an axis of length 1 is absent)
//   Trajectory<T1>     k-space samples: kx, ky, kz in cycles per FOV, and their readout times t in seconds
//                      (t may be empty where no field map is corrected)
//   PixelGeometry<T1>  pixel positions x, y, z in FOV units and the field map in rad/s at each pixel
//                      (field_map may be empty: no field)
//
//   ImageGrid grid{64, 64};
//   Trajectory<float> k{kx, ky, kz, t};
//   Gdft<float> G(k, PixelGeometry<float>::on_grid(grid, field_map));
//   Gnufft<float> N(grid, k);
//   QuadPenalty<float> R(G.domain_shape(), beta);
//
// Units and signs are those of docs/conventions.md: forward exp(-i (2 pi k.r + field_map t)).
#include <string>

#include <armadillo>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"

namespace forge {

struct ImageGrid {
    uword nx = 1;
    uword ny = 1;
    uword nz = 1;

    ImageGrid() = default;
    // One number is not silently a grid (QuadPenalty<float>(n, beta) does not compile): ImageGrid(n) says so.
    explicit ImageGrid(uword nx_) : nx(nx_) {}
    ImageGrid(uword nx_, uword ny_, uword nz_ = 1) : nx(nx_), ny(ny_), nz(nz_) {}

    uword n_pixels() const { return nx * ny * nz; }
    // Axes longer than 1 (a 64 x 64 x 1 grid has 2).
    int n_dims() const { return int(nx > 1) + int(ny > 1) + int(nz > 1); }
    bool operator==(const ImageGrid& o) const { return nx == o.nx && ny == o.ny && nz == o.nz; }
    bool operator!=(const ImageGrid& o) const { return !(*this == o); }

    // Throws invalid_argument naming 'where' unless every axis is at least 1 and the pixel count fits a uword.
    void check(const char* where) const {
        if (nx == 0 || ny == 0 || nz == 0)
            throw invalid_argument(std::string(where) + ": the image grid " + to_string() +
                                   " has an axis of length 0; every axis needs at least 1 pixel");
        checked_product(where, {{"nx", nx}, {"ny", ny}, {"nz", nz}});
    }
    std::string to_string() const {
        return std::to_string(nx) + " x " + std::to_string(ny) + " x " + std::to_string(nz);
    }
};

template <typename T1>
struct Trajectory {
    arma::Col<T1> kx, ky, kz;  // cycles per FOV
    arma::Col<T1> t;           // seconds after excitation; empty: no field map is corrected

    Trajectory() = default;
    Trajectory(arma::Col<T1> kx_, arma::Col<T1> ky_, arma::Col<T1> kz_, arma::Col<T1> t_ = {})
        : kx(std::move(kx_)), ky(std::move(ky_)), kz(std::move(kz_)), t(std::move(t_)) {}

    uword n_samples() const { return kx.n_elem; }
    bool has_times() const { return !t.is_empty(); }

    // Throws invalid_argument naming 'where' and the vector unless ky, kz (and t, when given or when
    // 'times_required') have n_samples() entries, there is at least one sample, and every value is finite.
    void check(const char* where, bool times_required = false) const {
        const std::string w(where);
        if (kx.is_empty()) throw invalid_argument(w + ": the trajectory has no samples (kx is empty)");
        const uword n = kx.n_elem;
        auto same = [&](const arma::Col<T1>& v, const char* name) {
            if (v.n_elem != n)
                throw invalid_argument(w + ": trajectory " + name + " has " + std::to_string(v.n_elem) +
                                       " entries; expected " + std::to_string(n) + " (the length of kx)");
            if (!v.is_finite()) throw invalid_argument(w + ": trajectory " + name + " contains NaN or Inf");
        };
        same(kx, "kx");
        same(ky, "ky");
        same(kz, "kz");
        if (times_required || !t.is_empty()) same(t, "t (readout times)");
    }
    // t, or zeros when the trajectory has no times (no field map: the times do not matter).
    arma::Col<T1> times_or_zeros() const { return t.is_empty() ? arma::Col<T1>(kx.n_elem, arma::fill::zeros) : t; }
};

template <typename T1>
struct PixelGeometry {
    arma::Col<T1> x, y, z;    // FOV units
    arma::Col<T1> field_map;  // rad/s; empty: no field

    PixelGeometry() = default;
    PixelGeometry(arma::Col<T1> x_, arma::Col<T1> y_, arma::Col<T1> z_, arma::Col<T1> field_map_ = {})
        : x(std::move(x_)), y(std::move(y_)), z(std::move(z_)), field_map(std::move(field_map_)) {}

    // The pixel centres of 'grid': x = (i - nx/2) / nx along each axis longer than 1 (0 along the others), x
    // fastest, the positions Gfft and Gnufft use (docs/conventions.md); field_map empty or one value per pixel.
    static PixelGeometry on_grid(const ImageGrid& grid, arma::Col<T1> field_map = {}) {
        grid.check("PixelGeometry::on_grid");
        const uword n = grid.n_pixels();
        PixelGeometry p;
        p.x.set_size(n);
        p.y.set_size(n);
        p.z.set_size(n);
        auto coord = [](uword i, uword len) {
            return len > 1 ? T1((double(i) - double(len / 2)) / double(len)) : T1(0);  // as Gfft::image_coords
        };
        for (uword k = 0, idx = 0; k < grid.nz; ++k)
            for (uword j = 0; j < grid.ny; ++j)
                for (uword i = 0; i < grid.nx; ++i, ++idx) {
                    p.x[idx] = coord(i, grid.nx);
                    p.y[idx] = coord(j, grid.ny);
                    p.z[idx] = coord(k, grid.nz);
                }
        p.field_map = std::move(field_map);
        p.check("PixelGeometry::on_grid");
        return p;
    }

    uword n_pixels() const { return x.n_elem; }
    bool has_field_map() const { return !field_map.is_empty(); }
    // field_map, or zeros when there is none.
    arma::Col<T1> field_map_or_zeros() const {
        return field_map.is_empty() ? arma::Col<T1>(x.n_elem, arma::fill::zeros) : field_map;
    }

    // Throws invalid_argument naming 'where' and the vector unless y, z and field_map (when given) have
    // n_pixels() entries, there is at least one pixel, and every value is finite.
    void check(const char* where) const {
        const std::string w(where);
        if (x.is_empty()) throw invalid_argument(w + ": the pixel geometry has no pixels (x is empty)");
        const uword n = x.n_elem;
        auto same = [&](const arma::Col<T1>& v, const char* name) {
            if (v.n_elem != n)
                throw invalid_argument(w + ": pixel " + name + " has " + std::to_string(v.n_elem) +
                                       " entries; expected " + std::to_string(n) + " (the length of x)");
            if (!v.is_finite()) throw invalid_argument(w + ": pixel " + name + " contains NaN or Inf");
        };
        same(x, "x");
        same(y, "y");
        same(z, "z");
        if (!field_map.is_empty()) same(field_map, "field_map");
    }
};

}  // namespace forge
