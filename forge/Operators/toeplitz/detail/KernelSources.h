#pragma once
// What ToeplitzNormal's kernel build (KernelBuild.cpp) takes from PairData.cpp, the compressed pair data, and from
// KernelSources.cpp: the choice between the exact DFT and the NUFFT as the source of the basis kernels
// (ToeplitzNormal.h, "Kernel sources"), and the basis kernels by NUFFT on the host and on the GPU. Private to
// forge/Operators/toeplitz/.
#include <vector>

#include <complex>
#include <functional>
#include <string>

#include <armadillo>

#include "forge/Core/forgeCol.h"
#include "forge/Operators/toeplitz/ToeplitzOptions.h"
#include "forge/Operators/toeplitz/detail/AxisGroups.h"

namespace forge {
namespace toeplitz {

// The pair data D(j, p) = conj(a(j, l)) w_j a(j, m) (a: n1 x S interpolators, w: weights) of the pairs l <= m that
// do not vanish, compressed: D ~= B V^H, B = D V (n1 x nb), V (npairs x nb) the eigenvectors of D^H D whose
// singular values exceed relTol times the largest (relTol = 0: V = I, B = D). pairs: (l, m) of each kept pair; none
// kept (W = 0): the pair (0, 0) with zero data. Samples of equal interpolator rows (the same readout time) share a
// row of B up to their weight, so B is kept as its distinct rows: B(j, :) = scale[j] rows(of[j], :), a few
// thousand rows where B has a row per sample.
struct PairData {
    std::vector<uword> pairs;
    arma::cx_mat V;
    arma::cx_mat rows;      // T x nb
    std::vector<uword> of;  // n1: the row of each sample
    arma::vec scale;        // n1
    uword n_samples() const { return of.size(); }
    uword n_basis() const { return rows.n_cols; }
    // Rows samples[0 .. n) of B (n x nb); samples = nullptr: all of B.
    arma::cx_mat gather(const uword* samples, uword n) const;
    arma::cx_mat full() const { return gather(nullptr, n_samples()); }
};
// a in float or double (the products are formed in double).
template <typename C>
PairData pair_data(const arma::Mat<C>& a, const arma::vec& w, double relTol);

// The sizes the cost of a kernel build depends on.
struct BuildShape {
    uword n1 = 0;            // samples
    uword nb = 1;            // basis kernels (the rank of the pair data)
    uword N[3] = {1, 1, 1};  // image grid
    uword P[3] = {1, 1, 1};  // padded grid (2 N, or 1 on axes of length 1)
    uword groups = 0;        // distinct values along the grouped Cartesian axis; 0: the full DFT
    uword slab = 0;          // cells of one slab across that axis
    int axis = 3;            // that axis (3: none)
    bool slab_shared = false;  // every group has the same in-plane samples (one NUFFT plan for all slabs)
    bool device = false;     // built on the GPU
    bool single = true;      // float kernels
};

// Estimated seconds of the basis-kernel transforms by either source; nufft < 0 when a NUFFT cannot build them
// (why_not says why).
struct SourceCost {
    double exact = 0, nufft = -1;
    bool nufft_by_slabs = false;  // the NUFFT's cost is that of 2D NUFFTs of the slabs across the grouped axis
    std::string why_not;
};
SourceCost estimate_source_cost(const BuildShape& s);

// The source that builds the kernels: 'requested' unless Auto, else the cost rule. Throws invalid_argument for
// a requested NUFFT the geometry cannot take.
KernelSource choose_kernel_source(KernelSource requested, const BuildShape& s);

// Relative accuracy requested of the NUFFT kernels: 1e-6 for float (Gnufft<float>'s floor), 1e-9 for double.
double nufft_kernel_tolerance(bool single);

// Whether every group of the Cartesian axis has group 0's in-plane samples (coordinates along the two other axes),
// in the same order: a stack of identical interleaves, whose slabs share one NUFFT plan.
template <typename T1>
bool slab_samples_shared(const arma::Col<T1>* const k[3], const AxisGroups& grp);

// The basis kernels by NUFFTs of the slabs across the Cartesian axis of 'grp' (P x nb, column r from column r of B,
// which is gathered from its distinct rows where the NUFFT runs; in the centred cell order as device_basis_nufft):
// per group the 2D adjoint NUFFT of its samples on the slab of the
// two other axes (Gnufft at k' = 2k), then the expansion along the axis by the groups' phases. The groups share
// one plan and batched adjoints when slab_samples_shared, else set_points moves the plan from group to group. On
// the GPU with 'device' (T1 = float; empty when Gnufft has no device plan for the slab), else on the host threads.
template <typename T1>
forgeCol<forgeComplex<T1>> slab_basis_nufft(const PairData& B, const arma::Col<T1>* const k[3], const AxisGroups& grp,
                                            const uword* N, const uword* P, bool device);

// The columns of B in float on the GPU, back to back (one pass over B on the host threads, then the upload).
forgeCol<forgeComplex<float>> device_columns(const arma::cx_mat& B);
// The same from the compressed pair data: their distinct rows, each sample's row and weight go up (a few MB, where
// B is n1 x nb) and the columns are gathered on the GPU.
forgeCol<forgeComplex<float>> device_columns(const PairData& B);

// The basis kernels on the host by NUFFT (P x nb, column r from column r of B, in the circular cell order of the
// padded grid), vectorDone() after each column.
template <typename T1>
forgeCol<forgeComplex<T1>> host_basis_nufft(const arma::cx_mat& B, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                            const arma::Col<T1>& kz, const uword* N, const uword* P,
                                            const std::function<void()>& vectorDone);

// The same on the GPU as one batched adjoint of Gnufft<float>'s device plan, in the centred order (offset m at
// cell m + N along each axis: toeplitz_combine_kernels's 'alternate' turns their FFTs into those of the circular
// order). Empty when Gnufft has no device plan for these sizes.
forgeCol<forgeComplex<float>> device_basis_nufft(const PairData& B, const arma::fvec& kx, const arma::fvec& ky,
                                                 const arma::fvec& kz, const uword* N, const uword* P);

}  // namespace toeplitz
}  // namespace forge
