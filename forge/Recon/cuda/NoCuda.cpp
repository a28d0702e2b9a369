// The CPU-only build's stand-in for this folder's .cu files (CoilMapKernels, FieldMapKernels): compiled instead of
// them without CUDA, so that map estimation links. It reaches these only after device::available() (recon_on_gpu),
// which is false here; each throws forge::cuda_error if it ever is.
#include "forge/CUDA/detail/NoCuda.h"
#include "forge/Recon/cuda/MapKernels.h"

namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_MapKernels() { throw_no_cuda_feature("map estimation on the GPU is unavailable"); }
}  // namespace

void coil_covariance(const forgeComplex<float>*, forgeComplex<float>*, forgeComplex<float>*, MapGrid, uword, uword) {
    no_cuda_MapKernels();
}
void coil_window_amplitude(const forgeComplex<float>*, double*, MapGrid, uword) { no_cuda_MapKernels(); }
void coil_covariance_total(const forgeComplex<float>*, const unsigned char*, forgeComplex<double>*, MapGrid, uword) {
    no_cuda_MapKernels();
}
void coil_leading_eigenvectors(const forgeComplex<float>*, const unsigned char*, const forgeComplex<double>*,
                               forgeComplex<float>*, unsigned char*, MapGrid, uword) {
    no_cuda_MapKernels();
}
void coil_interpolated_inside(const double*, MapGrid, double, unsigned char*, MapGrid) { no_cuda_MapKernels(); }
void coil_energy(const forgeComplex<float>*, double*, MapGrid, uword) { no_cuda_MapKernels(); }
void coil_interpolate_maps(const forgeComplex<float>*, MapGrid, const unsigned char*, forgeComplex<float>*, MapGrid,
                           uword) {
    no_cuda_MapKernels();
}
void field_map_weights(const forgeComplex<float>*, const EchoPair*, uword, double*, double*, double*, uword) {
    no_cuda_MapKernels();
}
double device_max(const double*, uword) { no_cuda_MapKernels(); }
void divide(double*, double, uword) { no_cuda_MapKernels(); }
void field_map_start(const forgeComplex<float>*, double*, forgeComplex<double>*, MapGrid, uword, double) {
    no_cuda_MapKernels();
}
void field_map_sqs_step(const double*, const double*, const EchoPair*, uword, const double*, double*, MapGrid, double) {
    no_cuda_MapKernels();
}

}  // namespace cuda
}  // namespace forge
