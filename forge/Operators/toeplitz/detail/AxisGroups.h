#pragma once
// A trajectory's samples grouped along a Cartesian axis of the padded grid (stacks of spirals or stars, EPI-like
// partitions): the kernel build transforms one slab across the axis per group and expands along the axis
// (KernelBuild.cpp by exact DFTs, KernelSources.cpp by NUFFTs). Private to forge/Operators/toeplitz/.
#include <vector>

#include <armadillo>

#include "forge/Core/Config.h"

namespace forge {
namespace toeplitz {

// The samples grouped by their (exactly equal) coordinate along one axis, when the axis is Cartesian enough to
// pay: G <= Pa / 2 distinct values on an axis of Pa > 1 cells, the axis with the largest saving Pa / G. axis = 3:
// none.
struct AxisGroups {
    int axis = 3;
    uword lo = 1, Pa = 1, hi = 1;  // cells of the faster axes, of the axis, of the slower axes
    std::vector<uword> order;      // the samples, group by group
    std::vector<uword> start;      // group g: order[start[g] .. start[g+1])
    std::vector<double> value;     // k of group g along the axis
    uword count() const { return value.size(); }
    uword slab() const { return lo * hi; }
    const uword* rows(uword g) const { return order.data() + start[g]; }
    uword size(uword g) const { return start[g + 1] - start[g]; }
};

template <typename T1>
AxisGroups find_cartesian_axis(const arma::Col<T1>* const k[3], const uword* P);

// Offset (FOV units) of padded-grid cell c along an axis of N pixels and P = 2N cells: cells 0..N-1 hold the
// offsets 0..N-1, cells N..2N-1 the offsets -N..-1 (circular order, so the product of FFTs is the convolution).
// 'centred': cell c holds the offset c - N (the NUFFT's image order).
double cell_offset(uword c, uword N, uword P, bool centred = false);

// Phases of the groups along the axis, E(d, g) = exp(+i 2 pi k_g d) on the axis's cell offsets (Pa x G), in
// double: k_g d reaches N / 2 cycles, whose float rounding alone would cost the kernels' float accuracy.
arma::cx_mat axis_phases(const AxisGroups& g, uword N, bool centred = false);

// Rows 'rows' of a sample-indexed column, or of each column of a matrix.
template <typename T>
arma::Col<T> rows_of(const arma::Col<T>& v, const uword* rows, uword n) {
    arma::Col<T> r(n);
    for (uword i = 0; i < n; ++i) r[i] = v[rows[i]];
    return r;
}
inline arma::cx_mat rows_of(const arma::cx_mat& B, const uword* rows, uword n) {
    arma::cx_mat r(n, B.n_cols);
    for (uword c = 0; c < B.n_cols; ++c)
        for (uword i = 0; i < n; ++i) r(i, c) = B(rows[i], c);
    return r;
}

}  // namespace toeplitz
}  // namespace forge
