// The CPU-only build's one answer to every device entry point: forge was built without CUDA.
//
// A build without CUDA compiles the same operator sources as a CUDA build (no #ifdef in them); they reach the
// device only after device::available(), which is false here, or through a device-resident vector, which
// cannot exist here (forgeCol::put_on_gpu throws first). The definitions below exist so that those sources link;
// constructing a plan throws forge::cuda_error, and any other entry point fails loudly if it is ever reached.
#include "forge/Core/Exceptions.h"
#include "forge/CUDA/CudaFft.h"
#include "forge/CUDA/detail/DeviceOpsInstantiations.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/cuda/SenseKernels.h"
#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/Operators/dft/CudaMultiDft.h"
#include "forge/Operators/nufft/CudaNufftPipeline.h"
#include "forge/Operators/cuda/GridSelectKernels.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"
#include "forge/Operators/toeplitz/cuda/KernelCombine.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"
#include "forge/Penalties/cuda/PenaltyKernels.h"
#include "forge/Penalties/cuda/ProxDevice.h"
#include "forge/Recon/cuda/MapKernels.h"

// ---------------------------------------------------------------- CudaDftPipeline
namespace forge {
namespace cuda {
namespace {
// The exact DFT's plans (CudaDftPipeline, CudaMultiDft): 'what' names the entry point.
[[noreturn]] void no_cuda_dft(const char* what) {
    throw cuda_error(std::string(what) + ": forge was built without CUDA (configure with -DFORGE_CUDA=ON to use the GPU)");
}
}  // namespace

CudaDftPipeline::CudaDftPipeline(const DftGeometry& geom, const PlanOptions& options) {
    check_kernel("CudaDftPipeline: options.dft_kernel", options.dft_kernel);
    check_sizes("CudaDftPipeline", geom.n1, geom.n2);
    no_cuda_dft("CudaDftPipeline");
}
CudaDftPipeline::~CudaDftPipeline() = default;
void CudaDftPipeline::set_points(const float*, const float*, const float*, const float*, uword) {
    no_cuda_dft("CudaDftPipeline::set_points");
}
std::shared_ptr<const DftPoints> CudaDftPipeline::upload_points(const float*, const float*, const float*, const float*,
                                                                uword) const {
    no_cuda_dft("CudaDftPipeline::upload_points");
}
void CudaDftPipeline::set_points(std::shared_ptr<const DftPoints>) { no_cuda_dft("CudaDftPipeline::set_points"); }
std::shared_ptr<const DftPoints> CudaDftPipeline::points() const { no_cuda_dft("CudaDftPipeline::points"); }
void CudaDftPipeline::execute(Direction, const float*, float*, uword) { no_cuda_dft("CudaDftPipeline::execute"); }
void CudaDftPipeline::execute(const DftPoints&, Direction, const float*, float*, uword) const {
    no_cuda_dft("CudaDftPipeline::execute");
}
void CudaDftPipeline::execute_host(Direction, const float*, float*, uword) {
    no_cuda_dft("CudaDftPipeline::execute_host");
}
void CudaDftPipeline::synchronize() const { no_cuda_dft("CudaDftPipeline::synchronize"); }
uword CudaDftPipeline::num_samples() const { no_cuda_dft("CudaDftPipeline::num_samples"); }
uword CudaDftPipeline::point_uploads() const { no_cuda_dft("CudaDftPipeline::point_uploads"); }
const char* CudaDftPipeline::batch_kernel() const { no_cuda_dft("CudaDftPipeline::batch_kernel"); }

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- CudaFft
// FftPlan (FftPlan.cpp, compiled in both builds) makes a CudaFftPlan only for device data.
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_CudaFft() {
    throw cuda_error("CudaFftPlan: forge was built without CUDA (configure with -DFORGE_CUDA=ON to use cuFFT)");
}
}  // namespace
template <typename T1>
CudaFftPlan<T1>::CudaFftPlan(int, int, int, CUstream_st*, int) : Nx_(0), Ny_(0), Nz_(0) {
    no_cuda_CudaFft();
}
template <typename T1>
CudaFftPlan<T1>::~CudaFftPlan() = default;
template <typename T1>
void CudaFftPlan<T1>::exec(T1*, bool, uword) const {
    no_cuda_CudaFft();
}
template <typename T1>
void CudaFftPlan<T1>::centred(const T1*, T1*, bool, uword) const {
    no_cuda_CudaFft();
}
template <typename T1>
uword CudaFftPlan<T1>::max_pass() const {
    no_cuda_CudaFft();
}
template <typename T1>
int CudaFftPlan<T1>::handle_for(int) const {
    no_cuda_CudaFft();
}
template class CudaFftPlan<float>;
template class CudaFftPlan<double>;
bool stream_is_blocking(CUstream_st* stream) {
    if (!stream) return true;
    no_cuda_CudaFft();
}
}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- CudaMultiDft
namespace forge {
namespace cuda {

struct CudaMultiDft::Part {};
struct CudaMultiDft::Home {};

// The list's own checks first (as with CUDA), then "built without CUDA" (no_cuda_dft: the CudaDftPipeline section).
void CudaMultiDft::check_devices(const char* where, const std::vector<int>& devices) {
    if (devices.empty())
        throw invalid_argument(std::string(where) + ": the device list is empty; give one or more device numbers");
    no_cuda_dft(where);
}
CudaMultiDft::CudaMultiDft(const DftGeometry&, const std::vector<int>& devices, DftKernel kernel) {
    check_devices("CudaMultiDft", devices);
    CudaDftPipeline::check_kernel("CudaMultiDft: kernel", kernel);
}
CudaMultiDft::~CudaMultiDft() = default;
CudaMultiDft::Home& CudaMultiDft::home(int) const { no_cuda_dft("CudaMultiDft"); }
void CudaMultiDft::execute(Direction, const float*, float*, uword) const { no_cuda_dft("CudaMultiDft::execute"); }
void CudaMultiDft::synchronize() const { no_cuda_dft("CudaMultiDft::synchronize"); }

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- CudaNufftPipeline
// Gnufft makes a pipeline only after device::available(); a pipeline cannot exist here, so no accessor is reached.
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_CudaNufftPipeline() {
    throw cuda_error("CudaNufftPipeline: forge was built without CUDA (configure with -DFORGE_CUDA=ON)");
}
}  // namespace
struct CudaNufftPipeline::Impl {};
CudaNufftPipeline::CudaNufftPipeline(const NufftGeometry&, const PlanOptions&) { no_cuda_CudaNufftPipeline(); }
CudaNufftPipeline::~CudaNufftPipeline() = default;
void CudaNufftPipeline::set_points(uword, const float*, const float*, const float*) { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::set_points(uword, const int* const[3], const float* const[3]) { no_cuda_CudaNufftPipeline(); }
bool CudaNufftPipeline::set_trajectory(uword, const float* const[3], bool) { no_cuda_CudaNufftPipeline(); }
bool CudaNufftPipeline::has_trajectory() const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::copy_trajectory(float* const[3]) const { no_cuda_CudaNufftPipeline(); }
CudaNufftPipeline::SortTimes CudaNufftPipeline::sort_times() const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::execute(Direction, const float*, float*, uword) const { no_cuda_CudaNufftPipeline(); }
void CudaNufftPipeline::synchronize() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::n1() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::pass_size(uword) const { no_cuda_CudaNufftPipeline(); }
CUstream_st* CudaNufftPipeline::stream() const { no_cuda_CudaNufftPipeline(); }
int CudaNufftPipeline::device() const { no_cuda_CudaNufftPipeline(); }
uword CudaNufftPipeline::max_batch() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::num_sectors() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::sector_entries() const { no_cuda_CudaNufftPipeline(); }
long long CudaNufftPipeline::num_subproblems() const { no_cuda_CudaNufftPipeline(); }
}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- DeviceMemory
namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda_DeviceMemory(const char* what) {
    throw cuda_error(std::string(what) + ": forge was built without CUDA (configure with -DFORGE_CUDA=ON "
                                         "on a machine with nvcc to use the GPU)");
}
}  // namespace

bool built_with_cuda() { return false; }
bool available() { return false; }
const char* device_name() { return "none"; }
int device_count() { return 0; }
int current_device() { no_cuda_DeviceMemory("current device"); }
void set_device(int) { no_cuda_DeviceMemory("set device"); }
void* allocate(uword) { no_cuda_DeviceMemory("device allocation"); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, uword) { no_cuda_DeviceMemory("copy to device"); }
void copy_to_host(void*, const void*, uword) { no_cuda_DeviceMemory("copy to host"); }
void copy_on_device(void*, const void*, uword) { no_cuda_DeviceMemory("device copy"); }
void synchronize() {}
TransferStats transfer_stats() { return {}; }
void reset_transfer_stats() {}

}  // namespace device
}  // namespace forge

// ---------------------------------------------------------------- DeviceOps
namespace forge {
namespace device {
namespace {
[[noreturn]] void no_cuda_DeviceOps() { throw cuda_error("forge was built without CUDA: device arithmetic is unavailable"); }
}  // namespace

template <typename TO, typename TA, typename TB>
void binary(BinOp, const TA*, const TB*, TO*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void binary_scalar(BinOp, const T*, T, T*, uword, bool) {
    no_cuda_DeviceOps();
}
template <typename T>
void fill(T*, T, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void axpby(T, const T*, T, T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void conj(const T*, T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void real_part(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void imag_part(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
void abs(const T*, real_t<T>*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
T dot(const T*, const T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
real_t<T> norm2_squared(const T*, uword) {
    no_cuda_DeviceOps();
}
template <typename T>
T sum(const T*, uword) {
    no_cuda_DeviceOps();
}

FORGE_DEVICE_OPS_INSTANTIATE_ALL

}  // namespace device
}  // namespace forge

// ---------------------------------------------------------------- GridSelectKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_GridSelectKernels() {
    throw cuda_error("forge was built without CUDA: the device grid kernels (GfftSampled, ToeplitzNormal) are "
                     "unavailable");
}
}  // namespace

template <typename T1>
void box_pad(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void box_crop(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void gather(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword) {
    no_cuda_GridSelectKernels();
}
template <typename T1>
void scatter_sorted(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, forgeComplex<T1>*,
                    uword, uword) {
    no_cuda_GridSelectKernels();
}

#define FORGE_GRID_SELECT_INSTANTIATE(T1)                                                                             \
    template void box_pad<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);   \
    template void box_crop<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, const BoxGeometry&, uword, CUstream_st*);  \
    template void gather<T1>(const forgeComplex<T1>*, uword, const uword*, forgeComplex<T1>*, uword, uword);          \
    template void scatter_sorted<T1>(const forgeComplex<T1>*, uword, const uword*, const uword*, const uword*, uword, \
                                     forgeComplex<T1>*, uword, uword);
FORGE_GRID_SELECT_INSTANTIATE(float)
FORGE_GRID_SELECT_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- PenaltyKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_PenaltyKernels() {
    throw cuda_error("forge was built without CUDA: device penalty kernels are unavailable");
}
}  // namespace

template <typename T1>
void fd_penalty_values(const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda_PenaltyKernels();
}
template <typename T1>
void fd_penalty_gradient(const forgeComplex<T1>*, forgeComplex<T1>*, fd::Grid, fd::Potential, T1, T1) {
    no_cuda_PenaltyKernels();
}
template <typename T1>
void fd_penalty_denoms(const forgeComplex<T1>*, const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1) {
    no_cuda_PenaltyKernels();
}

#define FORGE_PENALTY_KERNELS_INSTANTIATE(T1)                                                                      \
    template void fd_penalty_values<T1>(const forgeComplex<T1>*, T1*, fd::Grid, fd::Potential, T1);                \
    template void fd_penalty_gradient<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, fd::Grid, fd::Potential, T1, \
                                          T1);                                                                     \
    template void fd_penalty_denoms<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, T1*, fd::Grid,           \
                                        fd::Potential, T1);
FORGE_PENALTY_KERNELS_INSTANTIATE(float)
FORGE_PENALTY_KERNELS_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- ProxKernels (proximal penalties)
// The proximal penalties reach these only for a device-resident vector, which cannot exist here.
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_prox() {
    throw cuda_error("forge was built without CUDA: device proximal penalty kernels are unavailable");
}
}  // namespace

template <typename T1>
void prox_soft_threshold(forgeComplex<T1>*, uword, T1, prox::Dims, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_abs_values(const forgeComplex<T1>*, T1*, uword, prox::Dims, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_wavelet_pass(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, int, prox::Filters<T1>, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_cyclic_shift(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, prox::Shift, bool) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_primal(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, T1, prox::TvGrid) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_dual_step(const forgeComplex<T1>*, forgeComplex<T1>*, forgeComplex<T1>*, T1, T1, bool, prox::TvGrid) {
    no_cuda_prox();
}
template <typename T1>
void prox_tv_values(const forgeComplex<T1>*, T1*, bool, prox::TvGrid) {
    no_cuda_prox();
}

#define FORGE_PROX_KERNELS_INSTANTIATE(T1)                                                                          \
    template void prox_soft_threshold<T1>(forgeComplex<T1>*, uword, T1, prox::Dims, bool);                          \
    template void prox_abs_values<T1>(const forgeComplex<T1>*, T1*, uword, prox::Dims, bool);                       \
    template void prox_wavelet_pass<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, int,                \
                                        prox::Filters<T1>, bool);                                                   \
    template void prox_cyclic_shift<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, prox::Dims, prox::Shift, bool); \
    template void prox_tv_primal<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, T1,       \
                                     prox::TvGrid);                                                                 \
    template void prox_tv_dual_step<T1>(const forgeComplex<T1>*, forgeComplex<T1>*, forgeComplex<T1>*, T1, T1,      \
                                        bool, prox::TvGrid);                                                        \
    template void prox_tv_values<T1>(const forgeComplex<T1>*, T1*, bool, prox::TvGrid);
FORGE_PROX_KERNELS_INSTANTIATE(float)
FORGE_PROX_KERNELS_INSTANTIATE(double)

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- Recon (MapKernels)
// Map estimation reaches these only after device::available() (recon_on_gpu), which is false here.
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_MapKernels() {
    throw cuda_error("forge was built without CUDA: map estimation on the GPU is unavailable");
}
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
void fieldmap_weights(const forgeComplex<float>*, const EchoPair*, uword, double*, double*, double*, uword) {
    no_cuda_MapKernels();
}
double device_max(const double*, uword) { no_cuda_MapKernels(); }
void divide(double*, double, uword) { no_cuda_MapKernels(); }
void fieldmap_start(const forgeComplex<float>*, double*, forgeComplex<double>*, MapGrid, uword, double) {
    no_cuda_MapKernels();
}
void fieldmap_sqs_step(const double*, const double*, const EchoPair*, uword, const double*, double*, MapGrid, double) {
    no_cuda_MapKernels();
}

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- SenseKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_SenseKernels() { throw cuda_error("forge was built without CUDA: device SENSE kernels are unavailable"); }
}  // namespace

template <typename T1>
void sense_expand(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword) {
    no_cuda_SenseKernels();
}
template <typename T1>
void sense_combine(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, bool) {
    no_cuda_SenseKernels();
}

template void sense_expand<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                  uword);
template void sense_expand<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                   uword, uword);
template void sense_combine<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*, uword,
                                   uword, bool);
template void sense_combine<double>(const forgeComplex<double>*, const forgeComplex<double>*, forgeComplex<double>*,
                                    uword, uword, bool);

template <typename T1>
void segment_phases(const T1*, uword, const double*, uword, forgeComplex<T1>*) {
    no_cuda_SenseKernels();
}
template void segment_phases<float>(const float*, uword, const double*, uword, forgeComplex<float>*);
template void segment_phases<double>(const double*, uword, const double*, uword, forgeComplex<double>*);

}  // namespace cuda
}  // namespace forge

// ---------------------------------------------------------------- ToeplitzKernels
namespace forge {
namespace cuda {
namespace {
[[noreturn]] void no_cuda_ToeplitzKernels(const char* what) {
    throw cuda_error(std::string("forge was built without CUDA: the Toeplitz ") + what + " on the GPU is unavailable");
}
}  // namespace

template <typename T1>
void toeplitz_expand_axis(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, uword,
                          uword, uword) {
    no_cuda_ToeplitzKernels("kernel expansion");
}

template void toeplitz_expand_axis<float>(const forgeComplex<float>*, const forgeComplex<float>*, forgeComplex<float>*,
                                          uword, uword, uword, uword, uword);
template void toeplitz_expand_axis<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                           forgeComplex<double>*, uword, uword, uword, uword, uword);

template <typename T1>
void toeplitz_gather_rows(const forgeComplex<T1>*, uword, const unsigned*, const T1*, uword, uword, uword,
                          forgeComplex<T1>*) {
    no_cuda_ToeplitzKernels("pair-data gather");
}

template void toeplitz_gather_rows<float>(const forgeComplex<float>*, uword, const unsigned*, const float*, uword,
                                          uword, uword, forgeComplex<float>*);
template void toeplitz_gather_rows<double>(const forgeComplex<double>*, uword, const unsigned*, const double*, uword,
                                           uword, uword, forgeComplex<double>*);

// ToeplitzApply.h: the device apply's fused kernels and segment-grid plans.
template <typename T1>
void toeplitz_pad_segments(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,
                           const ToeplitzChunk&, CUstream_st*) {
    no_cuda_ToeplitzKernels("segment padding");
}
template <typename T1>
void toeplitz_mix_segments(const forgeComplex<T1>*, const ToeplitzPairTable&, forgeComplex<T1>*, const ToeplitzChunk&,
                           CUstream_st*) {
    no_cuda_ToeplitzKernels("kernel product");
}
template <typename T1>
void toeplitz_mix_segments_any(const forgeComplex<T1>*, const long long*, const forgeComplex<T1>*, forgeComplex<T1>*,
                               const ToeplitzChunk&, CUstream_st*) {
    no_cuda_ToeplitzKernels("kernel product");
}
template <typename T1>
void toeplitz_crop_segments(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, const ToeplitzChunk&,
                            CUstream_st*) {
    no_cuda_ToeplitzKernels("segment crop");
}
template <typename T1>
void toeplitz_zero(forgeComplex<T1>*, uword, CUstream_st*) {
    no_cuda_ToeplitzKernels("scratch zeroing");
}
template <typename T1>
ToeplitzFft<T1>::ToeplitzFft(const ToeplitzChunk&, CUstream_st*) {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}
template <typename T1>
ToeplitzFft<T1>::~ToeplitzFft() = default;
template <typename T1>
void ToeplitzFft<T1>::forward(forgeComplex<T1>*, forgeComplex<T1>*) const {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}
template <typename T1>
void ToeplitzFft<T1>::backward(forgeComplex<T1>*) const {
    no_cuda_ToeplitzKernels("segment-grid FFT");
}

#define FORGE_NO_CUDA_TOEPLITZ_APPLY(T1)                                                                           \
    template void toeplitz_pad_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*,  \
                                            const ToeplitzChunk&, CUstream_st*);                                  \
    template void toeplitz_mix_segments<T1>(const forgeComplex<T1>*, const ToeplitzPairTable&, forgeComplex<T1>*, \
                                            const ToeplitzChunk&, CUstream_st*);                                  \
    template void toeplitz_mix_segments_any<T1>(const forgeComplex<T1>*, const long long*,                        \
                                                const forgeComplex<T1>*, forgeComplex<T1>*, const ToeplitzChunk&,  \
                                                CUstream_st*);                                                     \
    template void toeplitz_crop_segments<T1>(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, \
                                             const ToeplitzChunk&, CUstream_st*);                                 \
    template void toeplitz_zero<T1>(forgeComplex<T1>*, uword, CUstream_st*);                                      \
    template class ToeplitzFft<T1>;
FORGE_NO_CUDA_TOEPLITZ_APPLY(float)
FORGE_NO_CUDA_TOEPLITZ_APPLY(double)
#undef FORGE_NO_CUDA_TOEPLITZ_APPLY
template <typename T1>
void toeplitz_combine_kernels(const forgeComplex<T1>*, const forgeComplex<T1>*, forgeComplex<T1>*, uword, uword, uword,
                              uword, uword, bool) {
    no_cuda_ToeplitzKernels("kernel combination");
}
template void toeplitz_combine_kernels<float>(const forgeComplex<float>*, const forgeComplex<float>*,
                                              forgeComplex<float>*, uword, uword, uword, uword, uword, bool);
template void toeplitz_combine_kernels<double>(const forgeComplex<double>*, const forgeComplex<double>*,
                                               forgeComplex<double>*, uword, uword, uword, uword, uword, bool);

}  // namespace cuda
}  // namespace forge
