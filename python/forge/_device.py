"""The device: whether forge has a GPU, its name, synchronisation and the host/device transfer counters."""

from . import _native

ResidencyError = _native.ResidencyError
CudaError = _native.CudaError


def built_with_cuda():
    """True when the C++ library was built with its CUDA path."""
    return _native.built_with_cuda()


def cuda_available():
    """True when forge can use a CUDA device now."""
    return _native.cuda_available()


def device_name():
    return _native.device_name()


def synchronize():
    """Waits until all GPU work forge queued has finished."""
    _native.synchronize()


def transfer_stats():
    """Host/device copies of vector data forge made since the last reset (counts and bytes)."""
    return _native.transfer_stats()


def reset_transfer_stats():
    _native.reset_transfer_stats()
