"""The whole reconstruction: forge's pipeline (forge/Recon/Pipeline.h, the one forge-recon runs) from arrays.

``reconstruct`` reconstructs every slice and frame of one call; a ``ReconSession`` reconstructs slice after slice
(a stream), keeping the encoding operators built for a trajectory, each slice's estimated coil maps and, with
``warm_start``, each slice's latest image for its next frame. Each call's images equal those of the whole data in
one call.

Layouts (C order, the last axis fastest; docs/python.md):
  data       (coils, samples), (slices, coils, samples) or (frames, slices, coils, samples)
  k          (ndim, samples), ndim = len(shape), in cycles/FOV; or with data's leading axes
  times      (samples,) seconds, or with data's leading axes
  field_map  shape, or (slices, *shape), rad/s
  maps       (coils, *shape), or (slices, coils, *shape)
  images     (*data's leading axes, *shape), shape (ny, nx) or (nz, ny, nx)
"""

import warnings

import numpy as np

from . import _native
from ._arrays import IMAGE_LAYOUT_HINT, to_numpy

OPERATORS = ("auto", "dft", "fft", "nufft", "timeseg", "toeplitz")
PENALTIES = ("quad", "tv", "l1-wavelet", "tv-exact")
DEVICES = ("auto", "cpu", "gpu")
MAPS = ("estimate", "auto", "none")


def _choice(value, allowed, arg, where):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{where}: {arg} = {value!r}; expected one of {', '.join(repr(a) for a in allowed)}")
    return value


def _number(value, arg, where, minimum=0.0, positive=False):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {arg} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < minimum or (positive and v <= 0):
        raise ValueError(f"{where}: {arg} = {value!r}; expected a finite number {'>' if positive else '>='} "
                         f"{minimum}")
    return v


def _integer(value, arg, where, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{where}: {arg} = {value!r}; expected an integer >= {minimum}")
    return int(value)


def _host(values, arg, where, kinds):
    """A host NumPy array of a numeric kind (CuPy and PyTorch arrays are copied to the host)."""
    if values is None:
        raise TypeError(f"{where}: {arg} is required")
    a = to_numpy(values, arg, where)
    if a.dtype.kind not in kinds:
        raise TypeError(f"{where}: {arg} must be {'complex or real' if 'c' in kinds else 'real'} numbers, got dtype "
                        f"{a.dtype}")
    if not np.isfinite(a).all():
        i = int(np.flatnonzero(~np.isfinite(a).reshape(-1))[0])
        raise ValueError(f"{where}: {arg} holds a non-finite value ({a.reshape(-1)[i]} at flat index {i}); {arg} "
                         f"must be finite (no NaN or Inf)")
    return a


def _image_shape(shape, maps, field_map, where):
    if shape is None:
        for name, a, skip in (("maps", maps, 1), ("field_map", field_map, 0)):
            if a is not None and not isinstance(a, str):
                s = tuple(int(v) for v in np.shape(a))
                # (coils, ny, nx) or (slices, coils, ny, nx) for maps: without shape, 2-D images are assumed
                if len(s) >= 2 + skip:
                    return s[-2:]
        raise ValueError(f"{where}: shape is required: the image's shape (ny, nx) or (nz, ny, nx) (not given by "
                         f"maps or field_map)")
    try:
        t = tuple(int(v) for v in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be a tuple (ny, nx) or (nz, ny, nx), got {shape!r}") from None
    if len(t) not in (2, 3) or any(v < 1 for v in t) or any(int(v) != v for v in shape):
        raise ValueError(f"{where}: shape = {shape!r}; expected (ny, nx) or (nz, ny, nx) of positive integers")
    return t


class ReconSession:
    """A reconstruction session: the request's options once, then ``reconstruct`` group after group.

    Options (as forge-recon's): ``operator`` 'auto' (chosen per group by forge's cost model), 'dft', 'fft', 'nufft',
    'timeseg' or 'toeplitz'; ``penalty`` 'quad', 'tv', 'l1-wavelet' or 'tv-exact' with ``beta`` (relative to the data
    term's curvature), ``lam`` (l1-wavelet, tv-exact: relative to max |E^H y|) and ``delta`` (tv); ``iterations``
    and ``tolerance`` (stop at ||gradient|| <= tolerance x initial); ``device`` 'auto', 'cpu' or 'gpu'; ``maps``
    the default coil maps of each call: 'estimate' (from the data), 'auto' (estimated, or root-sum-of-squares of
    coil-by-coil images with a warning when the data have no calibration region) or None (coil by coil);
    ``field_correction`` False ignores field maps; ``warm_start`` starts each slice's next frame from its latest
    image; ``segments`` and ``toeplitz_error`` as forge-recon's -L and --toeplitz-error; ``cached_operators`` how
    many encoding operators the session keeps.

    The pipeline runs on host problems: arrays are read into host memory (CuPy and PyTorch arrays are copied
    there; the GPU, when used, gets its own copies) and the images come back as NumPy arrays."""

    def __init__(self, *, operator="auto", penalty="quad", beta=1e-3, lam=0.005, delta=0.05, iterations=50,
                 tolerance=2e-4, device="auto", maps="estimate", field_correction=True, warm_start=False, segments=0,
                 toeplitz_error=1e-3, cached_operators=4):
        where = "ReconSession"
        self.operator = _choice(operator, OPERATORS, "operator", where)
        self.penalty = _choice(penalty, PENALTIES, "penalty", where)
        self.beta = _number(beta, "beta", where)
        self.lam = _number(lam, "lam", where)
        self.delta = _number(delta, "delta", where, positive=True)
        self.iterations = _integer(iterations, "iterations", where, 1)
        self.tolerance = _number(tolerance, "tolerance", where)
        if self.tolerance > 1:
            raise ValueError(f"{where}: tolerance = {tolerance!r}; expected a number from 0 to 1")
        self.device = _choice(device, DEVICES, "device", where)
        self.maps = "none" if maps is None else _choice(maps, MAPS, "maps", where)
        self.field_correction = bool(field_correction)
        self.warm_start = bool(warm_start)
        self.segments = _integer(segments, "segments", where, 0)
        self.toeplitz_error = _number(toeplitz_error, "toeplitz_error", where, positive=True)
        self._native = _native.ReconSession(
            operator=self.operator, penalty=self.penalty, beta=self.beta, lam=self.lam, delta=self.delta,
            iterations=self.iterations, tolerance=self.tolerance, device=self.device, maps=self.maps,
            field_correction=self.field_correction, warm_start=self.warm_start,
            cached_operators=_integer(cached_operators, "cached_operators", where, 1), segments=self.segments,
            toeplitz_error=self.toeplitz_error)

    @property
    def on_gpu(self):
        """Whether the session solves on the GPU (device 'gpu', or 'auto' with a usable one)."""
        return self._native.on_gpu

    def __repr__(self):
        return (f"forge.ReconSession(operator={self.operator!r}, penalty={self.penalty!r}, "
                f"iterations={self.iterations}, device={'gpu' if self.on_gpu else 'cpu'}, maps={self.maps!r})")

    def reconstruct(self, data, k, *, shape=None, times=None, field_map=None, maps=None, slice=0, frame=0,
                    return_report=False):
        """Reconstructs ``data`` (see the module's layouts); its first slice is the session's ``slice`` and its
        first frame the session's ``frame``: estimated maps are kept per session slice, and with warm_start a
        slice's next call starts from its latest image. ``maps``: an array of coil maps for this call, 'estimate',
        'auto' or 'none' (None: the session's ``maps``). Returns the complex64 images (``(*leading axes of data,
        *shape)``), and with ``return_report`` also a dict of what the pipeline did (operator and why, maps, every
        solve's iterations, stop reason, relative gradient and seconds; see docs/python.md)."""
        where = "ReconSession.reconstruct"
        first_slice = _integer(slice, "slice", where, 0)
        first_frame = _integer(frame, "frame", where, 0)
        images, report = _run(self, where, data, k, shape, times, field_map, maps, first_slice, first_frame,
                              name_frames=first_frame > 0)
        return (images, report) if return_report else images


def _run(session, where, data, k, shape, times, field_map, maps, first_slice, first_frame, name_frames):
    shape = _image_shape(shape, maps, field_map, where)
    nz, ny, nx = (1,) + shape if len(shape) == 2 else shape
    npix = nx * ny * nz

    y = _host(data, "data", where, "fiuc")
    if y.ndim < 2 or y.ndim > 4:
        raise ValueError(f"{where}: data has shape {y.shape}; expected (coils, samples), (slices, coils, samples) or "
                         f"(frames, slices, coils, samples)")
    lead = y.shape[:-2]
    nc, ns = y.shape[-2], y.shape[-1]
    if nc < 1 or ns < 1:
        raise ValueError(f"{where}: data has shape {y.shape}; expected at least one coil and one sample")
    nframes, nslices = ((1, 1) + lead)[-2:]
    y = np.ascontiguousarray(y.reshape(nframes, nslices, nc, ns), dtype=np.complex64)

    kk = _host(k, "k", where, "fiu")
    ndim = len(shape)
    if kk.ndim < 2 or kk.shape[-2] != ndim:
        raise ValueError(f"{where}: k has shape {kk.shape}; expected ({ndim}, samples) for images of shape {shape} "
                         f"(k in cycles/FOV: kx, ky{', kz' if ndim == 3 else ''}), or with data's leading axes "
                         f"{lead}")
    if kk.shape[-1] != ns:
        raise ValueError(f"{where}: k has {kk.shape[-1]} samples (shape {kk.shape}) and data {ns} (shape "
                         f"{tuple(np.shape(data))}); the last axes must match")
    try:
        kk = np.broadcast_to(kk, lead + (ndim, ns)).reshape(nframes, nslices, ndim, ns)
    except ValueError:
        raise ValueError(f"{where}: k's shape {kk.shape} does not fit data's leading axes {lead}") from None
    kk = kk.astype(np.float32)

    if times is None:
        t = np.zeros((nframes, nslices, ns), np.float32)
        if field_map is not None and session.field_correction:
            raise ValueError(f"{where}: a field_map needs times (the sample times in seconds, (samples,) or with "
                             f"data's leading axes)")
    else:
        t = _host(times, "times", where, "fiu")
        if t.ndim < 1 or t.shape[-1] != ns:
            raise ValueError(f"{where}: times has shape {t.shape}; expected (samples,) = ({ns},) or with data's "
                             f"leading axes {lead}")
        try:
            t = np.broadcast_to(t, lead + (ns,)).reshape(nframes, nslices, ns).astype(np.float32)
        except ValueError:
            raise ValueError(f"{where}: times' shape {t.shape} does not fit data's leading axes {lead}") from None

    field_maps = []
    if field_map is not None:
        f = _host(field_map, "field_map", where, "fiu")
        if f.shape == shape:
            f = np.broadcast_to(f, (nslices,) + shape)
        if f.shape != (nslices,) + shape:
            raise ValueError(f"{where}: field_map has shape {f.shape}; expected {shape} or (slices, *shape) = "
                             f"{(nslices,) + shape} (rad/s; {IMAGE_LAYOUT_HINT})")
        field_maps = [np.ascontiguousarray(f[s], dtype=np.float32).reshape(-1) for s in range(nslices)]

    smaps = []
    if maps is None:
        policy = session.maps
    elif isinstance(maps, str):
        policy = _choice(maps, MAPS, "maps", where)
    else:
        policy = "given"
        m = _host(maps, "maps", where, "fiuc")
        if m.shape == (nc,) + shape:
            m = np.broadcast_to(m, (nslices, nc) + shape)
        if m.shape != (nslices, nc) + shape:
            raise ValueError(f"{where}: maps has shape {m.shape}; expected (coils, *shape) = {(nc,) + shape} or "
                             f"(slices, coils, *shape) = {(nslices, nc) + shape}")
        smaps = [np.ascontiguousarray(m[s], dtype=np.complex64).reshape(-1) for s in range(nslices)]

    frames = []
    for f in range(nframes):
        for s in range(nslices):
            kz = kk[f, s, 2] if ndim == 3 else np.zeros(ns, np.float32)
            frames.append((s, f, np.ascontiguousarray(kk[f, s, 0]), np.ascontiguousarray(kk[f, s, 1]),
                           np.ascontiguousarray(kz), np.ascontiguousarray(t[f, s]), y[f, s].reshape(-1)))
    r = session._native.reconstruct(nx=nx, ny=ny, nz=nz, nc=nc, nslices=nslices, nframes=nframes, frames=frames,
                                    smaps=smaps, field_maps=field_maps, first_slice=first_slice,
                                    first_frame=first_frame, name_frames=name_frames or nframes > 1, maps=policy,
                                    source="data")
    images = r.pop("images").reshape(lead + shape)
    for w in r["warnings"]:
        warnings.warn(f"{where}: {w}", RuntimeWarning, stacklevel=3)
    report = {
        "device": r["device"],
        "operator": {"requested": session.operator, "name": r["operator"], "auto_reason": r["operator_reason"]},
        "penalty": {"kind": session.penalty, "beta": session.beta,
                    "delta": session.delta if session.penalty == "tv" else None},
        "solver": {"iteration_limit": session.iterations, "tolerance": session.tolerance},
        "field_correction": r["field_correction"],
        "maps": r["maps"],
        "spikes": r["spikes"],
        "iterations": r["iterations"],
        "solves": r["solves"],
        "seconds": r["seconds"],
        "setup_seconds": r["setup_seconds"],
        "solve_seconds": r["solve_seconds"],
        "operators_built": r["operators_built"],
        "operators_reused": r["operators_reused"],
        "warnings": r["warnings"],
    }
    if session.penalty in ("l1-wavelet", "tv-exact"):
        report["penalty"]["lambda"] = session.lam
    return images, report


def reconstruct(data, k, *, shape=None, times=None, field_map=None, maps="estimate", operator="auto", penalty="quad",
                beta=1e-3, lam=0.005, delta=0.05, iterations=50, tolerance=2e-4, device="auto", field_correction=True,
                warm_start=False, segments=0, toeplitz_error=1e-3, return_report=False):
    """Reconstructs MRI data with forge's pipeline (forge-recon's): coil maps, the operator's choice, the solve.

    ``data`` (coils, samples), (slices, coils, samples) or (frames, slices, coils, samples), complex; ``k`` (ndim,
    samples) in cycles/FOV (an N-pixel axis spans [-N/2, N/2]) with ndim = len(shape), or with data's leading axes;
    ``shape`` the image's, (ny, nx) or (nz, ny, nx) (default: from maps or field_map); ``times`` the sample times
    (seconds; needed with a field map); ``field_map`` (rad/s) of shape ``shape`` or (slices, *shape); ``maps``
    'estimate' (from the data), 'auto' (estimated where the data allow, else coil by coil), None (coil by coil,
    root-sum-of-squares) or coil maps (coils, *shape) or (slices, coils, *shape). The other options are
    ReconSession's (forge-recon's --operator, --penalty, --beta, --lambda, --delta, -n, --tolerance, --device,
    --warm-start, -L, --toeplitz-error).

    The pipeline takes host problems: NumPy arrays are read as they are, CuPy and PyTorch arrays are copied to the
    host (a GPU solve makes its own device copies), and the images are NumPy complex64 arrays of shape (*data's
    leading axes, *shape). With ``return_report``: (images, report), the report a dict as one reconstruction of
    forge-recon's --report (operator and why, maps source and statistics, every solve's iterations, stop reason,
    relative gradient and seconds)."""
    session = ReconSession(operator=operator, penalty=penalty, beta=beta, lam=lam, delta=delta,
                           iterations=iterations, tolerance=tolerance, device=device,
                           maps=maps if maps is None or isinstance(maps, str) else "estimate",
                           field_correction=field_correction, warm_start=warm_start, segments=segments,
                           toeplitz_error=toeplitz_error)
    images, report = _run(session, "forge.reconstruct", data, k, shape, times, field_map,
                          None if maps is None or isinstance(maps, str) else maps, 0, 0, name_frames=False)
    return (images, report) if return_report else images
