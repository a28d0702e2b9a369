#pragma once
// Deprecated: the oldest path of cuda::CudaMultiDft (the multi-GPU plan behind DftOptions::devices, private to
// forge now), kept until forge 0.3.0; it includes the install tree's deprecated forge/Operators/dft/CudaMultiDft.h.
// Code written for the old paths names forge's types unqualified: from here on forge's headers declare their
// names at global scope too (FORGE_GLOBAL_NAMES).
#ifndef FORGE_NO_DEPRECATED_HEADER_WARNINGS
#pragma message("forge/CUDA/CudaMultiDft.h is deprecated: include forge/Operators/dft/DftOptions.h (DftOptions::devices)")
#endif
#ifndef FORGE_GLOBAL_NAMES
#define FORGE_GLOBAL_NAMES
#endif
#include "forge/Operators/dft/CudaMultiDft.h"
