"""The solvers: penalized weighted least squares by conjugate gradients, from the data or from the normal
equations' side."""

from . import _arrays
from ._operator import _native_class, _require_operator
from ._penalties import QuadPenalty, _Penalty


def solve_pwls_pcg(G, y, *, x0=None, weights=None, penalty=None, niter=10, tolerance=0.0, callback=None,
                   return_info=False):
    """Penalized weighted least squares by conjugate gradients:
    argmin_x ||W^(1/2) (y - G x)||^2 + R(x).

    G: a forge operator; y: data, G.oshape or flat (codomain_size,); x0: initial image, G.ishape or flat
    (default zeros); weights: real, non-negative, one per sample, G.oshape or flat (default ones); penalty: QuadPenalty or TVPenalty (default none); niter: iterations;
    tolerance: stop when ||gradient|| <= tolerance * ||initial gradient|| (0: run all); callback(info) is
    called after each iteration with a dict (iteration, cost, gradient_norm, step, elapsed_s).
    All arrays live in one place: on the host, or on the GPU (CuPy or PyTorch), where the solve then runs
    without host copies. Returns x (and a dict of iterations, converged, gradient norms and elapsed_s with
    return_info=True)."""
    where = "solve_pwls_pcg"
    _require_operator(G, None, where)
    niter = _arrays.count(niter, "niter", where, minimum=0)
    d, cd = G.dtype, G.complex_dtype
    vy = _arrays.Vector(y, "y", where, G.codomain_size, cd, "G.codomain_size", allow_batch=False, core=G.oshape)
    shaped = vy.shaped
    if x0 is None:
        x0 = _arrays.zeros_like_place(vy.lib, vy.array, (G.domain_size,), cd)
    vx = _arrays.Vector(x0, "x0", where, G.domain_size, cd, "G.domain_size", allow_batch=False,
                        hint=_arrays.IMAGE_LAYOUT_HINT, core=G.ishape)
    shaped = shaped or vx.shaped
    if weights is None:
        weights = _arrays.ones_like_place(vy.lib, vy.array, (G.codomain_size,), d)
    vw = _arrays.Vector(weights, "weights", where, G.codomain_size, d, "G.codomain_size", allow_batch=False,
                        core=G.oshape)
    penalty = _check_solver_arguments(penalty, callback, G, where)
    _arrays.require_finite(vy, "y", where)
    _arrays.require_finite(vx, "x0", where)
    out = _arrays.empty_like_place(vy.lib, vy.array, G.ishape if shaped else (G.domain_size,), cd)
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
                        hint=_arrays.IMAGE_LAYOUT_HINT, core=N.ishape)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vb.lib, vb.array, (N.domain_size,), cd)
    vx = _arrays.Vector(x0, "x0", where, N.domain_size, cd, "N.domain_size", allow_batch=False,
                        hint=_arrays.IMAGE_LAYOUT_HINT, core=N.ishape)
    shaped = vb.shaped or vx.shaped
    penalty = _check_solver_arguments(penalty, callback, N, where)
    _arrays.require_finite(vb, "b", where)
    _arrays.require_finite(vx, "x0", where)
    out = _arrays.empty_like_place(vb.lib, vb.array, N.ishape if shaped else (N.domain_size,), cd)
    vb.before()
    info = _native_class("solve_pwls_pcg_normal", N.dtype)(vx.array, N._native, vb.array, penalty._native, niter,
                                                           float(tolerance), callback, out)
    vb.after()
    x = vb.result(out)
    return (x, info) if return_info else x
