#pragma once
// Kept for one release after the rename of forge/Solvers' headers from .hpp to .h.
#warning "forge/Solvers/SolverCommon.hpp is deprecated: include forge/Solvers/SolverCommon.h"
#include "forge/Solvers/SolverCommon.h"
