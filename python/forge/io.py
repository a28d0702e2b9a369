"""Files from and for other tools, with NumPy only: BART's .cfl/.hdr pairs.

BART stores an array as two files: ``name.hdr``, text (``# Dimensions`` and then the sizes on one line), and
``name.cfl``, the complex64 values (little-endian float32 real/imaginary pairs) in column-major order: the first
dimension varies fastest. BART's dimensions are, in order, READ (x), PHS1 (y), PHS2 (z), COIL, MAPS, TE, COEFF,
COEFF2, ITER, CSHIFT, TIME, TIME2, LEVEL, SLICE, AVG, BATCH. ``read_cfl`` returns the array with BART's
dimensions as its axes, ``a[x, y, z, coil, ...]``, Fortran-ordered over the file's memory (as BART's own
python/cfl.py does); ``a.T`` is then the C-ordered ``(..., coil, z, y, x)`` array forge's operators take, without
a copy. ``reverse=True`` does that transposition for you (read) or expects it (write)."""

import os

import numpy as np


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
