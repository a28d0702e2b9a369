#pragma once
// Kept for one release after the rename of forge/Solvers' headers from .hpp to .h.
#warning "forge/Solvers/reconSolve.hpp is deprecated: include forge/Solvers/recon_solve.h"
#include "forge/Solvers/recon_solve.h"
