"""Pickling rebuilds every operator from its geometry (equal applies after loading), applies write into out=,
and the solvers take slices (leading batch axes) in one call, each slice as its own solve would give."""

import pickle

import numpy as np
import pytest

import forge
from reference import crandn, grid_problem, rel_err


def module_forward(x):
    return 2 * x.reshape(-1)


def module_adjoint(y):
    return 2 * np.conj(np.ones(1)) * y.reshape(3, 4)


def all_operators(rng):
    n = 8
    p = grid_problem(rng, n=n, n1=60)
    kw = dict(ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=np.float64)
    G = forge.Gdft(p["kx"], p["ky"], ishape=(n, n), **kw)
    kx, ky = p["kx"].reshape(3, 20), p["ky"].reshape(3, 20)
    Gn = forge.Gnufft(kx, ky, nx=n, ny=n, tolerance=1e-8, dtype=np.float64)
    T = forge.ToeplitzNormal(kx, ky, nx=n, ny=n, field_map=p["field_map"], t=p["t"].reshape(3, 20),
                             dtype=np.float64)
    maps = crandn(rng, 2, n, n)
    ops = {
        "Gdft": G,
        "GdftR2": forge.GdftR2(p["kx"], p["ky"], nx=n, ny=n, **kw),
        "Gnufft": Gn,
        "Gfft": forge.Gfft(n, n, dtype=np.float64),
        "TimeSegmentation": forge.TimeSegmentation(Gn, p["field_map"], p["t"].reshape(3, 20), 4),
        "SENSE": forge.SENSE(G, maps),
        "pcSENSE": forge.pcSENSE(kx, ky, t=p["t"].reshape(3, 20), ix=p["ix"], iy=p["iy"], field_map=p["field_map"],
                                 maps=maps.reshape(2, -1), shot_phases=rng.uniform(-1, 1, (3, n * n)),
                                 dtype=np.float64),
        "ToeplitzNormal": T,
        "with_normal": forge.with_normal(Gn, T),
        "NormalOf": forge.NormalOf(forge.SENSE(G, maps)),
        "algebra": 2j * (G @ forge.diagonal(maps[0], dtype=np.float64)) - G + Gn.H.H.H.H,
        "adjoint": G.H,
        "normal": forge.SENSE(forge.with_normal(Gn, T), maps).N,
        "stacks": forge.vstack([forge.hstack([G, G]), forge.hstack([G, -G])]),
        "batched": forge.batched(forge.identity(60, dtype=np.float64), 2) @ forge.vstack([G, G]),
        "python": forge.PythonOperator(module_forward, module_adjoint, ishape=(3, 4), oshape=(12,)),
    }
    return ops


def test_every_operator_pickles_to_an_equal_operator(rng):
    for name, A in all_operators(rng).items():
        B = pickle.loads(pickle.dumps(A))
        assert type(B) is type(A) and B.ishape == A.ishape and B.oshape == A.oshape, name
        x = crandn(rng, *A.ishape, dtype=A.complex_dtype)
        y = crandn(rng, *A.oshape, dtype=A.complex_dtype)
        assert rel_err(B @ x, A @ x) == 0, name
        assert rel_err(B.H @ y, A.H @ y) == 0, name
    G = all_operators(rng)["Gdft"]
    assert pickle.loads(pickle.dumps(G.H)).H.H is not None
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(forge.PythonOperator(lambda x: x, lambda y: y, ishape=(2,), oshape=(2,)))


def test_pickling_keeps_the_geometry_given_at_construction(rng):
    n = 8
    kx, ky = rng.uniform(-4, 4, (2, 50))
    G = forge.Gnufft(kx, ky, nx=n, ny=n, dtype=np.float64)
    x = crandn(rng, n, n)
    before = G @ x
    kx[:] = 0  # the caller's arrays change after construction: the operator (and its pickle) do not
    assert rel_err(pickle.loads(pickle.dumps(G)) @ x, before) == 0


def test_out_arguments(rng):
    n = 8
    G = forge.Gnufft(*rng.uniform(-4, 4, (2, 3, 40)), nx=n, ny=n, dtype=np.float64)
    x = crandn(rng, 2, n, n)
    out = np.empty((2, 3, 40), np.complex128)
    r = G.forward(x, out=out)
    assert r is out and rel_err(out, G @ x) == 0
    back = np.empty((2, n, n), np.complex128)
    assert G.adjoint(out, out=back) is back and rel_err(back, G.H @ out) == 0
    assert G.H.forward(out, out=back) is back
    norm = np.empty((2, n, n), np.complex128)
    assert G.normal(x, out=norm) is norm and rel_err(norm, G.normal(x)) == 0
    with pytest.raises(ValueError, match=r"Gnufft.forward: out has shape \(3, 40\), expected \(2, 3, 40\)"):
        G.forward(x, out=out[0])
    with pytest.raises(TypeError, match="out has dtype complex64, expected complex128"):
        G.forward(x, out=out.astype(np.complex64))
    with pytest.raises(ValueError, match="out overlaps the input"):
        forge.Gfft(8, 8, dtype=np.float64).forward(x[0], out=x[0])
    xs = forge.solve_pwls_pcg(G, out[0], niter=3, out=np.empty((n, n), complex))
    assert rel_err(xs, forge.solve_pwls_pcg(G, out[0], niter=3)) == 0


@pytest.mark.parametrize("normal", [False, True])
def test_slices_in_one_call_equal_separate_solves(rng, normal):
    n, nc = 8, 2
    G = forge.Gnufft(*rng.uniform(-4, 4, (2, 4, 40)), nx=n, ny=n, dtype=np.float64)
    S = forge.SENSE(G, crandn(rng, nc, n, n))
    R = forge.QuadPenalty(n, n, beta=1e-2, dtype=np.float64)
    Y = crandn(rng, 2, 3, *S.oshape)  # (slices, echoes, coils, interleaves, samples)
    X0 = crandn(rng, 2, 3, n, n)
    if normal:
        B = S.H @ Y
        X, info = forge.solve_pwls_pcg_normal(S.N, B, x0=X0, penalty=R, niter=4, return_info=True)
        single = lambda i, j: forge.solve_pwls_pcg_normal(S.N, B[i, j], x0=X0[i, j], penalty=R, niter=4)
    else:
        W = rng.uniform(0.5, 1, S.oshape)
        X, info = forge.solve_pwls_pcg(S, Y, x0=X0, weights=W, penalty=R, niter=4, return_info=True)
        single = lambda i, j: forge.solve_pwls_pcg(S, Y[i, j], x0=X0[i, j], weights=W, penalty=R, niter=4)
    assert X.shape == (2, 3, n, n) and len(info) == 6 and all(d["iterations"] == 4 for d in info)
    for i in range(2):
        for j in range(3):
            assert rel_err(X[i, j], single(i, j)) == 0
    with pytest.raises(ValueError, match=r"x0 has \(3,\) slices, y has \(2, 3\)"):
        forge.solve_pwls_pcg(S, Y, x0=X0[0], niter=1)
