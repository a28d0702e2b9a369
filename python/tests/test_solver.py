"""Penalties against NumPy formulas and a small SENSE + PCG reconstruction against the dense solution."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err


def first_differences(img):
    """Forward differences along x and y of a (ny, nx) image, no wrap-around."""
    return [np.diff(img, axis=1).reshape(-1), np.diff(img, axis=0).reshape(-1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quad_and_tv_penalties_match_numpy(rng, dtype):
    nx, ny, beta, delta = 7, 5, 0.3, 0.5
    cd = np.complex64 if dtype == np.float32 else np.complex128
    tol = 1e-5 if dtype == np.float32 else 1e-12
    x = crandn(rng, nx * ny, dtype=cd)
    d = first_differences(x.astype(np.complex128).reshape(ny, nx))
    quad = beta / 2 * sum(np.sum(np.abs(v) ** 2) for v in d)
    tv = beta * sum(np.sum(delta**2 * (np.sqrt(1 + np.abs(v) ** 2 / delta**2) - 1)) for v in d)
    Rq = forge.QuadPenalty(nx, ny, beta=beta, dtype=dtype)
    Rt = forge.TVPenalty(nx, ny, beta=beta, delta=delta, dtype=dtype)
    assert abs(Rq.penalty(x) - quad) <= tol * quad
    assert abs(Rt.penalty(x) - tv) <= tol * tv
    # Gradient: d/da R(x + a v) at 0 equals Re<g, v> (central difference in float64 for the reference).
    if dtype == np.float64:
        v = crandn(rng, nx * ny)
        for R in (Rq, Rt):
            h = 1e-6
            num = (R.penalty(x + h * v) - R.penalty(x - h * v)) / (2 * h)
            assert abs(np.real(np.vdot(R.gradient(x), v)) - num) < 1e-6 * abs(num)
        # Quadratic: the curvature along v is exactly beta ||C v||^2.
        cv = first_differences(v.reshape(ny, nx))
        assert abs(Rq.denom(v, x) - beta * sum(np.sum(np.abs(c) ** 2) for c in cv)) < 1e-10 * Rq.denom(v, x)


def test_sense_pcg_reconstruction_recovers_the_image(rng):
    n, n1, nc = 12, 160, 4
    p = grid_problem(rng, n=n, n1=n1)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=np.float64)
    maps = crandn(rng, nc, n * n)
    S = forge.SENSE(G, maps)
    x_true = crandn(rng, n * n)
    y = S @ x_true  # noise-free, 640 equations for 144 unknowns: the least-squares solution is x_true
    history = []
    x, info = forge.solve_pwls_pcg(S, y, niter=200, tolerance=1e-10, callback=history.append, return_info=True)
    assert isinstance(x, np.ndarray) and x.shape == (n * n,) and x.dtype == np.complex128
    assert rel_err(x, x_true) < 1e-6
    assert info["converged"] and 1 <= info["iterations"] <= 200
    assert len(history) == info["iterations"]
    costs = [h["cost"] for h in history]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(costs, costs[1:]))  # monotone


def test_pcg_with_quad_penalty_solves_the_normal_equations(rng):
    # The fixed point of PWLS with R = beta/2 ||C x||^2: (A^H W A + beta/2 C^H C) x = A^H W y.
    n, n1 = 8, 90
    p = grid_problem(rng, n=n, n1=n1)
    E = dft_matrix(**p)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=np.float64)
    y = crandn(rng, n1)
    W = rng.uniform(0.5, 1.5, n1)
    beta = 2.0
    Dx = np.kron(np.eye(n), np.diff(np.eye(n), axis=0))  # x differences, x fastest
    Dy = np.kron(np.diff(np.eye(n), axis=0), np.eye(n))
    C = np.vstack([Dx, Dy])
    M = E.conj().T @ (W[:, None] * E) + beta / 2 * C.T @ C
    x_ref = np.linalg.solve(M, E.conj().T @ (W * y))
    R = forge.QuadPenalty(n, n, beta=beta, dtype=np.float64)
    x = forge.solve_pwls_pcg(G, y, weights=W, penalty=R, niter=300, tolerance=1e-12)
    assert rel_err(x, x_ref) < 1e-7


def test_float32_sense_pcg_matches_float64(rng):
    n, n1, nc = 10, 150, 3
    p = grid_problem(rng, n=n, n1=n1)
    maps = crandn(rng, nc, n * n)
    x_true = crandn(rng, n * n)
    out = {}
    for d, cd in ((np.float32, np.complex64), (np.float64, np.complex128)):
        G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=d)
        S = forge.SENSE(G, maps.astype(cd))
        y = (forge.SENSE(forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"],
                                    dtype=np.float64), maps) @ x_true).astype(cd)
        out[d] = forge.solve_pwls_pcg(S, y, penalty=forge.QuadPenalty(n, n, beta=1.0, dtype=d), niter=40)
        assert out[d].dtype == cd
    assert rel_err(out[np.float32], out[np.float64]) < 1e-4


def test_an_exception_in_the_callback_stops_the_solve(rng):
    p = grid_problem(rng, n=8, n1=80)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], dtype=np.float64)
    y = crandn(rng, 80)

    class Enough(Exception):
        pass

    seen = []

    def stop_at_three(info):
        seen.append(info["iteration"])
        if info["iteration"] == 3:
            raise Enough()

    with pytest.raises(Enough):
        forge.solve_pwls_pcg(G, y, niter=50, callback=stop_at_three)
    assert seen == [1, 2, 3]


def test_float32_solve_does_not_depend_on_the_scale_of_data_and_maps(rng):
    # BART's phantom -S maps reach 1.3e5 and data 1e8 are common: ||S d||^2 and S^H y then overflow float32
    # unless the solver scales. The same problem with maps x1e5 and data x1e8 (beta x1e10: it is relative to the
    # data term's curvature, which grows with the maps squared) is the image x1e3.
    n, n1, nc = 12, 200, 4
    p = grid_problem(rng, n=n, n1=n1)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=np.float32)
    maps = crandn(rng, nc, n * n, dtype=np.complex64)
    x_true = crandn(rng, n * n)
    y = (forge.SENSE(G, maps) @ x_true.astype(np.complex64)).astype(np.complex64)
    y += 0.01 * np.linalg.norm(y) / np.sqrt(y.size) * crandn(rng, y.size, dtype=np.complex64)
    beta = 1e-3 * n1
    x = forge.solve_pwls_pcg(forge.SENSE(G, maps), y, penalty=forge.QuadPenalty(n, n, beta=beta), niter=15)
    assert rel_err(x, x_true) < 0.2  # an image, not zeros
    xs = forge.solve_pwls_pcg(forge.SENSE(G, (maps * 1e5).astype(np.complex64)), (y * 1e8).astype(np.complex64),
                              penalty=forge.QuadPenalty(n, n, beta=beta * 1e10), niter=15)
    assert rel_err(xs / 1e3, x) <= 1e-4
    # any finite data: 1e30
    xb = forge.solve_pwls_pcg(forge.SENSE(G, maps), (y * 1e30).astype(np.complex64),
                              penalty=forge.QuadPenalty(n, n, beta=beta), niter=15)
    assert rel_err(xb / 1e30, x) <= 1e-4


def test_an_operator_that_overflows_float32_raises(rng):
    # maps of 1e18: G^H y is finite but ||G d||^2 is not; an error naming the operator, never a quiet stop
    n, n1, nc = 8, 80, 2
    p = grid_problem(rng, n=n, n1=n1)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], dtype=np.float32)
    S = forge.SENSE(G, (crandn(rng, nc, n * n) * 1e18).astype(np.complex64))
    y = crandn(rng, nc * n1, dtype=np.complex64)
    with pytest.raises(OverflowError, match="operator"):
        forge.solve_pwls_pcg(S, y, niter=5)

