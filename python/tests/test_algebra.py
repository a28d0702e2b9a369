"""Operator algebra (A @ B, A + B, a * A, A.H, A.N, stacks, batches) against dense float64 matrices, and operators
written in Python working inside SENSE and the solvers as the native ones do."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err


def dense(A):
    """The matrix of an operator, column by column through its forward."""
    n = A.domain_size
    return np.stack([A @ np.eye(n, dtype=A.complex_dtype)[k] for k in range(n)], axis=1).astype(complex)


def adjoint_gap(A, rng):
    x, y = crandn(rng, *A.ishape), crandn(rng, *A.oshape)
    lhs, rhs = np.vdot(A @ x, y), np.vdot(x, A.H @ y)
    return abs(lhs - rhs) / abs(lhs)


@pytest.fixture
def ops(rng):
    p = grid_problem(rng, n=6, n1=40)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], ishape=(6, 6),
                   dtype=np.float64)
    E = dft_matrix(**p)
    return G, E, p


def test_compose_add_scale_match_the_matrices(ops, rng):
    G, E, _ = ops
    D = forge.diagonal(crandn(rng, 6, 6), dtype=np.float64)
    Dm = dense(D)
    A = G @ D
    assert A.ishape == (6, 6) and A.oshape == G.oshape
    assert rel_err(dense(A), E @ Dm) < 1e-13
    B = 2.5j * G - G @ D + G
    assert rel_err(dense(B), 2.5j * E - E @ Dm + E) < 1e-13
    assert rel_err(dense(-G), -E) < 1e-14 and rel_err(dense(G * 3), 3 * E) < 1e-14
    for op in (A, B, G.H @ G, G @ D @ D):
        assert adjoint_gap(op, rng) < 1e-12
    assert rel_err(dense(B.H), (2.5j * E - E @ Dm + E).conj().T) < 1e-13
    with pytest.raises(ValueError, match=r"A @ B: B gives 40 entries"):
        G @ G
    with pytest.raises(TypeError, match="operand 1 is float32"):
        G + forge.Gfft(6, 6)
    with pytest.raises(TypeError, match="a must be a number"):
        G * np.ones(3)


def test_adjoint_is_an_operator_for_the_solver(ops, rng):
    G, E, _ = ops
    H = G.H
    assert H is G.H and H.H is G and H.ishape == G.oshape and H.oshape == (6, 6)
    b = crandn(rng, 6, 6)
    z = forge.solve_pwls_pcg(H, b, niter=200)
    ref = np.linalg.lstsq(E.conj().T, b.reshape(-1), rcond=None)[0]
    assert z.shape == G.oshape and rel_err(z, ref) < 1e-8
    assert rel_err(dense(H), E.conj().T) < 1e-13


def test_normal_uses_the_fast_normal(rng):
    n = 8
    p = grid_problem(rng, n=n, n1=200, fm_hz=0.0)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], ishape=(n, n), dtype=np.float64)
    T = forge.ToeplitzNormal(p["kx"], p["ky"], nx=n, ny=n, dtype=np.float64)
    W = forge.with_normal(G, T)
    x = crandn(rng, n, n)
    assert rel_err(W.N @ x, T @ x) == 0  # T itself, not G^H G
    assert rel_err(W.N @ x, (G.H @ (G @ x)).reshape(n, n)) < 1e-10  # a 1-D y gives a flat image
    assert rel_err((2 * W).N @ x, 4 * (T @ x)) < 1e-14  # the scale sits on the domain: T still used
    S = forge.SENSE(W, crandn(rng, 3, n, n))
    assert rel_err(S.N @ x, S.H @ (S @ x)) < 1e-10


def test_stacks_and_batches(ops, rng):
    G, E, _ = ops
    D = forge.diagonal(crandn(rng, 6, 6), dtype=np.float64)
    V = forge.vstack([G, G @ D])
    assert V.oshape == (2,) + G.oshape and V.ishape == (6, 6)
    assert rel_err(dense(V), np.vstack([E, E @ dense(D)])) < 1e-13
    Hs = forge.hstack([G, G @ D])
    assert Hs.ishape == (2, 6, 6)
    assert rel_err(dense(Hs), np.hstack([E, E @ dense(D)])) < 1e-13
    B = forge.batched(G, 3)
    assert B.ishape == (3, 6, 6) and B.oshape == (3,) + G.oshape
    X = crandn(rng, 3, 6, 6)
    assert rel_err(B @ X, G @ X) < 1e-14
    I3 = forge.identity((2, 3), dtype=np.float64)
    v = crandn(rng, 2, 3)
    assert rel_err(I3 @ v, v) == 0 and adjoint_gap(V, rng) < 1e-12 and adjoint_gap(Hs, rng) < 1e-12


def dense_operator(E, ishape, batched=False, **kw):
    oshape = (E.shape[0],)
    if batched:
        fwd = lambda x: (E @ x.reshape(x.shape[0], -1).T).T
        adj = lambda y: (E.conj().T @ y.T).T.reshape((y.shape[0],) + ishape)
    else:
        fwd = lambda x: E @ x.reshape(-1)
        adj = lambda y: (E.conj().T @ y).reshape(ishape)
    return forge.PythonOperator(fwd, adj, ishape=ishape, oshape=oshape, batched=batched, **kw)


@pytest.mark.parametrize("batched", [False, True])
def test_python_operator_in_sense_and_the_solver_matches_the_native_one(ops, rng, batched):
    G, E, p = ops
    P = dense_operator(E, (6, 6), batched=batched, dtype=np.float64)
    assert P.ishape == G.ishape and P.shape == G.shape
    x = crandn(rng, 6, 6)
    assert rel_err(P @ x, G @ x) < 1e-12 and adjoint_gap(P, rng) < 1e-12
    maps = crandn(rng, 4, 6, 6)
    Sn, Sp = forge.SENSE(G, maps), forge.SENSE(P, maps)
    y = Sn @ x + 0.01 * crandn(rng, *Sn.oshape)
    assert rel_err(Sp @ x, Sn @ x) < 1e-12
    R = forge.QuadPenalty(6, 6, beta=1e-2, dtype=np.float64)
    xn = forge.solve_pwls_pcg(Sn, y, penalty=R, niter=40)
    xp = forge.solve_pwls_pcg(Sp, y, penalty=R, niter=40)
    assert xp.shape == (6, 6) and rel_err(xp, xn) < 1e-10
    # Inside further algebra and time segmentation too.
    assert rel_err((2 * P + P.H.H) @ x, 3 * (G @ x)) < 1e-12
    Ts = forge.TimeSegmentation(P, np.zeros(36), np.zeros(40), 2)
    assert rel_err(Ts @ x, G @ x) < 1e-12


def test_python_operator_normal_and_errors(ops, rng):
    G, E, _ = ops
    calls = []
    normal = lambda x: calls.append(1) or (E.conj().T @ (E @ x.reshape(-1))).reshape(6, 6)
    P = dense_operator(E, (6, 6), normal=normal, dtype=np.float64, name="Dense")
    x = crandn(rng, 6, 6)
    assert rel_err(P.N @ x, (G.H @ (G @ x)).reshape(6, 6)) < 1e-12 and calls
    bad = forge.PythonOperator(lambda x: np.zeros(3), lambda y: y, ishape=(6, 6), oshape=(40,), name="Bad")
    with pytest.raises(ValueError, match=r"Bad.forward returned an array of shape \(3,\), expected \(40,\)"):
        bad @ x.astype(np.complex64)

    def boom(_):
        raise KeyError("inside the user's forward")

    failing = forge.PythonOperator(boom, boom, ishape=(6, 6), oshape=(40,), dtype=np.float64)
    with pytest.raises(KeyError, match="inside the user's forward"):
        forge.solve_pwls_pcg(forge.SENSE(failing, np.ones((2, 6, 6))), crandn(rng, 2, 40), niter=3)
    with pytest.raises(TypeError, match="PythonOperator: forward must be callable"):
        forge.PythonOperator(3, boom, ishape=(2,), oshape=(2,))


def test_python_operator_device_views_reach_user_code_as_tensors(rng):
    # The device branch of PythonOperator's dispatch with host memory: forge hands DLPack producers (not NumPy
    # arrays) for device buffers, and the functions see arrays of the caller's library (here torch).
    torch = pytest.importorskip("torch")
    from forge import _algebra, _arrays

    class View:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    M = crandn(rng, 6, 6)
    seen = []

    def fwd(x):
        seen.append(type(x))
        r = torch.from_numpy(M) @ x.reshape(-1)
        x[...] = 0  # a copy: the caller's input must stay as it was
        return r

    call = _algebra._python_apply("P", (fwd, fwd, None), (2, 3), (6,), np.complex128, False)
    _arrays.device_library.name = "torch"
    try:
        x = crandn(rng, 2, 6)
        keep = x.copy()
        out = np.zeros(12, complex)
        call(View(x.reshape(-1)), View(out), 2, 0)
    finally:
        _arrays.device_library.name = None
    assert seen == [torch.Tensor, torch.Tensor] and np.array_equal(x, keep)
    assert rel_err(out.reshape(2, 6), (M @ x.T).T) < 1e-14
