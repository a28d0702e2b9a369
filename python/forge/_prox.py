"""Proximal penalties for compressed sensing: forge's own (L1Penalty, WaveletL1Penalty, ExactTVPenalty, in C++ on
host or device arrays) and penalties written in Python (any object with prox(x, step)), which the C++ solvers call
through a native PythonProxPenalty.

Each penalty is lam R(x) with R convex; prox(x, step) = argmin_u step lam R(u) + 1/2 ||u - x||^2."""

import math

import numpy as np

from . import _arrays
from ._algebra import _default_device_library, _from_dlpack
from ._arrays import real_dtype
from ._operator import _native_class


class ProxPenalty:
    """A proximal penalty lam R(x) on an nx x ny x nz image (x fastest): ``penalty(x)`` = lam R(x) and
    ``prox(x, step)`` = argmin_u step lam R(u) + 1/2 ||u - x||^2, both on NumPy arrays (host) or CuPy arrays and
    CUDA tensors (device, without host copies); x of shape ``ishape`` or flat ``(n_pixels,)``."""

    def __init__(self, native, dtype, shape):
        self._native = native
        self.ishape = tuple(shape)
        self.real_dtype = real_dtype(dtype)
        self.dtype = self.complex_dtype = _arrays.complex_dtype(dtype)
        self.n_pixels = int(math.prod(self.ishape))

    @property
    def lam(self):
        """The weight lam."""
        return self._native.lam

    @property
    def fixed_between_calls(self):
        """Whether prox is the proximal operator of one fixed function on every call (False for wavelets with
        random shifts, which solve_admm refuses)."""
        return self._native.fixed_between_calls

    def _vec(self, x, arg, where):
        return _arrays.Vector(x, arg, where, self.n_pixels, self.complex_dtype, "nx*ny*nz (pixels)",
                              allow_batch=False, hint=_arrays.IMAGE_LAYOUT_HINT, core=self.ishape)

    def penalty(self, x):
        """lam R(x), a float."""
        v = self._vec(x, "x", f"{type(self).__name__}.penalty")
        v.before()
        r = self._native.value(v.array)
        v.after()
        return r

    def prox(self, x, step, out=None):
        """argmin_u step lam R(u) + 1/2 ||u - x||^2: an array of the library, place and shape of x (written into
        ``out`` when given). step: finite, >= 0."""
        where = f"{type(self).__name__}.prox"
        v = self._vec(x, "x", where)
        step = _step(step, where)
        shape = tuple(int(s) for s in v.array.shape)
        if out is None:
            out = _arrays.empty_like_place(v.lib, v.array, shape, self.complex_dtype)
        else:
            _arrays.check_out(out, v, shape, self.complex_dtype, where)
        v.before()
        self._native.prox(v.array, step, out)
        v.after()
        return v.result(out)

    def __repr__(self):
        return f"forge.{type(self).__name__}(ishape={self.ishape}, lam={self.lam:g}, dtype={self.real_dtype.name})"


def _step(step, where):
    try:
        t = float(step)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: step must be a real number, got {type(step).__name__}") from None
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"{where}: step must be finite and >= 0, got {step!r}")
    return t


def _weight(lam, where):
    try:
        v = float(lam)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: lam must be a real number, got {type(lam).__name__}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{where}: lam must be finite and >= 0, got {lam!r}")
    return v


class L1Penalty(ProxPenalty):
    """lam ||x||_1 = lam sum_i |x_i| of the image itself; prox: the complex soft threshold, which keeps each
    pixel's phase."""

    def __init__(self, nx, ny=1, nz=1, *, lam, dtype=np.float32):
        where = "L1Penalty"
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        native = _native_class("L1Penalty", d)(nx, ny, nz, _weight(lam, where))
        ProxPenalty.__init__(self, native, d, _arrays.grid_shape(nx, ny, nz))


WAVELETS = ("haar", "db2", "db4")


class WaveletL1Penalty(ProxPenalty):
    """lam ||Psi x||_1 over the detail bands of an orthogonal, periodic wavelet transform Psi (Mallat's layout; the
    coarsest approximation band unpenalised unless penalize_coarse). prox = Psi^H soft(Psi x, step lam), exact.

    wavelet: 'db2' (the default, 4 taps), 'db4' or 'haar'; levels: 0 picks the most that divide every axis while
    the coarsest band stays a filter long; every axis longer than 1 must be even (divisible by 2^levels).
    random_shift: each prox call shifts the image cyclically by a random offset in [0, 2^levels) per axis (from a
    generator seeded with seed), as BART's pics -l1, so the transform's block edges move between iterations; the
    penalty is then a different function on every call, which FISTA and POGM take and ADMM refuses."""

    def __init__(self, nx, ny=1, nz=1, *, lam, wavelet="db2", levels=0, random_shift=True, seed=0,
                 penalize_coarse=False, dtype=np.float32):
        where = "WaveletL1Penalty"
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        if wavelet not in WAVELETS:
            raise ValueError(f"{where}: wavelet must be one of {', '.join(map(repr, WAVELETS))}, got {wavelet!r}")
        levels = _arrays.count(levels, "levels", where, minimum=0, maximum=63)
        seed = _arrays.count(seed, "seed", where, minimum=0)
        native = _native_class("WaveletL1Penalty", d)(nx, ny, nz, _weight(lam, where), wavelet, levels,
                                                      bool(random_shift), seed, bool(penalize_coarse))
        ProxPenalty.__init__(self, native, d, _arrays.grid_shape(nx, ny, nz))
        self.wavelet = wavelet

    @property
    def levels(self):
        """The transform's levels (chosen from the grid when 0 was given)."""
        return self._native.levels

    def wavelet_forward(self, x):
        """Psi x, the coefficients in Mallat's layout (the coarsest approximation in the box [0, n / 2^levels) of
        each axis), an array like x."""
        return self._transform(x, True, "wavelet_forward")

    def wavelet_inverse(self, c):
        """Psi^H c = Psi^{-1} c."""
        return self._transform(c, False, "wavelet_inverse")

    def _transform(self, x, forward, name):
        v = self._vec(x, "x" if forward else "c", f"WaveletL1Penalty.{name}")
        out = _arrays.empty_like_place(v.lib, v.array, tuple(int(s) for s in v.array.shape), self.complex_dtype)
        v.before()
        self._native.transform(v.array, forward, out)
        v.after()
        return v.result(out)


class ExactTVPenalty(ProxPenalty):
    """Total variation, not smoothed: lam sum_i sqrt(sum_a |d_a x(i)|^2) (norm='isotropic') or lam sum_i sum_a
    |d_a x(i)| ('anisotropic'), d_a the forward differences along each axis longer than 1 (none across the last
    pixel). prox: ``iterations`` steps of fast gradient projection on the dual; with warm_start the dual variable
    is kept between calls (inside a solver a few steps per call suffice). For a prox on its own use many
    iterations and warm_start=False; reset() forgets the kept dual."""

    def __init__(self, nx, ny=1, nz=1, *, lam, norm="isotropic", iterations=10, warm_start=True, dtype=np.float32):
        where = "ExactTVPenalty"
        d = real_dtype(dtype)
        nx, ny, nz = _arrays.grid(nx, ny, nz, where)
        if norm not in ("isotropic", "anisotropic"):
            raise ValueError(f"{where}: norm must be 'isotropic' or 'anisotropic', got {norm!r}")
        iterations = _arrays.count(iterations, "iterations", where, minimum=1)
        native = _native_class("ExactTVPenalty", d)(nx, ny, nz, _weight(lam, where), norm, iterations,
                                                    bool(warm_start))
        ProxPenalty.__init__(self, native, d, _arrays.grid_shape(nx, ny, nz))
        self.norm = norm

    def reset(self):
        """Forget the dual variable kept between prox calls."""
        self._native.reset()


SMOOTH = ("QuadPenalty", "TVPenalty")


def native_prox(penalty, op, where):
    """The native ProxPenalty a solver runs with: forge's own penalty, or a PythonProxPenalty around an object with
    prox(x, step) (and optionally penalty(x)) on the operator's image shape. TypeError / ValueError name
    ``penalty``."""
    d, n = op.real_dtype, op.domain_size
    if isinstance(penalty, ProxPenalty):
        if penalty.real_dtype != d:
            raise TypeError(f"{where}: penalty is {penalty.real_dtype.name} but the operator is {d.name}; build it "
                            f"with dtype=numpy.{d.name}")
        if penalty.n_pixels != n:
            raise ValueError(f"{where}: penalty covers {penalty.n_pixels} pixels, the operator's domain_size is {n}")
        squeeze = lambda shape: tuple(s for s in shape if s > 1)
        grid, image = squeeze(penalty.ishape), squeeze(op.ishape)
        if len(grid) > 1 and len(image) > 1 and grid != image:
            raise ValueError(f"{where}: penalty is on a {penalty.ishape} grid (nz, ny, nx order), the operator's "
                             f"image is {op.ishape}; build the penalty with the operator's nx, ny, nz")
        return penalty._native
    if type(penalty).__name__ in SMOOTH and type(penalty).__module__.startswith("forge"):
        raise TypeError(f"{where}: penalty is a smooth {type(penalty).__name__}, which has no prox; use "
                        f"forge.solve_pwls_pcg for it, or a proximal penalty (WaveletL1Penalty, ExactTVPenalty, "
                        f"L1Penalty) here")
    prox = getattr(penalty, "prox", None)
    if not callable(prox):
        raise TypeError(f"{where}: penalty must be a forge proximal penalty (WaveletL1Penalty, ExactTVPenalty, "
                        f"L1Penalty) or an object with a prox(x, step) method, got {type(penalty).__name__}")
    value = getattr(penalty, "penalty", None)
    if value is not None and not callable(value):
        raise TypeError(f"{where}: penalty.penalty must be a method penalty(x) returning R(x), or absent")
    fixed = bool(getattr(penalty, "fixed_between_calls", True))
    call = _python_prox_call(prox, value, tuple(op.ishape), type(penalty).__name__)
    return _native_class("PythonProxPenalty", d)(n, call, value is not None, fixed, type(penalty).__name__)


def _python_prox_call(prox, value, ishape, name):
    """The callable the native PythonProxPenalty calls with a view of the solver's vector: mode 0 writes
    prox(x, t) into the view, mode 1 returns penalty(x). User code gets a copy in the image shape (NumPy on the
    host; CuPy or torch on the device, the library the caller's arrays came in). It holds no reference to the
    penalty object beyond its bound methods."""
    n = math.prod(ishape)

    def call(view, t, mode):
        if isinstance(view, np.ndarray):
            x, lib = np.array(view), "numpy"
        else:
            lib = getattr(_arrays.device_library, "name", None) or _default_device_library()
            view = _from_dlpack(lib, view)
            x = view.clone() if lib == "torch" else view.copy()
        x = x.reshape(ishape)
        if mode == 1:
            r = value(x)
            try:
                return float(r)
            except (TypeError, ValueError):
                raise TypeError(f"{name}.penalty returned {type(r).__name__}, expected a real number") from None
        r = prox(x, t)
        shape = tuple(int(s) for s in getattr(r, "shape", ()))
        if shape not in (ishape, (n,)):
            raise ValueError(f"{name}.prox returned an array of shape {shape}, expected {ishape} (the operator's "
                             f"ishape) or ({n},)")
        if lib != "numpy" and _arrays.library_of(r, "the result", f"{name}.prox") != lib:
            raise TypeError(f"{name}.prox returned a {type(r).__module__} array for a {lib} input; return an "
                            f"array of the input's library (the solver's data live on the device)")
        view.reshape(shape)[...] = r

    return call
