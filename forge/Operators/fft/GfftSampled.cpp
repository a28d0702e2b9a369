#include "forge/Operators/fft/GfftSampled.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <sstream>

#include "forge/Operators/cuda/GridSelectKernels.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"

namespace forge {

namespace {
// Distance (in grid steps) a sample may lie off the lattice and still count as on it.
constexpr double kLatticeTolerance = 1e-3;

// Grid index along one axis of sample value k (cycles per image FOV), or -1 when it is off the lattice.
long long lattice_index(double k, uword N, uword M) {
    if (N == 1) return 0;
    const double q = k * double(M) / double(N);
    if (!std::isfinite(q)) return -1;
    const double r = std::round(q);
    if (std::fabs(q - r) > kLatticeTolerance) return -1;
    const long long m = static_cast<long long>(M);
    long long i = (static_cast<long long>(r) + m / 2) % m;
    return i < 0 ? i + m : i;
}

uword centring_half(const uword* M) {
    return (M[0] > 1 ? M[0] / 2 : 0) + (M[1] > 1 ? M[1] / 2 : 0) + (M[2] > 1 ? M[2] / 2 : 0);
}

// Uninitialised scratch grid (the transforms overwrite every entry they read).
template <typename T>
struct Scratch {
    explicit Scratch(uword n) : p(static_cast<T*>(std::malloc(n * sizeof(T)))) {
        if (n && !p) throw std::bad_alloc();
    }
    ~Scratch() { std::free(p); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    T* p;
};

void check_grids(const uword* N, const uword* M) {
    detail::require_centred_grid("GfftSampled (image)", N[0], N[1], N[2]);
    detail::require_centred_grid("GfftSampled (FFT grid)", M[0], M[1], M[2]);
    const char* names[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) {
        if (M[d] < N[d] || (N[d] == 1 && M[d] != 1)) {
            std::ostringstream m;
            m << "GfftSampled: the FFT grid along " << names[d] << " has " << M[d] << " points for an image of " << N[d]
              << "; it must be at least the image size (and 1 when the image size is 1)";
            throw invalid_argument(m.str());
        }
    }
}
}  // namespace

template <typename T1>
struct GfftSampled<T1>::DeviceIndex {
    DeviceBuffer sel, dest, start, src;
};

template <typename T1>
bool GfftSampled<T1>::on_grid(uword Nx, uword Ny, uword Nz, uword Mx, uword My, uword Mz, const arma::Col<T1>& kx,
                              const arma::Col<T1>& ky, const arma::Col<T1>& kz) {
    if (ky.n_elem != kx.n_elem || kz.n_elem != kx.n_elem) return false;
    const uword N[3] = {Nx, Ny, Nz}, M[3] = {Mx, My, Mz};
    const arma::Col<T1>* k[3] = {&kx, &ky, &kz};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 0 || M[d] < N[d] || (N[d] > 1 && (N[d] % 2 || M[d] % 2)) || (N[d] == 1 && M[d] != 1)) return false;
        for (uword j = 0; j < kx.n_elem; ++j)
            if (lattice_index(double((*k[d])[j]), N[d], M[d]) < 0) return false;
    }
    return true;
}

template <typename T1>
GfftSampled<T1>::GfftSampled(uword Nx, uword Ny, uword Nz, uword Mx, uword My, uword Mz, const arma::Col<T1>& kx,
                             const arma::Col<T1>& ky, const arma::Col<T1>& kz)
    : LinearOperator<T1>("GfftSampled", kx.n_elem, Nx * Ny * Nz), n1_(kx.n_elem),
      n2_(Nx * Ny * Nz), N_{Nx, Ny, Nz}, M_{Mx, My, Mz}, off_{0, 0, 0} {
    check_grids(N_, M_);
    if (n1_ == 0) throw invalid_argument("GfftSampled: kx is empty; give at least one sample");
    if (ky.n_elem != n1_ || kz.n_elem != n1_) {
        std::ostringstream m;
        m << "GfftSampled: kx, ky, kz have " << kx.n_elem << ", " << ky.n_elem << ", " << kz.n_elem
          << " entries; they must have the same length n1";
        throw invalid_argument(m.str());
    }
    for (int d = 0; d < 3; ++d) off_[d] = (M_[d] - N_[d]) / 2;
    const arma::Col<T1>* k[3] = {&kx, &ky, &kz};
    const char* names[3] = {"kx", "ky", "kz"};
    sel_.resize(n1_);
    for (uword j = 0; j < n1_; ++j) {
        long long idx[3];
        for (int d = 0; d < 3; ++d) {
            idx[d] = lattice_index(double((*k[d])[j]), N_[d], M_[d]);
            if (idx[d] < 0) {
                std::ostringstream m;
                m << "GfftSampled: " << names[d] << "[" << j << "] = " << (*k[d])[j]
                  << " cycles/FOV is not on the FFT grid's k-space lattice (multiples of N/M = " << N_[d] << "/"
                  << M_[d] << "); use Gdft or Gnufft for off-grid samples";
                throw invalid_argument(m.str());
            }
        }
        sel_[j] = uword(idx[0]) + M_[0] * (uword(idx[1]) + M_[1] * uword(idx[2]));
        // Gfft's centred transform is sN (-1)^k FFT((-1)^r x), sN = prod (-1)^(M/2) over axes longer than 1
        const bool odd = ((idx[0] + idx[1] + idx[2]) & 1) != ((centring_half(M_) & 1) != 0);
        sign_.push_back(odd ? T1(-1) : T1(1));
    }
    // S^T: samples grouped by grid point (stable: data order within a point), one entry per distinct point.
    src_.resize(n1_);
    std::iota(src_.begin(), src_.end(), uword(0));
    std::stable_sort(src_.begin(), src_.end(), [&](uword a, uword b) { return sel_[a] < sel_[b]; });
    start_.push_back(0);
    for (uword p = 0; p < n1_; ++p) {
        if (p > 0 && sel_[src_[p]] == sel_[src_[p - 1]]) continue;
        if (p > 0) start_.push_back(p);
        dest_.push_back(sel_[src_[p]]);
    }
    start_.push_back(n1_);
    this->set_domain_shape(ImageGrid(Nx, Ny, Nz));
    auto plan = std::make_shared<FftPlan<T1>>(M_[0], M_[1], M_[2]);
    if (device::available()) {
        plan->prepare_device();
        auto d = std::make_shared<DeviceIndex>();
        auto upload = [](const std::vector<uword>& v) {
            DeviceBuffer b(v.size() * sizeof(uword));
            if (!v.empty()) device::copy_to_device(b.get(), v.data(), v.size() * sizeof(uword));
            return b;
        };
        d->sel = upload(sel_);
        d->dest = upload(dest_);
        d->start = upload(start_);
        d->src = upload(src_);
        dev_ = d;
    }
    plan_ = std::move(plan);
}

template <typename T1>
void GfftSampled<T1>::forward_host(const forgeComplex<T1>* image, forgeComplex<T1>* kdata,
                                   forgeComplex<T1>* grid) const {
    // pad: the image rows, times the centring signs (-1)^(x+y+z) of their grid points, into a zero grid
    std::memset(static_cast<void*>(grid), 0, grid_elems() * sizeof(forgeComplex<T1>));
    for (uword z = 0; z < N_[2]; ++z)
        for (uword y = 0; y < N_[1]; ++y) {
            const uword gy = y + off_[1], gz = z + off_[2];
            forgeComplex<T1>* row = grid + off_[0] + M_[0] * (gy + M_[1] * gz);
            const forgeComplex<T1>* src = image + N_[0] * (y + N_[1] * z);
            T1 f = ((off_[0] + gy + gz) & 1) ? T1(-1) : T1(1);
            for (uword x = 0; x < N_[0]; ++x, f = -f) row[x] = src[x] * f;
        }
    plan_->execute(FftMemory::host, grid, true);
    for (uword j = 0; j < n1_; ++j) kdata[j] = grid[sel_[j]] * sign_[j];
}

template <typename T1>
void GfftSampled<T1>::adjoint_host(const forgeComplex<T1>* kdata, forgeComplex<T1>* image,
                                   forgeComplex<T1>* grid) const {
    // S^T: each sampled grid point gets the sum of its samples (in data order), times its centring sign
    std::memset(static_cast<void*>(grid), 0, grid_elems() * sizeof(forgeComplex<T1>));
    for (uword u = 0; u < dest_.size(); ++u) {
        forgeComplex<T1> s(0, 0);
        for (uword p = start_[u]; p < start_[u + 1]; ++p) s += kdata[src_[p]];
        grid[dest_[u]] = s * sign_[src_[start_[u]]];
    }
    plan_->execute(FftMemory::host, grid, false);
    for (uword z = 0; z < N_[2]; ++z)
        for (uword y = 0; y < N_[1]; ++y) {
            const uword gy = y + off_[1], gz = z + off_[2];
            const forgeComplex<T1>* row = grid + off_[0] + M_[0] * (gy + M_[1] * gz);
            forgeComplex<T1>* dst = image + N_[0] * (y + N_[1] * z);
            T1 f = ((off_[0] + gy + gz) & 1) ? T1(-1) : T1(1);
            for (uword x = 0; x < N_[0]; ++x, f = -f) dst[x] = row[x] * f;
        }
}

template <typename T1>
void GfftSampled<T1>::apply_host(const forgeComplex<T1>* pin, forgeComplex<T1>* pout, uword nbatch,
                                 bool forward) const {
    // batches (coils) in parallel, each thread on its own grid (FFTW plans execute thread-safely)
#pragma omp parallel if (nbatch > 1)
    {
        Scratch<forgeComplex<T1>> grid(grid_elems());
#pragma omp for schedule(dynamic, 1)
        for (long long b = 0; b < static_cast<long long>(nbatch); ++b) {
            if (forward) {
                forward_host(pin + uword(b) * n2_, pout + uword(b) * n1_, grid.p);
            } else {
                adjoint_host(pin + uword(b) * n1_, pout + uword(b) * n2_, grid.p);
            }
        }
    }
}

template <typename T1>
void GfftSampled<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch,
                                   bool forward) const {
    if (!dev_) {
        throw cuda_error("GfftSampled: input is on the GPU but the operator has no device index arrays (no "
                         "CUDA device was available when it was constructed)");
    }
    const uword M = grid_elems();
    const cuda::BoxGeometry box{N_[0], N_[1], N_[2], M_[0], M_[1], M_[2], off_[0], off_[1], off_[2]};
    ForgeVec grid = ForgeVec::device_uninitialized(M * nbatch);
    ForgeVec spectrum = ForgeVec::device_uninitialized(M * nbatch);
    if (forward) {
        cuda::box_pad<T1>(in, grid.device_memptr(), box, nbatch);
        plan_->centred(FftMemory::device, grid.device_memptr(), spectrum.device_memptr(), true, nbatch);
        cuda::gather<T1>(spectrum.device_memptr(), M, dev_->sel.template as<uword>(), out, n1_, nbatch);
    } else {
        cuda::scatter_sorted<T1>(in, n1_, dev_->dest.template as<uword>(), dev_->start.template as<uword>(),
                                 dev_->src.template as<uword>(), dest_.size(), grid.device_memptr(), M, nbatch);
        plan_->centred(FftMemory::device, grid.device_memptr(), spectrum.device_memptr(), false, nbatch);
        cuda::box_crop<T1>(spectrum.device_memptr(), out, box, nbatch);
    }
}

template class GfftSampled<float>;
template class GfftSampled<double>;

}  // namespace forge
