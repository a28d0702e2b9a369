"""The solvers: penalized weighted least squares by conjugate gradients, from the data or from the normal
equations' side."""

from . import _arrays
from ._operator import _native_class, _require_operator
from ._penalties import QuadPenalty, _Penalty


def solve_pwls_pcg(G, y, *, x0=None, weights=None, penalty=None, niter=10, tolerance=0.0, callback=None,
                   return_info=False, out=None):
    """Penalized weighted least squares by conjugate gradients:
    argmin_x ||W^(1/2) (y - G x)||^2 + R(x).

    G: a forge operator; y: data, G.oshape or flat (codomain_size,); x0: initial image, G.ishape or flat
    (default zeros); weights: real, non-negative, one per sample, G.oshape or flat (default ones); penalty:
    QuadPenalty or TVPenalty (default none); niter: iterations; tolerance: stop when ||gradient|| <= tolerance *
    ||initial gradient|| (0: run all); callback(info) is called after each iteration with a dict (iteration,
    cost, gradient_norm, step, elapsed_s). All arrays live in one place: on the host, or on the GPU (CuPy or
    PyTorch), where the solve then runs without host copies. Returns x, shaped G.ishape when y or x0 came in
    G's shape, else flat (and a dict of iterations, converged, gradient norms and elapsed_s with
    return_info=True); ``out``: an array of x's shape, dtype and place to write x into.

    Slices in one call: y of shape (*batch, *G.oshape) (or (nbatch, codomain_size)) solves each slice on its
    own and returns (*batch, *G.ishape); x0 and weights are then one for all slices or one per slice, and the
    info is a list of dicts, one per slice."""
    where = "solve_pwls_pcg"
    _require_operator(G, None, where)
    niter = _arrays.count(niter, "niter", where, minimum=0)
    d, cd = G.real_dtype, G.dtype
    vy = _slices(y, "y", where, G.codomain_size, cd, "G.codomain_size", G.oshape)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vy.lib, vy.array, (G.domain_size,), cd)
    vx = _slices(x0, "x0", where, G.domain_size, cd, "G.domain_size", G.ishape, _arrays.IMAGE_LAYOUT_HINT, vy)
    if weights is None:
        weights = _arrays.ones_like_place(vy.lib, vy.array, (G.codomain_size,), d)
    vw = _slices(weights, "weights", where, G.codomain_size, d, "G.codomain_size", G.oshape, None, vy)
    penalty = _check_solver_arguments(penalty, callback, G, where)
    _arrays.require_finite(vy, "y", where)
    _arrays.require_finite(vx, "x0", where)
    out = _result(out, vy, vx, G, where)
    solve = _native_class("solve_pwls_pcg", d)
    vy.before()
    if not vy.batched:
        info = solve(vx.array, G._native, vw.array, vy.array, penalty._native, niter, float(tolerance), callback, out)
    else:
        Y, X0, W, X = _rows(vy), _rows(vx), _rows(vw), _rows(out, vy.nbatch)
        info = [solve(X0[b % len(X0)], G._native, W[b % len(W)], Y[b], penalty._native, niter, float(tolerance),
                      callback, X[b]) for b in range(vy.nbatch)]
    vy.after()
    x = vy.result(out)
    return (x, info) if return_info else x


def _slices(value, arg, where, n, dtype, size_name, core, hint=None, slices_of=None):
    """A solver argument: one vector, or (with slices_of: also one per slice of slices_of) a batch of slices."""
    try:
        v = _arrays.Vector(value, arg, where, n, dtype, size_name, allow_batch=False, hint=hint, core=core)
    except ValueError:
        ndim = len(getattr(value, "shape", ()))
        if ndim <= (len(core) if len(core) > 1 else 1):
            raise  # the message of a single vector: a slice axis was not meant
        v = _arrays.Vector(value, arg, where, n, dtype, size_name, allow_batch=True, hint=hint, core=core)
    if slices_of is not None and v.batched and v.lead != slices_of.lead:
        raise ValueError(f"{where}: {arg} has {v.lead} slices, y has {slices_of.lead or 'none'}; give one {arg} "
                         f"for all slices or one per slice")
    return v


def _rows(v, nbatch=None):
    """The vectors of a batch as rows (views) of a (nbatch, n) array."""
    a = v.array if nbatch is None else v
    rows = (v.nbatch if nbatch is None else nbatch) if (nbatch is not None or v.batched) else 1
    return a.reshape(rows, -1)


def _result(out, vb, vx, op, where):
    """The solution's array: shape (*slices, *op.ishape) when the data or x0 came shaped, else flat."""
    shape = vb.lead + (tuple(op.ishape) if (vb.shaped or vx.shaped) else (op.domain_size,))
    if out is None:
        return _arrays.empty_like_place(vb.lib, vb.array, shape, op.complex_dtype)
    _arrays.check_out(out, vb, shape, op.complex_dtype, where)
    return out


def _check_solver_arguments(penalty, callback, G, where):
    d = G.real_dtype
    if penalty is None:
        penalty = QuadPenalty(G.domain_size, beta=0.0, dtype=d)
    if not isinstance(penalty, _Penalty):
        raise TypeError(f"{where}: penalty must be a forge QuadPenalty or TVPenalty, got {type(penalty).__name__}")
    if penalty.real_dtype != d:
        raise TypeError(f"{where}: penalty is {penalty.real_dtype.name} but the operator is {d.name}")
    if penalty.n_pixels != G.domain_size:
        raise ValueError(f"{where}: penalty covers {penalty.n_pixels} pixels, the operator's domain_size is "
                         f"{G.domain_size}")
    squeeze = lambda shape: tuple(s for s in shape if s > 1)
    grid, image = squeeze(penalty.ishape), squeeze(G.ishape)
    if len(grid) > 1 and len(image) > 1 and grid != image:
        # Same number of pixels on another grid (nx and ny swapped): the differences would run across rows.
        raise ValueError(f"{where}: penalty is on a {penalty.ishape} grid (nz, ny, nx order), the operator's image is "
                         f"{G.ishape}; build the penalty with the operator's nx, ny, nz")
    if callback is not None and not callable(callback):
        raise TypeError(f"{where}: callback must be callable")
    return penalty


def solve_pwls_pcg_normal(N, b, *, x0=None, penalty=None, niter=10, tolerance=0.0, callback=None,
                          return_info=False, out=None):
    """solve_pwls_pcg from the normal equations' side, for a normal operator cheaper than G and G^H:
    argmin_x x^H N x - 2 Re(x^H b) + R(x), i.e. the same solution when N = G^H W G and b = G^H W y.

    N: a square forge operator (ToeplitzNormal, or NormalOf(A) / A.N for an A whose normal() is fast, e.g. a SENSE
    built on with_normal(G, ToeplitzNormal(...))); b: the right-hand side G^H (W y), computed once with the
    exact G. Other arguments, slices (b of shape (*batch, *N.ishape)) and the result as solve_pwls_pcg; the
    callback's cost is Phi(x) - y^H W y."""
    where = "solve_pwls_pcg_normal"
    _require_operator(N, None, where, "N")
    if N.domain_size != N.codomain_size:
        raise ValueError(f"{where}: N maps {N.domain_size} -> {N.codomain_size} entries; it must be square "
                         f"(NormalOf(A) makes the normal operator of A)")
    niter = _arrays.count(niter, "niter", where, minimum=0)
    cd = N.complex_dtype
    vb = _slices(b, "b", where, N.domain_size, cd, "N.domain_size", N.ishape, _arrays.IMAGE_LAYOUT_HINT)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vb.lib, vb.array, (N.domain_size,), cd)
    vx = _slices(x0, "x0", where, N.domain_size, cd, "N.domain_size", N.ishape, _arrays.IMAGE_LAYOUT_HINT, vb)
    penalty = _check_solver_arguments(penalty, callback, N, where)
    _arrays.require_finite(vb, "b", where)
    _arrays.require_finite(vx, "x0", where)
    out = _result(out, vb, vx, N, where)
    solve = _native_class("solve_pwls_pcg_normal", N.real_dtype)
    vb.before()
    if not vb.batched:
        info = solve(vx.array, N._native, vb.array, penalty._native, niter, float(tolerance), callback, out)
    else:
        B, X0, X = _rows(vb), _rows(vx), _rows(out, vb.nbatch)
        info = [solve(X0[i % len(X0)], N._native, B[i], penalty._native, niter, float(tolerance), callback, X[i])
                for i in range(vb.nbatch)]
    vb.after()
    x = vb.result(out)
    return (x, info) if return_info else x
