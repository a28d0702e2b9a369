// ToeplitzNormal on device data: the kernels (uploaded once when built on the host) times the FFTs of the zero-padded
// segment images, on cuFFT, all vectors and segments of a batch at once; on ToeplitzOptions' stream and device.
// Reached only with device-resident data or after device::available() (the CPU-only build links NoCuda.cpp's stubs).
#include <complex>
#include <memory>
#include <mutex>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/cuda/GridSelectKernels.h"
#include "forge/Operators/toeplitz/ToeplitzNormal.h"
#include "forge/Operators/toeplitz/cpu/HostApply.h"
#include "forge/Operators/toeplitz/cuda/ToeplitzKernels.h"

namespace forge {

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
    if (!cache_->fft) cache_->fft = std::make_unique<FftPlan<T1>>(P_[0], P_[1], P_[2], toeplitz::device_fft_options(stream_, device_));
    cache_->fft->prepare_device();
    if (phases_) phases_->prepare_device();
    cache_->deviceReady = true;
}

template <typename T1>
void ToeplitzNormal<T1>::apply_device(const forgeComplex<T1>* in, forgeComplex<T1>* out, uword nbatch, bool) const {
    prepare_device();
    const toeplitz::DeviceScope scope(device_);
    const uword n2 = this->domain_size(), P = P_total_, S = S_, grids = nbatch * S;
    const cuda::BoxGeometry box{N_[0], N_[1], N_[2], P_[0], P_[1], P_[2], 0, 0, 0};
    ForgeVec images;  // nbatch x S segment images b_m .* x, later the cropped segment results
    const Elem* src = in;
    if (phases_) {
        images = this->scratch(Residency::Device, grids * n2);
        phases_->apply(in, images.device_memptr(), nbatch, true, Residency::Device);
        src = images.device_memptr();
    }
    ForgeVec z = this->scratch(Residency::Device, grids * P), u = this->scratch(Residency::Device, grids * P);
    cuda::box_pad<T1>(src, z.device_memptr(), box, grids, stream_);
    cache_->fft->execute(FftMemory::device, z.device_memptr(), true, grids);
    cuda::toeplitz_mix<T1>(cache_->device.device_memptr(), cache_->table.template as<long long>(),
                           z.device_memptr(), u.device_memptr(), P, S, nbatch, stream_);
    cache_->fft->execute(FftMemory::device, u.device_memptr(), false, grids);
    if (phases_) {
        cuda::box_crop<T1>(u.device_memptr(), images.device_memptr(), box, grids, stream_);
        phases_->apply(images.device_memptr(), out, nbatch, false, Residency::Device);
    } else {
        cuda::box_crop<T1>(u.device_memptr(), out, box, grids, stream_);
    }
}

#define FORGE_TOEPLITZ_DEVICE_INSTANTIATE(T1)                                                                      \
    template void ToeplitzNormal<T1>::prepare_device() const;                                                      \
    template void ToeplitzNormal<T1>::apply_device(const forgeComplex<T1>*, forgeComplex<T1>*, uword, bool) const;
FORGE_TOEPLITZ_DEVICE_INSTANTIATE(float)
FORGE_TOEPLITZ_DEVICE_INSTANTIATE(double)

}  // namespace forge
