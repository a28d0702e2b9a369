"""Gnufft's sample positions from Python: set_points (new samples, any count, same grid and plans) equals a new
operator, keeps the constructor's units, reshapes oshape and pickles with the new samples; the checks of device k
(CuPy arrays, CUDA tensors) that run before any device is touched: host and device k mixed, device k for a
float64 operator or a build without CUDA (test_gpu_nufft_points.py runs device k on a GPU)."""

import pickle

import numpy as np
import pytest

import forge
from reference import crandn, rel_err


def _k(rng, shape, n=16):
    return rng.uniform(-n / 2, n / 2, (2, *shape)).astype(np.float32)


def test_set_points_equals_a_new_operator(rng):
    kx, ky = _k(rng, (3, 90))
    G = forge.Gnufft(kx, ky, nx=16, ny=16)
    x = crandn(rng, 16, 16, dtype=np.complex64)
    for shape in ((250,), (2, 70)):
        kx2, ky2 = _k(rng, shape)
        G.set_points(kx2, ky2)
        H = forge.Gnufft(kx2, ky2, nx=16, ny=16)
        assert G.oshape == shape and G.codomain_size == kx2.size
        assert np.array_equal(G @ x, H @ x)
        y = crandn(rng, *shape, dtype=np.complex64)
        assert np.array_equal(G.H @ y, H.H @ y)
    # pickled with its current samples
    G2 = pickle.loads(pickle.dumps(G))
    assert G2.oshape == G.oshape and np.array_equal(G2 @ x, G @ x)


def test_set_points_units_default_to_the_constructors(rng):
    kx, ky = _k(rng, (200,))
    Gc = forge.Gnufft(kx, ky, nx=16, ny=16)
    Gr = forge.Gnufft(kx * 2 * np.pi / 16, ky * 2 * np.pi / 16, nx=16, ny=16, units="radians")
    x = crandn(rng, 16, 16, dtype=np.complex64)
    assert rel_err(Gr @ x, Gc @ x) < 1e-5
    kx2, ky2 = _k(rng, (150,))
    Gc.set_points(kx2, ky2)
    Gr.set_points(kx2 * 2 * np.pi / 16, ky2 * 2 * np.pi / 16)  # radians, as constructed
    assert rel_err(Gr @ x, Gc @ x) < 1e-5
    Gr.set_points(kx2, ky2, units="cycles")
    assert np.array_equal(Gr @ x, Gc @ x)
    assert rel_err(pickle.loads(pickle.dumps(Gr)) @ x, Gc @ x) == 0


def test_set_points_refusals_keep_the_operator(rng):
    kx, ky = _k(rng, (120,))
    G = forge.Gnufft(kx, ky, nx=16, ny=16)
    x = crandn(rng, 16, 16, dtype=np.complex64)
    y = G @ x
    with pytest.raises(ValueError, match=r"Gnufft.set_points: ky has 119 entries, expected 120 \(the length of kx\)"):
        G.set_points(kx, ky[:-1])
    bad = kx.copy()
    bad[5] = 40.0  # outside [-8, 8]
    with pytest.raises(ValueError, match="Gnufft::set_points"):
        G.set_points(bad, ky)
    with pytest.raises(ValueError, match="units must be"):
        G.set_points(kx, ky, units="degrees")
    assert G.oshape == (120,) and np.array_equal(G @ x, y)


class _FakeCupy:
    """What forge sees of a CuPy array before it reads it (its library): the checks below refuse it first."""

    __module__ = "cupy._core.core"

    def __init__(self, a):
        self.a = a
        self.shape, self.dtype = a.shape, a.dtype


def test_device_k_refusals_name_the_arguments(rng):
    kx, ky = _k(rng, (50,))
    dx, dy = _FakeCupy(kx), _FakeCupy(ky)
    with pytest.raises(forge.ResidencyError, match="Gnufft: kx is on a CUDA device but ky on the host"):
        forge.Gnufft(dx, ky, nx=16, ny=16)
    with pytest.raises(forge.ResidencyError, match="Gnufft: ky and kz are on a CUDA device but kx on the host"):
        forge.Gnufft(kx, dy, _FakeCupy(np.zeros_like(kx)), nx=16, ny=16)
    with pytest.raises(forge.ResidencyError, match="a float64 Gnufft has no GPU plan"):
        forge.Gnufft(dx, dy, nx=16, ny=16, dtype=np.float64)
    G = forge.Gnufft(kx, ky, nx=16, ny=16)
    with pytest.raises(forge.ResidencyError, match="Gnufft.set_points: kx is on a CUDA device but ky on the host"):
        G.set_points(dx, ky)
    if not forge.built_with_cuda():
        with pytest.raises(forge.ResidencyError, match="Gnufft: kx is on a CUDA device but this forge was built "
                                                       "without CUDA"):
            forge.Gnufft(dx, dy, nx=16, ny=16)
        with pytest.raises(forge.ResidencyError, match="built without CUDA"):
            G.set_points(dx, dy)
    assert G.oshape == (50,)
    assert issubclass(forge.ResidencyError, RuntimeError)
