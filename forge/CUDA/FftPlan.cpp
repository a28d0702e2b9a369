// The host half of forge's FFT plan facade (FFTW) and its hand-off to cuFFT (CudaFftPlan, CudaFft.cu; the
// CPU-only build links NoCuda.cpp's throwing CudaFftPlan, reached only with device data).
#include "forge/CUDA/FftPlan.h"

#include <fftw3.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "forge/CUDA/detail/CudaFft.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Geometry.h"
#include "forge/Core/Parallel.h"
#include "forge/Core/Validation.h"

namespace forge {
namespace detail {

std::mutex& fftw_planner_mutex() {
    static std::mutex m;
    return m;
}

uword require_centred_grid(const char* where, uword Nx, uword Ny, uword Nz) {
    const uword N[3] = {Nx, Ny, Nz};
    const char* names[3] = {"Nx", "Ny", "Nz"};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 0 || (N[d] > 1 && N[d] % 2 != 0)) {
            std::ostringstream m;
            m << where << ": " << names[d] << " = " << N[d]
              << "; each grid size must be 1 or an even number (the grid is centred at N/2)";
            throw invalid_argument(m.str());
        }
        checked_product(where, {{names[d], N[d]}}, kMaxFftAxis, "FFTW and cuFFT take int dimensions");
    }
    return checked_product(where, {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
}

}  // namespace detail

namespace {
// FFTW wants the slowest dimension first; forge stores x fastest. Callers bound each axis by kMaxFftAxis.
int fftw_dims(uword Nx, uword Ny, uword Nz, int* n) {
    if (Nz > 1) {
        n[0] = int(Nz), n[1] = int(Ny), n[2] = int(Nx);
        return 3;
    }
    if (Ny > 1) {
        n[0] = int(Ny), n[1] = int(Nx);
        return 2;
    }
    n[0] = int(Nx);
    return 1;
}

// FFTW's interface in precision T1.
template <typename T1>
struct Fftw;
template <>
struct Fftw<float> {
    using plan = fftwf_plan;
    using iodim = fftwf_iodim64;
    using cpx = fftwf_complex;
    static plan make(int rank, const int* n, cpx* data, int sign, unsigned flags) {
        return fftwf_plan_dft(rank, n, data, data, sign, flags);
    }
    static plan make_guru(int rank, const iodim* dims, int loops, const iodim* loop, cpx* data, int sign,
                          unsigned flags) {
        return fftwf_plan_guru64_dft(rank, dims, loops, loop, data, data, sign, flags);
    }
    static cpx* alloc(uword n) { return fftwf_alloc_complex(n); }
    static void free(cpx* p) { fftwf_free(p); }
    static void run(plan p, cpx* data) { fftwf_execute_dft(p, data, data); }
    static void destroy(plan p) { fftwf_destroy_plan(p); }
};
template <>
struct Fftw<double> {
    using plan = fftw_plan;
    using iodim = fftw_iodim64;
    using cpx = fftw_complex;
    static plan make(int rank, const int* n, cpx* data, int sign, unsigned flags) {
        return fftw_plan_dft(rank, n, data, data, sign, flags);
    }
    static plan make_guru(int rank, const iodim* dims, int loops, const iodim* loop, cpx* data, int sign,
                          unsigned flags) {
        return fftw_plan_guru64_dft(rank, dims, loops, loop, data, data, sign, flags);
    }
    static cpx* alloc(uword n) { return fftw_alloc_complex(n); }
    static void free(cpx* p) { fftw_free(p); }
    static void run(plan p, cpx* data) { fftw_execute_dft(p, data, data); }
    static void destroy(plan p) { fftw_destroy_plan(p); }
};
}  // namespace

// FFTW plan pair (forward, exponent -1; backward, exponent +1) for the grid, made once.
template <typename T1>
struct FftPlan<T1>::HostPlans {
    using F = Fftw<T1>;
    typename F::plan fwd = nullptr, bwd = nullptr;
    HostPlans(uword Nx, uword Ny, uword Nz) {
        int n[3];
        const int rank = fftw_dims(Nx, Ny, Nz, n);
        std::lock_guard<std::mutex> lock(detail::fftw_planner_mutex());
        typename F::cpx* buf = F::alloc(Nx * Ny * Nz);
        // FFTW_ESTIMATE leaves the array untouched; FFTW_UNALIGNED lets execute run on any user array.
        fwd = F::make(rank, n, buf, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
        bwd = F::make(rank, n, buf, FFTW_BACKWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
        F::free(buf);
        if (!fwd || !bwd) {
            release();
            throw invalid_argument("FftPlan: FFTW could not plan the transform");
        }
    }
    ~HostPlans() {
        std::lock_guard<std::mutex> lock(detail::fftw_planner_mutex());
        release();
    }
    HostPlans(const HostPlans&) = delete;
    HostPlans& operator=(const HostPlans&) = delete;
    void release() {
        if (fwd) F::destroy(fwd);
        if (bwd) F::destroy(bwd);
        fwd = bwd = nullptr;
    }
    void run(forgeComplex<T1>* d, bool forward) const {
        F::run(forward ? fwd : bwd, reinterpret_cast<typename F::cpx*>(d));
    }
};

template <typename T1>
FftPlan<T1>::FftPlan(uword Nx, uword Ny, uword Nz, const FftPlanOptions& options)
    : N_{Nx, Ny, Nz}, options_(options) {
    const uword N[3] = {Nx, Ny, Nz};
    const char* names[3] = {"Nx", "Ny", "Nz"};
    for (int d = 0; d < 3; ++d) {
        if (N[d] == 0) throw invalid_argument(std::string("FftPlan: ") + names[d] + " = 0; every axis needs at least 1");
        checked_product("FftPlan", {{names[d], N[d]}}, detail::kMaxFftAxis, "FFTW and cuFFT take int dimensions");
    }
    n_ = checked_product("FftPlan", {{"Nx", Nx}, {"Ny", Ny}, {"Nz", Nz}});
    if (options_.host) host_ = std::make_unique<HostPlans>(Nx, Ny, Nz);
}

template <typename T1>
FftPlan<T1>::FftPlan(const ImageGrid& grid, const FftPlanOptions& options)
    : FftPlan(grid.nx, grid.ny, grid.nz, options) {}

template <typename T1>
FftPlan<T1>::~FftPlan() = default;

template <typename T1>
const cuda::CudaFftPlan<T1>& FftPlan<T1>::device_plan() const {
    std::lock_guard<std::mutex> lock(deviceMutex_);
    if (!device_) {
        device_ = std::make_unique<cuda::CudaFftPlan<T1>>(int(N_[0]), int(N_[1]), int(N_[2]), options_.stream,
                                                          options_.device);
    }
    return *device_;
}

template <typename T1>
void FftPlan<T1>::prepare_device() const {
    (void)device_plan();
}

template <typename T1>
bool FftPlan<T1>::has_device_plan() const {
    std::lock_guard<std::mutex> lock(deviceMutex_);
    return static_cast<bool>(device_);
}

template <typename T1>
void FftPlan<T1>::host_centred(forgeComplex<T1>* data, bool forward) const {
    const uword Nx = N_[0], Ny = N_[1], Nz = N_[2];
    // Centred DFT = sN (-1)^k FFT((-1)^r x) with sN = prod (-1)^(N/2) over the axes longer than 1.
    const uword half = (Nx > 1 ? Nx / 2 : 0) + (Ny > 1 ? Ny / 2 : 0) + (Nz > 1 ? Nz / 2 : 0);
    const T1 sN = (half & 1) ? T1(-1) : T1(1);
    auto checker = [&](T1 s) {
        for (uword z = 0; z < Nz; ++z)
            for (uword y = 0; y < Ny; ++y) {
                forgeComplex<T1>* row = data + Nx * (y + Ny * z);
                T1 f = ((y + z) & 1) ? -s : s;
                for (uword x = 0; x < Nx; ++x, f = -f) row[x] *= f;
            }
    };
    checker(T1(1));
    host_->run(data, forward);
    checker(sN);
}

template <typename T1>
void FftPlan<T1>::execute(FftMemory where, forgeComplex<T1>* data, bool forward, uword nbatch) const {
    if (where == FftMemory::device) {
        device_plan().exec(reinterpret_cast<T1*>(data), forward, nbatch);
        return;
    }
    if (!host_) throw invalid_argument("FftPlan: host data given to a device-only plan (options.host = false)");
    detail::for_each_in_batch(nbatch, [&](std::size_t b) { host_->run(data + b * n_, forward); });
}

template <typename T1>
void FftPlan<T1>::centred(FftMemory where, const forgeComplex<T1>* in, forgeComplex<T1>* out, bool forward,
                          uword nbatch) const {
    if (where == FftMemory::device) {
        device_plan().centred(reinterpret_cast<const T1*>(in), reinterpret_cast<T1*>(out), forward, nbatch);
        return;
    }
    if (!host_) throw invalid_argument("FftPlan: host data given to a device-only plan (options.host = false)");
    if (in != out) std::memcpy(static_cast<void*>(out), in, nbatch * n_ * sizeof(forgeComplex<T1>));
    detail::for_each_in_batch(nbatch, [&](std::size_t b) { host_centred(out + b * n_, forward); });
}

template <typename T1>
FftLines<T1>::FftLines(uword n, uword stride, std::initializer_list<Loop> loops, bool forward,
                       forgeComplex<T1>* data) {
    using F = Fftw<T1>;
    if (n < 2) return;
    typename F::iodim dim{std::ptrdiff_t(n), std::ptrdiff_t(stride), std::ptrdiff_t(stride)};
    std::vector<typename F::iodim> loop;
    for (const Loop& l : loops)
        if (l.count > 1) loop.push_back({std::ptrdiff_t(l.count), std::ptrdiff_t(l.step), std::ptrdiff_t(l.step)});
    std::lock_guard<std::mutex> lock(detail::fftw_planner_mutex());
    const typename F::plan p = F::make_guru(1, &dim, int(loop.size()), loop.data(),
                                            reinterpret_cast<typename F::cpx*>(data),
                                            forward ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
    if (!p) throw invalid_argument("FftLines: FFTW could not plan the line transforms");
    plan_ = p;
}

template <typename T1>
FftLines<T1>::~FftLines() {
    if (!plan_) return;
    std::lock_guard<std::mutex> lock(detail::fftw_planner_mutex());
    Fftw<T1>::destroy(static_cast<typename Fftw<T1>::plan>(plan_));
}

template <typename T1>
void FftLines<T1>::run(forgeComplex<T1>* data) const {
    if (plan_)
        Fftw<T1>::run(static_cast<typename Fftw<T1>::plan>(plan_), reinterpret_cast<typename Fftw<T1>::cpx*>(data));
}

template class FftPlan<float>;
template class FftPlan<double>;
template class FftLines<float>;
template class FftLines<double>;

}  // namespace forge
