#pragma once
// Deprecated: the old path of forge/Operators/nufft/DensityCompensation.h, kept until forge 0.3.0.
// Code written for the old paths names forge's types unqualified: from here on forge's headers declare their
// names at global scope too (FORGE_GLOBAL_NAMES); the names below are declared there even if the new path came first.
#ifndef FORGE_NO_DEPRECATED_HEADER_WARNINGS
#pragma message("forge/Operators/DensityCompensation.h is deprecated: include forge/Operators/nufft/DensityCompensation.h")
#endif
#ifndef FORGE_GLOBAL_NAMES
#define FORGE_GLOBAL_NAMES
#endif
#include "forge/Operators/nufft/DensityCompensation.h"

using forge::density_compensation;
using forge::calc3DDensityCompensation;
