#pragma once
// The potentials psi of forge's finite-difference penalties (the formulas: forge/Penalties/cuda/
// FiniteDifferenceKernels.h). Public so that FiniteDifferencePenalty.h names its kind without the private kernel
// header.
namespace forge {
namespace fd {

enum class Potential : int { Quadratic = 0, Charbonnier = 1 };

}  // namespace fd
}  // namespace forge
