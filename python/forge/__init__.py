"""forge: iterative MRI reconstruction (field-corrected non-Cartesian SENSE) from Python.

Operators map an image (``ishape``: ``(ny, nx)`` or ``(nz, ny, nx)`` in C order, x fastest) to k-space data
(``oshape``: the trajectory's shape, e.g. ``(interleaves, samples)``; SENSE adds a leading coil axis)::

    y = G @ x          # forward, also G.forward(x)
    x = G.H @ y        # adjoint, also G.adjoint(y); G.H is an operator of its own
    z = G.N @ x        # G^H G x (the fast normal where there is one), also G.normal(x)
    A = S @ D + 2 * G  # operator algebra over forge's C++ composites

Arrays in the operator's shapes may carry leading batch axes; a 1-D array of the full size (or a
``(nbatch, size)`` batch) is taken flat and gives flat results. Arrays are NumPy, CuPy, PyTorch or (host) JAX
arrays of complex64 (operators built with ``dtype=numpy.float32``, the default) or complex128
(``dtype=numpy.float64``); they come in without copies (DLPack) and results are arrays of the same library: host
arrays run on the CPU (OpenMP), CuPy arrays and CUDA tensors on the GPU, where the results stay. Units
(docs/conventions.md): k-space in cycles per field of view by default (an N-point axis spans [-N/2, N/2], +N/2
being the same sample as -N/2; ``units='normalized'`` or ``'radians'`` on the constructors), pixel positions in
FOV units (``(x - N/2) / N``), field maps in rad/s, sample times in seconds, shot phases in radians. Submodules:
forge.trajectories, forge.io (BART and MRD files), forge.torch (autograd; import it explicitly).
"""

# The extension first. A CUDA wheel leaves CUDA's libraries to NVIDIA's pip packages: when the loader does not
# find them, they are loaded from there and the import is tried again (_cuda_libs).
try:
    from . import _native
except ImportError as _error:
    from . import _cuda_libs

    if not _cuda_libs.missing_cuda_library(_error) or not _cuda_libs.preload():
        raise
    from . import _native

# One subject per module, all re-exported here: forge.Gdft, forge.solve_pwls_pcg, ... are the API.
from . import _arrays
from ._algebra import PythonOperator, batched, diagonal, hstack, identity, vstack
from ._arrays import real_dtype
from ._composites import NormalOf, SENSE, TimeSegmentation, ToeplitzNormal, pcSENSE, with_normal
from ._device import (CudaError, ResidencyError, built_with_cuda, cuda_available, device_name,
                      reset_transfer_stats, synchronize, transfer_stats)
from ._encoding import Gdft, GdftR2, Gfft, Gnufft, density_compensation, image_coords
from ._maps import (coil_compression_matrix, coil_maps, coil_maps_from_images, estimate_field_map,
                    extend_field_map, noise_covariance, phase_difference_field_map, whitening_matrix)
from ._maps import estimate_fieldmap, extend_fieldmap, phase_difference_fieldmap  # noqa: F401 (deprecated names)
from ._operator import LinearOperator
from ._penalties import QuadPenalty, TVPenalty
from ._prox import ExactTVPenalty, L1Penalty, ProxPenalty, WaveletL1Penalty
from ._prox_solvers import (l1_wavelet_recon, solve_admm, solve_admm_normal, solve_fista, solve_fista_normal,
                            solve_pogm, solve_pogm_normal)
from ._recon import ReconSession, reconstruct
from ._scipy import as_linear_operator
from ._solvers import solve_pwls_pcg, solve_pwls_pcg_normal
from ._voronoi import voronoi_density_compensation
from . import io, trajectories

__version__ = "0.1.0"

__all__ = [
    "LinearOperator",
    "as_linear_operator",
    "PythonOperator",
    "batched",
    "diagonal",
    "hstack",
    "identity",
    "vstack",
    "Gdft",
    "GdftR2",
    "Gnufft",
    "Gfft",
    "TimeSegmentation",
    "SENSE",
    "pcSENSE",
    "ToeplitzNormal",
    "with_normal",
    "NormalOf",
    "QuadPenalty",
    "TVPenalty",
    "solve_pwls_pcg",
    "solve_pwls_pcg_normal",
    "ProxPenalty",
    "L1Penalty",
    "WaveletL1Penalty",
    "ExactTVPenalty",
    "solve_fista",
    "solve_pogm",
    "solve_admm",
    "solve_fista_normal",
    "solve_pogm_normal",
    "solve_admm_normal",
    "l1_wavelet_recon",
    "density_compensation",
    "voronoi_density_compensation",
    "coil_maps",
    "coil_maps_from_images",
    "estimate_field_map",
    "phase_difference_field_map",
    "extend_field_map",
    "noise_covariance",
    "whitening_matrix",
    "coil_compression_matrix",
    "reconstruct",
    "ReconSession",
    "image_coords",
    "built_with_cuda",
    "cuda_available",
    "device_name",
    "synchronize",
    "transfer_stats",
    "reset_transfer_stats",
    "ResidencyError",
    "CudaError",
]

# The public classes and functions present themselves as forge's (help(), repr of the class, pickling by name).
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("forge._") and _obj.__module__ != "forge._native":
        _obj.__module__ = __name__
del _name, _obj
