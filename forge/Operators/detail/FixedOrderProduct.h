#pragma once
// Complex matrix products (float or double) whose every entry is one sum in a fixed order, so that they give the same
// bits on any number of threads. A threaded BLAS does not: OpenBLAS chooses its gemm code path by its thread count (a
// 7 x 64 by 64 x 256 product differs in the last bits between 1 and 2 threads), and the time-segmentation
// interpolators and the Toeplitz pair data built from such products would make an image depend on OMP_NUM_THREADS.
// For the small inner dimensions and few rows these take (segments, pairs, histogram bins), the loops here cost
// about what the BLAS call did. Private to forge/Operators.
#include <armadillo>
#include <complex>
#include <string>

#include "forge/Core/Exceptions.h"

namespace forge {
namespace detail {

// Work (multiply-adds) a product must hold before its columns are spread over the threads.
constexpr double kProductParallelWork = double(1 << 18);

// C = A^T B (conjugate: A^H B): C(i, j) = sum_k op(A(k, i)) B(k, j), k ascending, in four interleaved partial sums
// (k mod 4) added as (s0 + s1) + (s2 + s3). Columns of A and B are contiguous: the dot-product form, for few columns
// and a long inner dimension.
template <typename T>
arma::Mat<std::complex<T>> fixed_order_transpose_product(const arma::Mat<std::complex<T>>& A,
                                                         const arma::Mat<std::complex<T>>& B, bool conjugate) {
    if (A.n_rows != B.n_rows)
        throw invalid_argument("fixed_order_transpose_product: A has " + std::to_string(A.n_rows) + " rows, B " +
                               std::to_string(B.n_rows) + " (expected equal)");
    const arma::uword K = A.n_rows, M = A.n_cols, N = B.n_cols;
    arma::Mat<std::complex<T>> C(M, N);
    const T sign = conjugate ? T(-1) : T(1);
    const long long cols = static_cast<long long>(N);
#pragma omp parallel for schedule(static) if (double(K) * double(M) * double(N) >= kProductParallelWork)
    for (long long jj = 0; jj < cols; ++jj) {
        const arma::uword j = arma::uword(jj);
        const T* b = reinterpret_cast<const T*>(B.colptr(j));
        for (arma::uword i = 0; i < M; ++i) {
            const T* a = reinterpret_cast<const T*>(A.colptr(i));
            T re[4] = {0, 0, 0, 0}, im[4] = {0, 0, 0, 0};
            arma::uword k = 0;
            for (; k + 4 <= K; k += 4)
                for (int q = 0; q < 4; ++q) {
                    const T ar = a[2 * (k + q)], ai = sign * a[2 * (k + q) + 1];
                    const T br = b[2 * (k + q)], bi = b[2 * (k + q) + 1];
                    re[q] += ar * br - ai * bi;
                    im[q] += ar * bi + ai * br;
                }
            for (int q = 0; k < K; ++k, ++q) {
                const T ar = a[2 * k], ai = sign * a[2 * k + 1], br = b[2 * k], bi = b[2 * k + 1];
                re[q] += ar * br - ai * bi;
                im[q] += ar * bi + ai * br;
            }
            C(i, j) = std::complex<T>((re[0] + re[1]) + (re[2] + re[3]), (im[0] + im[1]) + (im[2] + im[3]));
        }
    }
    return C;
}

// C = A B: column j of C is sum_k A(:, k) B(k, j), k ascending (the axpy form, for a short inner dimension; the
// rows of a column vectorise).
template <typename T>
arma::Mat<std::complex<T>> fixed_order_product(const arma::Mat<std::complex<T>>& A,
                                               const arma::Mat<std::complex<T>>& B) {
    if (A.n_cols != B.n_rows)
        throw invalid_argument("fixed_order_product: A has " + std::to_string(A.n_cols) + " columns, B " +
                               std::to_string(B.n_rows) + " rows (expected equal)");
    const arma::uword M = A.n_rows, K = A.n_cols, N = B.n_cols;
    arma::Mat<std::complex<T>> C(M, N);
    const long long cols = static_cast<long long>(N);
#pragma omp parallel for schedule(static) if (double(K) * double(M) * double(N) >= kProductParallelWork)
    for (long long jj = 0; jj < cols; ++jj) {
        const arma::uword j = arma::uword(jj);
        T* c = reinterpret_cast<T*>(C.colptr(j));
        for (arma::uword i = 0; i < 2 * M; ++i) c[i] = 0;
        for (arma::uword k = 0; k < K; ++k) {
            const T br = B(k, j).real(), bi = B(k, j).imag();
            const T* a = reinterpret_cast<const T*>(A.colptr(k));
            for (arma::uword i = 0; i < M; ++i) {
                const T ar = a[2 * i], ai = a[2 * i + 1];
                c[2 * i] += ar * br - ai * bi;
                c[2 * i + 1] += ar * bi + ai * br;
            }
        }
    }
    return C;
}

}  // namespace detail
}  // namespace forge
