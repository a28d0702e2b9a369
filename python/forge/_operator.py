"""LinearOperator, the base of every forge operator in Python: forward, adjoint and normal of one vector or a
batch, on the arrays' own memory (host or GPU), through the native operator it wraps."""

import functools

import numpy as np

from . import _arrays, _native
from ._arrays import real_dtype

_FORWARD, _ADJOINT, _NORMAL = 0, 1, 2


def _native_class(base, dtype):
    return getattr(_native, f"{base}_{real_dtype(dtype).name}")


class LinearOperator:
    """A forge operator: ``G @ x`` forward, ``G.H @ y`` adjoint, ``G.normal(x)`` = G^H G x.

    ``shape`` is ``(codomain_size, domain_size)``; ``dtype`` the dtype of the vectors it applies to (complex64
    or complex128), ``real_dtype`` its precision (float32 or float64). ``matvec``, ``rmatvec``, ``matmat`` and
    ``rmatmat`` are SciPy's protocol, so ``scipy.sparse.linalg.aslinearoperator(G)`` takes G as it is."""

    __array_ufunc__ = None  # numpy_array * G and friends defer to the operator (which refuses them)

    def __init__(self, native, dtype, ishape=None, oshape=None):
        self._native = native
        self.real_dtype = real_dtype(dtype)
        self.dtype = _arrays.complex_dtype(dtype)
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

    @property
    def complex_dtype(self):
        """The vectors' dtype, the same as ``dtype`` (complex64 or complex128)."""
        return self.dtype

    # SciPy's operator protocol (scipy.sparse.linalg.aslinearoperator reads shape, dtype, matvec, rmatvec and
    # rmatmat): flat vectors (n,) or columns (n, 1) and (n, k). SciPy's solvers hand in float64 or complex128
    # NumPy arrays whatever the operator's dtype: host arrays are converted to G's dtype (the solvers' own
    # checks of forward and adjoint stay strict); device arrays must have it already.
    def matvec(self, x):
        """G x for a flat vector x of domain_size entries, (n,) or (n, 1); the result has the same layout."""
        return _columns(self.forward, x, self.domain_size, self.dtype, "matvec", "x")

    def rmatvec(self, y):
        """G^H y for a flat vector y of codomain_size entries, (m,) or (m, 1)."""
        return _columns(self.adjoint, y, self.codomain_size, self.dtype, "rmatvec", "y")

    def matmat(self, X):
        """G X for the columns of X, (domain_size, k): one batched apply."""
        return _columns(self.forward, X, self.domain_size, self.dtype, "matmat", "X")

    def rmatmat(self, Y):
        """G^H Y for the columns of Y, (codomain_size, k): one batched apply."""
        return _columns(self.adjoint, Y, self.codomain_size, self.dtype, "rmatmat", "Y")

    def forward(self, x, out=None):
        """G x for an image x of shape ishape or (nbatch, *ishape) (result oshape or (nbatch, *oshape)), or
        flat, (domain_size,) or (nbatch, domain_size) (result flat). ``out``: an array of the result's shape,
        dtype and place to write it into (returned)."""
        return self._apply(x, _FORWARD, "x", out)

    def adjoint(self, y, out=None):
        """G^H y for data y of shape oshape or (nbatch, *oshape), or flat (codomain_size,) or
        (nbatch, codomain_size); the result is shaped like the input. ``out`` as for forward."""
        return self._apply(y, _ADJOINT, "y", out)

    def normal(self, x, out=None):
        """G^H G x (an operator may compute it faster than adjoint after forward); ``out`` as for forward."""
        return self._apply(x, _NORMAL, "x", out)

    # The algebra: ``G @ x`` (forward of an array, or the composition with an operator), ``+``, ``-``, ``*`` by a
    # scalar, unary ``-``, ``.H`` and ``.N`` are bound to this class by forge._algebra (bind_algebra), which builds
    # its operators on this class: this module does not import it back.

    def prepare_device(self):
        """Uploads what the operator keeps for the GPU now rather than on its first GPU call."""
        self._native.prepare_device()

    def __reduce__(self):
        # Pickled as the constructor call that made the operator (copies of its geometry), rebuilt on loading:
        # the C++ object holds plans and kernels that are made again rather than serialised.
        recipe = self.__dict__.get("_recipe")
        if recipe is None:
            raise TypeError(f"{self!r} cannot be pickled: it was not made by a forge constructor or the algebra")
        return (_rebuild, recipe + (self._pickle_state(),))

    def _pickle_state(self):
        return {}

    def __repr__(self):
        return (f"forge.{type(self).__name__}({self.name}: {self.domain_size} -> {self.codomain_size}, "
                f"{self.dtype.name})")

    def _apply(self, v, mode, arg, out=None):
        n_in = self.codomain_size if mode == _ADJOINT else self.domain_size
        n_out = self.codomain_size if mode == _FORWARD else self.domain_size
        what = ("codomain_size (data entries)" if mode == _ADJOINT else "domain_size (pixels)")
        where = f"{type(self).__name__}.{('forward', 'adjoint', 'normal')[mode]}"
        hint = None if mode == _ADJOINT else _arrays.IMAGE_LAYOUT_HINT
        core_in = self._oshape if mode == _ADJOINT else self._ishape
        core_out = self._oshape if mode == _FORWARD else self._ishape
        vec = _arrays.Vector(v, arg, where, n_in, self.complex_dtype, what, hint=hint, core=core_in)
        if out is None:
            out = vec.empty(n_out, self.complex_dtype, core_out)
        else:
            shape = vec.lead + (tuple(core_out) if vec.shaped else (n_out,))
            _arrays.check_out(out, vec, shape, self.complex_dtype, where)
        vec.before()
        self._native.apply(vec.array, out, vec.nbatch, mode)
        vec.after()
        return vec.result(out)


def _columns(apply, v, n, dtype, where, arg):
    """apply on the columns of v ((n,) or (n, k)), as one batch of k rows; the result in v's layout."""
    root = type(v).__module__.split(".")[0]
    if root not in ("cupy", "torch", "jax", "jaxlib"):
        root = "numpy"
        v = np.asarray(v)
        if v.dtype != dtype:
            v = v.astype(dtype)
    if v.ndim == 1 or v.ndim == 2 and v.shape[1] == 1:
        if v.shape[0] != n:
            raise ValueError(f"{where}: {arg} has {v.shape[0]} entries, the operator takes {n}")
        out = apply(_c_order(v.reshape(-1), root))  # SciPy passes columns of a matrix (strided views)
        return out if v.ndim == 1 else out.reshape(-1, 1)
    if v.ndim != 2 or v.shape[0] != n:
        raise ValueError(f"{where}: {arg} has shape {tuple(v.shape)}, expected ({n},), ({n}, 1) or ({n}, k)")
    return apply(_c_order(v.T, root)).T


def _c_order(a, root):
    if root in ("jax", "jaxlib"):
        return a
    if root == "torch":
        return a.contiguous()
    if root == "numpy":
        return np.ascontiguousarray(a)
    return a if a.flags.c_contiguous else a.copy()


def _snapshot(value):
    """A constructor argument as pickling keeps it: arrays as NumPy copies (the caller may change theirs later),
    operators as themselves (pickled by their own recipe)."""
    if isinstance(value, (LinearOperator, str, bytes, int, float, complex, bool, type(None), np.dtype, type)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value
    root = type(value).__module__.split(".")[0]
    if isinstance(value, np.ndarray) or root in ("cupy", "torch", "jax", "jaxlib"):
        return np.array(_arrays.to_numpy(value, "argument", "pickle"), copy=True)
    return value


def record(fn, args, kwargs):
    """The recipe (fn, args, kwargs) that rebuilds an operator when it is unpickled."""
    return (fn, _snapshot(tuple(args)), _snapshot(dict(kwargs)))


def recorded(init):
    """Decorates an operator class's __init__: the call is kept as the operator's pickling recipe."""

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._recipe = record(type(self), args, kwargs)

    return wrapper


def _rebuild(fn, args, kwargs, state):
    op = fn(*args, **kwargs)
    if state.get("devices"):
        op.set_devices(state["devices"])
    return op


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
    if dtype is not None and G.real_dtype != real_dtype(dtype):
        raise TypeError(f"{where}: {arg} is {G.real_dtype.name}, expected {real_dtype(dtype).name}")
