"""forge operators as SciPy linear operators: matvec/rmatvec/matmat equal forge's applies, and SciPy's lsqr
reaches the least-squares solution forge's solver reaches (and the dense float64 one)."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err

sla = pytest.importorskip("scipy.sparse.linalg")


@pytest.fixture
def problem(rng):
    p = grid_problem(rng, n=10, n1=400)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], ishape=(10, 10),
                   dtype=np.float64)
    return G, dft_matrix(**p)


def test_the_scipy_operator_applies_forge(problem, rng):
    G, E = problem
    L = forge.as_linear_operator(G)
    assert L.shape == (400, 100) and L.dtype == np.complex128 and G.aslinearoperator().shape == L.shape
    x, y = crandn(rng, 100), crandn(rng, 400)
    assert rel_err(L @ x, E @ x) < 1e-12 and rel_err(L.H @ y, E.conj().T @ y) < 1e-12
    X = crandn(rng, 100, 3)
    Y = crandn(rng, 400, 2)
    assert rel_err(L @ X, E @ X) < 1e-12 and rel_err(L.rmatmat(Y), E.conj().T @ Y) < 1e-12
    assert L.matvec(np.real(x)).dtype == np.complex128  # real vectors from SciPy are taken as complex
    assert forge.as_linear_operator(forge.Gfft(4, 4)).dtype == np.complex64
    with pytest.raises(TypeError, match="as_linear_operator: G must be a forge operator"):
        forge.as_linear_operator(E)


def test_lsqr_reaches_forges_solution(problem, rng):
    G, E = problem
    x_true = crandn(rng, 10, 10)
    y = G @ x_true + 0.05 * crandn(rng, 400)
    xs = sla.lsqr(forge.as_linear_operator(G), y, atol=1e-14, btol=1e-14, iter_lim=2000)[0]
    xf = forge.solve_pwls_pcg(G, y, x0=np.zeros((10, 10), complex), niter=400)
    ref = np.linalg.lstsq(E, y, rcond=None)[0]
    assert rel_err(xs, ref) < 1e-7
    assert rel_err(xf.reshape(-1), xs) < 1e-7
    # A composite: SENSE built by the algebra, through SciPy's lsmr.
    S = forge.SENSE(G, crandn(rng, 2, 10, 10))
    ys = S @ x_true
    xl = sla.lsmr(forge.as_linear_operator(S), ys.reshape(-1), atol=1e-14, btol=1e-14, maxiter=2000)[0]
    assert rel_err(xl, x_true.reshape(-1)) < 1e-6
