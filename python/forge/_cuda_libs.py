"""NVIDIA's CUDA libraries from their pip packages, for forge's CUDA wheel, which does not bundle them: it depends
on nvidia-cuda-runtime and nvidia-cufft (CUDA 13: site-packages/nvidia/cu13/lib; CUDA 12's packages:
nvidia/cuda_runtime/lib, nvidia/cufft/lib), the libraries libForgeCommon needs. When the loader's own search
(the extension's run path, LD_LIBRARY_PATH, ldconfig's cache: a CUDA toolkit installed on the system) does not
find them, they are loaded from there by path, globally, before the extension is imported again; the
extension's needed sonames are then already in the process."""

import ctypes
import importlib.util
import os

# The runtime first (cuFFT needs it).
_CUDA13 = ("cu13/lib", ("libcudart.so.13", "libcufft.so.12"))
_CUDA12 = (("cuda_runtime/lib", ("libcudart.so.12",)), ("cufft/lib", ("libcufft.so.11",)))


def missing_cuda_library(error):
    """Whether an ImportError of the extension is a CUDA library the loader did not find."""
    text = str(error)
    return any(name in text for name in ("libcudart.so", "libcufft.so"))


def _nvidia_roots():
    spec = importlib.util.find_spec("nvidia")
    return list(spec.submodule_search_locations) if spec is not None and spec.submodule_search_locations else []


def preload():
    """Loads the CUDA libraries that the pip packages hold; returns the paths loaded (empty: none installed)."""
    loaded = []
    for root in _nvidia_roots():
        for sub, names in (_CUDA13,) + _CUDA12:
            for name in names:
                path = os.path.join(root, sub, name)
                if os.path.exists(path):
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    loaded.append(path)
    return loaded
