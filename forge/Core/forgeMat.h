#pragma once
// forgeMat<T>: an owning column-major matrix. Its storage is a forgeCol<T>, so it follows the same
// residency rules (put_on_gpu / get_from_gpu / on_gpu, no silent copies) and element-wise arithmetic.
#include <sstream>

#include "forge/Core/Validation.h"
#include "forge/Core/forgeCol.h"

namespace forge {

template <typename T>
class forgeMat {
public:
    using elem_type = T;
    using arma_type = typename detail::arma_elem<T>::type;

    uword n_rows = 0;  // read-only
    uword n_cols = 0;  // read-only
    uword n_elem = 0;  // read-only

    forgeMat() = default;
    forgeMat(uword rows, uword cols) : n_rows(rows), n_cols(cols), n_elem(elems(rows, cols)), data_(n_elem) {}
    forgeMat(uword rows, uword cols, T value)
        : n_rows(rows), n_cols(cols), n_elem(elems(rows, cols)), data_(n_elem, value) {}
    explicit forgeMat(const arma::Mat<arma_type>& m)
        : n_rows(m.n_rows), n_cols(m.n_cols), n_elem(m.n_elem), data_(arma::Col<arma_type>(m.memptr(), m.n_elem)) {}

    arma::Mat<arma_type> to_arma() const {
        arma::Col<arma_type> c = data_.to_arma();
        return arma::Mat<arma_type>(c.memptr(), n_rows, n_cols);
    }

    bool on_gpu() const { return data_.on_gpu(); }
    void put_on_gpu() { data_.put_on_gpu(); }
    FORGE_DEPRECATED("put_on_gpu()") void putOnGPU() { put_on_gpu(); }
    FORGE_DEPRECATED("get_from_gpu()") void getFromGPU() { get_from_gpu(); }
    FORGE_DEPRECATED("to_arma()") arma::Mat<arma_type> getArma() const { return to_arma(); }
    void get_from_gpu() { data_.get_from_gpu(); }
    T* device_memptr() { return data_.device_memptr(); }
    const T* device_memptr() const { return data_.device_memptr(); }
    T* memptr() { return data_.memptr(); }
    const T* memptr() const { return data_.memptr(); }

    T& operator()(uword r, uword c) { return data_[r + c * n_rows]; }
    const T& operator()(uword r, uword c) const { return data_[r + c * n_rows]; }
    T& at(uword r, uword c) {
        check(r, c);
        return data_[r + c * n_rows];
    }
    const T& at(uword r, uword c) const {
        check(r, c);
        return data_[r + c * n_rows];
    }

    // Column j as a new vector placed where the matrix lives (device-to-device on the GPU).
    forgeCol<T> col(uword j) const {
        check_col(j);
        forgeCol<T> out = forgeCol<T>::same_place(data_, n_rows);
        if (on_gpu()) {
            device::copy_on_device(out.device_memptr(), data_.device_memptr() + j * n_rows, n_rows * sizeof(T));
        } else if (n_rows) {
            std::memcpy(out.memptr(), data_.memptr() + j * n_rows, n_rows * sizeof(T));
        }
        return out;
    }
    // Overwrites column j with v (both must live in the same place).
    void set_col(uword j, const forgeCol<T>& v) {
        check_col(j);
        if (v.n_elem != n_rows) {
            std::ostringstream m;
            m << "forgeMat::set_col: column has " << v.n_elem << " entries, expected n_rows = " << n_rows;
            throw invalid_argument(m.str());
        }
        if (v.on_gpu() != on_gpu()) {
            throw residency_error("forgeMat::set_col: the matrix and the column live in different places "
                                  "(one on the GPU, one on the host)");
        }
        if (on_gpu()) {
            device::copy_on_device(data_.device_memptr() + j * n_rows, v.device_memptr(), n_rows * sizeof(T));
        } else if (n_rows) {
            std::memcpy(data_.memptr() + j * n_rows, v.memptr(), n_rows * sizeof(T));
        }
    }

    // All elements as one column (column-major order); the matrix's storage itself.
    const forgeCol<T>& as_col() const { return data_; }
    forgeCol<T>& as_col() { return data_; }

    forgeMat& zeros() {
        data_.zeros();
        return *this;
    }
    forgeMat& ones() {
        data_.ones();
        return *this;
    }
    forgeMat& fill(T v) {
        data_.fill(v);
        return *this;
    }

    forgeMat& operator+=(const forgeMat& b) {
        same_shape(b, "operator+=");
        data_ += b.data_;
        return *this;
    }
    forgeMat& operator-=(const forgeMat& b) {
        same_shape(b, "operator-=");
        data_ -= b.data_;
        return *this;
    }
    forgeMat& operator%=(const forgeMat& b) {
        same_shape(b, "operator%=");
        data_ %= b.data_;
        return *this;
    }
    forgeMat& operator*=(T s) {
        data_ *= s;
        return *this;
    }
    forgeMat& operator/=(T s) {
        data_ /= s;
        return *this;
    }

    void same_shape(const forgeMat& b, const char* what) const {
        if (n_rows != b.n_rows || n_cols != b.n_cols) {
            std::ostringstream m;
            m << "forgeMat " << what << ": shapes " << n_rows << "x" << n_cols << " and " << b.n_rows << "x" << b.n_cols
              << " differ";
            throw invalid_argument(m.str());
        }
    }

private:
    static uword elems(uword rows, uword cols) { return checked_product("forgeMat", {{"rows", rows}, {"cols", cols}}); }
    // The tests stay inline and the throwing part out of line, so the compiler sees that code after a check
    // only runs with the index in range (and does not warn about copies from past the end).
    void check(uword r, uword c) const {
        if (r >= n_rows || c >= n_cols) out_of_range("index (" + std::to_string(r) + ", " + std::to_string(c) + ")");
    }
    // A column index alone: a matrix with 0 rows still has its (empty) columns.
    void check_col(uword c) const {
        if (c >= n_cols) out_of_range("column " + std::to_string(c));
    }
    [[noreturn]] void out_of_range(const std::string& what) const {
        std::ostringstream m;
        m << "forgeMat: " << what << " out of range for " << n_rows << "x" << n_cols;
        throw std::out_of_range(m.str());
    }
    forgeCol<T> data_;
};

template <typename T>
forgeMat<T> operator+(forgeMat<T> a, const forgeMat<T>& b) {
    return a += b;
}
template <typename T>
forgeMat<T> operator-(forgeMat<T> a, const forgeMat<T>& b) {
    return a -= b;
}
template <typename T>
forgeMat<T> operator%(forgeMat<T> a, const forgeMat<T>& b) {
    return a %= b;
}
template <typename T>
forgeMat<T> operator*(forgeMat<T> a, T s) {
    return a *= s;
}
template <typename T>
forgeMat<T> operator*(T s, forgeMat<T> a) {
    return a *= s;
}

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::forgeMat;
#endif
