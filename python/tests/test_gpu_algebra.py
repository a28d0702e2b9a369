"""Shaped arrays, operator algebra and Python-defined operators on device arrays (CuPy, CUDA PyTorch): results
equal the host's and stay on the device, and a solve moves no vector between host and device. Every case skips
without a CUDA device, forge's CUDA build, or the library."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err
from test_gpu import lib, make_gdft, no_transfers  # noqa: F401 (lib is a fixture)

pytestmark = pytest.mark.gpu


def test_shaped_device_arrays(lib, rng):
    n = 16
    kx, ky = rng.uniform(-n / 2, n / 2, (2, 4, 300))
    G = forge.Gnufft(kx, ky, nx=n, ny=n)
    S = forge.SENSE(G, crandn(rng, 3, n, n, dtype=np.complex64))
    x = crandn(rng, 2, n, n, dtype=np.complex64)
    S.prepare_device()  # uploads of maps and plans are not per-apply transfers
    y = no_transfers(lambda: S @ lib.to_device(x))
    assert lib.is_device_array(y) and tuple(y.shape) == (2, 3, 4, 300)
    assert rel_err(lib.to_host(y), S @ x) < 1e-5
    xa = no_transfers(lambda: S.H @ y)
    assert tuple(xa.shape) == (2, n, n) and rel_err(lib.to_host(xa), S.H @ (S @ x)) < 1e-5


def test_algebra_on_device(lib, rng):
    G, _ = make_gdft(rng, n=12, n1=300)
    A = 2 * G - G.H.H + (G @ forge.identity(G.ishape))
    A.prepare_device()
    x = crandn(rng, G.domain_size, dtype=np.complex64)
    y = crandn(rng, G.codomain_size, dtype=np.complex64)
    assert rel_err(lib.to_host(no_transfers(lambda: A @ lib.to_device(x))), 2 * (G @ x)) < 1e-5
    yd = lib.to_device(y)
    z = no_transfers(lambda: forge.solve_pwls_pcg(G.H, lib.to_device(x), niter=5))
    assert lib.is_device_array(z) and rel_err(lib.to_host(z), forge.solve_pwls_pcg(G.H, x, niter=5)) < 1e-4
    assert lib.is_device_array(no_transfers(lambda: A.H @ yd))


def test_python_operator_on_device_in_sense_and_the_solver(lib, rng):
    n, n1 = 8, 200
    p = grid_problem(rng, n=n, n1=n1)
    E = dft_matrix(**p).astype(np.complex64)
    Ed = lib.to_device(E)
    EHd = lib.to_device(np.ascontiguousarray(E.conj().T))
    seen = []

    def fwd(x):
        seen.append(lib.is_device_array(x))
        return Ed @ x.reshape(-1)

    P = forge.PythonOperator(fwd, lambda y: (EHd @ y).reshape(n, n), ishape=(n, n), oshape=(n1,))
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], ishape=(n, n))
    maps = crandn(rng, 3, n, n, dtype=np.complex64)
    Sp, Sn = forge.SENSE(P, maps), forge.SENSE(G, maps)
    Sp.prepare_device()
    y = crandn(rng, *Sn.oshape, dtype=np.complex64)
    R = forge.QuadPenalty(n, n, beta=1e-2)
    xd = no_transfers(lambda: forge.solve_pwls_pcg(Sp, lib.to_device(y), penalty=R, niter=15))
    assert all(seen) and lib.is_device_array(xd) and tuple(xd.shape) == (n, n)
    assert rel_err(lib.to_host(xd), forge.solve_pwls_pcg(Sn, y, penalty=R, niter=15)) < 1e-3
