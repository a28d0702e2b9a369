#pragma once
// CudaMultiDft: one exact DFT (CudaDftPipeline.h) spread over several GPUs of one machine.
//
//   cuda::CudaMultiDft plan(geometry, {0, 1});    // device list; an entry may repeat: {0, 0}
//   plan.execute(cuda::Direction::forward, d_images, d_kdata, ncoils);   // device pointers, as CudaDftPipeline
//
// The forward transform splits the samples, the adjoint the pixels, into contiguous parts of equal size, one
// per entry of the device list. Each entry has a stream of its own on its device and two CudaDftPipeline
// plans on it: all pixels with its part of the samples (forward), its part of the pixels with all samples
// (adjoint). A transform copies the input from the device it lives on (the home device) to the other
// devices (cudaMemcpyPeerAsync; direct peer access is enabled where the hardware has it), runs every part
// at once, and copies each part's output back into its place in the output on the home device. Nothing
// waits on the host: the parts start after the work queued before on the home device's legacy default
// stream, and work queued there afterwards starts after the last part's copy (the ordering of
// CudaDftPipeline's own blocking stream). Each output element is computed by one plan exactly as the
// one-GPU plan computes it from the same inputs, up to the split of the inner sum across blocks
// (CudaDftPipeline.h), which depends on the output count of the part.
//
// The header includes no CUDA header. Private to forge/Operators/dft/ (the plan behind DftOptions::devices), not
// installed; until forge 0.3.0 the install tree keeps a deprecated copy of it at its former path,
// forge/Operators/dft/CudaMultiDft.h (cmake/DeprecatedCudaMultiDft.h.in).
#include <memory>
#include <mutex>
#include <vector>

#include "forge/Operators/dft/CudaDftPipeline.h"
#include "forge/CUDA/PlanOptions.h"

namespace forge {
namespace cuda {

class CudaMultiDft {
public:
    // Throws forge::invalid_argument for an empty list or a device number outside [0, device count), and
    // forge::cuda_error when there is no CUDA device (or forge was built without CUDA). 'where' names the
    // caller in the message.
    static void check_devices(const char* where, const std::vector<int>& devices);

    // Uploads geom's pixel side and sample set (host arrays, read during the call only) to every device; every
    // part's plans run kernel (PlanOptions::dft_kernel).
    CudaMultiDft(const DftGeometry& geom, const std::vector<int>& devices, DftKernel kernel = DftKernel::automatic);
    ~CudaMultiDft();
    CudaMultiDft(const CudaMultiDft&) = delete;
    CudaMultiDft& operator=(const CudaMultiDft&) = delete;

    // forward: d_in = images (n2 x batch), d_out = k-space (n1 x batch); adjoint the other way round. Both
    // on one device (the home device; any device of the machine). Returns once the work is queued.
    void execute(Direction direction, const float* d_in, float* d_out, uword batch = 1) const;
    // Waits until every part's stream has finished.
    void synchronize() const;

    const std::vector<int>& devices() const { return devices_; }
    uword num_samples() const { return n1_; }
    uword num_pixels() const { return n2_; }
    FORGE_DEPRECATED("num_samples()") uword numSamples() const { return num_samples(); }
    FORGE_DEPRECATED("num_pixels()") uword numPixels() const { return num_pixels(); }

private:
    struct Part;
    struct Home;
    Home& home(int device) const;

    std::vector<int> devices_;
    uword n1_ = 0, n2_ = 0;
    std::vector<std::unique_ptr<Part>> parts_;
    mutable std::vector<std::unique_ptr<Home>> homes_;
    mutable std::mutex mutex_;  // one transform at a time: the parts' events and the homes are shared
};

}  // namespace cuda
}  // namespace forge
