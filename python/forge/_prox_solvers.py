"""The proximal solvers (FISTA, POGM, ADMM) for compressed sensing,

    argmin_x ||W^(1/2) (y - G x)||^2 + lam R(x)      (no factor 1/2 on the data term, as solve_pwls_pcg),

from the data (G, y) or from the normal equations' side (N = G^H W G, b = G^H W y), and l1_wavelet_recon on top.
Every algorithm runs in C++ (forge/Solvers), with forge's penalties or with a penalty written in Python (an object
with prox(x, step)), which the C++ loop calls back: one implementation of each algorithm whatever the penalty."""

import math

import numpy as np

from . import _arrays
from ._composites import SENSE
from ._encoding import Gnufft
from ._operator import LinearOperator, _native_class, _require_operator
from ._prox import WaveletL1Penalty, native_prox
from ._solvers import _result, _rows, _slices


def _number(value, arg, where, minimum=0.0, allow_none=True):
    if value is None and allow_none:
        return 0.0
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {arg} must be a real number, got {type(value).__name__}") from None
    if not (math.isfinite(v) and v >= minimum):
        raise ValueError(f"{where}: {arg} must be finite and >= {minimum:g}, got {value!r}")
    return v


def _options(where, tolerance=0.0, lipschitz=None, power_iterations=30, lipschitz_margin=1.02, restart=True,
             monotone=False, rho=None, cg_iterations=5, adaptive_rho=True, data_norm2=None):
    """ProxOptions as the native solvers take them (lipschitz and rho 0: estimated; data_norm2 -1: unknown)."""
    o = {
        "tolerance": _number(tolerance, "tolerance", where),
        "lipschitz": _number(lipschitz, "lipschitz", where),
        "power_iterations": _arrays.count(power_iterations, "power_iterations", where, minimum=1),
        "lipschitz_margin": _number(lipschitz_margin, "lipschitz_margin", where, minimum=1.0, allow_none=False),
        "restart": bool(restart),
        "monotone": bool(monotone),
        "rho": _number(rho, "rho", where),
        "cg_iterations": _arrays.count(cg_iterations, "cg_iterations", where, minimum=1),
        "adaptive_rho": bool(adaptive_rho),
        "data_norm2": -1.0 if data_norm2 is None else _number(data_norm2, "data_norm2", where, allow_none=False),
    }
    if lipschitz is not None and o["lipschitz"] == 0:
        raise ValueError(f"{where}: lipschitz must be > 0 (or None: estimated by power iteration)")
    if rho is not None and o["rho"] == 0:
        raise ValueError(f"{where}: rho must be > 0 (or None: lambda_max(N))")
    return o


def _solve(method, G, y, penalty, x0, weights, niter, options, callback, return_info, out):
    where = f"solve_{method}"
    _require_operator(G, None, where)
    niter = _arrays.count(niter, "niter", where, minimum=0)
    if callback is not None and not callable(callback):
        raise TypeError(f"{where}: callback must be callable")
    d, cd = G.real_dtype, G.dtype
    vy = _slices(y, "y", where, G.codomain_size, cd, "G.codomain_size", G.oshape)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vy.lib, vy.array, (G.domain_size,), cd)
    vx = _slices(x0, "x0", where, G.domain_size, cd, "G.domain_size", G.ishape, _arrays.IMAGE_LAYOUT_HINT, vy)
    if weights is None:
        weights = _arrays.ones_like_place(vy.lib, vy.array, (G.codomain_size,), d)
    vw = _slices(weights, "weights", where, G.codomain_size, d, "G.codomain_size", G.oshape, None, vy)
    R = native_prox(penalty, G, where)
    _arrays.require_finite(vy, "y", where)
    _arrays.require_finite(vx, "x0", where)
    out = _result(out, vy, vx, G, where)
    solve = _native_class("solve_prox", d)
    vy.before()
    if not vy.batched:
        info = solve(method, vx.array, G._native, vw.array, vy.array, R, niter, options, callback, out)
    else:
        Y, X0, W, X = _rows(vy), _rows(vx), _rows(vw), _rows(out, vy.nbatch)
        info = [solve(method, X0[b % len(X0)], G._native, W[b % len(W)], Y[b], R, niter, options, callback, X[b])
                for b in range(vy.nbatch)]
    vy.after()
    x = vy.result(out)
    return (x, info) if return_info else x


def _solve_normal(method, N, b, penalty, x0, niter, options, callback, return_info, out):
    where = f"solve_{method}_normal"
    _require_operator(N, None, where, "N")
    if N.domain_size != N.codomain_size:
        raise ValueError(f"{where}: N maps {N.domain_size} -> {N.codomain_size} entries; it must be square "
                         f"(NormalOf(A) makes the normal operator of A)")
    niter = _arrays.count(niter, "niter", where, minimum=0)
    if callback is not None and not callable(callback):
        raise TypeError(f"{where}: callback must be callable")
    cd = N.complex_dtype
    vb = _slices(b, "b", where, N.domain_size, cd, "N.domain_size", N.ishape, _arrays.IMAGE_LAYOUT_HINT)
    if x0 is None:
        x0 = _arrays.zeros_like_place(vb.lib, vb.array, (N.domain_size,), cd)
    vx = _slices(x0, "x0", where, N.domain_size, cd, "N.domain_size", N.ishape, _arrays.IMAGE_LAYOUT_HINT, vb)
    R = native_prox(penalty, N, where)
    _arrays.require_finite(vb, "b", where)
    _arrays.require_finite(vx, "x0", where)
    out = _result(out, vb, vx, N, where)
    solve = _native_class("solve_prox_normal", N.real_dtype)
    vb.before()
    if not vb.batched:
        info = solve(method, vx.array, N._native, vb.array, R, niter, options, callback, out)
    else:
        B, X0, X = _rows(vb), _rows(vx), _rows(out, vb.nbatch)
        info = [solve(method, X0[i % len(X0)], N._native, B[i], R, niter, options, callback, X[i])
                for i in range(vb.nbatch)]
    vb.after()
    x = vb.result(out)
    return (x, info) if return_info else x


def solve_fista(G, y, *, penalty, x0=None, weights=None, niter=100, tolerance=0.0, lipschitz=None,
                power_iterations=30, lipschitz_margin=1.02, restart=True, monotone=False, callback=None,
                return_info=False, out=None):
    """FISTA with adaptive restart: argmin_x ||W^(1/2) (y - G x)||^2 + lam R(x).

    penalty: WaveletL1Penalty, ExactTVPenalty, L1Penalty, or any object with prox(x, step) (= argmin_u step R(u) +
    1/2 ||u - x||^2, R with its weight) and optionally penalty(x) (R(x), for the reported cost and monotone), written
    with the library of the data (NumPy on the host, CuPy or torch on the device). Each iteration: z = prox(x -
    grad f(x) / L, 1 / L) with grad f = 2 G^H W (G x - y), then the momentum step; one apply of G^H W G.

    lipschitz: L = 2 lambda_max(G^H W G) if known (None: power_iterations of a power iteration, times
    lipschitz_margin; raised whenever a step shows more curvature); restart: reset the momentum when the step and
    the composite gradient disagree; monotone: MFISTA, the cost never rises. tolerance: stop when L ||x - z|| <=
    tolerance times its first value. x0, weights, slices (y of shape (*batch, *G.oshape)), out and the result as
    solve_pwls_pcg; callback(info) after each iteration (iteration, cost, gradient_norm, step, elapsed_s); info
    (return_info=True): iterations, converged, stop_reason, initial and final gradient norms, elapsed_s, lipschitz,
    normal_applies, restarts. Host arrays run on the CPU, CuPy arrays and CUDA tensors on the GPU without host
    copies."""
    o = _options("solve_fista", tolerance, lipschitz, power_iterations, lipschitz_margin, restart, monotone)
    return _solve("fista", G, y, penalty, x0, weights, niter, o, callback, return_info, out)


def solve_pogm(G, y, *, penalty, x0=None, weights=None, niter=100, tolerance=0.0, lipschitz=None,
               power_iterations=30, lipschitz_margin=1.02, restart=True, callback=None, return_info=False, out=None):
    """POGM (the proximal optimized gradient method, Taylor, Hendrickx and Glineur 2017) with adaptive restart (Kim
    and Fessler 2018): the problem of solve_fista, whose arguments it takes (without monotone), at about half of
    FISTA's worst-case cost bound for the same iterations; one apply of G^H W G per iteration."""
    o = _options("solve_pogm", tolerance, lipschitz, power_iterations, lipschitz_margin, restart)
    return _solve("pogm", G, y, penalty, x0, weights, niter, o, callback, return_info, out)


def solve_admm(G, y, *, penalty, x0=None, weights=None, niter=100, tolerance=0.0, rho=None, cg_iterations=5,
               adaptive_rho=True, power_iterations=30, callback=None, return_info=False, out=None):
    """ADMM (scaled form) for the problem of solve_fista: x = argmin f(x) + rho/2 ||x - z + u||^2 by cg_iterations
    CG steps (warm started), z = prox(x + u, 1 / rho), u += x - z; returns z. rho: None takes lambda_max(G^H W G)
    (a power iteration); adaptive_rho doubles or halves it when one residual is 10x the other. tolerance: stop when
    the primal residual ||x - z|| and the dual residual rho ||z - z_prev|| are below tolerance relative to ||x||
    and ||rho u||. The penalty must be the same function on every call: a WaveletL1Penalty with random shifts is
    refused (random_shift=False). Other arguments and info (with rho, primal_residual, dual_residual) as
    solve_fista."""
    o = _options("solve_admm", tolerance, power_iterations=power_iterations, rho=rho, cg_iterations=cg_iterations,
                 adaptive_rho=adaptive_rho)
    return _solve("admm", G, y, penalty, x0, weights, niter, o, callback, return_info, out)


def solve_fista_normal(N, b, *, penalty, x0=None, niter=100, tolerance=0.0, lipschitz=None, power_iterations=30,
                       lipschitz_margin=1.02, restart=True, monotone=False, data_norm2=None, callback=None,
                       return_info=False, out=None):
    """solve_fista from the normal equations' side: argmin_x x^H N x - 2 Re(x^H b) + lam R(x), the same minimiser
    when N = G^H W G and b = G^H W y (N a ToeplitzNormal, NormalOf(A), ...). data_norm2 = y^H W y makes the
    callback's cost Phi(x) itself (otherwise Phi(x) - y^H W y)."""
    o = _options("solve_fista_normal", tolerance, lipschitz, power_iterations, lipschitz_margin, restart, monotone,
                 data_norm2=data_norm2)
    return _solve_normal("fista", N, b, penalty, x0, niter, o, callback, return_info, out)


def solve_pogm_normal(N, b, *, penalty, x0=None, niter=100, tolerance=0.0, lipschitz=None, power_iterations=30,
                      lipschitz_margin=1.02, restart=True, data_norm2=None, callback=None, return_info=False,
                      out=None):
    """solve_pogm from the normal equations' side (as solve_fista_normal)."""
    o = _options("solve_pogm_normal", tolerance, lipschitz, power_iterations, lipschitz_margin, restart,
                 data_norm2=data_norm2)
    return _solve_normal("pogm", N, b, penalty, x0, niter, o, callback, return_info, out)


def solve_admm_normal(N, b, *, penalty, x0=None, niter=100, tolerance=0.0, rho=None, cg_iterations=5,
                      adaptive_rho=True, power_iterations=30, data_norm2=None, callback=None, return_info=False,
                      out=None):
    """solve_admm from the normal equations' side (as solve_fista_normal)."""
    o = _options("solve_admm_normal", tolerance, power_iterations=power_iterations, rho=rho,
                 cg_iterations=cg_iterations, adaptive_rho=adaptive_rho, data_norm2=data_norm2)
    return _solve_normal("admm", N, b, penalty, x0, niter, o, callback, return_info, out)


_SOLVERS = {"fista": solve_fista, "pogm": solve_pogm, "admm": solve_admm}


def l1_wavelet_recon(G, y, *, lam=0.005, maps=None, weights=None, niter=100, solver="pogm", wavelet="db2", levels=0,
                     random_shift=True, seed=0, x0=None, tolerance=0.0, callback=None, return_info=False):
    """Compressed sensing with an L1 wavelet prior, as SigPy's L1WaveletRecon:
    argmin_x ||W^(1/2) (y - E x)||^2 + lam_abs ||Psi x||_1, E = SENSE(G, maps) when maps are given, else G.

    G: a forge operator, or a trajectory (kx, ky) / (kx, ky, kz) in cycles/FOV (arrays of one shape), for which a
    Gnufft on the grid of maps (coils, ny, nx) / (coils, nz, ny, nx) is made (maps then required; float32 unless
    maps are complex128). lam is relative, as forge-recon's --lambda: lam_abs = lam * max |E^H W y|, so one value
    suits any data scale (lam = 2 zeroes the image). solver: 'pogm' (the default, as forge-recon), 'fista' or
    'admm' (which needs random_shift=False). wavelet, levels, random_shift, seed: WaveletL1Penalty's. Returns the
    image, E.ishape (and the solver's info dict, with 'lam' the absolute weight, when return_info=True); host or
    device arrays as the solvers."""
    where = "l1_wavelet_recon"
    if solver not in _SOLVERS:
        raise ValueError(f"{where}: solver must be 'pogm', 'fista' or 'admm', got {solver!r}")
    lam = _number(lam, "lam", where, allow_none=False)
    E = _encoding(G, maps, where)
    grid = _arrays.grid_of_shape(tuple(s for s in E.ishape)) if len(E.ishape) in (2, 3) else None
    if grid is None:
        raise ValueError(f"{where}: the operator's image shape {E.ishape} is not an image grid (ny, nx) or "
                         f"(nz, ny, nx); build it with ishape=(ny, nx)")
    vy = _slices(y, "y", where, E.codomain_size, E.dtype, "E.codomain_size", E.oshape)
    if vy.batched:
        raise ValueError(f"{where}: y holds {vy.nbatch} slices; reconstruct one slice per call")
    if x0 is None:
        x0 = _arrays.zeros_like_place(vy.lib, vy.array, tuple(E.ishape), E.dtype)  # a shaped result
    back = E.H @ (y if weights is None else _weighted(y, weights, vy, E, where))
    scale = float(abs(back).max())
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"{where}: E^H y is {'zero' if scale == 0 else 'not finite'}; the data determine no image")
    R = WaveletL1Penalty(*grid, lam=lam * scale, wavelet=wavelet, levels=levels, random_shift=random_shift,
                         seed=seed, dtype=E.real_dtype)
    x = _SOLVERS[solver](E, y, penalty=R, x0=x0, weights=weights, niter=niter, tolerance=tolerance,
                         callback=callback, return_info=return_info)
    if return_info:
        x, info = x
        info["lam"] = lam * scale
        return x, info
    return x


def _weighted(y, weights, vy, E, where):
    vw = _slices(weights, "weights", where, E.codomain_size, E.real_dtype, "E.codomain_size", E.oshape, None, vy)
    if vw.lib != vy.lib:
        raise TypeError(f"{where}: weights is a {vw.lib} array, y a {vy.lib} one; give both in one library")
    return vy.array * vw.array.reshape(vy.array.shape)


def _encoding(G, maps, where):
    if isinstance(G, LinearOperator):
        return G if maps is None else SENSE(G, maps)
    if not isinstance(G, (tuple, list)) or len(G) not in (2, 3):
        raise TypeError(f"{where}: G must be a forge operator or a trajectory (kx, ky) / (kx, ky, kz), got "
                        f"{type(G).__name__}")
    if maps is None:
        raise ValueError(f"{where}: a trajectory G needs maps (coils, ny, nx) to give the image grid")
    shape = tuple(int(s) for s in maps.shape)
    if len(shape) not in (3, 4):
        raise ValueError(f"{where}: maps must have shape (coils, ny, nx) or (coils, nz, ny, nx), got {shape}")
    nx, ny, nz = _arrays.grid_of_shape(shape[1:])
    dtype = np.float64 if str(getattr(maps, "dtype", "")).endswith("complex128") else np.float32
    k = list(G) + [None] * (3 - len(G))
    return SENSE(Gnufft(k[0], k[1], k[2], nx=nx, ny=ny, nz=nz, dtype=dtype), maps)
