// ToeplitzNormal on device data: the vectors of a batch in chunks, each by five stages over its segment grids
// (cuda/ToeplitzApply.h): the padded segment images in one pass, cuFFT over the planes and then along z, the kernel
// product of all segments in one pass that reads each kernel once for the chunk, the inverse transforms, and the
// crop with the segments' conjugate phases summed in one pass. Scratch and plans are kept between applies (a pool:
// concurrent applies each take their own), so an apply allocates nothing once the first one of its batch size ran.
// On ToeplitzOptions' stream and device. Reached only with device-resident data or after device::available() (the
// CPU-only build links cuda/NoCuda.cpp's stubs).
#include <algorithm>
#include <atomic>
#include <complex>
#include <memory>
#include <mutex>

#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/cpu/HostApply.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzApply.h"
#include "forge/Operators/toeplitz/detail/ToeplitzState.h"

namespace forge {

namespace toeplitz {
namespace {
// Segment grids of a chunk take at most this many bytes per buffer (two buffers): 8 coils of 7 segments on the
// 256 x 256 x 64 grid (1.9 GB) run as one chunk, larger batches in several, each reading the kernels once.
std::atomic<double> g_chunkBytes{double(uword(1) << 31)};
}  // namespace
double device_chunk_bytes() { return g_chunkBytes.load(); }
void set_device_chunk_bytes(double bytes) { g_chunkBytes.store(bytes > 0 ? bytes : double(uword(1) << 31)); }
}  // namespace toeplitz

template <typename T1>
void ToeplitzNormal<T1>::prepare_device() const {
    if (!device::available()) return;  // no device: nothing to upload, and no device data can come
    const toeplitz::DeviceScope scope(device_);
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->deviceReady) return;
    if (cache_->device.n_elem == 0) {  // built on the host: a copy in the standard layout
        ForgeVec d(cache_->host.n_elem);
        toeplitz::from_host_layout(reinterpret_cast<const T1*>(cache_->host.memptr()),
                                   reinterpret_cast<std::complex<T1>*>(d.memptr()), npairs_, P_);
        d.put_on_gpu();
        cache_->device = std::move(d);
    }
    DeviceBuffer table(table_.size() * sizeof(long long));
    device::copy_to_device(table.get(), table_.data(), table_.size() * sizeof(long long));
    cache_->table = std::move(table);
    if (phases_ && device_ < 0) {
        // The phase maps' own device copy, on the current device: shared with the time-segmented operator this
        // one was built from (tens of MB uploaded once).
        cache_->phasesOnDevice = phases_->device_weights().device_memptr();
    } else if (phases_) {  // a copy on the operator's device, straight from the host copy
        const ForgeVec& host = phases_->weights();
        ForgeVec b = ForgeVec::device_uninitialized(host.n_elem);
        device::copy_to_device(b.device_memptr(), host.host_data(), host.n_elem * sizeof(Elem));
        cache_->devicePhases = std::move(b);
        cache_->phasesOnDevice = cache_->devicePhases.device_memptr();
    }
    // The register kernel product sums a pair l < m into u_l and, conjugated, into u_m: it needs the table's
    // (m, l) entry to name the conjugate of its (l, m) entry, as the build writes it; otherwise the general one.
    bool hermitian = S_ <= cuda::kToeplitzRegisterSegments;
    for (uword l = 0; l < S_ && hermitian; ++l) {
        hermitian = table_[l * S_ + l] >= 0;
        for (uword m = l + 1; m < S_ && hermitian; ++m) hermitian = table_[m * S_ + l] == -table_[l * S_ + m];
    }
    cache_->registerMix = hermitian;
    if (hermitian)
        for (uword i = 0; i < S_ * S_; ++i) cache_->registerTable.t[i] = int(table_[i]);
    cache_->deviceReady = true;
}

template <typename T1>
void ToeplitzNormal<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
    prepare_device();
    const toeplitz::DeviceScope scope(device_);
    const uword n2 = this->domain_size();
    const double perVector = double(S_) * double(P_total_) * sizeof(Elem);
    // Chunks of nearly equal size (the planes z >= Nz a smaller last chunk would need zeroed stay few).
    const uword most = std::min<uword>(nbatch, std::max<uword>(1, uword(toeplitz::device_chunk_bytes() / perVector)));
    const uword nchunks = (nbatch + most - 1) / most, chunk = (nbatch + nchunks - 1) / nchunks;

    // A workspace from the pool (concurrent applies each get their own), returned when done.
    std::unique_ptr<toeplitz::DeviceWorkspace<T1>> ws;
    {
        std::lock_guard<std::mutex> lock(cache_->mutex);
        if (!cache_->devicePool.empty()) {
            ws = std::move(cache_->devicePool.back());
            cache_->devicePool.pop_back();
        }
    }
    if (!ws) ws = std::make_unique<toeplitz::DeviceWorkspace<T1>>();
    struct GiveBack {
        Cache& cache;
        std::unique_ptr<toeplitz::DeviceWorkspace<T1>>& ws;
        ~GiveBack() {
            std::lock_guard<std::mutex> lock(cache.mutex);
            cache.devicePool.push_back(std::move(ws));
        }
    } giveBack{*cache_, ws};

    // A 2D grid runs as Nx x 1 x Ny: the forward transform along x on the image's rows only, y as the column axis.
    cuda::ToeplitzChunk c = cuda::make_toeplitz_chunk(N_, P_, S_, chunk);
    // Without a column axis (1D) everything runs in b; a also takes the general kernel product's output.
    const bool hasColumn = c.P[2] > 1, needA = hasColumn || !cache_->registerMix;
    if (ws->capacity < c.cells()) {  // a larger chunk than before: new buffers, a all zero
        ws->a = DeviceBuffer();
        ws->b = DeviceBuffer();
        if (needA) ws->a = DeviceBuffer(c.cells() * sizeof(Elem));
        ws->b = DeviceBuffer(c.cells() * sizeof(Elem));
        ws->capacity = c.cells();
        if (needA) cuda::toeplitz_zero<T1>(ws->a.template as<Elem>(), c.cells(), stream_);
        ws->aZeroFrom = 0;
    }
    Elem* const a = ws->a.template as<Elem>();
    Elem* const b = ws->b.template as<Elem>();
    const Elem* K = cache_->device.device_memptr();
    const Elem* phases = cache_->phasesOnDevice;
    for (uword v0 = 0; v0 < nbatch; v0 += chunk) {
        c.nv = std::min(chunk, nbatch - v0);
        auto it = ws->plans.find(c.nv);
        if (it == ws->plans.end()) {
            if (ws->plans.size() >= 8) ws->plans.clear();  // many batch sizes: the plans' work areas stay bounded
            it = ws->plans.emplace(c.nv, std::make_unique<cuda::ToeplitzFft<T1>>(c, stream_)).first;
        }
        const cuda::ToeplitzFft<T1>& plan = *it->second;
        if (hasColumn) {
            // The planes z >= Nz of this chunk's layout must be zero in a; earlier chunks wrote a up to aZeroFrom.
            if (ws->aZeroFrom > c.image_cells())
                cuda::toeplitz_zero<T1>(a + c.image_cells(), ws->aZeroFrom - c.image_cells(), stream_);
            ws->aZeroFrom = c.image_cells();
        }
        cuda::toeplitz_pad_segments<T1>(in + v0 * n2, phases, hasColumn ? a : b, c, stream_);
        plan.forward(a, b);
        Elem* u = b;
        if (cache_->registerMix) {
            cuda::toeplitz_mix_segments<T1>(K, cache_->registerTable, b, c, stream_);
        } else {
            cuda::toeplitz_mix_segments_any<T1>(K, cache_->table.template as<long long>(), b, a, c, stream_);
            u = a;
            ws->aZeroFrom = ws->capacity;
        }
        plan.backward(u);
        cuda::toeplitz_crop_segments<T1>(u, phases, out + v0 * n2, c, stream_);
    }
}

#define FORGE_TOEPLITZ_DEVICE_INSTANTIATE(T1)                 \
    template void ToeplitzNormal<T1>::prepare_device() const; \
    template void ToeplitzNormal<T1>::apply_device(const forgeComplex<T1>*, forgeComplex<T1>*, uword, bool) const;
FORGE_TOEPLITZ_DEVICE_INSTANTIATE(float)
FORGE_TOEPLITZ_DEVICE_INSTANTIATE(double)

}  // namespace forge
