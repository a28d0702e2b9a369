"""Operators built from others: time segmentation, SENSE and phase-corrected multi-shot SENSE, the Toeplitz
normal operator and the operators that pair an operator with a normal of its own."""

import numpy as np

from . import _arrays
from ._arrays import real_dtype
from ._operator import LinearOperator, _native_class, _require_operator, _zeros_or, record, recorded


def _interp_flag(interpolator, where):
    names = {"hanning": 0, "minmax": 1}
    if interpolator not in names:
        raise ValueError(f"{where}: interpolator must be 'hanning' or 'minmax', got {interpolator!r}")
    return names[interpolator]


class TimeSegmentation(LinearOperator):
    """Field-map correction by time segmentation around a field-free operator G (Gnufft, Gfft, ...):
    approximates Gdft(..., field_map, t) with ``segments`` + 1 applications of G per transform.
    field_map: rad/s per pixel of G; t: seconds per sample of G; interpolator 'hanning' or 'minmax'."""

    @recorded
    def __init__(self, G, field_map, t, segments, *, interpolator="hanning"):
        where = "TimeSegmentation"
        _require_operator(G, None, where)
        d = G.real_dtype
        fm = _arrays.host_real(field_map, "field_map", where, d, G.domain_size, "G.domain_size", ndim=None)
        t = _arrays.host_real(t, "t", where, d, G.codomain_size, "G.codomain_size", ndim=None)
        segments = _arrays.count(segments, "segments", where)
        native = _native_class("TimeSegmentation", d)(G._native, fm, t, segments, _interp_flag(interpolator, where))
        self.encoding_operator = G
        LinearOperator.__init__(self, native, d, G.ishape, G.oshape)

    @property
    def segments(self):
        return self._native.segments

    @staticmethod
    def choose_segments(field_map, t, target_error, *, interpolator="minmax", max_segments=64, dtype=np.float32):
        """Smallest number of segments whose estimated RMS error is below target_error:
        returns (segments, rms_error, max_error)."""
        where = "TimeSegmentation.choose_segments"
        d = real_dtype(dtype)
        fm = _arrays.host_real(field_map, "field_map", where, d, ndim=None)
        t = _arrays.host_real(t, "t", where, d, ndim=None)
        max_segments = _arrays.count(max_segments, "max_segments", where)
        return _native_class("TimeSegmentation", d).choose_segments(
            fm, t, float(target_error), _interp_flag(interpolator, where), max_segments)


class SENSE(LinearOperator):
    """Multi-coil SENSE around a single-coil operator G: y_c = G (S_c * x), data coil-major
    (coil c's samples at [c*n1, (c+1)*n1)). maps: complex sensitivities of shape (n_coils, *G.ishape), e.g.
    (coils, ny, nx), or (n_coils, n2). ishape is G's, oshape (n_coils, *G.oshape)."""

    @recorded
    def __init__(self, G, maps, n_coils=None):
        where = "SENSE"
        _require_operator(G, None, where)
        d = G.real_dtype
        m = _arrays.host_complex(maps, "maps", where, d)
        n2 = G.domain_size
        if n_coils is not None:
            n_coils = _arrays.count(n_coils, "n_coils", where)
        shaped = m.ndim == len(G.ishape) + 1 and m.shape[1:] == G.ishape
        if ((m.ndim == 2 and m.shape[1] == n2) or shaped) and (n_coils is None or n_coils == m.shape[0]):
            n_coils = m.shape[0]
        elif m.ndim != 1 or n_coils is None or m.size != n2 * n_coils:
            alt = "" if G.ishape == (n2,) else f" or (n_coils, {', '.join(str(s) for s in G.ishape)}) (G.ishape)"
            raise ValueError(f"{where}: maps has shape {m.shape}, expected (n_coils, {n2}) with {n2} = "
                             f"G.domain_size{alt} (or a flat array of n_coils * {n2} entries with n_coils given)")
        native = _native_class("SENSE", d)(G._native, m.reshape(-1), int(n_coils))
        self.encoding_operator = G
        LinearOperator.__init__(self, native, d, G.ishape, (int(n_coils),) + tuple(G.oshape))

    @property
    def n_coils(self):
        return self._native.n_coils


class pcSENSE(LinearOperator):
    """Phase-corrected multi-shot SENSE with an exact field-corrected DFT per shot.

    kx, ky, kz (cycles/FOV) and t (seconds): arrays of shape (n_shots, samples_per_shot);
    ix, iy, iz: pixel positions in FOV units and field_map (rad/s): n2 each;
    maps: complex (n_coils, n2); shot_phases: radians, (n_shots, n2).
    Data order: coil-major, then shot: y[(c*n_shots + s)*samples_per_shot + j]."""

    @recorded
    def __init__(self, kx, ky, kz=None, *, t=None, ix, iy, iz=None, field_map=None, maps, shot_phases,
                 units="cycles", dtype=np.float32):
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
        ix, ishape = _arrays.shaped_real(ix, "ix", where, d)
        n2 = ix.size
        iy = _arrays.host_real(iy, "iy", where, d, n2, "the length of ix", ndim=None)
        iz = _arrays.host_real(_zeros_or(iz, n2, d), "iz", where, d, n2, "the length of ix", ndim=None)
        fm = _arrays.host_real(_zeros_or(field_map, n2, d), "field_map", where, d, n2, "the length of ix", ndim=None)
        m = _arrays.host_complex(maps, "maps", where, d)
        if m.ndim == len(ishape) + 1 and m.shape[1:] == ishape and len(ishape) > 1:
            m = m.reshape(m.shape[0], n2)
        if m.ndim != 2 or m.shape[1] != n2:
            raise ValueError(f"{where}: maps has shape {m.shape}, expected (n_coils, {n2}) with {n2} = the "
                             f"length of ix")
        ph_shape = tuple(np.shape(_arrays.to_numpy(shot_phases, "shot_phases", where)))
        ph = _arrays.host_real(shot_phases, "shot_phases", where, d, ndim=None)
        if ph_shape not in ((shape[0], n2), (shape[0],) + ishape):
            raise ValueError(f"{where}: shot_phases has shape {ph_shape}, expected (n_shots, n2) = "
                             f"{(shape[0], n2)}")
        ph = ph.reshape(shape[0], n2)
        kx, ky, kz = _arrays.k_units(kx, ky, kz, units, _arrays.grid_of_shape(ishape), where)
        native = _native_class("pcSENSE", d)(kx, ky, kz, t, ix, iy, iz, fm, m.reshape(-1), ph, m.shape[0])
        LinearOperator.__init__(self, native, d, ishape, (m.shape[0],) + tuple(shape))

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

    @recorded
    def __init__(self, kx, ky, kz=None, *, nx, ny, nz=1, weights=None, field_map=None, t=None, segments=None,
                 target_error=1e-3, interpolator="minmax", build="auto", axis_grouping="auto", units="cycles",
                 dtype=np.float32):
        where = "ToeplitzNormal"
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        kx = _arrays.host_real(kx, "kx", where, d, ndim=None)
        n1 = kx.size
        n2 = nx * ny * nz
        ky = _arrays.host_real(ky, "ky", where, d, n1, "the length of kx", ndim=None)
        kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "the length of kx", ndim=None)
        kx, ky, kz = _arrays.k_units(kx, ky, kz, units, (nx, ny, nz), where)
        w = _arrays.host_real(np.ones(n1, d) if weights is None else weights, "weights", where, d, n1,
                              "the length of kx", ndim=None)
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
            fm = _arrays.host_real(field_map, "field_map", where, d, n2, "nx * ny * nz", ndim=None)
            if t is None:
                raise ValueError(f"{where}: a field_map needs the sample times t (seconds, one per sample)")
            t = _arrays.host_real(t, "t", where, d, n1, "the length of kx", ndim=None)
            if segments is None:
                segments = ToeplitzNormal.choose_segments(fm, t, target_error, interpolator=interpolator, dtype=d)
            L = _arrays.count(segments, "segments", where)
        native = _native_class("ToeplitzNormal", d)(nx, ny, nz, kx, ky, kz, w, fm, t, L, interp, build == "host",
                                                     axis_grouping == "auto")
        shape = _arrays.grid_shape(nx, ny, nz)
        LinearOperator.__init__(self, native, d, shape, shape)

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
        fm = _arrays.host_real(field_map, "field_map", where, d, ndim=None)
        t = _arrays.host_real(t, "t", where, d, ndim=None)
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
    _require_operator(N, G.real_dtype, where, "N")
    if N.domain_size != G.domain_size or N.codomain_size != G.domain_size:
        raise ValueError(f"{where}: N maps {N.domain_size} -> {N.codomain_size} entries, expected "
                         f"{G.domain_size} -> {G.domain_size} (G.domain_size)")
    d = G.real_dtype
    op = LinearOperator(_native_class("WithNormal", d)(G._native, N._native), d, G.ishape, G.oshape)
    op.encoding_operator, op.normal_operator = G, N
    op._recipe = record(with_normal, (G, N), {})
    return op


class NormalOf(LinearOperator):
    """A's normal operator A^H A as a square operator of its own (what solve_pwls_pcg_normal takes)."""

    @recorded
    def __init__(self, A):
        _require_operator(A, None, "NormalOf", "A")
        self.encoding_operator = A
        d = A.real_dtype
        LinearOperator.__init__(self, _native_class("NormalOf", d)(A._native), d, A.ishape, A.ishape)
