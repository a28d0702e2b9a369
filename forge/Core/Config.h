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
using uword = std::size_t;
}
