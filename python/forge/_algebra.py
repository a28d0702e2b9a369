"""Operator algebra over forge's C++ composites (forge/Operators/Composition.h), and operators written in Python.

``A @ B`` is Chain(B, A), ``A + B`` and ``A - B`` a stack of the identity followed by the horizontal stack [A B]
(the adjoint of a vertical stack of adjoints), ``a * A`` a diagonal of a on A's domain followed by A (so
``(a * A).N`` uses A's own normal), ``A.H`` AdjointOf(A), ``A.N`` NormalOf(A) (A's fast normal where it has
one, e.g. a Toeplitz embedding). The adjoint and normal of every combination follow from its parts in C++;
the results are forge operators like any other (applies, solvers, SENSE, further algebra)."""

import numbers

import numpy as np

from . import _arrays
from ._arrays import real_dtype
from ._operator import LinearOperator, _native_class, _prod, _require_operator, record, recorded

class Composite(LinearOperator):
    """An operator built from others (``parts``) by the algebra."""

    def __init__(self, native, dtype, ishape, oshape, parts, label, recipe=None):
        self.parts = tuple(parts)
        self._label = label
        LinearOperator.__init__(self, native, dtype, ishape, oshape)
        if recipe is not None:
            self._recipe = recipe

    def __repr__(self):
        return f"forge.{self._label}: {self.ishape} -> {self.oshape}, {self.dtype.name}"


class Adjoint(Composite):
    """A^H: forward is A's adjoint and the other way round; ``A.H.H is A``."""

    def __init__(self, A):
        d = A.real_dtype
        Composite.__init__(self, _native_class("AdjointOf", d)(A._native), d, A.oshape, A.ishape, (A,),
                           f"{A!r}.H", record(_adjoint_of, (A,), {}))
        self._of = A

    @property
    def H(self):
        return self._of

    def forward(self, y, out=None):
        return self._of.adjoint(y, out)

    def adjoint(self, x, out=None):
        return self._of.forward(x, out)

    def __repr__(self):
        return f"{self._of!r}.H"


class Normal(Composite):
    """A^H A as a square, Hermitian operator (NormalOf in C++)."""

    def __init__(self, A):
        d = A.real_dtype
        Composite.__init__(self, _native_class("NormalOf", d)(A._native), d, A.ishape, A.ishape, (A,),
                           f"({A!r}).N", record(Normal, (A,), {}))

    @property
    def H(self):
        return self


def _adjoint_of(A):
    return A.H


def _same_dtype(ops, where):
    for i, A in enumerate(ops):
        _require_operator(A, None, where, f"operand {i}")
    d = ops[0].real_dtype
    for i, A in enumerate(ops):
        if A.real_dtype != d:
            raise TypeError(f"{where}: operand {i} is {A.real_dtype.name}, operand 0 is {d.name}; build both with one "
                            f"dtype")
    return d


def compose(A, B):
    """A @ B: B first, then A."""
    where = "A @ B"
    d = _same_dtype([A, B], where)
    if A.domain_size != B.codomain_size:
        raise ValueError(f"{where}: B gives {B.codomain_size} entries (oshape {B.oshape}) but A takes "
                         f"{A.domain_size} (ishape {A.ishape})")
    return Composite(_native_class("Chain", d)(B._native, A._native), d, B.ishape, A.oshape, (A, B),
                     f"({A!r} @ {B!r})", record(compose, (A, B), {}))


def _diag_native(weights, copies, d, label):
    w = np.ascontiguousarray(np.asarray(weights).reshape(-1), dtype=_arrays.complex_dtype(d))
    return _native_class("StackedDiagonal", d)(w, copies, label)


def scale(a, A):
    """a * A for a (complex) number a: a diagonal of a on A's domain, then A."""
    where = "a * A"
    _require_operator(A, None, where, "A")
    if not isinstance(a, numbers.Number) or isinstance(a, bool):
        raise TypeError(f"{where}: a must be a number, got {type(a).__name__}")
    if not np.isfinite(a):
        raise ValueError(f"{where}: a must be finite, got {a!r}")
    D = _diag_native(np.full(A.domain_size, a), 1, A.real_dtype, "Scale")
    return Composite(_native_class("Chain", A.real_dtype)(D, A._native), A.real_dtype, A.ishape, A.oshape, (A,),
                     f"{a!r} * {A!r}", record(scale, (a, A), {}))


def hstack(ops):
    """[A_0 A_1 ...]: x = [x_0; x_1; ...] (domains back to back) -> sum_j A_j x_j (equal codomains)."""
    where = "hstack"
    ops = list(ops)
    if not ops:
        raise ValueError(f"{where}: needs at least one operator")
    d = _same_dtype(ops, where)
    for i, A in enumerate(ops):
        if A.codomain_size != ops[0].codomain_size:
            raise ValueError(f"{where}: operand {i} gives {A.codomain_size} entries, operand 0 {ops[0].codomain_size}")
    adjoints = [_native_class("AdjointOf", d)(A._native) for A in ops]
    native = _native_class("AdjointOf", d)(_native_class("VerticalStack", d)(adjoints))
    same = all(A.ishape == ops[0].ishape for A in ops)
    ishape = (len(ops),) + tuple(ops[0].ishape) if same else (sum(A.domain_size for A in ops),)
    return Composite(native, d, ishape, ops[0].oshape, ops, "hstack", record(hstack, (ops,), {}))


def vstack(ops):
    """[A_0; A_1; ...]: x -> [A_0 x; A_1 x; ...] (equal domains); oshape (blocks, *oshape) when the blocks share
    one, else flat. Its normal sums the blocks' normals (their fast ones where they have them)."""
    where = "vstack"
    ops = list(ops)
    if not ops:
        raise ValueError(f"{where}: needs at least one operator")
    d = _same_dtype(ops, where)
    for i, A in enumerate(ops):
        if A.domain_size != ops[0].domain_size:
            raise ValueError(f"{where}: operand {i} takes {A.domain_size} entries, operand 0 {ops[0].domain_size}")
    native = _native_class("VerticalStack", d)([A._native for A in ops])
    same = all(A.oshape == ops[0].oshape for A in ops)
    oshape = (len(ops),) + tuple(ops[0].oshape) if same else (sum(A.codomain_size for A in ops),)
    return Composite(native, d, ops[0].ishape, oshape, ops, "vstack", record(vstack, (ops,), {}))


def add(A, B):
    """A + B: the identity stacked twice, then [A B]."""
    where = "A + B"
    d = _same_dtype([A, B], where)
    if A.shape != B.shape:
        raise ValueError(f"{where}: A maps {A.domain_size} -> {A.codomain_size} entries, B {B.domain_size} -> "
                         f"{B.codomain_size}")
    twice = _diag_native(np.ones(2 * A.domain_size), 2, d, "Copy")
    H = hstack([A, B])
    return Composite(_native_class("Chain", d)(twice, H._native), d, A.ishape, A.oshape, (A, B),
                     f"({A!r} + {B!r})", record(add, (A, B), {}))


def batched(A, copies):
    """A applied to ``copies`` vectors at once (block diagonal): ishape (copies, *A.ishape), oshape
    (copies, *A.oshape); one batched call of A."""
    where = "batched"
    _require_operator(A, None, where, "A")
    copies = _arrays.count(copies, "copies", where)
    d = A.real_dtype
    return Composite(_native_class("Batched", d)(A._native, copies), d, (copies,) + tuple(A.ishape),
                     (copies,) + tuple(A.oshape), (A,), f"batched({A!r}, {copies})",
                     record(batched, (A, copies), {}))


def diagonal(weights, *, dtype=np.float32):
    """The diagonal operator x -> weights * x (entry by entry) on arrays of weights' shape."""
    where = "diagonal"
    d = real_dtype(dtype)
    w = _arrays.host_complex(weights, "weights", where, d)
    if w.size == 0 or not np.all(np.isfinite(w)):
        raise ValueError(f"{where}: weights must be finite and not empty")
    shape = w.shape if w.ndim else (1,)
    return Composite(_diag_native(w, 1, d, "Diagonal"), d, shape, shape, (), "diagonal",
                     record(diagonal, (w.reshape(shape),), {"dtype": d}))


def identity(shape, *, dtype=np.float32):
    """The identity on arrays of ``shape``."""
    shape = _arrays.shape_tuple(shape, "shape", "identity")
    return diagonal(np.ones(shape), dtype=dtype)


class PythonOperator(LinearOperator):
    """An operator written in Python: ``forward(x)`` maps an array of ``ishape`` to one of ``oshape``,
    ``adjoint(y)`` back; ``normal(x)`` (optional) computes A^H A x faster than the two. It works wherever a forge
    operator does: applies, algebra, SENSE, TimeSegmentation, the solvers.

    Host data reach the functions as NumPy arrays (copies, which they may keep or change); device data (CuPy
    arrays or CUDA tensors handed to forge) as arrays of that library on the current device. With
    ``batched=False`` (the default) each function sees one vector at a time; with ``batched=True`` it gets
    a leading batch axis, ``(nbatch, *ishape)``, and returns ``(nbatch, *oshape)``. Results are written into
    forge's buffer in the operator's complex dtype."""

    @recorded
    def __init__(self, forward, adjoint, *, ishape, oshape, normal=None, batched=False, dtype=np.float32,
                 name="PythonOperator"):
        where = "PythonOperator"
        for arg, fn in (("forward", forward), ("adjoint", adjoint), ("normal", normal)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{where}: {arg} must be callable, got {type(fn).__name__}")
        d = real_dtype(dtype)
        ishape = _arrays.shape_tuple(ishape, "ishape", where)
        oshape = _arrays.shape_tuple(oshape, "oshape", where)
        call = _python_apply(str(name), (forward, adjoint, normal), ishape, oshape, _arrays.complex_dtype(d),
                             bool(batched))
        native = _native_class("PythonOperator", d)(_prod(oshape), _prod(ishape), call, normal is not None,
                                                     str(name))
        LinearOperator.__init__(self, native, d, ishape, oshape)


def _python_apply(name, functions, ishape, oshape, cdtype, batched):
    """The callable the C++ PythonOperator calls with views of its buffers. It holds no reference to the
    Python operator object (the C++ object owns it: a reference back would be a cycle Python cannot see)."""
    labels = ("forward", "adjoint", "normal")

    def call(view_in, view_out, nbatch, mode):
        fn = functions[mode]
        core_in = oshape if mode == 1 else ishape
        core_out = oshape if mode == 0 else ishape
        if isinstance(view_in, np.ndarray):
            lib, x, out = "numpy", np.array(view_in), view_out
        else:
            lib = getattr(_arrays.device_library, "name", None) or _default_device_library()
            x, out = _from_dlpack(lib, view_in), _from_dlpack(lib, view_out)
            x = x.clone() if lib == "torch" else x.copy()
        x = x.reshape((nbatch,) + core_in)
        out = out.reshape((nbatch,) + core_out)
        where = f"{name}.{labels[mode]}"
        if batched:
            _store(fn(x), out, (nbatch,) + core_out, where)
        else:
            for b in range(nbatch):
                _store(fn(x[b]), out[b], core_out, where)

    return call


def _store(result, out, shape, where):
    rshape = tuple(int(s) for s in getattr(result, "shape", ()))
    if rshape != tuple(shape):
        raise ValueError(f"{where} returned an array of shape {rshape}, expected {tuple(shape)}")
    out[...] = result


def _default_device_library():
    try:
        import cupy  # noqa: F401

        return "cupy"
    except ImportError:
        return "torch"


def _from_dlpack(lib, view):
    if lib == "cupy":
        import cupy

        return cupy.from_dlpack(view)
    import torch

    return torch.from_dlpack(view)


def _matmul(self, x):
    if isinstance(x, LinearOperator):
        return compose(self, x)
    return self.forward(x)


def _add(self, other):
    if not isinstance(other, LinearOperator):
        return NotImplemented
    return add(self, other)


def _sub(self, other):
    if not isinstance(other, LinearOperator):
        return NotImplemented
    return add(self, scale(-1.0, other))


def _mul(self, a):
    return scale(a, self)


def _neg(self):
    return scale(-1.0, self)


def _adjoint_op(self):
    """The adjoint operator A^H, an operator of its own (``G.H @ y`` is ``G.adjoint(y)``; solvers and
    composites take it); ``G.H.H is G``."""
    h = self.__dict__.get("_adjoint_op")
    if h is None:
        h = self._adjoint_op = Adjoint(self)
    return h


def _normal_op(self):
    """The normal operator A^H A as an operator (A's own fast normal where it has one, e.g. Toeplitz)."""
    return Normal(self)


def bind_algebra(cls):
    """Gives LinearOperator its algebra: ``@`` (forward of an array, composition with an operator), ``+``, ``-``,
    ``*`` and ``rmul`` by a scalar, unary ``-``, ``.H`` and ``.N``. Bound here, once this module's operators
    exist, so that forge._operator does not import this module back (its subclasses keep their own overrides)."""
    for name, function in (("__matmul__", _matmul), ("__add__", _add), ("__sub__", _sub), ("__mul__", _mul),
                           ("__rmul__", _mul), ("__neg__", _neg)):
        setattr(cls, name, function)
    cls.H = property(_adjoint_op)
    cls.N = property(_normal_op)


bind_algebra(LinearOperator)
