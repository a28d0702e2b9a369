#pragma once
// Argument checks used at forge's public boundaries: each failure names the argument and what was
// expected, so a user sees "kx has 100 entries, expected n1 = 128" rather than a crash.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>

#include <unistd.h>

#include "forge/Core/Config.h"
#include "forge/Core/Exceptions.h"

namespace forge {

inline void require_length(const char* where, const char* name, uword actual, uword expected,
                           const char* expectedName) {
    if (actual != expected) {
        std::ostringstream msg;
        msg << where << ": " << name << " has " << actual << " entries, expected " << expectedName << " = " << expected;
        throw invalid_argument(msg.str());
    }
}

// One factor of a size product, named for the error message.
struct SizeFactor {
    const char* name;
    uword value;
};

// The product of sizes (grid axes, samples times coils, elements of a batch, ...), computed without
// wrapping: forge::invalid_argument when it exceeds 'limit' (by default the largest uword, i.e. the
// product would wrap), naming each factor, the limit and 'why' it applies, e.g.
//   "GdftR2: numX * numY * numZ = 64 * 288230376151711745 * 1 exceeds 18446744073709551615 (...)".
// A zero factor gives 0 (other checks reject empty sizes where they are not allowed).
inline uword checked_product(const char* where, std::initializer_list<SizeFactor> factors,
                             uword limit = std::numeric_limits<uword>::max(),
                             const char* why = "the largest size 64-bit arithmetic holds") {
    for (const SizeFactor& f : factors) {
        if (f.value == 0) return 0;
    }
    uword p = 1;
    bool over = false;
    for (const SizeFactor& f : factors) {
        if (f.value > limit / p) {  // p * value > limit, tested without forming the product
            over = true;
            break;
        }
        p *= f.value;
    }
    if (!over) return p;
    std::ostringstream msg;
    msg << where << ": ";
    const char* sep = "";
    for (const SizeFactor& f : factors) {
        msg << sep << f.name;
        sep = " * ";
    }
    if (factors.size() > 1) {
        msg << " = ";
        sep = "";
        for (const SizeFactor& f : factors) {
            msg << sep << f.value;
            sep = " * ";
        }
    } else {
        msg << " = " << factors.begin()->value;
    }
    msg << " exceeds " << limit << " (" << why << ")";
    throw invalid_argument(msg.str());
}

inline void require_positive(const char* where, const char* name, uword value) {
    if (value == 0) {
        throw invalid_argument(std::string(where) + ": " + name + " must be at least 1, got 0");
    }
}

namespace detail {
// Whether any of n IEEE values has the all-ones exponent of NaN and Inf: an integer OR over the bits, which the
// compiler vectorises (a branch per std::isfinite does not), for the phase maps and data of tens of millions.
template <typename T, typename Bits, Bits kExponent>
bool any_non_finite_bits(const T* data, uword n) {
    static_assert(sizeof(T) == sizeof(Bits), "bit pattern of T");
    Bits bad = 0;
    for (uword i = 0; i < n; ++i) {
        Bits b;
        std::memcpy(&b, data + i, sizeof(b));
        bad |= Bits((b & kExponent) == kExponent);
    }
    return bad != 0;
}
template <typename T>
bool may_be_non_finite(const T*, uword) {
    return true;
}
inline bool may_be_non_finite(const float* data, uword n) {
    return any_non_finite_bits<float, std::uint32_t, 0x7f800000u>(data, n);
}
inline bool may_be_non_finite(const double* data, uword n) {
    return any_non_finite_bits<double, std::uint64_t, 0x7ff0000000000000ull>(data, n);
}
}  // namespace detail

// Rejects NaN and +-Inf; 'data' is any contiguous array of real values.
template <typename T>
void require_finite(const char* where, const char* name, const T* data, uword n) {
    if (!detail::may_be_non_finite(data, n)) return;
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

namespace detail {
// This machine's physical memory in bytes (0 when unknown: then no memory check).
inline double physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return double(pages) * double(page);
#endif
    return 0;
}
}  // namespace detail

}  // namespace forge
