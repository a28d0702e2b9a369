#pragma once
// Where a computation runs: the one device type of the library. Solvers (ReconOptions::device), coil-map and
// field-map estimation (CoilMapOptions::device, FieldMapOptions::device), the Toeplitz kernels' build
// (ToeplitzOptions::build) and the reconstruction pipeline (ReconRequest::device) all take it.
namespace forge {

enum class Device {
    Auto,  // the GPU when CUDA is built in, a device is usable and the precision is float; otherwise the host
    Host,  // always the host, e.g. to compare with the GPU or to leave the GPU to other work
    GPU    // always the GPU: forge::cuda_error when none is usable
};

// The names the device type had before it was one (until 0.3.0).
using ReconDevice = Device;
using KernelBuild = Device;

// "auto", "host", "gpu".
inline const char* device_name(Device d) { return d == Device::Host ? "host" : d == Device::GPU ? "gpu" : "auto"; }

}  // namespace forge
