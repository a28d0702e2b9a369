#pragma once
// Device kernels of SENSE / pcSENSE and time segmentation's phase maps (declarations free of CUDA headers). Implemented
// in forge/Operators/cuda/SenseKernels.cu; on CPU-only builds forge/Operators/cuda/NoCuda.cpp throws
// forge::cuda_error. Coil images are stored back to back: coil c's n2 pixels at [c*n2, (c+1)*n2). Default stream.
#include "forge/Core/Config.h"
#include "forge/Core/forgeComplex.h"

namespace forge {
namespace cuda {

// out[c*n2 + k] = maps[c*n2 + k] * x[k]   for c < nc, k < n2
template <typename T1>
void sense_expand(const forgeComplex<T1>* x, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2, uword nc);
// out[k] (+)= sum_c conj(maps[c*n2 + k]) * imgs[c*n2 + k]   ('+=' when accumulate)
template <typename T1>
void sense_combine(const forgeComplex<T1>* imgs, const forgeComplex<T1>* maps, forgeComplex<T1>* out, uword n2,
                   uword nc, bool accumulate);

// out[l*n2 + k] = exp(-i fm[k] tau[l]) for l < S, k < n2 (tau: S values on the device): time segmentation's phase
// maps, the phase and its sine and cosine in double (|fm tau| reaches thousands of radians for maps of 1e5 rad/s).
template <typename T1>
void segment_phases(const T1* fm, uword n2, const double* tau, uword S, forgeComplex<T1>* out);

}  // namespace cuda
}  // namespace forge
