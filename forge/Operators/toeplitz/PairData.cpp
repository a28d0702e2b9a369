// The pair data of ToeplitzNormal's kernel build and their compression (detail/KernelSources.h, PairData).
//
// D(j, p) = conj(a_l(t_j)) W_j a_m(t_j) depends on the sample through its weight and its row of interpolators, and
// samples with equal readout times have equal rows (every spoke, interleaf or partition repeats the readout's times:
// 3D radial 96^3 with 1.5M samples has 96). So the work is done on the T distinct rows: F (T x pairs) of their
// products, the Gram matrix D^H D = F^H diag(s) F with s_t = sum of W_j^2 over the samples of row t, and D V =
// diag(W) (F V)(row of j), gathered once per sample at the end: n1 x pairs products and an n1 x pairs x pairs
// product become T-sized (and F is made block by block, never whole).
#include <cstdint>
#include <cstring>
#include <vector>

#include "forge/Core/Parallel.h"
#include "forge/Operators/detail/FixedOrderProduct.h"
#include "forge/Operators/toeplitz/detail/KernelSources.h"

namespace forge {
namespace toeplitz {

namespace {

std::uint64_t bits(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}
std::uint64_t bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

template <typename C>
bool rows_equal(const arma::Mat<C>& a, uword i, uword j) {
    for (uword l = 0; l < a.n_cols; ++l)
        if (bits(a(i, l).real()) != bits(a(j, l).real()) || bits(a(i, l).imag()) != bits(a(j, l).imag())) return false;
    return true;
}

// The distinct rows of a (bit for bit): of[j] = the row group of sample j, first[g] = a sample of group g.
template <typename C>
void group_rows(const arma::Mat<C>& a, std::vector<uword>& of, std::vector<uword>& first) {
    const uword n = a.n_rows;
    std::vector<std::uint64_t> h(n);
    const long long rows = static_cast<long long>(n);
#pragma omp parallel for if (rows * static_cast <long long>(a.n_cols) >= (1 << 16))
    for (long long j = 0; j < rows; ++j) {
        std::uint64_t v = 0xcbf29ce484222325ull;
        for (uword l = 0; l < a.n_cols; ++l) {
            const C c = a(uword(j), l);
            v = mix(mix(v, bits(c.real())), bits(c.imag()));
        }
        h[uword(j)] = v;
    }
    // Open addressing (linear probing) in a table that grows with the groups: the distinct rows are few (a readout's
    // times), and a table of a few thousand entries stays in cache where one sized for every sample (32 MB at 1.5M
    // samples) made each lookup a cache miss.
    int tableBits = 10;
    uword cap = uword(1) << tableBits;
    std::vector<uword> table(cap, 0);  // group + 1, 0: empty
    const auto slot = [&](std::uint64_t hv) { return uword((hv * 0x9e3779b97f4a7c15ull) >> (64 - tableBits)); };
    of.resize(n);
    first.clear();
    const auto grow = [&] {
        ++tableBits;
        cap <<= 1;
        table.assign(cap, 0);
        for (uword g = 0; g < first.size(); ++g) {
            uword pos = slot(h[first[g]]);
            while (table[pos] != 0) pos = (pos + 1) & (cap - 1);
            table[pos] = g + 1;
        }
    };
    for (uword j = 0; j < n; ++j) {
        for (uword pos = slot(h[j]);; pos = (pos + 1) & (cap - 1)) {
            if (table[pos] == 0) {
                table[pos] = first.size() + 1;
                of[j] = first.size();
                first.push_back(j);
                if (2 * first.size() > cap) grow();
                break;
            }
            const uword g = table[pos] - 1;
            if (h[first[g]] == h[j] && rows_equal(a, first[g], j)) {
                of[j] = g;
                break;
            }
        }
    }
}

// The columns of the pair data that carry the kernels, from the Gram matrix D^H D (npairs x npairs): V the
// eigenvectors whose singular values exceed relTol times the largest; false (V = I: keep every pair) for relTol = 0,
// fewer than two pairs, or no direction to drop.
bool compress(const arma::cx_mat& gram, double relTol, arma::cx_mat& V) {
    V = arma::eye<arma::cx_mat>(gram.n_cols, gram.n_cols);
    if (relTol <= 0 || gram.n_cols < 2) return false;
    arma::vec lambda;
    arma::cx_mat E;
    if (!arma::eig_sym(lambda, E, arma::cx_mat(0.5 * (gram + gram.t())))) return false;
    const double cut = lambda.max() * relTol * relTol;
    const arma::uvec keep = arma::find(lambda > cut);
    if (keep.n_elem == 0 || keep.n_elem >= gram.n_cols) return false;
    V = E.cols(keep);
    return true;
}

}  // namespace

arma::cx_mat PairData::gather(const uword* samples, uword n) const {
    arma::cx_mat B(n, rows.n_cols);
    for (uword c = 0; c < rows.n_cols; ++c) {
        const std::complex<double>* src = rows.colptr(c);
        std::complex<double>* dst = B.colptr(c);
        for (uword i = 0; i < n; ++i) {
            const uword j = samples ? samples[i] : i;
            dst[i] = scale[j] * src[of[j]];
        }
    }
    return B;
}

template <typename C>
PairData pair_data(const arma::Mat<C>& a, const arma::vec& w, double relTol) {
    const uword n1 = a.n_rows, S = a.n_cols;
    std::vector<uword> of, first;
    group_rows(a, of, first);
    const uword T = first.size();
    arma::vec s(T, arma::fill::zeros), wmax(T, arma::fill::zeros);
    for (uword j = 0; j < n1; ++j) {
        s[of[j]] += w[j] * w[j];
        wmax[of[j]] = std::max(wmax[of[j]], w[j]);
    }
    // The pairs l <= m that do not vanish on a sample of positive weight.
    PairData r;
    for (uword l = 0; l < S; ++l)
        for (uword m = l; m < S; ++m) {
            const C *al = a.colptr(l), *am = a.colptr(m);
            bool nonzero = false;
            for (uword t = 0; t < T && !nonzero; ++t) {
                const std::complex<double> f =
                    std::conj(std::complex<double>(al[first[t]])) * std::complex<double>(am[first[t]]);
                // (a compare, not std::abs: a hypot per entry took longer than the products)
                nonzero = wmax[t] > 0 && (f.real() != 0 || f.imag() != 0);
            }
            if (nonzero) {
                r.pairs.push_back(l);
                r.pairs.push_back(m);
            }
        }
    const uword np = r.pairs.size() / 2;
    if (np == 0) {  // W = 0: the zero operator, one zero kernel keeps the apply uniform
        r.pairs = {0, 0};
        r.rows.zeros(1, 1);
        r.of.assign(n1, 0);
        r.scale.zeros(n1);
        r.V.ones(1, 1);
        return r;
    }
    // Fs = diag(sqrt s) F (T x np: the products of the distinct rows, scaled so that D^H D = Fs^H Fs) is made in
    // blocks of rows that stay in cache, twice: for the Gram matrix, then for Fs V gathered into B. A whole T x np
    // matrix (44 MB for 98304 distinct times and 28 pairs) cost more in first-touch page faults than in products.
    arma::vec root = arma::sqrt(s), inverse(T);
    for (uword t = 0; t < T; ++t) inverse[t] = s[t] > 0 ? 1 / root[t] : 0.0;  // s_t = 0: every W_j of the row is 0
    constexpr uword kBlock = 2048;
    const uword nblocks = (T + kBlock - 1) / kBlock;
    const auto block_rows = [&](uword b) { return std::min(kBlock, T - b * kBlock); };
    const auto fill_block = [&](arma::cx_mat& Fb, uword b) {
        const uword t0 = b * kBlock, rows = block_rows(b);
        Fb.set_size(rows, np);
        for (uword p = 0; p < np; ++p) {
            const C *al = a.colptr(r.pairs[2 * p]), *am = a.colptr(r.pairs[2 * p + 1]);
            std::complex<double>* f = Fb.colptr(p);
            for (uword i = 0; i < rows; ++i) {
                const uword t = t0 + i, j = first[t];
                f[i] = root[t] * (std::conj(std::complex<double>(al[j])) * std::complex<double>(am[j]));
            }
        }
    };
    // The blocks go to the threads whole (for_each_in_batch: one parallel region where there are at least as many
    // blocks as threads), each block's products on its thread. One region per block's product was 96 regions of
    // 0.1 ms for 98304 samples, whose barriers cost more than the products wherever the cores had other work
    // (another thread's OpenMP team, another process: 3 to 6 times as long). The products give the same bits on any
    // number of threads and the blocks' Gram matrices are added in block order, so the result does not depend on
    // the threads. The Gram matrices wait in groups of at most 64 MB.
    arma::cx_mat gram(np, np, arma::fill::zeros);
    const uword group = std::max<uword>(1, std::min<uword>(nblocks, (uword(64) << 20) / (np * np * 16)));
    std::vector<arma::cx_mat> grams(group);
    for (uword g0 = 0; g0 < nblocks; g0 += group) {
        const uword ng = std::min(group, nblocks - g0);
        detail::for_each_in_batch(ng, [&](std::size_t i) {
            arma::cx_mat Fb;
            fill_block(Fb, g0 + i);
            grams[i] = detail::fixed_order_transpose_product(Fb, Fb, true);
        });
        for (uword i = 0; i < ng; ++i) gram += grams[i];
    }
    const bool reduced = compress(gram, relTol, r.V);
    const uword nb = r.V.n_cols;
    // The distinct rows of Fs V; sample j's row of B is w_j / sqrt(s_t) times row t = of[j] of them.
    r.rows.set_size(T, nb);
    detail::for_each_in_batch(nblocks, [&](std::size_t b) {
        arma::cx_mat Fb;
        fill_block(Fb, b);
        const uword t0 = b * kBlock, rows = block_rows(b);
        if (reduced)
            r.rows.rows(t0, t0 + rows - 1) = detail::fixed_order_product(Fb, r.V);
        else
            r.rows.rows(t0, t0 + rows - 1) = Fb;
    });
    r.scale.set_size(n1);
    for (uword j = 0; j < n1; ++j) r.scale[j] = w[j] * inverse[of[j]];
    r.of = std::move(of);
    return r;
}

template PairData pair_data<std::complex<float>>(const arma::cx_fmat&, const arma::vec&, double);
template PairData pair_data<std::complex<double>>(const arma::cx_mat&, const arma::vec&, double);

}  // namespace toeplitz
}  // namespace forge
