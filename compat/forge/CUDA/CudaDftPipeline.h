#pragma once
// Deprecated: the old path of forge/Operators/dft/CudaDftPipeline.h, kept until forge 0.3.0.
// Code written for the old paths names forge's types unqualified: from here on forge's headers declare their
// names at global scope too (FORGE_GLOBAL_NAMES).
#ifndef FORGE_NO_DEPRECATED_HEADER_WARNINGS
#pragma message("forge/CUDA/CudaDftPipeline.h is deprecated: include forge/Operators/dft/CudaDftPipeline.h")
#endif
#ifndef FORGE_GLOBAL_NAMES
#define FORGE_GLOBAL_NAMES
#endif
#include "forge/Operators/dft/CudaDftPipeline.h"
