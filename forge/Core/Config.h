#pragma once
// Host/device annotations that keep forge's public headers free of CUDA includes:
// under nvcc the small value types become usable in kernels, elsewhere the macros vanish.
#if defined(__CUDACC__)
#define FORGE_HD __host__ __device__ __forceinline__
#else
#define FORGE_HD inline
#endif

#include <cstddef>

namespace forge {
// Armadillo's index type (arma::uword: unsigned long long with the default 64-bit words), spelt out so
// that this header, which CUDA sources include, needs no <armadillo>. forgeCol.h checks the two agree.
using uword = unsigned long long;
}  // namespace forge

// Marks a name kept for one release after its rename (CHANGELOG.md lists them with their new names).
#define FORGE_DEPRECATED(new_name) [[deprecated("renamed: use " new_name)]]
