#pragma once
// DftOperator<T1>: the exact field-corrected non-uniform DFT shared by Gdft and GdftR2.
//
//   forward  s_j = sum_k m_k exp(-i (2 pi k_j . r_k + FM_k t_j)) [* B(j,k)]
//   adjoint  m_k = sum_j s_j exp(+i (2 pi k_j . r_k + FM_k t_j)) [* B(j,k)]
//   B(j,k)   = sincPG(kx_j/numX + Gx_k t_j) sincPG(ky_j/numY + Gy_k t_j) sincPG(kz_j/numZ + Gz_k t_j)
//              (GdftR2 only; sincPG(x) = sin(pi x)/(pi x), 1 at 0)
//
// Units: k in cycles per FOV, r in FOV units, field_map in rad/s, t in seconds, Gx/Gy/Gz in cycles/s per voxel.
// Host data (arma::Col or host forgeCol) runs on the CPU with OpenMP; on CUDA float builds a
// forgeCol already on the GPU runs on the operator's CudaDftPipeline (its GPU plan, made with the operator's
// DftOptions) and its result stays there. Copies share the plan; an operator made from another's pixels (the
// pixels-sharing constructors) shares it too, with its options, and only adds its own sample set on the device.
#include <complex>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <armadillo>

#include "forge/Core/Geometry.h"
#include "forge/Operators/LinearOperator.h"
#include "forge/Operators/dft/DftOptions.h"

namespace forge {
namespace cuda {
class CudaDftPipeline;
class CudaMultiDft;
class DftPoints;
struct DftGeometry;
}  // namespace cuda
namespace dftcpu {
template <typename T>
struct DftGeometryView;
}

// A LinearOperator: G * x (image, n2 -> k-space, n1), G / y (adjoint), forward/adjoint(v, nbatch) on nbatch
// vectors stored one after another; on the GPU each sample-pixel phase is evaluated once for the whole batch.
template <typename T1>
class DftOperator : public LinearOperator<T1> {
public:
    using typename LinearOperator<T1>::Elem;
    using typename LinearOperator<T1>::ArmaVec;
    using typename LinearOperator<T1>::ForgeVec;
    using complex_type = std::complex<T1>;

    // Largest phase, in turns, that T1 evaluates accurately: the constructors refuse a geometry whose phase bound
    // sum_axes max|k| max|r| + max|field_map| max|t| / (2 pi) (and, for GdftR2, sinc argument max|k|/num + max|G|
    // max|t| per axis) exceeds it. A float phase of 2^12 turns keeps 12 fractional bits: relative error ~2e-4 there,
    // growing in proportion beyond (docs/conventions.md). Double has 29 more bits: 2^41 turns.
    static constexpr double kMaxPhaseTurns = std::is_same<T1, float>::value ? 4096.0 : 2199023255552.0;

    uword n1() const { return n1_; }  // k-space samples
    bool has_gradients() const { return hasGradients_; }
    // True when device-resident forgeCol input runs on a CudaDftPipeline (CUDA float builds with a GPU).
    bool gpu_enabled() const { return static_cast<bool>(pipeline_); }
    // The GPU plan device input runs on (null without one). Operators that share pixels share it.
    const cuda::CudaDftPipeline* gpu_plan() const { return pipeline_.get(); }

    // The options the operator was made with (an operator made from another's pixels: that operator's).
    const DftOptions& options() const { return options_; }
    // options().devices: the GPUs one transform of device-resident input is split over (empty: one GPU).
    const std::vector<int>& devices() const { return options_.devices; }

    // Runs device-resident input on several GPUs of this machine, as options().devices = devices would have
    // from the constructor (DftOptions.h); empty: one GPU. Throws forge::invalid_argument for a device number
    // that does not exist (or a double operator) and forge::cuda_error without a CUDA device or on a CPU
    // build. Copies made afterwards (SENSE's) run on the same devices.
    FORGE_DEPRECATED("DftOptions::devices, given to the constructor")
    void set_devices(const std::vector<int>& devices);

protected:
    // Checks the options (DftOptions.h) and the geometry; make_pipeline() then makes the GPU plans.
    DftOperator(const char* name, uword n1, uword n2, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                const arma::Col<T1>& kz, const arma::Col<T1>& ix, const arma::Col<T1>& iy, const arma::Col<T1>& iz,
                const arma::Col<T1>& field_map, const arma::Col<T1>& t, const DftOptions& options);
    // The same from geometry values: k.check and pixels.check name a vector of the wrong length; an empty
    // field map is zero, and empty readout times are zero unless times_required.
    DftOperator(const char* name, const Trajectory<T1>& k, const PixelGeometry<T1>& pixels, bool times_required,
                const DftOptions& options);
    // names: how the caller calls Gx, Gy, Gz in messages.
    void set_gradients(const char* name, const arma::Col<T1>& Gx, const arma::Col<T1>& Gy, const arma::Col<T1>& Gz,
                       uword numX, uword numY, uword numZ, const char* const (&names)[3] = kGradientNames);
    // The pixels (ix, iy, iz, field_map and any gradient maps) and options of 'pixels' with a new sample set (n1
    // entries each).
    DftOperator(const char* name, const DftOperator& pixels, uword n1, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                const arma::Col<T1>& kz, const arma::Col<T1>& t);
    // The same from a trajectory: its times may be empty where the pixel side has no field map and no gradients.
    DftOperator(const char* name, const DftOperator& pixels, const Trajectory<T1>& k);
    void make_pipeline();
    // Runs on the GPU plan of 'pixels' (same pixel geometry) with this operator's samples, uploaded once.
    void share_pipeline(const DftOperator& pixels);

    void apply_host(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;
    void apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool forward) const override;

private:
    static constexpr const char* kGradientNames[3] = {"Gx", "Gy", "Gz"};
    dftcpu::DftGeometryView<T1> cpu_view() const;
    void fill_geometry(cuda::DftGeometry& g) const;  // the host arrays of the GPU plans
    // The plan over several GPUs for devices (empty: none); 'where' names the caller in messages.
    void use_devices(const std::string& where, const std::vector<int>& devices);
    // Whether the phase depends on t: a field map or gradient maps that are not all zero.
    bool needs_times() const;

    const char* name_;
    uword n1_, n2_;
    arma::Col<T1> kx_, ky_, kz_, ix_, iy_, iz_, FM_, t_;
    arma::Col<T1> fmTurns_;  // field_map / (2 pi): turns per second
    bool hasGradients_ = false;
    arma::Col<T1> Gx_, Gy_, Gz_;
    uword numX_ = 1, numY_ = 1, numZ_ = 1;
    // Shared between copies of the operator and operators made from its pixels; the operator always names
    // its own device-resident samples, so it never rebinds the plan's current points.
    std::shared_ptr<cuda::CudaDftPipeline> pipeline_;
    std::shared_ptr<const cuda::DftPoints> points_;
    // Why there is no pipeline although a device is present (sizes the kernels cannot index); else empty.
    std::string gpuRefusal_;
    // options_.devices: the plan over several GPUs (shared by copies).
    std::shared_ptr<cuda::CudaMultiDft> multi_;
    DftOptions options_;
};

extern template class DftOperator<float>;
extern template class DftOperator<double>;

}  // namespace forge
