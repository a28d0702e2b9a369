// The kernel build's Cartesian axis: the samples grouped by their coordinate along it, and the groups' phases
// along the padded grid's cells of the axis (detail/AxisGroups.h).
#include "forge/Operators/toeplitz/detail/AxisGroups.h"

#include <algorithm>
#include <complex>
#include <unordered_set>

namespace forge {
namespace toeplitz {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Number of distinct values of v (== equality, so -0 and +0 are one), or limit + 1 as soon as there are more
// than limit: a trajectory that is not Cartesian along an axis shows it after a few samples, where sorting all of
// them (arma::unique) took 0.1 s per axis at 1.5M samples.
template <typename T1>
uword distinct_values_up_to(const arma::Col<T1>& v, uword limit) {
    std::unordered_set<T1> seen;
    seen.reserve(2 * limit + 2);
    for (uword j = 0; j < v.n_elem; ++j) {
        seen.insert(v[j]);
        if (seen.size() > limit) return limit + 1;
    }
    return seen.size();
}

}  // namespace

template <typename T1>
AxisGroups find_cartesian_axis(const arma::Col<T1>* const k[3], const uword* P) {
    AxisGroups best;
    double bestSaving = 1;
    for (int a = 0; a < 3; ++a) {
        if (P[a] < 2) continue;
        const uword G = distinct_values_up_to(*k[a], P[a] / 2);
        if (2 * G > P[a]) continue;
        const double saving = double(P[a]) / double(G);
        if (saving > bestSaving) {
            bestSaving = saving;
            best.axis = a;
        }
    }
    if (best.axis == 3) return best;
    const int a = best.axis;
    best.Pa = P[a];
    for (int b = 0; b < a; ++b) best.lo *= P[b];
    for (int b = a + 1; b < 3; ++b) best.hi *= P[b];
    // A counting sort into the G <= Pa / 2 groups (stable: samples keep their order within a group), each sample's
    // group by a binary search of the sorted distinct values: linear where sorting all samples was not.
    const arma::Col<T1>& ka = *k[a];
    const uword n1 = ka.n_elem;
    std::vector<T1> values;
    {
        std::unordered_set<T1> seen(ka.begin(), ka.end());
        values.assign(seen.begin(), seen.end());
    }
    std::sort(values.begin(), values.end());
    const uword G = values.size();
    std::vector<unsigned> group(n1);
    best.start.assign(G + 1, 0);
    for (uword j = 0; j < n1; ++j) {
        group[j] = unsigned(std::lower_bound(values.begin(), values.end(), ka[j]) - values.begin());
        ++best.start[group[j] + 1];
    }
    for (uword g = 0; g < G; ++g) best.start[g + 1] += best.start[g];
    best.order.resize(n1);
    std::vector<uword> next(best.start.begin(), best.start.end() - 1);
    for (uword j = 0; j < n1; ++j) best.order[next[group[j]]++] = j;
    best.value.assign(values.begin(), values.end());
    return best;
}

double cell_offset(uword c, uword N, uword P, bool centred) {
    if (P == 1) return 0;
    if (centred) return (double(c) - double(N)) / double(N);
    return (c < N ? double(c) : double(c) - double(P)) / double(N);
}

arma::cx_mat axis_phases(const AxisGroups& g, uword N, bool centred) {
    arma::cx_mat E(g.Pa, g.count());
    for (uword j = 0; j < g.count(); ++j)
        for (uword d = 0; d < g.Pa; ++d)
            E(d, j) = std::polar(1.0, 2 * kPi * g.value[j] * cell_offset(d, N, g.Pa, centred));
    return E;
}

template AxisGroups find_cartesian_axis<float>(const arma::Col<float>* const[3], const uword*);
template AxisGroups find_cartesian_axis<double>(const arma::Col<double>* const[3], const uword*);

}  // namespace toeplitz
}  // namespace forge
