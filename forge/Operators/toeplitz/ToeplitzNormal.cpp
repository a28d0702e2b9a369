// ToeplitzNormal's grid and constructors. The kernel build is in KernelBuild.cpp, the applies in cpu/HostApply.cpp
// (host) and DeviceApply.cpp (GPU); detail/ToeplitzState.h has what they share.
#include "forge/Operators/toeplitz/ToeplitzNormal.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>

#include "forge/CUDA/FftPlan.h"
#include "forge/CUDA/PlanOptions.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"
#include "forge/Operators/toeplitz/detail/KernelSources.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"

namespace forge {

using toeplitz::gib;
using toeplitz::kName;
using toeplitz::pair_count;

namespace {
// k.t of a field-corrected geometry constructor (it needs the readout times).
template <typename T1>
const arma::Col<T1>& readout_times(const Trajectory<T1>& k) {
    if (!k.has_times())
        throw invalid_argument(std::string(kName) +
                               ": the trajectory has no readout times (k.t is empty); the field-corrected operator "
                               "needs one time per sample");
    return k.t;
}
}  // namespace

template <typename T1>
void ToeplitzNormal<T1>::set_grid(uword Nx, uword Ny, uword Nz, uword L) {
    const uword n2 = checked_product(kName, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
    if (n2 == 0) {
        std::ostringstream m;
        m << kName << ": the image grid " << Nx << " x " << Ny << " x " << Nz
          << " is empty; each of Nx, Ny, Nz must be "
          << "at least 1";
        throw invalid_argument(m.str());
    }
    const uword N[3] = {Nx, Ny, Nz};
    const char* names[3] = {"2 Nx", "2 Ny", "2 Nz"};
    for (int d = 0; d < 3; ++d) {
        N_[d] = N[d];
        P_[d] = N[d] > 1 ? 2 * N[d] : 1;
        checked_product(kName, {{names[d], P_[d]}}, detail::kMaxFftAxis, "FFTW and cuFFT take int dimensions");
    }
    P_total_ = checked_product(kName, {{"2 Nx", P_[0]}, {"2 Ny", P_[1]}, {"2 Nz", P_[2]}});
    // Kernels that cannot fit are refused here, before anything of the grid's size is allocated (a bare
    // std::bad_alloc would name neither the grid nor the memory it needs).
    const double bytes = kernel_bytes(Nx, Ny, Nz, L), mem = detail::physical_memory_bytes();
    if (mem > 0 && bytes > 0.5 * mem) {
        std::ostringstream m;
        if (L == 0) {
            m << kName << ": the kernel of the " << Nx << " x " << Ny << " x " << Nz << " image grid would take "
              << gib(bytes) << " (" << P_total_ << " complex cells on the padded grid " << P_[0] << " x " << P_[1]
              << " x " << P_[2] << "), more than half of this machine's " << gib(mem)
              << "; use a smaller grid or the exact operator's normal";
        } else {
            m << kName << ": the kernels of L = " << L << " segments would take up to " << gib(bytes) << " ("
              << pair_count(L) << " kernels of " << P_total_ << " complex cells), more than half of this machine's "
              << gib(mem) << "; ask for a larger error (fewer segments) or use the exact operator";
        }
        throw invalid_argument(m.str());
    }
    this->set_sizes(n2, n2);
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));
    cell_.resize(n2);
    for (uword z = 0; z < Nz; ++z)
        for (uword y = 0; y < Ny; ++y)
            for (uword x = 0; x < Nx; ++x) cell_[x + Nx * (y + Ny * z)] = x + P_[0] * (y + P_[1] * z);
    cache_ = std::make_shared<Cache>();
}

template <typename T1>
void ToeplitzNormal<T1>::set_device_options(const ToeplitzOptions& options) {
    if (options.device < -1) {
        throw invalid_argument(std::string(kName) + ": options.device = " + std::to_string(options.device) +
                               "; expected -1 (the current device) or a device number");
    }
    stream_ = options.stream;
    device_ = options.device;
    if (!device::available()) return;  // the operator runs on the host; the device options have nothing to do
    if (device_ >= device::device_count()) {
        throw invalid_argument(std::string(kName) + ": options.device = " + std::to_string(device_) +
                               "; expected -1 (the current device) or a device number in [0, " +
                               std::to_string(device::device_count()) + ")");
    }
    if (stream_ && !cuda::stream_is_blocking(stream_)) {
        throw invalid_argument(std::string(kName) +
                               ": options.stream was made with cudaStreamNonBlocking; the operator's input and its "
                               "segment phases run on the legacy default stream, which such a stream does not wait "
                               "for (use a stream made by cudaStreamCreate)");
    }
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const ToeplitzOptions& options)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(Nx, Ny, Nz, 0);
    set_device_options(options);
    S_ = 1;
    build(kx, ky, kz, W, arma::cx_mat(kx.n_elem, 1, arma::fill::ones), options);
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& field_map,
                                   const arma::Col<T1>& timeVec, uword L, TSInterp type, const ToeplitzOptions& options)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(Nx, Ny, Nz, L);
    set_device_options(options);
    const uword n2 = this->domain_size();
    require_length(kName, "field_map", field_map.n_elem, n2, "Nx * Ny * Nz");
    require_length(kName, "timeVec", timeVec.n_elem, kx.n_elem, "the number of samples (length of kx)");
    const TSFactors f = TimeSegmentationCore<T1>::segment_factors(field_map, timeVec, L, type);
    S_ = L + 1;
    phases_ = TimeSegmentationCore<T1>::segment_phase_maps(field_map, f.tau, "ToeplitzNormal segment phases");
    build(kx, ky, kz, W, f.a, options);
}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                                   const ToeplitzOptions& options)
    : ToeplitzNormal(grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, W, options) {}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                                   const arma::Col<T1>& field_map, uword L, TSInterp type,
                                   const ToeplitzOptions& options)
    : ToeplitzNormal(grid.nx, grid.ny, grid.nz, k.kx, k.ky, k.kz, W, field_map, readout_times(k), L, type, options) {}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                                   const TimeSegmentationCore<T1>& segmented, const ToeplitzOptions& options)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(grid.nx, grid.ny, grid.nz, segmented.L());
    set_device_options(options);
    require_length(kName, "the time-segmented operator's pixels", segmented.domain_size(), this->domain_size(),
                   "grid.nx * grid.ny * grid.nz");
    require_length(kName, "the time-segmented operator's samples", segmented.n1(), k.kx.n_elem,
                   "the trajectory's samples (length of k.kx)");
    S_ = segmented.L() + 1;
    phases_ = segmented.phase_maps();
    const arma::Mat<std::complex<T1>> a = segmented.interpolators();
    build(k.kx, k.ky, k.kz, W, a, options);
}

namespace {
// A band's values for the min-max interpolators' histogram: uniform over [-B, B].
template <typename T1>
arma::Col<T1> band_values(FieldBand band) {
    return arma::linspace<arma::Col<T1>>(T1(-band.half_width), T1(band.half_width), 1025);
}

// The field map less its centre (the midpoint of its range), after checking that the range fits the band.
template <typename T1>
arma::Col<T1> centred_in_band(const char* where, const arma::Col<T1>& field_map, double halfWidth) {
    require_finite(where, "field_map", field_map.memptr(), field_map.n_elem);
    const double lo = double(field_map.min()), hi = double(field_map.max()), centre = 0.5 * (lo + hi);
    if (0.5 * (hi - lo) > halfWidth * (1 + 1e-6)) {
        std::ostringstream m;
        m << where << ": the field map spans " << lo << " to " << hi << " rad/s, " << hi - lo
          << " rad/s wide; the kernels' band is " << 2 * halfWidth << " rad/s wide (FieldBand half_width " << halfWidth
          << "): build kernels for a wider band";
        throw invalid_argument(m.str());
    }
    return field_map - T1(centre);
}
}  // namespace

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(const ImageGrid& grid, const Trajectory<T1>& k, const arma::Col<T1>& W,
                                   const arma::Col<T1>& field_map, FieldBand band, uword L,
                                   const ToeplitzOptions& options)
    : LinearOperator<T1>(kName, 0, 0) {
    set_grid(grid.nx, grid.ny, grid.nz, L);
    set_device_options(options);
    const arma::Col<T1>& t = readout_times(k);
    require_length(kName, "field_map", field_map.n_elem, this->domain_size(), "grid.nx * grid.ny * grid.nz");
    require_length(kName, "k.t", t.n_elem, k.kx.n_elem, "the number of samples (length of k.kx)");
    if (!(band.half_width >= 0) || !std::isfinite(band.half_width))
        throw invalid_argument(std::string(kName) + ": band.half_width is " + std::to_string(band.half_width) +
                               " (expected a finite value >= 0, rad/s)");
    const arma::Col<T1> centred = centred_in_band(kName, field_map, band.half_width);
    const TSFactors f = TimeSegmentationCore<T1>::segment_factors(band_values<T1>(band), t, L, TSInterp::MinMax);
    S_ = L + 1;
    tau_ = f.tau;
    bandHalfWidth_ = band.half_width;
    banded_ = true;
    phases_ = TimeSegmentationCore<T1>::segment_phase_maps(centred, tau_, "ToeplitzNormal segment phases");
    build(k.kx, k.ky, k.kz, W, f.a, options);
}

template <typename T1>
ToeplitzNormal<T1> ToeplitzNormal<T1>::with_field_map(const arma::Col<T1>& field_map) const {
    const std::string where = std::string(kName) + "::with_field_map";
    if (!banded_)
        throw invalid_argument(where + ": the kernels were built for one field map (or none), not for a FieldBand");
    require_length(where.c_str(), "field_map", field_map.n_elem, this->domain_size(), "Nx * Ny * Nz");
    const arma::Col<T1> centred = centred_in_band(where.c_str(), field_map, bandHalfWidth_);
    ToeplitzNormal out(*this);
    // A cache of its own (device phases, plans, scratch) holding a copy of the kernels.
    out.cache_ = std::make_shared<Cache>();
    {
        std::lock_guard<std::mutex> lock(cache_->mutex);
        out.cache_->host = cache_->host;
        out.cache_->device = cache_->device;
    }
    out.phases_ = TimeSegmentationCore<T1>::segment_phase_maps(centred, tau_, "ToeplitzNormal segment phases");
    return out;
}

namespace {
ToeplitzOptions positional_options(KernelBuild where, AxisGrouping grouping, const ToeplitzBuildProgress& progress) {
    ToeplitzOptions o;
    o.build = where;
    o.grouping = grouping;
    o.progress = progress;
    return o;
}
}  // namespace

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, KernelBuild where,
                                   AxisGrouping grouping, const ToeplitzBuildProgress& progress)
    : ToeplitzNormal(Nx, Ny, Nz, kx, ky, kz, W, positional_options(where, grouping, progress)) {}

template <typename T1>
ToeplitzNormal<T1>::ToeplitzNormal(uword Nx, uword Ny, uword Nz, const arma::Col<T1>& kx, const arma::Col<T1>& ky,
                                   const arma::Col<T1>& kz, const arma::Col<T1>& W, const arma::Col<T1>& field_map,
                                   const arma::Col<T1>& timeVec, uword L, TSInterp type, KernelBuild where,
                                   AxisGrouping grouping, const ToeplitzBuildProgress& progress)
    : ToeplitzNormal(Nx, Ny, Nz, kx, ky, kz, W, field_map, timeVec, L, type,
                     positional_options(where, grouping, progress)) {}

template <typename T1>
uword ToeplitzNormal<T1>::choose_segments(const arma::Col<T1>& field_map, const arma::Col<T1>& timeVec,
                                          double targetError, TSInterp type, uword Lmax) {
    if (!(targetError > 0) || !std::isfinite(targetError))
        throw invalid_argument(std::string(kName) + "::choose_segments: targetError must be a positive number");
    return TimeSegmentationCore<T1>::choose_segments(field_map, timeVec, targetError / 2, type, Lmax).L;
}

template <typename T1>
uword ToeplitzNormal<T1>::choose_segments(const arma::Col<T1>& timeVec, FieldBand band, double targetError,
                                          uword Lmax) {
    if (!(band.half_width >= 0) || !std::isfinite(band.half_width))
        throw invalid_argument(std::string(kName) + "::choose_segments: band.half_width is " +
                               std::to_string(band.half_width) + " (expected a finite value >= 0, rad/s)");
    return choose_segments(band_values<T1>(band), timeVec, targetError, TSInterp::MinMax, Lmax);
}

template <typename T1>
FieldBand ToeplitzNormal<T1>::field_band(const arma::Col<T1>& field_map) {
    if (field_map.is_empty()) return FieldBand{0};
    require_finite((std::string(kName) + "::field_band").c_str(), "field_map", field_map.memptr(), field_map.n_elem);
    return FieldBand{0.5 * (double(field_map.max()) - double(field_map.min()))};
}

template <typename T1>
double ToeplitzNormal<T1>::kernel_bytes(uword Nx, uword Ny, uword Nz, uword L) {
    const double cells = double(Nx > 1 ? 2 * Nx : 1) * double(Ny > 1 ? 2 * Ny : 1) * double(Nz > 1 ? 2 * Nz : 1);
    return double(pair_count(L)) * cells * sizeof(std::complex<T1>);
}

template <typename T1>
double ToeplitzNormal<T1>::estimate_kernel_seconds(uword n1, uword Nx, uword Ny, uword Nz, uword basis, bool device,
                                                   KernelSource source) {
    toeplitz::BuildShape shape;
    shape.n1 = n1;
    shape.nb = std::max<uword>(basis, 1);
    shape.device = device;
    shape.single = std::is_same<T1, float>::value;
    const uword N[3] = {Nx, Ny, Nz};
    for (int d = 0; d < 3; ++d) shape.N[d] = N[d], shape.P[d] = N[d] > 1 ? 2 * N[d] : 1;
    const toeplitz::SourceCost cost = toeplitz::estimate_source_cost(shape);
    if (source == KernelSource::Exact || cost.nufft < 0) return cost.exact;
    if (source == KernelSource::Nufft) return cost.nufft;
    return toeplitz::choose_kernel_source(KernelSource::Auto, shape) == KernelSource::Nufft ? cost.nufft : cost.exact;
}

template class ToeplitzNormal<float>;
template class ToeplitzNormal<double>;

}  // namespace forge
