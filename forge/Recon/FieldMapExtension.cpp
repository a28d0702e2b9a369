#include "forge/Recon/FieldMapExtension.h"

#include <cmath>
#include <string>

#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"

namespace forge {
namespace recon {

namespace {

// The in-grid face neighbours (4 in 2D, 6 in 3D, fewer at the faces) of pixel j, x fastest.
struct Grid {
    std::size_t N[3], stride[3];
    template <class F>
    void for_each_neighbour(std::size_t j, F&& f) const {
        for (int d = 0; d < 3; ++d) {
            if (N[d] == 1) continue;
            const std::size_t c = (j / stride[d]) % N[d];
            if (c > 0) f(j - stride[d]);
            if (c + 1 < N[d]) f(j + stride[d]);
        }
    }
};

}  // namespace

std::vector<unsigned char> field_map_support(const arma::fvec& fieldmap) {
    std::vector<unsigned char> s(fieldmap.n_elem);
    for (std::size_t j = 0; j < s.size(); ++j) s[j] = fieldmap[j] != 0.0f && std::isfinite(fieldmap[j]);
    return s;
}

arma::fvec extend_field_map(const arma::fvec& fieldmap, const std::vector<unsigned char>& support, std::size_t Nx,
                            std::size_t Ny, std::size_t Nz, const FieldMapExtensionOptions& options) {
    const char* who = "extend_field_map";
    const std::size_t n2 = checked_product(who, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
    if (n2 == 0)
        throw invalid_argument(std::string(who) + ": the grid " + std::to_string(Nx) + "x" + std::to_string(Ny) + "x" +
                               std::to_string(Nz) + " holds no pixel");
    if (fieldmap.n_elem != n2)
        throw invalid_argument(std::string(who) + ": fieldmap has " + std::to_string(fieldmap.n_elem) +
                               " entries, expected Nx * Ny * Nz = " + std::to_string(n2));
    if (support.size() != n2)
        throw invalid_argument(std::string(who) + ": support has " + std::to_string(support.size()) +
                               " entries, expected Nx * Ny * Nz = " + std::to_string(n2));
    if (options.iterations < 0)
        throw invalid_argument(std::string(who) + ": iterations = " + std::to_string(options.iterations) +
                               " (expected 0 or more)");
    std::size_t known = 0;
    for (std::size_t j = 0; j < n2; ++j)
        if (support[j]) {
            if (!std::isfinite(fieldmap[j]))
                throw invalid_argument(std::string(who) + ": fieldmap[" + std::to_string(j) +
                                       "] inside the support is not finite");
            ++known;
        }
    if (known == 0)
        throw invalid_argument(std::string(who) + ": the support is empty (no pixel where the field map is known)");
    if (known == n2) return fieldmap;

    const Grid g{{Nx, Ny, Nz}, {1, Nx, Nx * Ny}};
    arma::vec v(n2, arma::fill::zeros);
    std::vector<unsigned char> done(n2, 0);
    for (std::size_t j = 0; j < n2; ++j)
        if (support[j]) {
            v[j] = fieldmap[j];
            done[j] = 1;
        }
    // 1. onion peel, layer by layer: each pixel of a layer is the mean of its neighbours known before the layer
    std::vector<std::size_t> layer, next, filled;  // 'filled': the pixels outside the support, nearest first
    filled.reserve(n2 - known);
    std::vector<unsigned char> queued(done);
    for (std::size_t j = 0; j < n2; ++j)
        if (!done[j]) {
            bool edge = false;
            g.for_each_neighbour(j, [&](std::size_t k) { edge = edge || done[k]; });
            if (edge) {
                layer.push_back(j);
                queued[j] = 1;
            }
        }
    std::vector<double> layerValues;
    while (!layer.empty()) {
        layerValues.assign(layer.size(), 0.0);
        for (std::size_t i = 0; i < layer.size(); ++i) {
            double s = 0;
            int n = 0;
            g.for_each_neighbour(layer[i], [&](std::size_t k) {
                if (done[k]) {
                    s += v[k];
                    ++n;
                }
            });
            layerValues[i] = s / n;  // n >= 1: every pixel of a layer touches the one before
        }
        next.clear();
        for (std::size_t i = 0; i < layer.size(); ++i) {
            v[layer[i]] = layerValues[i];
            done[layer[i]] = 1;
            filled.push_back(layer[i]);
        }
        for (const std::size_t j : layer)
            g.for_each_neighbour(j, [&](std::size_t k) {
                if (!queued[k]) {
                    queued[k] = 1;
                    next.push_back(k);
                }
            });
        layer.swap(next);
    }
    // 2. Gauss-Seidel sweeps of Laplace's equation on the filled pixels (nearest first), the support fixed
    for (int it = 0; it < options.iterations; ++it)
        for (const std::size_t j : filled) {
            double s = 0;
            int n = 0;
            g.for_each_neighbour(j, [&](std::size_t k) {
                s += v[k];
                ++n;
            });
            v[j] = s / n;
        }
    arma::fvec out = fieldmap;
    for (const std::size_t j : filled) out[j] = float(v[j]);
    return out;
}

arma::fvec extend_field_map(const arma::fvec& fieldmap, std::size_t Nx, std::size_t Ny, std::size_t Nz,
                            const FieldMapExtensionOptions& options) {
    const std::vector<unsigned char> s = field_map_support(fieldmap);
    bool any = false;
    for (const unsigned char b : s) any = any || b;
    if (!any) {
        const std::size_t n2 = checked_product("extend_field_map", {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
        if (fieldmap.n_elem != n2 || n2 == 0)
            throw invalid_argument("extend_field_map: fieldmap has " + std::to_string(fieldmap.n_elem) +
                                   " entries, expected Nx * Ny * Nz = " + std::to_string(n2));
        return fieldmap;  // all zero: nothing to extend
    }
    return extend_field_map(fieldmap, s, Nx, Ny, Nz, options);
}

}  // namespace recon
}  // namespace forge
