// Gnufft's host plan of the sample positions: k checked and converted to grid units, then sorted into slabs (and
// 8-cell tiles inside a slab) by a stable counting sort, with each sample's stencil start and offsets in slab order.
// Both passes run on the OpenMP threads over contiguous runs of samples; the counts are summed in the order of the
// runs, so the order, and every array, is the serial counting sort's whatever the thread count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "forge/Core/BandEdge.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/nufft/Gnufft.h"
#include "forge/Operators/nufft/cpu/HostPlan.h"

namespace forge {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// Samples below this are sorted on one thread (a parallel region costs more than it saves).
constexpr uword kParallelSamples = 16384;
// How many samples ahead the scatter prefetches its destination.
constexpr uword kPrefetch = 16;
}  // namespace

template <typename T1>
void Gnufft<T1>::check_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                              const arma::Col<T1>& kz) const {
    const arma::Col<T1>* k[3] = {&kx, &ky, &kz};
    const char* kn[3] = {"kx", "ky", "kz"};
    const uword n1 = kx.n_elem;
    for (int d = 0; d < 3; ++d) {
        require_finite(where, kn[d], k[d]->memptr(), n1);
        // Both band edges are accepted: the image grid is periodic in k with period N (the pixels sit at
        // integer multiples of 1/N), so k = +N/2 and k = -N/2 are the same sample and land on the same
        // grid position u = G/2 (radial spokes from SigPy and BART end at +N/2). A rounding past an edge is
        // the edge (forge/Core/BandEdge.h).
        const double half = band_half_width(N_[d]);
        for (uword j = 0; j < n1; ++j) {
            const double v = double((*k[d])[j]);
            if (!within_band(v, half)) {
                // every digit of the value: -80.0000153 fails where a rounded -80 would not
                std::ostringstream m;
                m << where << ": " << kn[d] << "[" << j
                  << "] = " << std::setprecision(std::numeric_limits<T1>::max_digits10) << v << std::setprecision(6)
                  << " is outside [" << -half << ", " << half << "] cycles/FOV (grid size "
                  << "xyz"[d] << " = " << N_[d] << "); within " << band_edge_tolerance(half)
                  << " of an edge is the edge";
                throw invalid_argument(m.str());
            }
        }
    }
}

template <typename T1>
typename Gnufft<T1>::Points Gnufft<T1>::sort_points(const char* where, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                                    const arma::Col<T1>& kz) const {
    const auto t0 = std::chrono::steady_clock::now();
    const uword n1 = kx.n_elem;
    Points P;
    P.n1 = n1;
    const T1* k[3] = {kx.memptr(), ky.memptr(), kz.memptr()};
    double half[3];
    for (int d = 0; d < 3; ++d) {
        half[d] = band_half_width(N_[d]);
        P.u[d].reserve(n1);  // huge pages for the positions before the zero fill first touches them
        nufft_detail::advise_huge_pages(P.u[d].data(), n1 * sizeof(T1));
        P.u[d].resize(n1);
    }

    // Slabs along the slowest non-trivial axis (race-free gridding) and, inside a slab, 8-cell tiles of the other
    // axes (cache locality for both directions): key = (slab, tile1, tile0).
    const int sa = N_[2] > 1 ? 2 : (N_[1] > 1 ? 1 : 0);
    const uword Gs = G_[sa];
    uword nslab = Gs / W_;
    nslab -= nslab & 1;
    if (nslab < 2) nslab = 1;
    const int a1 = sa == 2 ? 1 : 0;  // middle axis (y in 3D, x in 2D)
    const int a0 = 0;
    // In 2D both tile indices would be the x tile: one of them is left out (the same order, far fewer keys).
    const unsigned long long t1n = a1 == a0 ? 1 : G_[a1] / 8 + 1, t0n = G_[a0] / 8 + 1;
    const unsigned long long nkeys = nslab * t1n * t0n;
    // Slab s covers [floor(s*Gs/nslab), floor((s+1)*Gs/nslab)): the borders as a table (no integer division per
    // sample).
    std::vector<double> border(nslab + 1);
    for (uword s = 0; s <= nslab; ++s) border[s] = double((s * Gs) / nslab);
    const double slabScale = double(nslab) / double(Gs);
    auto key_of = [&](uword j) -> unsigned long long {
        const double us = double(P.u[sa][j]);
        uword s = uword(us * slabScale);
        if (s >= nslab) s = nslab - 1;
        // Fix rounding at the borders.
        while (s > 0 && us < border[s]) --s;
        while (s + 1 < nslab && us >= border[s + 1]) ++s;
        const unsigned long long t1 = sa == a1 || a1 == a0 ? 0 : (unsigned long long)(P.u[a1][j] / 8);
        const unsigned long long t0 = sa == a0 ? 0 : (unsigned long long)(P.u[a0][j] / 8);
        return (s * t1n + t1) * t0n + t0;
    };

    // Runs of samples, one per thread; per-run key counts when the keys are few enough (a counting sort), else keys
    // stored for std::sort (huge grids with few samples).
#ifdef _OPENMP
    int team = n1 >= kParallelSamples ? omp_get_max_threads() : 1;
#else
    int team = 1;
#endif
    const bool counting = nkeys <= 4 * (unsigned long long)n1 + (1u << 20) && nkeys <= 0xffffffffull;
    // Per-run counts cost team * nkeys: with many threads and many keys the counting runs on one thread.
    if (counting && (unsigned long long)team * nkeys > 8 * (unsigned long long)n1 + (1u << 22)) team = 1;
    std::vector<uword> runStart(team + 1);
    for (int t = 0; t <= team; ++t) runStart[t] = uword((unsigned long long)n1 * t / team);
    std::vector<uword> count(counting ? size_t(team) * nkeys : 0, 0);  // per run and key
    // The counting sort's keys, 32 bits (the std::sort path computes its 64-bit keys again).
    nufft_detail::UninitVector<std::uint32_t> key(counting ? n1 : 0);
    P.stencil.resize(n1);

    // Pass 1: check and convert k to grid units, key each sample, count the keys of each run.
    int bad = 0;
#pragma omp parallel for num_threads(team) schedule(static, 1) reduction(| : bad) if (team > 1)
    for (int t = 0; t < team; ++t) {
        uword* cnt = counting ? count.data() + size_t(t) * nkeys : nullptr;
        for (uword j = runStart[t]; j < runStart[t + 1]; ++j) {
            bool ok = true;
            for (int d = 0; d < 3; ++d) {
                const double v = double(k[d][j]);
                ok &= within_band(v, half[d]);  // false also for NaN and infinities
                T1 uf = T1(0);
                if (N_[d] > 1 && ok) {
                    double u = v * double(G_[d]) / double(N_[d]);
                    if (u < 0) u += double(G_[d]);
                    uf = T1(u);
                    if (uf >= T1(G_[d])) uf = T1(0);  // rounding of tiny negative positions
                }
                P.u[d][j] = uf;
            }
            if (!ok) {
                bad = 1;
                if (counting) key[j] = 0;
                continue;
            }
            if (cnt) {
                key[j] = std::uint32_t(key_of(j));
                ++cnt[key[j]];
            }
        }
    }
    if (bad) {
        check_points(where, kx, ky, kz);  // the first bad component, named as the serial checks name it
        throw invalid_argument(std::string(where) + ": a k-space sample is not finite or outside the band");
    }
    P.checkSeconds = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();

    P.slabStart.assign(nslab + 1, 0);
    const unsigned long long perSlab = t1n * t0n;
    if (counting) {
        // Exclusive sums in (key, run) order: run t's samples of a key follow those of runs before it (stable).
        uword run = 0;
        for (uword s = 0; s < nslab; ++s) {
            for (unsigned long long q = s * perSlab; q < (s + 1) * perSlab; ++q) {
                for (int t = 0; t < team; ++t) {
                    uword& c = count[size_t(t) * nkeys + q];
                    const uword n = c;
                    c = run;
                    run += n;
                }
            }
            P.slabStart[s + 1] = run;
        }
    } else {
        std::vector<std::pair<unsigned long long, uword>> sorted(n1);
        for (uword j = 0; j < n1; ++j) sorted[j] = {key_of(j), j};
        std::sort(sorted.begin(), sorted.end());
        for (uword idx = 0; idx < n1; ++idx) {
            P.stencil[idx].j = sorted[idx].second;
            P.slabStart[sorted[idx].first / perSlab + 1]++;
        }
    }
    if (!counting)
        for (uword s = 0; s < nslab; ++s) P.slabStart[s + 1] += P.slabStart[s];

    // Pass 2: each sample's place in slab order, and its stencil start and offsets there, from the position in double
    // (u < 2^31 cells, so the float offset keeps its full precision however large the grid). Read in sample order,
    // written in slab order (scattered stores do not stall like scattered loads).
    const double halfW = double(W_) / 2, Wm1 = double(W_ - 1);
    nufft_detail::UninitVector<nufft_detail::SampleStencil<T1>> keyed(counting ? 0 : n1);
#pragma omp parallel for num_threads(team) schedule(static, 1) if (team > 1)
    for (int t = 0; t < team; ++t) {
        uword* cnt = counting ? count.data() + size_t(t) * nkeys : nullptr;
        for (uword j = runStart[t]; j < runStart[t + 1]; ++j) {
            nufft_detail::SampleStencil<T1> st;
            st.j = j;
            for (int d = 0; d < 3; ++d) {
                st.first[d] = 0;
                st.offset[d] = T1(0);
                if (N_[d] == 1) continue;
                double u = double(k[d][j]) * double(G_[d]) / double(N_[d]);
                if (u < 0) u += double(G_[d]);
                if (u >= double(G_[d])) u = 0;
                const double f = std::ceil(u - halfW);
                st.first[d] = int(f);
                st.offset[d] = T1(std::min(1.0, std::max(-1.0, 2 * (u - f) - Wm1)));
            }
            if (cnt) {
                // The place of a sample a few ahead, prefetched for writing: the scattered stores then overlap
                // instead of filling the store buffer with misses (the place is exact unless a sample in between has
                // the same key, and then one record off).
                if (j + kPrefetch < runStart[t + 1]) __builtin_prefetch(&P.stencil[cnt[key[j + kPrefetch]]], 1);
                P.stencil[cnt[key[j]]++] = st;
            } else {
                keyed[j] = st;  // std::sort path: placed below
            }
        }
    }
    if (!counting)
        for (uword idx = 0; idx < n1; ++idx) P.stencil[idx] = keyed[P.stencil[idx].j];
    P.sortSeconds = seconds_since(t1);
    return P;
}

template typename Gnufft<float>::Points Gnufft<float>::sort_points(const char*, const arma::Col<float>&,
                                                                   const arma::Col<float>&,
                                                                   const arma::Col<float>&) const;
template typename Gnufft<double>::Points Gnufft<double>::sort_points(const char*, const arma::Col<double>&,
                                                                     const arma::Col<double>&,
                                                                     const arma::Col<double>&) const;
template void Gnufft<float>::check_points(const char*, const arma::Col<float>&, const arma::Col<float>&,
                                          const arma::Col<float>&) const;
template void Gnufft<double>::check_points(const char*, const arma::Col<double>&, const arma::Col<double>&,
                                           const arma::Col<double>&) const;

}  // namespace forge
