#include "forge/Operators/dft/cuda/CudaMultiDft.h"

#include <algorithm>
#include <string>

#include "forge/CUDA/detail/CudaCheck.h"
#include "forge/Core/DeviceMemory.h"

namespace forge {
namespace cuda {

// One entry of the device list: its stream, its forward plan (all pixels, samples [s0, s0 + ns)) and its
// adjoint plan (pixels [p0, p0 + np), all samples); a plan is absent when its part is empty.
struct CudaMultiDft::Part {
    int device = 0;
    uword s0 = 0, ns = 0, p0 = 0, np = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    std::unique_ptr<CudaDftPipeline> forward, adjoint;
};

// A device the input may live on: the event the parts wait for before they read the input.
struct CudaMultiDft::Home {
    int device = 0;
    cudaEvent_t ready = nullptr;
};

namespace {
void enable_peer_access(int from, int to) {
    if (from == to) return;
    int can = 0;
    FORGE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
    if (!can) return;  // cudaMemcpyPeerAsync then stages through the host
    DeviceGuard guard(from);
    const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
    } else {
        FORGE_CUDA_CHECK(err);
    }
    // forgeCol memory comes from forge's pool of each device, whose blocks follow the pool's access list,
    // not peer access.
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = from;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    FORGE_CUDA_CHECK(cudaMemPoolSetAccess(device::detail::device_pool(to).pool, &access, 1));
}

int device_of(const void* p, const char* what) {
    cudaPointerAttributes a{};
    FORGE_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        throw invalid_argument(std::string("CudaMultiDft::execute: ") + what + " is not device memory");
    return a.device;
}
}  // namespace

void CudaMultiDft::check_devices(const char* where, const std::vector<int>& devices) {
    if (devices.empty())
        throw invalid_argument(std::string(where) + ": the device list is empty; give one or more device numbers");
    const int count = device::device_count();
    if (count == 0) throw cuda_error(std::string(where) + ": no CUDA device is available");
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i] < 0 || devices[i] >= count)
            throw invalid_argument(std::string(where) + ": devices[" + std::to_string(i) +
                                   "] = " + std::to_string(devices[i]) + "; expected a device number in [0, " +
                                   std::to_string(count) + ") (" + std::to_string(count) +
                                   " CUDA device(s) on this machine)");
}

CudaMultiDft::CudaMultiDft(const DftGeometry& geom, const std::vector<int>& devices, DftKernel kernel)
    : devices_(devices), n1_(geom.n1), n2_(geom.n2) {
    check_devices("CudaMultiDft", devices);
    CudaDftPipeline::check_kernel("CudaMultiDft: kernel", kernel);
    CudaDftPipeline::check_sizes("CudaMultiDft", geom.n1, geom.n2);
    for (int a : devices)
        for (int b : devices) enable_peer_access(a, b);
    const uword parts = devices.size();
    for (uword i = 0; i < parts; ++i) {
        auto part = std::make_unique<Part>();
        part->device = devices[i];
        part->s0 = geom.n1 * i / parts;
        part->ns = geom.n1 * (i + 1) / parts - part->s0;
        part->p0 = geom.n2 * i / parts;
        part->np = geom.n2 * (i + 1) / parts - part->p0;
        DeviceGuard guard(part->device);
        // Non-blocking: a part on the home device is ordered by events, not with the legacy default stream.
        FORGE_CUDA_CHECK(cudaStreamCreateWithFlags(&part->stream, cudaStreamNonBlocking));
        FORGE_CUDA_CHECK(cudaEventCreateWithFlags(&part->done, cudaEventDisableTiming));
        PlanOptions o;
        o.stream = part->stream;
        o.device = part->device;
        o.dft_kernel = kernel;
        if (part->ns > 0) {
            DftGeometry g = geom;
            g.kx += part->s0;
            g.ky += part->s0;
            g.kz += part->s0;
            g.t += part->s0;
            g.n1 = part->ns;
            part->forward = std::make_unique<CudaDftPipeline>(g, o);
        }
        if (part->np > 0) {
            DftGeometry g = geom;
            g.ix += part->p0;
            g.iy += part->p0;
            g.iz += part->p0;
            g.fm_turns += part->p0;
            if (g.Gx) {
                g.Gx += part->p0;
                g.Gy += part->p0;
                g.Gz += part->p0;
                g.partial_grid = true;
            }
            g.n2 = part->np;
            part->adjoint = std::make_unique<CudaDftPipeline>(g, o);
        }
        parts_.push_back(std::move(part));
    }
}

CudaMultiDft::~CudaMultiDft() {
    // Nothing may be thrown from here: errors are cleared, not reported.
    for (auto& p : parts_) {
        p->forward.reset();  // a plan synchronises its stream before it frees its buffers
        p->adjoint.reset();
        if (p->stream && cudaStreamSynchronize(p->stream) != cudaSuccess) cudaGetLastError();
        if (p->done && cudaEventDestroy(p->done) != cudaSuccess) cudaGetLastError();
        if (p->stream && cudaStreamDestroy(p->stream) != cudaSuccess) cudaGetLastError();
    }
    for (auto& h : homes_)
        if (h->ready && cudaEventDestroy(h->ready) != cudaSuccess) cudaGetLastError();
}

CudaMultiDft::Home& CudaMultiDft::home(int device) const {
    for (auto& h : homes_)
        if (h->device == device) return *h;
    for (int d : devices_) {
        enable_peer_access(d, device);
        enable_peer_access(device, d);
    }
    auto h = std::make_unique<Home>();
    h->device = device;
    DeviceGuard guard(device);
    FORGE_CUDA_CHECK(cudaEventCreateWithFlags(&h->ready, cudaEventDisableTiming));
    homes_.push_back(std::move(h));
    return *homes_.back();
}

void CudaMultiDft::execute(Direction direction, const float* d_in, float* d_out, uword batch) const {
    if (!d_in || !d_out) throw invalid_argument("CudaMultiDft::execute: d_in or d_out is a null pointer");
    if (batch < 1) throw invalid_argument("CudaMultiDft::execute: batch must be at least 1, got 0");
    const bool forward = direction == Direction::forward;
    const int h = device_of(d_in, "d_in");
    if (device_of(d_out, "d_out") != h)
        throw invalid_argument("CudaMultiDft::execute: d_in is on device " + std::to_string(h) + ", d_out on device " +
                               std::to_string(device_of(d_out, "d_out")) + "; both must be on one device");
    std::lock_guard<std::mutex> lock(mutex_);
    Home& H = home(h);
    const uword nIn = forward ? n2_ : n1_, nOut = forward ? n1_ : n2_;
    const std::size_t cplx = 2 * sizeof(float);
    {
        // After the work queued so far on the home device's legacy default stream (and so after its
        // blocking streams' work: forgeCol arithmetic, CudaDftPipeline's own streams).
        DeviceGuard guard(h);
        FORGE_CUDA_CHECK(cudaEventRecord(H.ready, cudaStreamLegacy));
    }
    for (const auto& pp : parts_) {
        const Part& p = *pp;
        const CudaDftPipeline* plan = forward ? p.forward.get() : p.adjoint.get();
        if (!plan) continue;  // more parts than outputs
        const uword off = forward ? p.s0 : p.p0, len = forward ? p.ns : p.np;
        DeviceGuard guard(p.device);
        FORGE_CUDA_CHECK(cudaStreamWaitEvent(p.stream, H.ready, 0));
        // Input: the whole of it, on this part's device.
        const float* in = d_in;
        float* inCopy = nullptr;
        if (p.device != h) {
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&inCopy), nIn * batch * cplx,
                                                     device::detail::device_pool(p.device).pool, p.stream));
            FORGE_CUDA_CHECK(cudaMemcpyPeerAsync(inCopy, p.device, d_in, h, nIn * batch * cplx, p.stream));
            in = inCopy;
        }
        // Output: this part's outputs of every vector. A single vector on the home device is written in place.
        const bool inPlace = p.device == h && batch == 1;
        float* out = d_out + 2 * off;
        if (!inPlace)
            FORGE_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&out), len * batch * cplx,
                                                     device::detail::device_pool(p.device).pool, p.stream));
        plan->execute(*plan->points(), direction, in, out, batch);
        if (!inPlace) {
            // Vector b's part goes to d_out[b * nOut + off, + len): one strided copy.
            if (batch == 1) {
                FORGE_CUDA_CHECK(cudaMemcpyPeerAsync(d_out + 2 * off, h, out, p.device, len * cplx, p.stream));
            } else if (p.device == h) {
                FORGE_CUDA_CHECK(cudaMemcpy2DAsync(d_out + 2 * off, nOut * cplx, out, len * cplx, len * cplx, batch,
                                                   cudaMemcpyDeviceToDevice, p.stream));
            } else {
                cudaMemcpy3DPeerParms c{};
                c.srcDevice = p.device;
                c.dstDevice = h;
                c.srcPtr = make_cudaPitchedPtr(out, len * cplx, len * cplx, batch);
                c.dstPtr = make_cudaPitchedPtr(d_out + 2 * off, nOut * cplx, len * cplx, batch);
                c.extent = make_cudaExtent(len * cplx, batch, 1);
                FORGE_CUDA_CHECK(cudaMemcpy3DPeerAsync(&c, p.stream));
            }
            FORGE_CUDA_CHECK(cudaFreeAsync(out, p.stream));
        }
        if (inCopy) FORGE_CUDA_CHECK(cudaFreeAsync(inCopy, p.stream));
        FORGE_CUDA_CHECK(cudaEventRecord(p.done, p.stream));
    }
    // Work queued later on the home device's legacy default stream waits for every part.
    DeviceGuard guard(h);
    for (const auto& pp : parts_)
        if (forward ? pp->forward : pp->adjoint) FORGE_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamLegacy, pp->done, 0));
}

void CudaMultiDft::synchronize() const {
    for (const auto& p : parts_) FORGE_CUDA_CHECK(cudaStreamSynchronize(p->stream));
}

}  // namespace cuda
}  // namespace forge
