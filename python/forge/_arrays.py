"""Arrays at forge's Python boundary: which library an array belongs to, where it lives, checks of dtype,
shape and contiguity with messages naming the argument, and outputs made by the input's own library.

NumPy and JAX arrays on the host run on forge's CPU path; CuPy arrays and CUDA PyTorch tensors run on
the GPU path and their results are arrays of the same library on the same device (no host round trip).
forge queues its GPU work on streams that synchronise with CUDA's legacy default stream, which CuPy and
PyTorch use unless told otherwise; when the caller's current stream is another one, forge synchronises
before and after the call so that the ordering still holds.
"""

import math
import operator
import threading

import numpy as np

from . import _native

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL = {c: r for r, c in _COMPLEX.items()}


def real_dtype(dtype):
    """The precision as a real numpy dtype: float32 for float32 or complex64, float64 for float64 or complex128
    (constructors take either spelling); anything else is a ValueError."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    d = _REAL.get(d, d)
    if d not in _COMPLEX:
        raise ValueError(f"dtype must be float32 or float64 (or complex64 or complex128, the same precisions), "
                         f"got {dtype!r}")
    return d


def complex_dtype(dtype):
    return _COMPLEX[real_dtype(dtype)]


def library_of(x, arg, where):
    """'numpy', 'cupy', 'torch' or 'jax' for an array; TypeError for anything else."""
    if isinstance(x, np.ndarray):
        return "numpy"
    root = type(x).__module__.split(".")[0]
    if root in ("cupy", "torch"):
        return root
    if root in ("jax", "jaxlib"):
        return "jax"
    raise TypeError(
        f"{where}: {arg} must be a NumPy, CuPy, PyTorch or JAX array, got {type(x).__module__}.{type(x).__name__}"
    )


def _dtype_name(lib, x):
    if lib == "torch":
        return str(x.dtype).replace("torch.", "")
    return np.dtype(x.dtype).name


def _is_c_contiguous(lib, x):
    if lib == "torch":
        return x.is_contiguous()
    if lib == "jax":
        return True
    return bool(x.flags.c_contiguous)


def _is_f_contiguous(lib, x):
    if lib == "torch" or lib == "jax":
        return False
    return bool(x.flags.f_contiguous)


def _on_cuda(lib, x):
    if lib == "cupy":
        return True
    if lib == "torch":
        return x.device.type == "cuda"
    if lib == "jax":
        return any(d.platform != "cpu" for d in x.devices())
    return False


# Largest value of the C++ module's size type (uword, 64-bit unsigned) and of its int arguments.
UWORD_MAX = 2**64 - 1
INT_MAX = 2**31 - 1


def count(value, arg, where, minimum=1, maximum=UWORD_MAX):
    """A size or count argument (grid size, iterations, segments, ...) as a Python int.

    Checked here, before the C++ module sees it: nanobind would answer a negative or too large value with a
    TypeError listing the module's private signatures, and would truncate 16.5 to 16. Whole floats (16.0,
    e.g. from n / 2) are accepted; other floats, values below ``minimum`` or above ``maximum`` are a
    ValueError, non-numbers a TypeError, each naming the argument."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}: {arg} must be an integer, got {value!r}")
    try:
        i = operator.index(value)
    except TypeError:
        if not isinstance(value, (float, np.floating)):
            raise TypeError(f"{where}: {arg} must be an integer, got {type(value).__name__} {value!r}") from None
        if not (math.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{where}: {arg} must be a whole number, got {value!r}") from None
        i = int(value)
    if i < minimum:
        raise ValueError(f"{where}: {arg} must be at least {minimum}, got {i}")
    if i > maximum:
        raise ValueError(f"{where}: {arg} is {i}, more than the largest value {maximum} forge takes")
    return i


def grid(nx, ny, nz, where):
    """An image grid (nx, ny, nz) of counts, each at least 1."""
    return count(nx, "nx", where), count(ny, "ny", where), count(nz, "nz", where)


def require_finite(vec, arg, where):
    """ValueError when a checked Vector holds NaN or Inf (a solver would otherwise fail in its first
    iteration with a RuntimeError about the gradient)."""
    a = vec.array
    if vec.lib == "numpy" or vec.lib == "jax":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(-1))[0])
            raise ValueError(f"{where}: {arg}[{i}] is {a.reshape(-1)[i]}; {arg} must be finite (no NaN or Inf)")
        return
    if vec.lib == "cupy":
        import cupy

        ok = bool(cupy.isfinite(a).all())
    else:
        import torch

        ok = bool(torch.isfinite(a).all())
    if not ok:
        raise ValueError(f"{where}: {arg} has a NaN or Inf entry; {arg} must be finite")


UNITS = ("cycles", "normalized", "radians")


def k_in_cycles(k, units, n, arg, where):
    """k-space coordinates of one axis of n pixels in forge's cycles per field of view, from ``units``:
    'cycles' (cycles/FOV, [-n/2, n/2]), 'normalized' (cycles/pixel, [-0.5, 0.5): SigPy's and BART's k / n in
    some tools, FINUFFT's x / 2pi) or 'radians' (radians/pixel, [-pi, pi): FINUFFT's and torchkbnufft's)."""
    if units == "cycles":
        return k
    if units not in UNITS:
        raise ValueError(f"{where}: units must be 'cycles', 'normalized' or 'radians', got {units!r}")
    if n is None:
        raise ValueError(f"{where}: units={units!r} needs the image grid to convert {arg} (give ishape=(ny, nx) or "
                         f"(nz, ny, nx))")
    factor = n if units == "normalized" else n / (2 * np.pi)
    return (k.astype(np.float64) * factor).astype(k.dtype)


def grid_of_shape(ishape):
    """(nx, ny, nz) of an image shape (ny, nx) or (nz, ny, nx); None for a flat one."""
    if len(ishape) == 2:
        return ishape[1], ishape[0], 1
    if len(ishape) == 3:
        return ishape[2], ishape[1], ishape[0]
    return None


def k_units(kx, ky, kz, units, grid, where):
    """kx, ky, kz in cycles/FOV from ``units`` on the (nx, ny, nz) grid (None: unknown)."""
    if units == "cycles":
        return kx, ky, kz
    nx, ny, nz = grid if grid is not None else (None, None, None)
    return (k_in_cycles(kx, units, nx, "kx", where), k_in_cycles(ky, units, ny, "ky", where),
            k_in_cycles(kz, units, nz, "kz", where))


def grid_shape(nx, ny, nz):
    """The C-order shape of an nx x ny x nz image: (nz, ny, nx), or (ny, nx) for nz = 1."""
    return (nz, ny, nx) if nz > 1 else (ny, nx)


# The library of the CUDA arrays this thread last handed to forge (read by PythonOperator, whose device views
# reach user code as arrays of that library).
device_library = threading.local()

IMAGE_LAYOUT_HINT = "images are flattened with x fastest (C order of an (nz, ny, nx) array: image.reshape(-1))"


def shape_tuple(shape, arg, where):
    """An operator shape (ishape, oshape) as a tuple of positive ints."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        t = tuple(count(s, arg, where) for s in shape)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a tuple of sizes, got {shape!r}") from None
    if not t:
        raise ValueError(f"{where}: {arg} must have at least one axis")
    return t


def _fmt_shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


class Vector:
    """One checked array argument: the array to hand to the C++ module, its library and batch size.

    ``n`` is the entries of one vector; ``core`` the operator's shape of one vector (ishape or oshape,
    default ``(n,)``). An array of shape ``(*batch, *core)`` with a core of several axes is *shaped* (results
    take the operator's other shape, behind the same batch axes); a 1-D ``(n,)`` or ``(nbatch, n)`` is flat
    and gives flat results (what forge took before operators had shapes). C order
    only: an array in another memory order is refused, never reinterpreted. ``hint`` is appended to a size
    error (e.g. IMAGE_LAYOUT_HINT for image vectors)."""

    def __init__(self, x, arg, where, n, dtype, size_name, allow_batch=True, hint=None, core=None):
        lib = library_of(x, arg, where)
        if lib == "torch" and x.requires_grad:
            # A silent detach would cut the graph: the loss would quietly miss every gradient through forge.
            raise ValueError(f"{where}: {arg} requires gradients, which forge's applies do not compute; use "
                             f"forge.torch.apply(op, {arg}) (autograd through the operator, backward by its adjoint) "
                             f"or pass {arg}.detach()")
        # NumPy, the common case, skips the generic helpers: this runs on every apply.
        d = x.dtype.name if lib == "numpy" else _dtype_name(lib, x)
        if d != dtype.name:
            fix = f".to(torch.{dtype.name})" if lib == "torch" else f".astype(numpy.{dtype.name})"
            msg = f"{where}: {arg} has dtype {d}, expected {dtype.name}; convert it with {fix}"
            other = {"complex64": "float32", "complex128": "float64"}.get(d)
            if other and dtype.kind == "c":
                msg += f" or build the operator with dtype=numpy.{other}"
            raise TypeError(msg)
        shape = x.shape if lib == "numpy" else tuple(int(s) for s in x.shape)
        core = (n,) if core is None else core
        k = len(core)
        # A vector in the operator's own shape of several axes (an image (ny, nx), coil data (coils, samples))
        # is shaped, behind any number of batch axes; a 1-D vector (and a legacy (nbatch, n) batch) is flat.
        if k > 1 and shape[len(shape) - k:] == core and (allow_batch or len(shape) == k):
            lead, shaped = shape[:len(shape) - k], True
        elif shape == (n,):
            lead, shaped = (), False
        elif allow_batch and len(shape) == 2 and shape[1] == n:
            lead, shaped = shape[:1], False
        else:
            if k == 1:
                expect = f"({n},) or (nbatch, {n})" if allow_batch else f"({n},)"
            else:
                batch = f" or (..., {', '.join(str(s) for s in core)})" if allow_batch else ""
                flat = f" or flat ({n},)" + (f" / (nbatch, {n})" if allow_batch else "")
                expect = f"{_fmt_shape(core)}{batch}{flat}"
            raise ValueError(f"{where}: {arg} has shape {shape}, expected {expect} with {n} = {size_name}"
                             + (f"; {hint}" if hint else ""))
        if not (x.flags.c_contiguous if lib == "numpy" else _is_c_contiguous(lib, x)):
            fix = "x.contiguous()" if lib == "torch" else f"{lib}.ascontiguousarray(x)"
            order = " (it is in Fortran order)" if _is_f_contiguous(lib, x) and len(shape) > 1 else ""
            raise ValueError(f"{where}: {arg} is not C-contiguous{order}; pass {fix} (forge reads arrays in C "
                             f"order, the last axis fastest, and never reinterprets another order)")
        self.cuda = lib != "numpy" and _on_cuda(lib, x)
        if self.cuda and lib in ("cupy", "torch"):
            _require_current_device(lib, x, arg, where)
        if lib == "jax":
            if self.cuda:
                raise TypeError(
                    f"{where}: {arg} is a JAX array on a GPU; JAX arrays cannot be written in place, so pass a "
                    f"CuPy or PyTorch view of it (cupy.from_dlpack(x) or torch.from_dlpack(x))"
                )
            x = np.asarray(x)  # the same host memory, read-only
        self.lib = lib
        self.array = x
        self.lead = lead
        self.shaped = shaped
        self.nbatch = math.prod(lead) if lead else 1
        self.batched = bool(lead)
        self._stream_synced = False

    def empty(self, n, dtype, core=None):
        """An uninitialised output of n entries per vector (same batch), made by the input's library: of
        shape ``lead + core`` for a shaped input, flat otherwise."""
        tail = tuple(core) if (self.shaped and core is not None) else (n,)
        return empty_like_place(self.lib, self.array, self.lead + tail, dtype)

    def before(self):
        """Orders forge's work after the caller's current stream when that is not the legacy default."""
        if self.cuda:
            device_library.name = self.lib
        if self.cuda and not _on_default_stream(self.lib, self.array):
            _sync_current_stream(self.lib, self.array)
            self._stream_synced = True

    def after(self):
        if self._stream_synced:
            _native.synchronize()

    def result(self, out):
        if self.lib == "jax":
            import jax.numpy as jnp

            return jnp.asarray(out)
        return out


def check_out(out, vec, shape, dtype, where):
    """An ``out=`` array: the result's exact shape and dtype, C-contiguous, of the input's library and place, and
    not overlapping the input (forge may read the input after writing part of the output)."""
    lib = library_of(out, "out", where)
    if lib != vec.lib or lib == "jax":
        raise TypeError(f"{where}: out is a {lib} array, the input a {vec.lib} one; out must be a writable array "
                        f"of the input's library" + (" (JAX arrays are immutable)" if lib == "jax" else ""))
    oshape = tuple(int(s) for s in out.shape)
    if oshape != tuple(shape):
        raise ValueError(f"{where}: out has shape {oshape}, expected {tuple(shape)}")
    d = _dtype_name(lib, out)
    if d != np.dtype(dtype).name:
        raise TypeError(f"{where}: out has dtype {d}, expected {np.dtype(dtype).name}")
    if not _is_c_contiguous(lib, out):
        raise ValueError(f"{where}: out is not C-contiguous")
    if _on_cuda(lib, out) != vec.cuda:
        raise ValueError(f"{where}: out is on {'a CUDA device' if _on_cuda(lib, out) else 'the host'}, the input "
                         f"{'on a CUDA device' if vec.cuda else 'on the host'}; forge never copies between them")
    if lib == "numpy" and np.may_share_memory(out, vec.array):
        raise ValueError(f"{where}: out overlaps the input; give a separate array")
    if lib == "torch" and out.data_ptr() == vec.array.data_ptr():
        raise ValueError(f"{where}: out is the input; give a separate array")
    if lib == "cupy" and out.data.ptr == vec.array.data.ptr:
        raise ValueError(f"{where}: out is the input; give a separate array")


def empty_like_place(lib, like, shape, dtype):
    dtype = np.dtype(dtype)
    if lib in ("numpy", "jax"):
        return np.empty(shape, dtype)
    if lib == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype)
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype.name), device=like.device)


def zeros_like_place(lib, like, shape, dtype):
    out = empty_like_place(lib, like, shape, dtype)
    out[...] = 0
    return out


def ones_like_place(lib, like, shape, dtype):
    out = empty_like_place(lib, like, shape, dtype)
    out[...] = 1
    return out


def _require_current_device(lib, x, arg, where):
    """forge runs on the current CUDA device: an array on another one is refused, not copied."""
    if lib == "cupy":
        import cupy

        have, current = x.device.id, cupy.cuda.runtime.getDevice()
        fix = f"with cupy.cuda.Device({have}):"
    else:
        import torch

        have, current = x.device.index, torch.cuda.current_device()
        fix = f"torch.cuda.set_device({have})"
    if have != current:
        raise ValueError(f"{where}: {arg} lives on CUDA device {have} but the current device is {current}; forge "
                         f"runs on the current device (call forge inside {fix})")


def _on_default_stream(lib, x):
    if lib == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr == 0
    if lib == "torch":
        import torch

        s = torch.cuda.current_stream(x.device)
        return s.cuda_stream == 0
    return True


def _sync_current_stream(lib, x):
    if lib == "cupy":
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    elif lib == "torch":
        import torch

        torch.cuda.current_stream(x.device).synchronize()


def host_real(values, arg, where, dtype, n=None, size_name=None, ndim=1):
    """Geometry (trajectories, coordinates, field maps, times) as a C-contiguous host array of dtype.

    Geometry is copied into the operator once, at construction, so device arrays are accepted too and
    brought to the host here."""
    a = to_numpy(values, arg, where)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{where}: {arg} must be real numbers, got dtype {a.dtype}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{where}: {arg} must be a {ndim}-D array, got shape {a.shape}")
    if n is not None and a.size != n:
        raise ValueError(f"{where}: {arg} has {a.size} entries, expected {n} ({size_name})")
    # C order of the values whatever the memory order (a Fortran-ordered array is copied, not transposed).
    a = np.ascontiguousarray(a, dtype=dtype)
    return a.reshape(-1) if ndim is None else a


def shaped_real(values, arg, where, dtype, n=None, size_name=None):
    """host_real of any shape, flattened in C order, with the shape it came in: (flat array, shape)."""
    a = to_numpy(values, arg, where)
    shape = tuple(int(s) for s in np.shape(a))
    return host_real(a, arg, where, dtype, n, size_name, ndim=None), (shape if shape else (1,))


def cuda_array(values):
    """True for a CuPy array or a CUDA PyTorch tensor (what forge reads on the device without a copy)."""
    root = type(values).__module__.split(".")[0]
    return root in ("cupy", "torch") and _on_cuda(root, values)


def _device_real(values, arg, where, dtype):
    """A CuPy array or CUDA tensor of real numbers as a flat C-contiguous array of dtype on its device (converted
    there when needed, never through the host), with its shape."""
    lib = library_of(values, arg, where)
    if lib == "torch":
        import torch

        if values.requires_grad:
            raise ValueError(f"{where}: {arg} requires gradients, which forge does not compute for sample positions; "
                             f"pass {arg}.detach()")
        if values.is_complex() or values.dtype == torch.bool:
            raise TypeError(f"{where}: {arg} must be real numbers, got dtype {_dtype_name(lib, values)}")
        a = values.to(getattr(torch, dtype.name)).contiguous().reshape(-1)
    else:
        import cupy

        if np.dtype(values.dtype).kind not in "fiu":
            raise TypeError(f"{where}: {arg} must be real numbers, got dtype {values.dtype}")
        a = cupy.ascontiguousarray(values.astype(dtype, copy=False)).reshape(-1)
    _require_current_device(lib, values, arg, where)
    shape = tuple(int(s) for s in values.shape)
    return a, (shape if shape else (1,))


def _device_scale(a, factor, dtype):
    """a * factor in float64, rounded to dtype, on a's device (as k_in_cycles does on the host)."""
    if type(a).__module__.split(".")[0] == "torch":
        import torch

        return (a.to(torch.float64) * factor).to(getattr(torch, dtype.name))
    import cupy

    return (a.astype(cupy.float64) * factor).astype(dtype)


def _device_zeros(like, n, dtype):
    return zeros_like_place(type(like).__module__.split(".")[0], like, (n,), dtype)


def _device_id(a):
    return a.device.id if type(a).__module__.split(".")[0] == "cupy" else a.device.index


def k_samples(kx, ky, kz, units, grid, dtype, where):
    """The sample positions of Gnufft (and its set_points) in cycles/FOV: (kx, ky, kz, shape of kx, on_device).

    Host arrays (NumPy, lists, JAX, CPU tensors) become flat C-contiguous NumPy arrays of dtype; CuPy arrays and
    CUDA tensors stay on their device (dtype, layout and units converted there), for the GPU plan to read without a
    copy: all given ones on the device or none (forge.ResidencyError naming them), on the current device, and a
    float32 operator of a CUDA build (forge.ResidencyError otherwise). kz None: zeros, where kx lives."""
    given = [("kx", kx), ("ky", ky)] + ([("kz", kz)] if kz is not None else [])
    on = [(name, cuda_array(v)) for name, v in given]
    if not any(c for _, c in on):
        kx, shape = shaped_real(kx, "kx", where, dtype)
        n1 = kx.size
        ky = host_real(ky, "ky", where, dtype, n1, "the length of kx", ndim=None)
        kz = host_real(np.zeros(n1, dtype) if kz is None else kz, "kz", where, dtype, n1, "the length of kx",
                       ndim=None)
        kx, ky, kz = k_units(kx, ky, kz, units, grid, where)
        return kx, ky, kz, shape, False
    if not all(c for _, c in on):
        dev = [name for name, c in on if c]
        host = [name for name, c in on if not c]
        raise _native.ResidencyError(
            f"{where}: {' and '.join(dev)} {'is' if len(dev) == 1 else 'are'} on a CUDA device but "
            f"{' and '.join(host)} on the host; give kx, ky and kz all as host arrays or all as CUDA arrays of one "
            f"device (forge never copies between them)")
    if real_dtype(dtype) != np.float32 or not _native.built_with_cuda():
        why = ("a float64 Gnufft has no GPU plan (float32 only)" if real_dtype(dtype) != np.float32
               else "this forge was built without CUDA")
        raise _native.ResidencyError(
            f"{where}: kx is on a CUDA device but {why}; pass host arrays (cupy: kx.get(), torch: kx.cpu())")
    if units not in UNITS:
        raise ValueError(f"{where}: units must be 'cycles', 'normalized' or 'radians', got {units!r}")
    kx, shape = _device_real(kx, "kx", where, dtype)
    n1 = math.prod(shape)
    out = [kx]
    for name, v in given[1:]:
        a, s = _device_real(v, name, where, dtype)
        if a.shape[0] != n1:
            raise ValueError(f"{where}: {name} has {a.shape[0]} entries, expected {n1} (the length of kx)")
        if _device_id(a) != _device_id(kx):
            raise _native.ResidencyError(
                f"{where}: {name} is on CUDA device {_device_id(a)} and kx on device {_device_id(kx)}; kx, ky and kz "
                f"must live on one device (forge never copies between them)")
        out.append(a)
    if kz is None:
        out.append(_device_zeros(kx, n1, dtype))
    if units != "cycles":
        out = [_device_scale(a, n if units == "normalized" else n / (2 * np.pi), dtype) for a, n in zip(out, grid)]
    return out[0], out[1], out[2], shape, True


def host_complex(values, arg, where, dtype):
    a = to_numpy(values, arg, where)
    if a.dtype.kind not in "fiuc":
        raise TypeError(f"{where}: {arg} must be numbers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=complex_dtype(dtype))


def to_numpy(values, arg, where):
    if isinstance(values, (list, tuple, int, float)):
        return np.asarray(values)
    lib = library_of(values, arg, where)
    if lib == "cupy":
        return values.get()
    if lib == "torch":
        return values.detach().cpu().numpy()
    return np.asarray(values)
