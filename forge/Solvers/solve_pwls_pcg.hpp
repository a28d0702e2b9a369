#pragma once
// Kept for one release after the rename of forge/Solvers' headers from .hpp to .h.
#warning "forge/Solvers/solve_pwls_pcg.hpp is deprecated: include forge/Solvers/solve_pwls_pcg.h"
#include "forge/Solvers/solve_pwls_pcg.h"
