"""The encoding operators (an image to k-space data of one coil): Gdft, GdftR2, Gnufft, Gfft; the pixel
positions they take (image_coords) and the density compensation of a trajectory."""

import numpy as np

from . import _arrays, _native
from ._arrays import real_dtype
from ._operator import LinearOperator, _native_class, _rebuild, _snapshot, _zeros_or, recorded


def _k_snapshot(k):
    """Sample positions as a pickling recipe keeps them: copies, on the device for device arrays (no host copy)."""
    def copy(v):
        if not _arrays.cuda_array(v):
            return _snapshot(v)
        return v.detach().clone() if type(v).__module__.startswith("torch") else v.copy()

    return tuple(copy(v) for v in k)


def _on_k_stream(k, call):
    """call() with k from k_samples: device k is ordered after the caller's current stream when that is not CUDA's
    legacy default one (forge's streams are ordered with the default stream), and forge's work after it."""
    if not k[4]:
        return call()
    lib = type(k[0]).__module__.split(".")[0]
    if _arrays._on_default_stream(lib, k[0]):
        return call()
    _arrays._sync_current_stream(lib, k[0])
    try:
        return call()
    finally:
        _native.synchronize()


def image_coords(nx, ny, nz=1, dtype=np.float32):
    """Pixel positions (ix, iy, iz) in FOV units of an nx x ny x nz grid, x fastest: ``(x - nx/2) / nx``
    (0 along an axis of length 1), as Gfft and Gnufft place their pixels."""
    d = real_dtype(dtype)
    nx, ny, nz = _arrays.grid(nx, ny, nz, "image_coords")
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")

    def pos(i, n):
        return ((i - n // 2) / n if n > 1 else np.zeros_like(i, dtype=float)).reshape(-1).astype(d)

    return pos(x, nx), pos(y, ny), pos(z, nz)


class Gdft(LinearOperator):
    """Exact field-corrected non-uniform DFT::

        s_j = sum_k m_k exp(-i (2 pi (kx_j ix_k + ky_j iy_k + kz_j iz_k) + field_map_k t_j))

    kx, ky, kz: k-space samples in cycles/FOV (n1 each; kz defaults to zeros for 2-D);
    ix, iy, iz: pixel positions in FOV units (n2 each; iz defaults to zeros), e.g. from image_coords();
    field_map: rad/s per pixel (default zeros); t: sample times in seconds (default zeros);
    dtype: numpy.float32 (GPU path on CUDA builds) or numpy.float64.

    units: of kx, ky, kz: 'cycles' (cycles/FOV, the default), 'normalized' (cycles/pixel, [-0.5, 0.5)) or
    'radians' (radians/pixel, [-pi, pi)); the last two need the image grid (ishape).

    Shapes: ``oshape`` is the shape of kx (e.g. (interleaves, samples)), ``ishape`` that of ix (image_coords
    gives flat positions: pass ``ishape=(ny, nx)`` to apply the operator to (ny, nx) images)."""

    @recorded
    def __init__(self, kx, ky, kz=None, *, ix, iy, iz=None, field_map=None, t=None, ishape=None,
                 units="cycles", dtype=np.float32):
        self._init("Gdft", kx, ky, kz, ix, iy, iz, field_map, t, dtype, ishape=ishape, units=units)

    def _init(self, base, kx, ky, kz, ix, iy, iz, field_map, t, dtype, extra=(), ishape=None, units="cycles"):
        where = base
        d = real_dtype(dtype)
        kx, oshape = _arrays.shaped_real(kx, "kx", where, d)
        ix, ix_shape = _arrays.shaped_real(ix, "ix", where, d)
        n1, n2 = kx.size, ix.size
        ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx", ndim=None)
        kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx", ndim=None)
        t = _arrays.host_real(_zeros_or(t, n1, d), "t", where, d, n1, "the length of kx", ndim=None)
        iy = _arrays.host_real(iy, "iy", where, d, n2, "the length of ix", ndim=None)
        iz = _arrays.host_real(_zeros_or(iz, n2, d), "iz", where, d, n2, "the length of ix", ndim=None)
        fm = _arrays.host_real(_zeros_or(field_map, n2, d), "field_map", where, d, n2, "the length of ix", ndim=None)
        if ishape is None:
            ishape = ix_shape
        grid = _arrays.grid_of_shape(_arrays.shape_tuple(ishape, "ishape", where))
        kx, ky, kz = _arrays.k_units(kx, ky, kz, units, grid, where)
        native = _native_class(base, d)(kx, ky, kz, ix, iy, iz, fm, t, *extra)
        LinearOperator.__init__(self, native, d, ishape, oshape)

    @property
    def gpu_enabled(self):
        """True when CUDA arrays run on the operator's GPU plan (float32, CUDA build, device present)."""
        return self._native.gpu_enabled()

    def set_devices(self, devices):
        """Runs CUDA arrays on several GPUs of this machine: the forward transform split by samples, the
        adjoint by pixels, one equal part per entry of ``devices`` (CUDA device numbers; an entry may repeat),
        the result on the input's device; ``[]``: one GPU (the default). float32 only. Raises ValueError for a
        device number that does not exist (or a float64 operator), forge.CudaError without a CUDA device
        (docs/gpu.md)."""
        where = f"{type(self).__name__}.set_devices"
        self._native.set_devices([_arrays.count(d, "devices", where, minimum=0, maximum=_arrays.INT_MAX)
                                  for d in devices])

    @property
    def devices(self):
        """The device list of set_devices ([]: one GPU)."""
        return list(self._native.devices())

    def _pickle_state(self):
        return {"devices": self.devices}


class GdftR2(Gdft):
    """Gdft with the sinc factor of the field map's gradients (R2* / intra-voxel dephasing), computed by
    forge from ``field_map`` on the nx x ny x nz grid (x fastest; nx*ny*nz = number of pixels).
    Arguments and units as Gdft."""

    @recorded
    def __init__(self, kx, ky, kz=None, *, ix, iy, iz=None, field_map=None, t=None, nx, ny, nz=1,
                 units="cycles", dtype=np.float32):
        grid = _arrays.grid(nx, ny, nz, "GdftR2")
        self._init("GdftR2", kx, ky, kz, ix, iy, iz, field_map, t, dtype, grid, ishape=_arrays.grid_shape(*grid),
                   units=units)


class Gnufft(LinearOperator):
    """Non-uniform FFT (Kaiser-Bessel gridding) on an nx x ny x nz image (x fastest; nz = 1 for 2-D),
    approximating the field-free Gdft. kx, ky, kz in cycles/FOV, each in [-N/2, N/2] for its axis (the grid
    is periodic: +N/2 and -N/2 are the same sample);
    ``oversampling`` is the grid factor (>= 1.25), ``kernel_width`` the kernel width in grid cells;
    ``tolerance`` (e.g. 1e-4; float32 1e-6..1e-1, float64 1e-12..1e-1) instead picks oversampling 2 and the
    narrowest kernel whose measured relative error is within it (docs/nufft.md). ``units``: 'cycles'
    (default), 'normalized' (cycles/pixel, [-0.5, 0.5)) or 'radians' ([-pi, pi), FINUFFT's convention).

    kx, ky, kz are host arrays (copied into the operator) or all CuPy arrays / CUDA tensors of the current device,
    which a float32 operator of a CUDA build checks and sorts on the device with no copy through the host (units
    converted there too); forge.ResidencyError for host and device k mixed, or device k given to a float64
    operator or a build without CUDA."""

    def __init__(self, kx, ky, kz=None, *, nx, ny, nz=1, oversampling=2.0, kernel_width=5, tolerance=None,
                 units="cycles", dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "Gnufft")
        kernel_width = _arrays.count(kernel_width, "kernel_width", "Gnufft")
        tol = 0.0 if tolerance is None else float(tolerance)
        if tolerance is not None and not tol > 0:
            raise ValueError(f"Gnufft: tolerance must be a positive relative error, got {tolerance!r}")
        k = _arrays.k_samples(kx, ky, kz, units, (nx, ny, nz), d, "Gnufft")
        cls = _native_class("Gnufft", d)
        native = _on_k_stream(k, lambda: cls(nx, ny, nz, *k[:3], float(oversampling), kernel_width, tol))
        LinearOperator.__init__(self, native, d, _arrays.grid_shape(nx, ny, nz), k[3])
        self._grid, self._units = (nx, ny, nz), units
        self._recipe = (Gnufft, _k_snapshot((kx, ky, kz)),
                        _snapshot(dict(nx=nx, ny=ny, nz=nz, oversampling=oversampling, kernel_width=kernel_width,
                                       tolerance=tolerance, units=units, dtype=d)))

    def set_points(self, kx, ky, kz=None, *, units=None):
        """New sample positions (any number) on the same grid, with the same kernel and FFT plans: host arrays, or
        CuPy arrays / CUDA tensors that a GPU plan checks and sorts on the device with no copy through the host (a
        per-frame trajectory), as the constructor takes them. ``units``: those of kx, ky, kz (default: the
        constructor's). ``oshape`` becomes kx's shape. Checked as the constructor checks k; on an error the
        operator keeps its samples. An operator already inside a composite (SENSE, TimeSegmentation, ...) keeps
        the sample count it was built with: give it the same number of samples."""
        where = "Gnufft.set_points"
        units = self._units if units is None else units
        k = _arrays.k_samples(kx, ky, kz, units, self._grid, self.real_dtype, where)
        _on_k_stream(k, lambda: self._native.set_points(*k[:3]))
        self._set_shapes(self._ishape, k[3])
        fn, _, kwargs = self._recipe
        self._recipe = (fn, _k_snapshot((kx, ky, kz)), dict(kwargs, units=units))

    def __reduce__(self):
        # k given on the device is kept there (a device copy) and brought to the host only when pickled.
        fn, args, kwargs = self._recipe
        host = tuple(None if a is None else _arrays.to_numpy(a, "k", "pickle") if _arrays.cuda_array(a) else a
                     for a in args)
        return (_rebuild, (fn, host, kwargs, self._pickle_state()))

    @property
    def gpu_enabled(self):
        """True when CUDA arrays run on the operator's GPU plan (float32, CUDA build, device present)."""
        return self._native.gpu_enabled()

    @property
    def kernel_width(self):
        """Kernel width in oversampled grid cells (the one picked for ``tolerance`` when it was given)."""
        return self._native.kernel_width

    @property
    def oversampling(self):
        """Grid oversampling factor."""
        return self._native.oversampling

    @property
    def tolerance(self):
        """The requested relative error (0.0 when oversampling and kernel_width were given instead)."""
        return self._native.tolerance


class Gfft(LinearOperator):
    """Centred Cartesian FFT of an nx x ny x nz image (x fastest), unnormalised: the Cartesian case of Gdft
    (k = x - nx/2 cycles/FOV), so ``G.H @ (G @ x) = nx*ny*nz * x``."""

    @recorded
    def __init__(self, nx, ny, nz=1, *, dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "Gfft")
        shape = _arrays.grid_shape(nx, ny, nz)
        LinearOperator.__init__(self, _native_class("Gfft", d)(nx, ny, nz), d, shape, shape)


def density_compensation(kx, ky, kz=None, *, nx, ny, nz=1, iterations=20, units="cycles", dtype=np.float32):
    """Pipe-Menon density compensation weights for a trajectory (cycles/FOV, each axis in [-N/2, N/2]) on an
    nx x ny x nz grid: a NumPy array of n1 real weights, normalised so that G^H diag(w) G ~ I for a fully
    sampled field of view; a gridding reconstruction is then ``G.H @ (w * y)``."""
    where = "density_compensation"
    d = real_dtype(dtype)
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    iterations = _arrays.count(iterations, "iterations", where)
    kx, shape = _arrays.shaped_real(kx, "kx", where, d)
    n1 = kx.size
    ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx", ndim=None)
    kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx", ndim=None)
    kx, ky, kz = _arrays.k_units(kx, ky, kz, units, (nx, ny, nz), where)
    out = np.empty(n1, d)
    _native_class("density_compensation", d)(nx, ny, nz, kx, ky, kz, iterations, out)
    return out.reshape(shape)
