"""Proximal penalties and solvers on device arrays (CuPy, CUDA PyTorch): prox, value and the wavelet transform equal
the host's and stay on the device; FISTA, POGM and ADMM, with forge's penalties and with a penalty written in the
array's library, equal the host solve and move no vector between host and device. Every case skips without a CUDA
device, forge's CUDA build, or the library."""

import numpy as np
import pytest

import forge
from reference import crandn, rel_err
from test_gpu import lib, no_transfers  # noqa: F401 (lib is a fixture)

pytestmark = pytest.mark.gpu


def penalties(n):
    return [forge.L1Penalty(n, n, lam=0.3), forge.WaveletL1Penalty(n, n, lam=0.3, seed=5),
            forge.WaveletL1Penalty(n, n, lam=0.3, random_shift=False),
            forge.ExactTVPenalty(n, n, lam=0.3, iterations=50, warm_start=False)]


def test_prox_and_value_on_device_equal_host(lib, rng):
    n = 16
    x = crandn(rng, n, n, dtype=np.complex64)
    gx = lib.to_device(x)
    for host, dev in zip(penalties(n), penalties(n)):
        p = no_transfers(lambda: dev.prox(gx, 0.7))
        assert lib.is_device_array(p) and tuple(p.shape) == (n, n)
        assert rel_err(lib.to_host(p), host.prox(x, 0.7)) < 1e-5, host
        assert dev.penalty(gx) == pytest.approx(host.penalty(x), rel=1e-5), host
    assert rel_err(lib.to_host(gx), x) == 0  # the input is left alone
    W = forge.WaveletL1Penalty(n, n, lam=1.0)
    c = no_transfers(lambda: W.wavelet_forward(gx))
    assert lib.is_device_array(c) and rel_err(lib.to_host(c), W.wavelet_forward(x)) < 1e-6


def problem(rng, n=16):
    G = forge.Gfft(n, n)
    y = (G @ crandn(rng, n, n, dtype=np.complex64) + n * crandn(rng, n, n, dtype=np.complex64)).astype(np.complex64)
    w = rng.uniform(0.5, 1.5, (n, n)).astype(np.float32)
    return G, y, w


@pytest.mark.parametrize("solver", ["fista", "pogm", "admm"])
def test_prox_solvers_on_device_equal_host_without_transfers(lib, rng, solver):
    n = 16
    G, y, w = problem(rng, n)
    G.prepare_device()
    make = lambda: forge.WaveletL1Penalty(n, n, lam=30.0, random_shift=solver != "admm")
    solve = getattr(forge, f"solve_{solver}")
    # With the step given (ADMM: rho) the loop starts without the power iteration's one upload of its start vector.
    if solver == "admm":
        opts = {"rho": float(2 * n * n)}
    else:
        _, info = solve(G, y, weights=w, penalty=make(), niter=1, return_info=True)
        opts = {"lipschitz": info["lipschitz"]}
    x_host = solve(G, y, weights=w, penalty=make(), niter=30, **opts)
    gy, gw = lib.to_device(y), lib.to_device(w)
    x_dev = no_transfers(lambda: solve(G, gy, weights=gw, penalty=make(), niter=30, **opts))
    assert lib.is_device_array(x_dev) and tuple(x_dev.shape) == (n, n)
    assert rel_err(lib.to_host(x_dev), x_host) < 1e-3


def soft_threshold(lib_name, lam):
    """lam ||x||_1's prox written with the device library itself."""
    if lib_name == "cupy":
        import cupy

        return lambda x, t: x * cupy.maximum(0, 1 - t * lam / cupy.maximum(cupy.abs(x), 1e-30))
    import torch

    return lambda x, t: x * torch.clamp(1 - t * lam / torch.clamp(x.abs(), min=1e-30), min=0)


@pytest.mark.parametrize("solver", ["fista", "pogm"])
def test_python_prox_on_device(lib, rng, solver):
    n = 16
    G, y, _ = problem(rng, n)
    G.prepare_device()
    seen = []

    class DeviceSoft:
        def __init__(self):
            self.f = soft_threshold(lib.name, 20.0)

        def prox(self, x, t):
            seen.append(lib.is_device_array(x))
            return self.f(x, t)

    solve = getattr(forge, f"solve_{solver}")
    m = n * n
    gy = lib.to_device(y)
    x_dev = no_transfers(lambda: solve(G, gy, penalty=DeviceSoft(), niter=100, lipschitz=2.04 * m))
    assert seen and all(seen)
    assert lib.is_device_array(x_dev)
    expected = (G.H @ y).astype(np.complex128) / m
    a = np.abs(expected)
    expected = expected * np.maximum(0, 1 - 20.0 / (2 * m) / np.maximum(a, 1e-30))
    assert rel_err(lib.to_host(x_dev), expected) < 1e-4
    x_native = no_transfers(lambda: solve(G, gy, penalty=forge.L1Penalty(n, n, lam=20.0), niter=100,
                                          lipschitz=2.04 * m))
    assert rel_err(lib.to_host(x_dev), lib.to_host(x_native)) < 1e-5


def test_l1_wavelet_recon_on_device(lib, rng):
    n = 16
    G, y, _ = problem(rng, n)
    G.prepare_device()
    x_host = forge.l1_wavelet_recon(G, y, lam=0.01, niter=20)
    x_dev = forge.l1_wavelet_recon(G, lib.to_device(y), lam=0.01, niter=20)
    assert lib.is_device_array(x_dev) and tuple(x_dev.shape) == (n, n)
    assert rel_err(lib.to_host(x_dev), x_host) < 1e-3


def test_mixed_residency_is_refused(lib, rng):
    n = 16
    G, y, w = problem(rng, n)
    with pytest.raises(forge.ResidencyError):
        forge.solve_fista(G, lib.to_device(y), weights=w, penalty=forge.L1Penalty(n, n, lam=1.0), niter=2)
