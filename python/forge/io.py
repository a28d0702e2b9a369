"""Files from and for other tools: BART's .cfl/.hdr pairs (NumPy only), and MRD (ISMRMRD HDF5) files through
forge's own reader and writer (the library forge-recon uses; present when forge was built with Forge::IO).

BART stores an array as two files: ``name.hdr``, text (``# Dimensions`` and then the sizes on one line), and
``name.cfl``, the complex64 values (little-endian float32 real/imaginary pairs) in column-major order: the first
dimension varies fastest. BART's dimensions are, in order, READ (x), PHS1 (y), PHS2 (z), COIL, MAPS, TE, COEFF,
COEFF2, ITER, CSHIFT, TIME, TIME2, LEVEL, SLICE, AVG, BATCH. ``read_cfl`` returns the array with BART's
dimensions as its axes, ``a[x, y, z, coil, ...]``, Fortran-ordered over the file's memory (as BART's own
python/cfl.py does); ``a.T`` is then the C-ordered ``(..., coil, z, y, x)`` array forge's operators take, without
a copy. ``reverse=True`` does that transposition for you (read) or expects it (write)."""

import os

import numpy as np

from . import _native


def _paths(name):
    base = os.fspath(name)
    for ext in (".cfl", ".hdr"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base + ".hdr", base + ".cfl"


def read_cfl_dims(name):
    """The dimensions in a BART header (``name.hdr``; ``name`` with or without .cfl/.hdr), trailing 1s kept."""
    hdr, _ = _paths(name)
    with open(hdr, "rt") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "# Dimensions" and i + 1 < len(lines):
            try:
                dims = [int(v) for v in lines[i + 1].split()]
            except ValueError:
                break
            if dims and all(d >= 0 for d in dims):
                return tuple(dims)
            break
    raise ValueError(f"read_cfl: {hdr} has no '# Dimensions' line followed by the sizes")


def read_cfl(name, *, reverse=False):
    """A BART array: complex64 of shape BART's dimensions (trailing 1s dropped, at least one axis), Fortran
    order; with reverse=True its transpose, C order, axes reversed (``(..., coil, z, y, x)``)."""
    hdr, cfl = _paths(name)
    dims = list(read_cfl_dims(name))
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    n = int(np.prod(dims))
    size = os.path.getsize(cfl)
    if size != 8 * n:
        raise ValueError(f"read_cfl: {cfl} holds {size} bytes, the header's dimensions {tuple(dims)} need {8 * n}")
    data = np.fromfile(cfl, dtype="<c8", count=n).astype(np.complex64, copy=False)
    a = data.reshape(dims, order="F")
    return a.T if reverse else a


def write_cfl(name, array, *, reverse=False):
    """Writes ``array`` as BART's name.hdr and name.cfl (complex64; other numeric dtypes are converted, so only
    complex64 round-trips bit for bit). Its axes are BART's dimensions in order (x first); with reverse=True
    they are taken in reverse (a C-ordered forge array ``(..., coil, z, y, x)``). Each file is written to a
    temporary name and renamed into place, so a reader never sees half a file."""
    a = np.asarray(array)
    if a.dtype.kind not in "fiuc":
        raise TypeError(f"write_cfl: array must be numbers, got dtype {a.dtype}")
    if reverse:
        a = a.T
    dims = a.shape if a.ndim else (1,)
    hdr, cfl = _paths(name)
    # Column-major values: the C-ordered bytes of the transposed array.
    values = np.ascontiguousarray(a.reshape(dims).T, dtype="<c8")
    _atomic_write(hdr, ("# Dimensions\n" + " ".join(str(d) for d in dims) + " \n").encode())
    _atomic_write(cfl, values.tobytes())


def _atomic_write(path, data):
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# ----------------------------------------------------------------------------------------------- MRD
_ACQ_DEFAULTS = {"center_sample": 0, "dwell_us": 0.0, "e1": 0, "e2": 0, "slice": 0, "repetition": 0, "contrast": 0,
                 "flags": 0, "position": (0.0, 0.0, 0.0), "read_dir": (1.0, 0.0, 0.0), "phase_dir": (0.0, 1.0, 0.0),
                 "slice_dir": (0.0, 0.0, 1.0)}
ACQUISITION_FIELDS = tuple(_ACQ_DEFAULTS)


class Mrd:
    """An MRD file as forge reads it: ``header`` (a dict of the fields forge uses: encoded_matrix, encoded_fov_mm,
    recon_matrix, recon_fov_mm, trajectory, acceleration, echo_times_ms, te_ms, center_e1, center_e2,
    receiver_channels), ``acquisitions`` and ``noise`` (lists of dicts: data (channels, samples) complex64, traj
    (samples, trajectory dimensions) float32, and the fields of ACQUISITION_FIELDS). ``data``, ``traj`` and
    ``field(name)`` stack the imaging acquisitions: (acquisitions, channels, samples), (acquisitions, samples,
    dimensions), (acquisitions,) or (acquisitions, 3)."""

    def __init__(self, header, acquisitions, noise=()):
        self.header, self.acquisitions, self.noise = header, list(acquisitions), list(noise)

    @property
    def data(self):
        return _stack([a["data"] for a in self.acquisitions], "data")

    @property
    def traj(self):
        return _stack([a["traj"] for a in self.acquisitions], "traj")

    def field(self, name):
        if name not in _ACQ_DEFAULTS:
            raise KeyError(f"Mrd.field: {name!r} is not one of {ACQUISITION_FIELDS}")
        return np.array([a[name] for a in self.acquisitions])

    def __repr__(self):
        return f"forge.io.Mrd({len(self.acquisitions)} acquisitions, {len(self.noise)} noise scans)"


def _stack(arrays, what):
    if not arrays:
        return np.zeros((0, 0, 0), np.complex64 if what == "data" else np.float32)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"Mrd.{what}: the acquisitions have different shapes {sorted(shapes)}; use "
                         f"Mrd.acquisitions[i]['{what}']")
    return np.stack(arrays)


def _require_mrd(where):
    if not _native.has_mrd():
        raise RuntimeError(f"{where}: this forge was built without Forge::IO (MRD needs ISMRMRD, HDF5, libpng and "
                           f"pugixml at build time)")


def read_mrd(path, *, group="dataset"):
    """Reads an MRD (ISMRMRD HDF5) file with forge's reader (the one forge-recon uses, with its checks of the
    file's structure): a ``Mrd`` with the parsed header, the imaging acquisitions and the noise scans."""
    _require_mrd("read_mrd")
    raw = _native.read_mrd(os.fspath(path), str(group))
    return Mrd(raw["header"], raw["acquisitions"], raw["noise"])


def write_mrd(path, header, acquisitions=None, *, data=None, traj=None, group="dataset", **fields):
    """Writes an MRD file with forge's writer (atomically: a temporary name renamed when complete). ``header``: a
    dict as ``Mrd.header`` (missing fields take libismrmrd's defaults). The acquisitions either as a list of dicts
    (as ``Mrd.acquisitions``; missing fields default to 0 and the identity directions), or stacked: ``data``
    (acquisitions, channels, samples) complex, ``traj`` (acquisitions, samples, dimensions) real or None, and
    per-acquisition ``fields`` (e1=array, dwell_us=number, ...) each one value or one per acquisition."""
    _require_mrd("write_mrd")
    if acquisitions is None:
        if data is None:
            raise ValueError("write_mrd: give acquisitions (a list of dicts) or data (acquisitions, channels, samples)")
        acquisitions = _unstack(data, traj, fields)
    elif data is not None or traj is not None or fields:
        raise ValueError("write_mrd: give either acquisitions or data/traj/fields, not both")
    acqs = []
    for i, a in enumerate(acquisitions):
        a = {**_ACQ_DEFAULTS, **a}
        d = np.ascontiguousarray(a["data"], dtype=np.complex64)
        if d.ndim != 2:
            raise ValueError(f"write_mrd: acquisition {i}: data must be (channels, samples), got shape {d.shape}")
        t = a.get("traj")
        t = np.zeros((d.shape[1], 0), np.float32) if t is None else np.ascontiguousarray(t, dtype=np.float32)
        if t.ndim != 2:
            raise ValueError(f"write_mrd: acquisition {i}: traj must be (samples, dimensions), got shape {t.shape}")
        acqs.append({**a, "data": d, "traj": t})
    _native.write_mrd(os.fspath(path), dict(header), acqs, str(group))


def _unstack(data, traj, fields):
    data = np.asarray(data)
    if data.ndim != 3:
        raise ValueError(f"write_mrd: data must be (acquisitions, channels, samples), got shape {data.shape}")
    n = data.shape[0]
    for k in fields:
        if k not in _ACQ_DEFAULTS:
            raise TypeError(f"write_mrd: unknown acquisition field {k!r} (fields: {ACQUISITION_FIELDS})")
    out = []
    for i in range(n):
        a = {"data": data[i], "traj": None if traj is None else np.asarray(traj)[i]}
        for k, v in fields.items():
            v = np.asarray(v)
            per_acq = v.ndim == (1 if k.endswith("_dir") or k == "position" else 0) + 1 and v.shape[0] == n
            a[k] = (v[i] if per_acq else v).tolist()
        out.append(a)
    return out


def read_mrd_problem(path, *, group="dataset", cartesian=False):
    """The reconstruction problem of an MRD file as forge-recon reads it (problem_from_mrd: k-space in cycles per
    recon FOV, sample times in seconds, coil-major data), with the coil maps and field map the file stores
    (``<group>/csm``, ``<group>/fieldmap``) as they are. A dict whose entries ``data`` (frames, slices, coils,
    samples), ``k`` (frames, slices, ndim, samples), ``times`` (frames, slices, samples), ``shape`` ((ny, nx) or
    (nz, ny, nx)), ``maps`` ((slices, coils, *shape) or None) and ``field_map`` ((slices, *shape) rad/s, or None)
    are forge.reconstruct's arguments; ``frame_list`` holds each frame as read (slice, frame, contrast,
    echo_time, kx, ky, kz, t, y). ``cartesian``: k from the encoding counters (forge-recon's --cartesian).
    Frames of different sample counts give ``data``, ``k`` and ``times`` None (use ``frame_list``)."""
    _require_mrd("read_mrd_problem")
    raw = _native.read_mrd_problem(os.fspath(path), str(group), bool(cartesian))
    nx, ny, nz = raw["shape"]
    shape = (ny, nx) if nz == 1 else (nz, ny, nx)
    nslices, nframes, nc = raw["slices"], raw["frames"], raw["coils"]
    frames = raw["frame_list"]
    out = {"shape": shape, "coils": nc, "slices": nslices, "frames": nframes, "frame_list": frames,
           "data": None, "k": None, "times": None,
           "maps": np.stack([m.reshape((nc,) + shape) for m in raw["smaps"]]) if raw["smaps"] else None,
           "field_map": np.stack([f.reshape(shape) for f in raw["fieldmap"]]) if raw["fieldmap"] else None}
    counts = {f["kx"].size for f in frames}
    places = {(f["frame"], f["slice"]) for f in frames}
    if len(counts) == 1 and len(places) == len(frames) == nslices * nframes:
        ns = counts.pop()
        ndim = len(shape)
        out["data"] = np.zeros((nframes, nslices, nc, ns), np.complex64)
        out["k"] = np.zeros((nframes, nslices, ndim, ns), np.float32)
        out["times"] = np.zeros((nframes, nslices, ns), np.float32)
        for f in frames:
            i = (f["frame"], f["slice"])
            out["data"][i] = f["y"]
            out["k"][i] = np.stack([f["kx"], f["ky"], f["kz"]][:ndim])
            out["times"][i] = f["t"]
    return out
