"""Roughness penalties over first differences of the image: QuadPenalty and TVPenalty."""

import numpy as np

from . import _arrays
from ._arrays import real_dtype
from ._operator import _native_class


class _Penalty:
    """Roughness penalty R(x) over first differences of an nx x ny x nz image (x fastest)."""

    def __init__(self, native, dtype, n, shape=None):
        self._native = native
        self.ishape = (n,) if shape is None else shape
        self.real_dtype = real_dtype(dtype)
        self.dtype = self.complex_dtype = _arrays.complex_dtype(dtype)  # of the images, as an operator's
        self.n_pixels = n

    def _vec(self, x, arg, where):
        return _arrays.Vector(x, arg, where, self.n_pixels, self.complex_dtype, "nx*ny*nz (pixels)",
                              allow_batch=False, hint=_arrays.IMAGE_LAYOUT_HINT, core=self.ishape)

    def penalty(self, x):
        """R(x), a float."""
        v = self._vec(x, "x", f"{type(self).__name__}.penalty")
        v.before()
        return self._native.penalty(v.array)

    def gradient(self, x):
        """dR/dRe(x) + i dR/dIm(x), an array of the library of x."""
        v = self._vec(x, "x", f"{type(self).__name__}.gradient")
        out = v.empty(self.n_pixels, self.complex_dtype, self.ishape)
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
        _Penalty.__init__(self, _native_class("QuadPenalty", d)(nx, ny, nz, float(beta)), d, nx * ny * nz,
                          _arrays.grid_shape(nx, ny, nz))


class TVPenalty(_Penalty):
    """Smooth total variation R(x) = beta sum delta^2 (sqrt(1 + |C x|^2/delta^2) - 1); delta in image units."""

    def __init__(self, nx, ny=1, nz=1, *, beta, delta, dtype=np.float32):
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, "TVPenalty")
        _Penalty.__init__(self, _native_class("TVPenalty", d)(nx, ny, nz, float(beta), float(delta)), d,
                          nx * ny * nz, _arrays.grid_shape(nx, ny, nz))
