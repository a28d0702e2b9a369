"""LinearOperator, the base of every forge operator in Python: forward, adjoint and normal of one vector or a
batch, on the arrays' own memory (host or GPU), through the native operator it wraps."""

import numpy as np

from . import _arrays, _native
from ._arrays import real_dtype

_FORWARD, _ADJOINT, _NORMAL = 0, 1, 2


def _native_class(base, dtype):
    return getattr(_native, f"{base}_{real_dtype(dtype).name}")


class LinearOperator:
    """A forge operator: ``G @ x`` forward, ``G.H @ y`` adjoint, ``G.normal(x)`` = G^H G x.

    ``shape`` is ``(codomain_size, domain_size)``; ``dtype`` the real precision (float32 or float64),
    and vectors are arrays of the matching complex dtype."""

    __array_ufunc__ = None  # numpy_array * G and friends defer to the operator (which refuses them)

    def __init__(self, native, dtype, ishape=None, oshape=None):
        self._native = native
        self.dtype = real_dtype(dtype)
        self.complex_dtype = _arrays.complex_dtype(dtype)
        self._set_shapes(ishape, oshape)

    def _set_shapes(self, ishape, oshape):
        where = type(self).__name__
        ishape = (self.domain_size,) if ishape is None else _arrays.shape_tuple(ishape, "ishape", where)
        oshape = (self.codomain_size,) if oshape is None else _arrays.shape_tuple(oshape, "oshape", where)
        for name, shp, size in (("ishape", ishape, self.domain_size), ("oshape", oshape, self.codomain_size)):
            if _prod(shp) != size:
                raise ValueError(f"{where}: {name} {shp} holds {_prod(shp)} entries, the operator's "
                                 f"{'domain' if name == 'ishape' else 'codomain'} has {size}")
        self._ishape, self._oshape = ishape, oshape

    @property
    def ishape(self):
        """Shape of one input vector (an image: (ny, nx) or (nz, ny, nx), C order, x fastest)."""
        return self._ishape

    @property
    def oshape(self):
        """Shape of one output vector (data: (samples,), (interleaves, samples), (coils, ..., samples))."""
        return self._oshape

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
        """G x for an image x of shape ishape or (nbatch, *ishape) (result oshape or (nbatch, *oshape)), or
        flat, (domain_size,) or (nbatch, domain_size) (result flat)."""
        return self._apply(x, _FORWARD, "x")

    def adjoint(self, y):
        """G^H y for data y of shape oshape or (nbatch, *oshape), or flat (codomain_size,) or
        (nbatch, codomain_size); the result is shaped like the input."""
        return self._apply(y, _ADJOINT, "y")

    def normal(self, x):
        """G^H G x (an operator may compute it faster than adjoint after forward)."""
        return self._apply(x, _NORMAL, "x")

    def __matmul__(self, x):
        if isinstance(x, LinearOperator):
            from ._algebra import compose

            return compose(self, x)
        return self.forward(x)

    def __add__(self, other):
        if not isinstance(other, LinearOperator):
            return NotImplemented
        from ._algebra import add

        return add(self, other)

    def __sub__(self, other):
        if not isinstance(other, LinearOperator):
            return NotImplemented
        from ._algebra import add, scale

        return add(self, scale(-1.0, other))

    def __mul__(self, a):
        from ._algebra import scale

        return scale(a, self)

    __rmul__ = __mul__

    def __neg__(self):
        from ._algebra import scale

        return scale(-1.0, self)

    @property
    def H(self):
        """The adjoint operator A^H, an operator of its own (``G.H @ y`` is ``G.adjoint(y)``; solvers and
        composites take it); ``G.H.H is G``."""
        h = self.__dict__.get("_adjoint_op")
        if h is None:
            from ._algebra import Adjoint

            h = self._adjoint_op = Adjoint(self)
        return h

    @property
    def N(self):
        """The normal operator A^H A as an operator (A's own fast normal where it has one, e.g. Toeplitz)."""
        from ._algebra import Normal

        return Normal(self)

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
        core_in = self._oshape if mode == _ADJOINT else self._ishape
        core_out = self._oshape if mode == _FORWARD else self._ishape
        vec = _arrays.Vector(v, arg, where, n_in, self.complex_dtype, what, hint=hint, core=core_in)
        out = vec.empty(n_out, self.complex_dtype, core_out)
        vec.before()
        self._native.apply(vec.array, out, vec.nbatch, mode)
        vec.after()
        return vec.result(out)


def _prod(shape):
    p = 1
    for s in shape:
        p *= int(s)
    return p


def _zeros_or(values, n, dtype):
    return np.zeros(n, dtype) if values is None else values


def _require_operator(G, dtype, where, arg="G"):
    if not isinstance(G, LinearOperator):
        raise TypeError(f"{where}: {arg} must be a forge operator (Gdft, Gnufft, ...), got {type(G).__name__}")
    if dtype is not None and G.dtype != dtype:
        raise TypeError(f"{where}: {arg} is {G.dtype.name}, expected {dtype.name}")
