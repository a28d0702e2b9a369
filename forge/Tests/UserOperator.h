#pragma once
// An operator written outside the library, as a user would: a dense matrix on the host, implementing only
// LinearOperator's apply_host (no batching or GPU path of its own).
#include <complex>
#include <cstring>
#include <utility>

#include <armadillo>

#include "forge/Operators/LinearOperator.h"

namespace forge_test {

template <typename T1>
class MatrixOperator : public forge::LinearOperator<T1> {
public:
    using CT = std::complex<T1>;
    explicit MatrixOperator(arma::Mat<CT> A)
        : forge::LinearOperator<T1>("MatrixOperator", A.n_rows, A.n_cols), A_(std::move(A)) {}
    const arma::Mat<CT>& matrix() const { return A_; }

protected:
    void apply_host(const forge::forgeComplex<T1>* in, forge::forgeComplex<T1>* out, forge::uword nbatch,
                    bool forward) const override {
        const forge::uword nin = forward ? A_.n_cols : A_.n_rows, nout = forward ? A_.n_rows : A_.n_cols;
        for (forge::uword b = 0; b < nbatch; ++b) {
            const arma::Col<CT> x(const_cast<CT*>(reinterpret_cast<const CT*>(in + b * nin)), nin, false, true);
            const arma::Col<CT> y = forward ? arma::Col<CT>(A_ * x) : arma::Col<CT>(A_.t() * x);
            std::memcpy(static_cast<void*>(out + b * nout), y.memptr(), nout * sizeof(CT));
        }
    }

private:
    arma::Mat<CT> A_;
};

}  // namespace forge_test
