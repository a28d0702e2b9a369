"""Every forge operator speaks SciPy's operator protocol: ``scipy.sparse.linalg.aslinearoperator(G)`` itself takes
G (its shape, complex dtype, matvec, rmatvec, rmatmat), the applies equal forge's and the dense float64 matrix's,
and SciPy's lsqr through it reaches the dense least-squares solution and forge's own solver's."""

import pickle

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err

sla = pytest.importorskip("scipy.sparse.linalg")

N = 8  # image side of the small problems


def _geometry(rng, n1=200):
    return grid_problem(rng, n=N, n1=n1)


def _gdft(p, dtype):
    return forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"],
                      ishape=(N, N), dtype=dtype)


def _dense(A):
    """The operator as a dense matrix, column by column through forge's forward."""
    eye = np.eye(A.domain_size, dtype=A.dtype)
    return np.stack([A.forward(eye[k]).reshape(-1) for k in range(A.domain_size)], axis=1).astype(np.complex128)


def _builders():
    """Every kind of forge operator on the small problem, in the given precision."""

    def dense_py(rng, p, d):
        E = dft_matrix(**p)
        return forge.PythonOperator(lambda x: (E @ x.reshape(-1)), lambda y: (E.conj().T @ y).reshape(N, N),
                                    ishape=(N, N), oshape=(E.shape[0],), dtype=d)

    def tseg(rng, p, d):
        G = forge.Gnufft(p["kx"], p["ky"], nx=N, ny=N, dtype=d)
        return forge.TimeSegmentation(G, p["field_map"], p["t"], 4)

    def pcsense(rng, p, d):
        k = lambda a: np.asarray(a).reshape(2, -1)
        return forge.pcSENSE(k(p["kx"]), k(p["ky"]), t=k(p["t"]), ix=p["ix"], iy=p["iy"], field_map=p["field_map"],
                             maps=crandn(rng, 2, N * N), shot_phases=rng.uniform(-1, 1, (2, N * N)), dtype=d)

    def toeplitz(rng, p, d):
        return forge.ToeplitzNormal(p["kx"], p["ky"], nx=N, ny=N, dtype=d)

    return {
        "Gdft": lambda rng, p, d: _gdft(p, d),
        "GdftR2": lambda rng, p, d: forge.GdftR2(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], nx=N, ny=N, dtype=d),
        "Gnufft": lambda rng, p, d: forge.Gnufft(p["kx"], p["ky"], nx=N, ny=N, dtype=d),
        "Gfft": lambda rng, p, d: forge.Gfft(N, N, dtype=d),
        "SENSE": lambda rng, p, d: forge.SENSE(_gdft(p, d), crandn(rng, 3, N, N)),
        "TimeSegmentation": tseg,
        "pcSENSE": pcsense,
        "ToeplitzNormal": toeplitz,
        "NormalOf": lambda rng, p, d: forge.NormalOf(_gdft(p, d)),
        "with_normal": lambda rng, p, d: forge.with_normal(forge.Gnufft(p["kx"], p["ky"], nx=N, ny=N, dtype=d),
                                                           toeplitz(rng, p, d)),
        "PythonOperator": dense_py,
        "diagonal": lambda rng, p, d: forge.diagonal(crandn(rng, N, N), dtype=d),
        "identity": lambda rng, p, d: forge.identity((N, N), dtype=d),
        "adjoint": lambda rng, p, d: _gdft(p, d).H,
        "normal": lambda rng, p, d: _gdft(p, d).N,
        "algebra": lambda rng, p, d: 2 * _gdft(p, d) @ forge.diagonal(crandn(rng, N, N), dtype=d) - _gdft(p, d),
        "hstack": lambda rng, p, d: forge.hstack([_gdft(p, d), forge.Gnufft(p["kx"], p["ky"], nx=N, ny=N, dtype=d)]),
        "vstack": lambda rng, p, d: forge.vstack([_gdft(p, d), forge.Gfft(N, N, dtype=d)]),
        "batched": lambda rng, p, d: forge.batched(_gdft(p, d), 2),
    }


BUILDERS = _builders()
PRECISIONS = [(np.float32, np.complex64, 1e-5), (np.float64, np.complex128, 1e-12)]


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("real,cplx,tol", PRECISIONS)
def test_scipy_aslinearoperator_takes_every_operator(name, real, cplx, tol, rng):
    A = BUILDERS[name](rng, _geometry(rng), real)
    assert A.dtype == np.dtype(cplx) and A.real_dtype == np.dtype(real) and A.complex_dtype == A.dtype
    L = sla.aslinearoperator(A)
    assert not isinstance(A, sla.LinearOperator)  # SciPy made its own operator from the protocol
    assert L.shape == A.shape == (A.codomain_size, A.domain_size) and L.dtype == np.dtype(cplx)
    D = _dense(A)
    x, y = crandn(rng, A.domain_size), crandn(rng, A.codomain_size)
    # SciPy hands float64/complex128 vectors in; forge takes them in its precision.
    assert L.matvec(x).dtype == np.dtype(cplx) and L.matvec(x).shape == (A.codomain_size,)
    assert rel_err(L.matvec(x), D @ x.astype(cplx)) < tol
    assert rel_err(L.rmatvec(y), D.conj().T @ y.astype(cplx)) < tol
    assert rel_err(L.H @ y, A.adjoint(y.astype(cplx)).reshape(-1)) < tol
    X, Y = crandn(rng, A.domain_size, 3), crandn(rng, A.codomain_size, 2)
    assert L.matmat(X).shape == (A.codomain_size, 3) and rel_err(L.matmat(X), D @ X.astype(cplx)) < tol
    assert rel_err(L.rmatmat(Y), D.conj().T @ Y.astype(cplx)) < tol
    # <A x, y> = <x, A^H y> through SciPy's operator
    assert abs(np.vdot(y, L @ x) - np.vdot(L.H @ y, x)) <= 10 * tol * np.linalg.norm(L @ x) * np.linalg.norm(y)


def test_the_protocols_layouts_and_errors(rng):
    G = _gdft(_geometry(rng), np.float64)
    E = _dense(G)  # checked against the DFT formula in test_scipy_aslinearoperator_takes_every_operator
    x = crandn(rng, N * N)
    assert G.matvec(x).shape == (200,) and G.matvec(x[:, None]).shape == (200, 1)
    assert rel_err(G.matvec(list(x)), E @ x) < 1e-12  # any array-like
    assert rel_err(G.matvec(np.real(x)), E @ np.real(x)) < 1e-12  # real vectors are taken as complex
    X = crandn(rng, N * N, 4)
    assert rel_err(G.matmat(X), E @ X) < 1e-12 and rel_err(G.rmatmat(E @ X), E.conj().T @ (E @ X)) < 1e-12
    with pytest.raises(ValueError, match=r"matvec: x has 63 entries, the operator takes 64"):
        G.matvec(np.zeros(63))
    with pytest.raises(ValueError, match=r"rmatmat: Y has shape \(64, 2\), expected \(200,\), \(200, 1\)"):
        G.rmatmat(np.zeros((64, 2)))
    # forward and adjoint stay strict about the dtype: only the SciPy protocol converts
    with pytest.raises(TypeError, match="x has dtype float64, expected complex128"):
        G.forward(np.real(x))


@pytest.mark.parametrize("spelling,real", [(np.float32, np.float32), (np.complex64, np.float32),
                                           ("complex64", np.float32), (np.float64, np.float64),
                                           (np.complex128, np.float64)])
def test_constructors_take_either_spelling_of_the_precision(spelling, real, rng):
    assert forge.real_dtype(spelling) == np.dtype(real)
    p = _geometry(rng)
    G = _gdft(p, spelling)
    R = forge.QuadPenalty(N, N, beta=1.0, dtype=spelling)
    assert G.real_dtype == R.real_dtype == real and G.dtype == R.dtype == np.result_type(real, np.complex64)
    # A pickled operator keeps its dtype (the recipe holds the constructor's spelling)
    G2 = pickle.loads(pickle.dumps(G))
    assert G2.dtype == G.dtype and G2.real_dtype == real
    assert repr(G).endswith(f"{G.dtype.name})")
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        forge.Gfft(8, 8, dtype=np.complex256 if hasattr(np, "complex256") else np.float16)


@pytest.mark.parametrize("name", ["Gdft", "Gnufft", "SENSE"])
def test_lsqr_through_scipys_aslinearoperator_reaches_the_least_squares_solution(name, rng):
    p = _geometry(rng, n1=300)
    E = dft_matrix(**p)
    if name == "Gdft":
        G = _gdft(p, np.float64)
    elif name == "Gnufft":  # the field-free DFT, which the NUFFT approximates
        G = forge.Gnufft(p["kx"], p["ky"], nx=N, ny=N, dtype=np.float64)
        E = dft_matrix(p["kx"], p["ky"], p["kz"], p["ix"], p["iy"], p["iz"], np.zeros(N * N), p["t"])
    else:
        maps = crandn(rng, 3, N * N)
        G = forge.SENSE(_gdft(p, np.float64), maps.reshape(3, N, N))
        E = np.vstack([E * m[None, :] for m in maps])
    x_true = crandn(rng, N * N)
    y = (E @ x_true + 0.05 * crandn(rng, E.shape[0])).astype(G.dtype)
    xs, istop = sla.lsqr(sla.aslinearoperator(G), y, atol=1e-14, btol=1e-14, iter_lim=3000)[:2]
    assert istop in (1, 2, 4, 5)  # converged, not the iteration limit (7)
    xf = forge.solve_pwls_pcg(G, y.reshape(G.oshape), x0=np.zeros(G.ishape, G.dtype), niter=300)
    ref = np.linalg.lstsq(E, y, rcond=None)[0]
    # The NUFFT is its kernel's approximation of E (relative error ~1e-4 with the default width 5).
    assert rel_err(xs, ref) < (2e-3 if name == "Gnufft" else 1e-8)
    assert rel_err(xf.reshape(-1), xs) < 1e-8  # one operator, one solution
    assert rel_err(xs, x_true) < 0.2


def test_lsqr_of_a_float32_operator_reaches_the_float64_solution(rng):
    p = _geometry(rng, n1=300)
    G32 = _gdft(p, np.float32)
    E = dft_matrix(**p)
    y = E @ crandn(rng, N * N) + 0.05 * crandn(rng, 300)
    L = sla.aslinearoperator(G32)
    assert L.dtype == np.complex64
    xs = sla.lsqr(L, y, atol=1e-7, btol=1e-7, iter_lim=500)[0]
    assert rel_err(xs, np.linalg.lstsq(E, y, rcond=None)[0]) < 1e-4
