"""forge: iterative MRI reconstruction (field-corrected non-Cartesian SENSE) from Python.

Operators map an image (``domain_size`` pixels, flattened with x fastest, i.e. the C order of an
``(nz, ny, nx)`` array) to k-space data (``codomain_size`` samples)::

    y = G @ x          # forward, also G.forward(x)
    x = G.H @ y        # adjoint, also G.adjoint(y)
    z = G.normal(x)    # G^H G x

A vector is a 1-D array of the size, or a batch of shape ``(nbatch, size)``. Arrays are NumPy, CuPy,
PyTorch or (host) JAX arrays of complex64 (operators built with ``dtype=numpy.float32``, the default)
or complex128 (``dtype=numpy.float64``); they come in without copies (DLPack) and results are arrays of
the same library: host arrays run on the CPU (OpenMP), CuPy arrays and CUDA tensors on the GPU, where
the results stay. Units (docs/conventions.md): k-space in cycles per field of view (an N-point axis
spans [-N/2, N/2], +N/2 being the same sample as -N/2), pixel positions in FOV units (``(x - N/2) / N``),
field maps in rad/s, sample times in seconds, shot phases in radians.
"""

import numpy as np

from . import _arrays, _native
from ._arrays import real_dtype

__version__ = "0.1.0"

ResidencyError = _native.ResidencyError
CudaError = _native.CudaError

__all__ = [
    "LinearOperator",
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
    "density_compensation",
    "coil_maps",
    "coil_maps_from_images",
    "estimate_fieldmap",
    "phase_difference_fieldmap",
    "noise_covariance",
    "whitening_matrix",
    "coil_compression_matrix",
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

_FORWARD, _ADJOINT, _NORMAL = 0, 1, 2


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


def _native_class(base, dtype):
    return getattr(_native, f"{base}_{real_dtype(dtype).name}")


class LinearOperator:
    """A forge operator: ``G @ x`` forward, ``G.H @ y`` adjoint, ``G.normal(x)`` = G^H G x.

    ``shape`` is ``(codomain_size, domain_size)``; ``dtype`` the real precision (float32 or float64),
    and vectors are arrays of the matching complex dtype."""

    def __init__(self, native, dtype):
        self._native = native
        self.dtype = real_dtype(dtype)
        self.complex_dtype = _arrays.complex_dtype(dtype)

    @property
    def domain_size(self):
        """Entries of one image vector (pixels)."""
        return self._native.domain_size

    @property
    def codomain_size(self):
        """Entries of one data vector (samples, all coils)."""
        return self._native.codomain_size

    @property
    def shape(self):
        return (self.codomain_size, self.domain_size)

    @property
    def name(self):
        return self._native.name

    def forward(self, x):
        """G x for an image x of shape (domain_size,) or (nbatch, domain_size)."""
        return self._apply(x, _FORWARD, "x")

    def adjoint(self, y):
        """G^H y for data y of shape (codomain_size,) or (nbatch, codomain_size)."""
        return self._apply(y, _ADJOINT, "y")

    def normal(self, x):
        """G^H G x (an operator may compute it faster than adjoint after forward)."""
        return self._apply(x, _NORMAL, "x")

    def __matmul__(self, x):
        return self.forward(x)

    @property
    def H(self):
        """The adjoint operator: ``G.H @ y`` is ``G.adjoint(y)``."""
        return _Adjoint(self)

    def prepare_device(self):
        """Uploads what the operator keeps for the GPU now rather than on its first GPU call."""
        self._native.prepare_device()

    def __repr__(self):
        return (f"forge.{type(self).__name__}({self.name}: {self.domain_size} -> {self.codomain_size}, "
                f"{self.dtype.name})")

    def _apply(self, v, mode, arg):
        n_in = self.codomain_size if mode == _ADJOINT else self.domain_size
        n_out = self.codomain_size if mode == _FORWARD else self.domain_size
        what = ("codomain_size (data entries)" if mode == _ADJOINT else "domain_size (pixels)")
        where = f"{type(self).__name__}.{('forward', 'adjoint', 'normal')[mode]}"
        hint = None if mode == _ADJOINT else _arrays.IMAGE_LAYOUT_HINT
        vec = _arrays.Vector(v, arg, where, n_in, self.complex_dtype, what, hint=hint)
        out = vec.empty(n_out, self.complex_dtype)
        vec.before()
        self._native.apply(vec.array, out, vec.nbatch, mode)
        vec.after()
        return vec.result(out)


class _Adjoint:
    """G^H as an operator: ``G.H @ y``."""

    def __init__(self, op):
        self._op = op

    def __matmul__(self, y):
        return self._op.adjoint(y)

    def forward(self, y):
        return self._op.adjoint(y)

    def adjoint(self, x):
        return self._op.forward(x)

    @property
    def H(self):
        return self._op

    @property
    def shape(self):
        return (self._op.domain_size, self._op.codomain_size)

    def __repr__(self):
        return f"{self._op!r}.H"


def _zeros_or(values, n, dtype):
    return np.zeros(n, dtype) if values is None else values


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
    dtype: numpy.float32 (GPU path on CUDA builds) or numpy.float64."""

    def __init__(self, kx, ky, kz=None, *, ix, iy, iz=None, field_map=None, t=None, dtype=np.float32):
        self._init("Gdft", kx, ky, kz, ix, iy, iz, field_map, t, dtype)

    def _init(self, base, kx, ky, kz, ix, iy, iz, field_map, t, dtype, extra=()):
        where = base
        d = real_dtype(dtype)
        kx = _arrays.host_real(kx, "kx", where, d)
        ix = _arrays.host_real(ix, "ix", where, d)
        n1, n2 = kx.size, ix.size
        ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx")
        kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx")
        t = _arrays.host_real(_zeros_or(t, n1, d), "t", where, d, n1, "the length of kx")
        iy = _arrays.host_real(iy, "iy", where, d, n2, "the length of ix")
        iz = _arrays.host_real(_zeros_or(iz, n2, d), "iz", where, d, n2, "the length of ix")
        fm = _arrays.host_real(_zeros_or(field_map, n2, d), "field_map", where, d, n2, "the length of ix")
        native = _native_class(base, d)(kx, ky, kz, ix, iy, iz, fm, t, *extra)
        LinearOperator.__init__(self, native, d)

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


class GdftR2(Gdft):
    """Gdft with the sinc factor of the field map's gradients (R2* / intra-voxel dephasing), computed by
    forge from ``field_map`` on the nx x ny x nz grid (x fastest; nx*ny*nz = number of pixels).
    Arguments and units as Gdft."""

    def __init__(self, kx, ky, kz=None, *, ix, iy, iz=None, field_map=None, t=None, nx, ny, nz=1,
                 dtype=np.float32):
        self._init("GdftR2", kx, ky, kz, ix, iy, iz, field_map, t, dtype, _arrays.grid(nx, ny, nz, "GdftR2"))


class Gnufft(LinearOperator):
    """Non-uniform FFT (Kaiser-Bessel gridding) on an nx x ny x nz image (x fastest; nz = 1 for 2-D),
    approximating the field-free Gdft. kx, ky, kz in cycles/FOV, each in [-N/2, N/2] for its axis (the grid
    is periodic: +N/2 and -N/2 are the same sample);
    ``oversampling`` is the grid factor (>= 1.25), ``kernel_width`` the kernel width in grid cells;
    ``tolerance`` (e.g. 1e-4; float32 1e-6..1e-1, float64 1e-12..1e-1) instead picks oversampling 2 and the
    narrowest kernel whose measured relative error is within it (docs/nufft.md)."""

    def __init__(self, kx, ky, kz=None, *, nx, ny, nz=1, oversampling=2.0, kernel_width=5, tolerance=None,
                 dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "Gnufft")
        kernel_width = _arrays.count(kernel_width, "kernel_width", "Gnufft")
        kx = _arrays.host_real(kx, "kx", "Gnufft", d)
        n1 = kx.size
        ky = _arrays.host_real(ky, "ky", "Gnufft", d, n1, "the length of kx")
        kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", "Gnufft", d, n1, "the length of kx")
        tol = 0.0 if tolerance is None else float(tolerance)
        if tolerance is not None and not tol > 0:
            raise ValueError(f"Gnufft: tolerance must be a positive relative error, got {tolerance!r}")
        native = _native_class("Gnufft", d)(nx, ny, nz, kx, ky, kz, float(oversampling), kernel_width, tol)
        LinearOperator.__init__(self, native, d)

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

    def __init__(self, nx, ny, nz=1, *, dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "Gfft")
        LinearOperator.__init__(self, _native_class("Gfft", d)(nx, ny, nz), d)


def _interp_flag(interpolator, where):
    names = {"hanning": 0, "minmax": 1}
    if interpolator not in names:
        raise ValueError(f"{where}: interpolator must be 'hanning' or 'minmax', got {interpolator!r}")
    return names[interpolator]


def _require_operator(G, dtype, where, arg="G"):
    if not isinstance(G, LinearOperator):
        raise TypeError(f"{where}: {arg} must be a forge operator (Gdft, Gnufft, ...), got {type(G).__name__}")
    if dtype is not None and G.dtype != dtype:
        raise TypeError(f"{where}: {arg} is {G.dtype.name}, expected {dtype.name}")


class TimeSegmentation(LinearOperator):
    """Field-map correction by time segmentation around a field-free operator G (Gnufft, Gfft, ...):
    approximates Gdft(..., field_map, t) with ``segments`` + 1 applications of G per transform.
    field_map: rad/s per pixel of G; t: seconds per sample of G; interpolator 'hanning' or 'minmax'."""

    def __init__(self, G, field_map, t, segments, *, interpolator="hanning"):
        where = "TimeSegmentation"
        _require_operator(G, None, where)
        d = G.dtype
        fm = _arrays.host_real(field_map, "field_map", where, d, G.domain_size, "G.domain_size")
        t = _arrays.host_real(t, "t", where, d, G.codomain_size, "G.codomain_size")
        segments = _arrays.count(segments, "segments", where)
        native = _native_class("TimeSegmentation", d)(G._native, fm, t, segments, _interp_flag(interpolator, where))
        self.encoding_operator = G
        LinearOperator.__init__(self, native, d)

    @property
    def segments(self):
        return self._native.segments

    @staticmethod
    def choose_segments(field_map, t, target_error, *, interpolator="minmax", max_segments=64, dtype=np.float32):
        """Smallest number of segments whose estimated RMS error is below target_error:
        returns (segments, rms_error, max_error)."""
        where = "TimeSegmentation.choose_segments"
        d = real_dtype(dtype)
        fm = _arrays.host_real(field_map, "field_map", where, d)
        t = _arrays.host_real(t, "t", where, d)
        max_segments = _arrays.count(max_segments, "max_segments", where)
        return _native_class("TimeSegmentation", d).choose_segments(
            fm, t, float(target_error), _interp_flag(interpolator, where), max_segments)


class SENSE(LinearOperator):
    """Multi-coil SENSE around a single-coil operator G: y_c = G (S_c * x), data coil-major
    (coil c's samples at [c*n1, (c+1)*n1)). maps: complex sensitivities of shape (n_coils, n2)."""

    def __init__(self, G, maps, n_coils=None):
        where = "SENSE"
        _require_operator(G, None, where)
        d = G.dtype
        m = _arrays.host_complex(maps, "maps", where, d)
        n2 = G.domain_size
        if n_coils is not None:
            n_coils = _arrays.count(n_coils, "n_coils", where)
        if m.ndim == 2 and m.shape[1] == n2 and (n_coils is None or n_coils == m.shape[0]):
            n_coils = m.shape[0]
        elif m.ndim != 1 or n_coils is None or m.size != n2 * n_coils:
            raise ValueError(f"{where}: maps has shape {m.shape}, expected (n_coils, {n2}) with {n2} = "
                             f"G.domain_size (or a flat array of n_coils * {n2} entries with n_coils given)")
        native = _native_class("SENSE", d)(G._native, m.reshape(-1), int(n_coils))
        self.encoding_operator = G
        LinearOperator.__init__(self, native, d)

    @property
    def n_coils(self):
        return self._native.n_coils


class pcSENSE(LinearOperator):
    """Phase-corrected multi-shot SENSE with an exact field-corrected DFT per shot.

    kx, ky, kz (cycles/FOV) and t (seconds): arrays of shape (n_shots, samples_per_shot);
    ix, iy, iz: pixel positions in FOV units and field_map (rad/s): n2 each;
    maps: complex (n_coils, n2); shot_phases: radians, (n_shots, n2).
    Data order: coil-major, then shot: y[(c*n_shots + s)*samples_per_shot + j]."""

    def __init__(self, kx, ky, kz=None, *, t=None, ix, iy, iz=None, field_map=None, maps, shot_phases,
                 dtype=np.float32):
        where = "pcSENSE"
        d = real_dtype(dtype)
        kx = _arrays.host_real(kx, "kx", where, d, ndim=2)
        shape = kx.shape

        def shot_array(v, name):
            a = _arrays.host_real(np.zeros(shape, d) if v is None else v, name, where, d, ndim=2)
            if a.shape != shape:
                raise ValueError(f"{where}: {name} has shape {a.shape}, expected {shape} (the shape of kx: "
                                 f"n_shots x samples_per_shot)")
            return a

        ky, kz, t = shot_array(ky, "ky"), shot_array(kz, "kz"), shot_array(t, "t")
        ix = _arrays.host_real(ix, "ix", where, d)
        n2 = ix.size
        iy = _arrays.host_real(iy, "iy", where, d, n2, "the length of ix")
        iz = _arrays.host_real(_zeros_or(iz, n2, d), "iz", where, d, n2, "the length of ix")
        fm = _arrays.host_real(_zeros_or(field_map, n2, d), "field_map", where, d, n2, "the length of ix")
        m = _arrays.host_complex(maps, "maps", where, d)
        if m.ndim != 2 or m.shape[1] != n2:
            raise ValueError(f"{where}: maps has shape {m.shape}, expected (n_coils, {n2}) with {n2} = the "
                             f"length of ix")
        ph = _arrays.host_real(shot_phases, "shot_phases", where, d, ndim=2)
        if ph.shape != (shape[0], n2):
            raise ValueError(f"{where}: shot_phases has shape {ph.shape}, expected (n_shots, n2) = "
                             f"{(shape[0], n2)}")
        native = _native_class("pcSENSE", d)(kx, ky, kz, t, ix, iy, iz, fm, m.reshape(-1), ph, m.shape[0])
        LinearOperator.__init__(self, native, d)

    @property
    def n_coils(self):
        return self._native.n_coils

    @property
    def n_shots(self):
        return self._native.n_shots


class ToeplitzNormal(LinearOperator):
    """The normal operator N = G^H diag(weights) G of the exact DFT G of one trajectory on an nx x ny x nz
    Cartesian image grid (x fastest), applied by FFTs on a grid of twice the size (Toeplitz embedding); its
    kernels are computed once, at construction, by forge's exact DFT (on the GPU for float32 when one is
    present, unless ``build='host'``). Square and Hermitian: ``N @ x`` = ``N.H @ x`` = G^H W G x.

    kx, ky, kz: k-space samples in cycles/FOV (n1 each; kz defaults to zeros); weights: n1 non-negative
    data weights (default ones). With a field_map (rad/s per pixel) and t (seconds per sample) the operator
    approximates the field-corrected G^H W G by time segmentation with ``segments`` segments, by default
    the smallest number whose estimated error is below ``target_error`` (relative; the field-free operator
    is exact to rounding). interpolator: 'minmax' or 'hanning'. axis_grouping: 'auto' lets the build exploit
    an axis along which the samples take few distinct values (stacks of spirals, EPI); 'off' forces the
    full DFT. An apply costs 2 (segments + 1) FFTs on the padded grid, independent of n1.

    Use it for iterations: ``forge.solve_pwls_pcg_normal(N, G.H @ (w * y))``, or as the normal of G inside
    SENSE: ``forge.SENSE(forge.with_normal(G, N), maps)``."""

    def __init__(self, kx, ky, kz=None, *, nx, ny, nz=1, weights=None, field_map=None, t=None, segments=None,
                 target_error=1e-3, interpolator="minmax", build="auto", axis_grouping="auto", dtype=np.float32):
        where = "ToeplitzNormal"
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        kx = _arrays.host_real(kx, "kx", where, d)
        n1 = kx.size
        n2 = nx * ny * nz
        ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx")
        kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx")
        w = _arrays.host_real(np.ones(n1, d) if weights is None else weights, "weights", where, d, n1,
                              "the length of kx")
        if build not in ("auto", "host"):
            raise ValueError(f"{where}: build must be 'auto' or 'host', got {build!r}")
        if axis_grouping not in ("auto", "off"):
            raise ValueError(f"{where}: axis_grouping must be 'auto' or 'off', got {axis_grouping!r}")
        interp = _interp_flag(interpolator, where)
        if field_map is None:
            if t is not None or segments is not None:
                raise ValueError(f"{where}: t and segments go with a field_map; without one the operator is field-free")
            fm = np.zeros(0, d)
            t = np.zeros(0, d)
            L = 0
        else:
            fm = _arrays.host_real(field_map, "field_map", where, d, n2, "nx * ny * nz")
            if t is None:
                raise ValueError(f"{where}: a field_map needs the sample times t (seconds, one per sample)")
            t = _arrays.host_real(t, "t", where, d, n1, "the length of kx")
            if segments is None:
                segments = ToeplitzNormal.choose_segments(fm, t, target_error, interpolator=interpolator, dtype=d)
            L = _arrays.count(segments, "segments", where)
        native = _native_class("ToeplitzNormal", d)(nx, ny, nz, kx, ky, kz, w, fm, t, L, interp, build == "host",
                                                     axis_grouping == "auto")
        LinearOperator.__init__(self, native, d)

    @property
    def segments(self):
        """Time segments L (0: field-free)."""
        return self._native.segments

    @property
    def kernel_count(self):
        """Kernels stored (one per independent segment pair)."""
        return self._native.kernel_count

    @property
    def dft_count(self):
        """Adjoint DFTs the kernel build took."""
        return self._native.dft_count

    @property
    def kernel_bytes(self):
        """Memory the kernels take, in bytes."""
        return self._native.kernel_bytes

    @property
    def build_seconds(self):
        """Wall time of the kernel build."""
        return self._native.build_seconds

    @property
    def kernels_built_on_gpu(self):
        return self._native.kernels_built_on_gpu

    @property
    def grouped_axis(self):
        """Axis (0 = x, 1 = y, 2 = z) the build grouped samples along, or None for the full DFT."""
        a = self._native.grouped_axis
        return None if a == 3 else a

    @staticmethod
    def choose_segments(field_map, t, target_error, *, interpolator="minmax", max_segments=64, dtype=np.float32):
        """Segments for which the normal operator's relative error stays near target_error."""
        where = "ToeplitzNormal.choose_segments"
        d = real_dtype(dtype)
        fm = _arrays.host_real(field_map, "field_map", where, d)
        t = _arrays.host_real(t, "t", where, d)
        max_segments = _arrays.count(max_segments, "max_segments", where)
        return _native_class("ToeplitzNormal", d).choose_segments(fm, t, float(target_error),
                                                                   _interp_flag(interpolator, where), max_segments)

    @staticmethod
    def kernel_bytes_for(nx, ny, nz=1, segments=0, *, dtype=np.float32):
        """Bytes the kernels of an operator with this grid and number of segments take at most."""
        where = "ToeplitzNormal.kernel_bytes_for"
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        segments = _arrays.count(segments, "segments", where, minimum=0)
        return _native_class("ToeplitzNormal", real_dtype(dtype)).kernel_bytes_for(nx, ny, nz, segments)


def with_normal(G, N):
    """G as an operator whose normal() is N (e.g. a ToeplitzNormal of G's trajectory): forward and adjoint are
    G's; SENSE and other composites built on it use N in their own normal()."""
    where = "with_normal"
    _require_operator(G, None, where)
    _require_operator(N, G.dtype, where, "N")
    if N.domain_size != G.domain_size or N.codomain_size != G.domain_size:
        raise ValueError(f"{where}: N maps {N.domain_size} -> {N.codomain_size} entries, expected "
                         f"{G.domain_size} -> {G.domain_size} (G.domain_size)")
    op = LinearOperator(_native_class("WithNormal", G.dtype)(G._native, N._native), G.dtype)
    op.encoding_operator, op.normal_operator = G, N
    return op


class NormalOf(LinearOperator):
    """A's normal operator A^H A as a square operator of its own (what solve_pwls_pcg_normal takes)."""

    def __init__(self, A):
        _require_operator(A, None, "NormalOf", "A")
        self.encoding_operator = A
        LinearOperator.__init__(self, _native_class("NormalOf", A.dtype)(A._native), A.dtype)


class _Penalty:
    """Roughness penalty R(x) over first differences of an nx x ny x nz image (x fastest)."""

    def __init__(self, native, dtype, n):
        self._native = native
        self.dtype = real_dtype(dtype)
        self.complex_dtype = _arrays.complex_dtype(dtype)
        self.n_pixels = n

    def _vec(self, x, arg, where):
        return _arrays.Vector(x, arg, where, self.n_pixels, self.complex_dtype, "nx*ny*nz (pixels)",
                              allow_batch=False, hint=_arrays.IMAGE_LAYOUT_HINT)

    def penalty(self, x):
        """R(x), a float."""
        v = self._vec(x, "x", f"{type(self).__name__}.penalty")
        v.before()
        return self._native.penalty(v.array)

    def gradient(self, x):
        """dR/dRe(x) + i dR/dIm(x), an array of the library of x."""
        v = self._vec(x, "x", f"{type(self).__name__}.gradient")
        out = v.empty(self.n_pixels, self.complex_dtype)
        v.before()
        self._native.gradient(v.array, out)
        v.after()
        return v.result(out)

    def denom(self, d, x):
        """Curvature of R along the direction d at x (the PCG step divides by it)."""
        where = f"{type(self).__name__}.denom"
        vd, vx = self._vec(d, "d", where), self._vec(x, "x", where)
        vx.before()
        return self._native.denom(vd.array, vx.array)


class QuadPenalty(_Penalty):
    """R(x) = beta/2 ||C x||^2, C the first differences along each axis longer than 1."""

    def __init__(self, nx, ny=1, nz=1, *, beta, dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "QuadPenalty")
        _Penalty.__init__(self, _native_class("QuadPenalty", d)(nx, ny, nz, float(beta)), d, nx * ny * nz)


class TVPenalty(_Penalty):
    """Smooth total variation R(x) = beta sum delta^2 (sqrt(1 + |C x|^2/delta^2) - 1); delta in image units."""

    def __init__(self, nx, ny=1, nz=1, *, beta, delta, dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "TVPenalty")
        _Penalty.__init__(self, _native_class("TVPenalty", d)(nx, ny, nz, float(beta), float(delta)), d,
                          nx * ny * nz)


def solve_pwls_pcg(G, y, *, x0=None, weights=None, penalty=None, niter=10, tolerance=0.0, callback=None,
                   return_info=False):
    """Penalized weighted least squares by conjugate gradients:
    argmin_x ||W^(1/2) (y - G x)||^2 + R(x).

    G: a forge operator; y: data (codomain_size,); x0: initial image (default zeros); weights: real, non-negative,
    one per sample (default ones); penalty: QuadPenalty or TVPenalty (default none); niter: iterations;
    tolerance: stop when ||gradient|| <= tolerance * ||initial gradient|| (0: run all); callback(info) is
    called after each iteration with a dict (iteration, cost, gradient_norm, step, elapsed_s).
    All arrays live in one place: on the host, or on the GPU (CuPy or PyTorch), where the solve then runs
    without host copies. Returns x (and a dict of iterations, converged, gradient norms and elapsed_s with
    return_info=True)."""
    where = "solve_pwls_pcg"
    _require_operator(G, None, where)
    niter = _arrays.count(niter, "niter", where, minimum=0)
    d, cd = G.dtype, G.complex_dtype
    vy = _arrays.Vector(y, "y", where, G.codomain_size, cd, "G.codomain_size", allow_batch=False)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vy.lib, vy.array, (G.domain_size,), cd)
    vx = _arrays.Vector(x0, "x0", where, G.domain_size, cd, "G.domain_size", allow_batch=False,
                        hint=_arrays.IMAGE_LAYOUT_HINT)
    if weights is None:
        weights = _arrays.ones_like_place(vy.lib, vy.array, (G.codomain_size,), d)
    vw = _arrays.Vector(weights, "weights", where, G.codomain_size, d, "G.codomain_size", allow_batch=False)
    penalty = _check_solver_arguments(penalty, callback, G, where)
    _arrays.require_finite(vy, "y", where)
    _arrays.require_finite(vx, "x0", where)
    out = vy.empty(G.domain_size, cd)
    vy.before()
    info = _native_class("solve_pwls_pcg", d)(vx.array, G._native, vw.array, vy.array, penalty._native, niter,
                                              float(tolerance), callback, out)
    vy.after()
    x = vy.result(out)
    return (x, info) if return_info else x


def _check_solver_arguments(penalty, callback, G, where):
    d = G.dtype
    if penalty is None:
        penalty = QuadPenalty(G.domain_size, beta=0.0, dtype=d)
    if not isinstance(penalty, _Penalty):
        raise TypeError(f"{where}: penalty must be a forge QuadPenalty or TVPenalty, got {type(penalty).__name__}")
    if penalty.dtype != d:
        raise TypeError(f"{where}: penalty is {penalty.dtype.name} but the operator is {d.name}")
    if penalty.n_pixels != G.domain_size:
        raise ValueError(f"{where}: penalty covers {penalty.n_pixels} pixels, the operator's domain_size is "
                         f"{G.domain_size}")
    if callback is not None and not callable(callback):
        raise TypeError(f"{where}: callback must be callable")
    return penalty


def solve_pwls_pcg_normal(N, b, *, x0=None, penalty=None, niter=10, tolerance=0.0, callback=None,
                          return_info=False):
    """solve_pwls_pcg from the normal equations' side, for a normal operator cheaper than G and G^H:
    argmin_x x^H N x - 2 Re(x^H b) + R(x), i.e. the same solution when N = G^H W G and b = G^H W y.

    N: a square forge operator (ToeplitzNormal, or NormalOf(A) for an A whose normal() is fast, e.g. a SENSE
    built on with_normal(G, ToeplitzNormal(...))); b: the right-hand side G^H (W y), computed once with the
    exact G. Other arguments and the result as solve_pwls_pcg; the callback's cost is Phi(x) - y^H W y."""
    where = "solve_pwls_pcg_normal"
    _require_operator(N, None, where, "N")
    if N.domain_size != N.codomain_size:
        raise ValueError(f"{where}: N maps {N.domain_size} -> {N.codomain_size} entries; it must be square "
                         f"(NormalOf(A) makes the normal operator of A)")
    niter = _arrays.count(niter, "niter", where, minimum=0)
    cd = N.complex_dtype
    vb = _arrays.Vector(b, "b", where, N.domain_size, cd, "N.domain_size", allow_batch=False,
                        hint=_arrays.IMAGE_LAYOUT_HINT)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vb.lib, vb.array, (N.domain_size,), cd)
    vx = _arrays.Vector(x0, "x0", where, N.domain_size, cd, "N.domain_size", allow_batch=False,
                        hint=_arrays.IMAGE_LAYOUT_HINT)
    penalty = _check_solver_arguments(penalty, callback, N, where)
    _arrays.require_finite(vb, "b", where)
    _arrays.require_finite(vx, "x0", where)
    out = vb.empty(N.domain_size, cd)
    vb.before()
    info = _native_class("solve_pwls_pcg_normal", N.dtype)(vx.array, N._native, vb.array, penalty._native, niter,
                                                           float(tolerance), callback, out)
    vb.after()
    x = vb.result(out)
    return (x, info) if return_info else x


def density_compensation(kx, ky, kz=None, *, nx, ny, nz=1, iterations=20, dtype=np.float32):
    """Pipe-Menon density compensation weights for a trajectory (cycles/FOV, each axis in [-N/2, N/2]) on an
    nx x ny x nz grid: a NumPy array of n1 real weights, normalised so that G^H diag(w) G ~ I for a fully
    sampled field of view; a gridding reconstruction is then ``G.H @ (w * y)``."""
    where = "density_compensation"
    d = real_dtype(dtype)
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    iterations = _arrays.count(iterations, "iterations", where)
    kx = _arrays.host_real(kx, "kx", where, d)
    n1 = kx.size
    ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx")
    kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx")
    out = np.empty(n1, d)
    _native_class("density_compensation", d)(nx, ny, nz, kx, ky, kz, iterations, out)
    return out


# ---------------------------------------------------------------------------------------- map estimation
# Host arrays in, NumPy arrays out; images and maps in complex64, pixel vectors flattened with x fastest
# (the C order of (nz, ny, nx)); coil data coil-major, shape (n_coils, samples), as the operators take them.

def _host_2d(values, arg, where, complex_dtype=np.complex64):
    a = _arrays.to_numpy(values, arg, where)
    if a.dtype.kind not in "fiuc":
        raise TypeError(f"{where}: {arg} must be numbers, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{where}: {arg} must be a 2-D array, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=complex_dtype)


def coil_maps(data, kx, ky, kz=None, *, nx, ny, nz=1, calibration=24.0, kernel=5, threshold=0.05,
              return_mask=False):
    """Coil sensitivity maps from the data themselves (docs/map-estimation.md): low-resolution coil images
    from the central calibration x calibration (cycles/FOV) box of k-space, then the local eigenvector
    (Walsh / Inati adaptive combine) over kernel^d windows, normalised so that sum_c |S_c|^2 = 1 inside the
    object and 0 outside it (threshold: fraction of the maximum local energy).

    data: complex (n_coils, n1); kx, ky, kz: cycles/FOV (n1 each). Returns maps of shape (n_coils, nx*ny*nz)
    (complex64), and with return_mask=True also the boolean object mask (nx*ny*nz,)."""
    where = "coil_maps"
    y = _host_2d(data, "data", where)
    nc, n1 = y.shape
    d = np.float32
    kx = _arrays.host_real(kx, "kx", where, d, n1, "data.shape[1] (samples per coil)")
    ky = _arrays.host_real(ky, "ky", where, d, n1, "data.shape[1] (samples per coil)")
    kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "data.shape[1] (samples per coil)")
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    kernel = _arrays.count(kernel, "kernel", where, maximum=_arrays.INT_MAX)
    n2 = nx * ny * nz
    maps = np.empty((nc, n2), np.complex64)
    mask = np.empty(n2, np.uint8)
    _native.coil_maps(y, kx, ky, kz, nx, ny, nz, nc, float(calibration), kernel, float(threshold), maps, mask)
    return (maps, mask.astype(bool)) if return_mask else maps


def coil_maps_from_images(images, *, nx, ny, nz=1, kernel=5, threshold=0.05, return_mask=False):
    """Coil maps from (low-resolution) coil images of shape (n_coils, nx*ny*nz) by the local eigenvector
    method of coil_maps(). Returns maps (n_coils, nx*ny*nz) complex64 (and the mask with return_mask)."""
    where = "coil_maps_from_images"
    imgs = _host_2d(images, "images", where)
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    kernel = _arrays.count(kernel, "kernel", where, maximum=_arrays.INT_MAX)
    maps = np.empty(imgs.shape, np.complex64)
    mask = np.empty(imgs.shape[1], np.uint8)
    _native.coil_maps_from_images(imgs, nx, ny, nz, kernel, float(threshold), maps, mask)
    return (maps, mask.astype(bool)) if return_mask else maps


def estimate_fieldmap(echoes, times, *, nx, ny, nz=1, beta=1e-2, iterations=200, init_kernel=3,
                      return_cost=False):
    """Field map (rad/s, float32, nx*ny*nz) from multi-echo complex images by penalized likelihood
    (docs/map-estimation.md): echoes of shape (n_echoes, nx*ny*nz), times their echo times in seconds.
    beta weighs the roughness penalty (0: per-pixel estimate); the sign follows forge's exp(-i w t).
    With return_cost=True also the cost after each iteration (it never increases)."""
    where = "estimate_fieldmap"
    e = _host_2d(echoes, "echoes", where)
    times = [float(v) for v in np.asarray(_arrays.to_numpy(times, "times", where), dtype=float).reshape(-1)]
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    iterations = _arrays.count(iterations, "iterations", where, minimum=0, maximum=_arrays.INT_MAX)
    init_kernel = _arrays.count(init_kernel, "init_kernel", where, maximum=_arrays.INT_MAX)
    out = np.empty(e.shape[1], np.float32)
    cost = _native.estimate_fieldmap(e, times, nx, ny, nz, float(beta), iterations, init_kernel, out)
    return (out, np.asarray(cost)) if return_cost else out


def phase_difference_fieldmap(echoes, times):
    """The plain phase difference of the first two echoes, angle(y_0 conj(y_1)) / (t_1 - t_0), in rad/s."""
    where = "phase_difference_fieldmap"
    e = _host_2d(echoes, "echoes", where)
    times = [float(v) for v in np.asarray(_arrays.to_numpy(times, "times", where), dtype=float).reshape(-1)]
    out = np.empty(e.shape[1], np.float32)
    _native.phase_difference_fieldmap(e, times, out)
    return out


def noise_covariance(noise):
    """Coil noise covariance (n_coils, n_coils), complex128, from noise-only samples of shape
    (n_coils, n_samples), each coil's mean removed."""
    n = _host_2d(noise, "noise", "noise_covariance")
    out = np.empty((n.shape[0], n.shape[0]), np.complex128)
    _native.noise_covariance(n, out)
    return out


def whitening_matrix(covariance):
    """W = L^-1 for covariance = L L^H: whitened data W @ data have identity noise covariance; apply it
    to coil maps too (W @ maps)."""
    c = _host_2d(covariance, "covariance", "whitening_matrix", np.complex128)
    out = np.empty(c.shape, np.complex128)
    _native.whitening_matrix(c, out)
    return out


def coil_compression_matrix(data, n_virtual, *, return_energy=False):
    """A (n_virtual, n_coils) compressing coil data of shape (n_coils, samples) to n_virtual virtual coils
    (SVD, as BART's cc): use A @ data and A @ maps. With return_energy=True also the fraction of the data's
    energy the virtual coils keep."""
    y = _host_2d(data, "data", "coil_compression_matrix")
    n_virtual = _arrays.count(n_virtual, "n_virtual", "coil_compression_matrix")
    if not 1 <= n_virtual <= y.shape[0]:
        raise ValueError(f"coil_compression_matrix: n_virtual is {n_virtual}, expected 1 to n_coils = {y.shape[0]}")
    out = np.empty((n_virtual, y.shape[0]), np.complex128)
    energy = _native.coil_compression_matrix(y, n_virtual, out)
    return (out, energy) if return_energy else out
