#pragma once
// Argument checks used at forge's public boundaries: each failure names the argument and what was
// expected, so a user sees "kx has 100 entries, expected n1 = 128" rather than a crash.
#include <cmath>
#include <sstream>
#include <string>

#include "forge/Core/Config.h"
#include "forge/Core/Exceptions.h"

namespace forge {

inline void require_length(const char* where, const char* name, uword actual, uword expected,
                           const char* expectedName) {
    if (actual != expected) {
        std::ostringstream msg;
        msg << where << ": " << name << " has " << actual << " entries, expected " << expectedName
            << " = " << expected;
        throw invalid_argument(msg.str());
    }
}

inline void require_positive(const char* where, const char* name, uword value) {
    if (value == 0) {
        throw invalid_argument(std::string(where) + ": " + name + " must be at least 1, got 0");
    }
}

// Rejects NaN and +-Inf; 'data' is any contiguous array of real values.
template <typename T>
void require_finite(const char* where, const char* name, const T* data, uword n) {
    for (uword i = 0; i < n; ++i) {
        if (!std::isfinite(data[i])) {
            std::ostringstream msg;
            msg << where << ": " << name << "[" << i << "] is " << data[i]
                << "; trajectory, time and field-map values must be finite";
            throw invalid_argument(msg.str());
        }
    }
}

}  // namespace forge

namespace forge {

// Matrices (anything with n_rows/n_cols): "where: name is R x C, expected <expectedName> = r x c".
template <typename M>
void require_shape(const char* where, const char* name, const M& m, uword rows, uword cols, const char* expectedName) {
    if (m.n_rows != rows || m.n_cols != cols) {
        std::ostringstream msg;
        msg << where << ": " << name << " is " << m.n_rows << " x " << m.n_cols << ", expected " << expectedName
            << " = " << rows << " x " << cols;
        throw invalid_argument(msg.str());
    }
}

}  // namespace forge
