"""Gnufft with its sample positions already on the device (CuPy arrays, CUDA tensors): the constructor and
set_points hand them to the GPU plan, which checks and sorts them there: nothing comes back to the host and k is not
uploaded (forge.transfer_stats: only the plan's constants, a few hundred bytes); the operator equals the one made from host k (forward and adjoint), in every unit; a
per-frame loop of set_points on device k. Skips without a CUDA device, forge's CUDA build or the library."""

import pickle

import numpy as np
import pytest

import forge
from reference import crandn, rel_err
from test_gpu import Lib


def no_k_upload(fn, k_bytes):
    """fn() copies nothing to the host, and to the device less than one axis of k (k_bytes): the plan's constants
    (its deapodization factors and sizes, a few hundred bytes independent of the sample count) but not k."""
    forge.synchronize()
    forge.reset_transfer_stats()
    out = fn()
    forge.synchronize()
    s = forge.transfer_stats()
    assert s["device_to_host_count"] == 0 and s["host_to_device_bytes"] < k_bytes, s
    return out

pytestmark = pytest.mark.gpu

N = 32


@pytest.fixture(params=["cupy", "torch"])
def lib(request):
    return Lib(request.param)


def _k(rng, shape, n=N):
    return rng.uniform(-n / 2, n / 2, (3, *shape)).astype(np.float32)


def _same_operator(lib, rng, A, B):
    """A and B give the same forward and adjoint on device vectors (to float rounding) and on host ones."""
    x = crandn(rng, *A.ishape, dtype=np.complex64)
    y = crandn(rng, *A.oshape, dtype=np.complex64)
    assert A.oshape == B.oshape
    fa, fb = lib.to_host(A @ lib.to_device(x)), lib.to_host(B @ lib.to_device(x))
    aa, ab = lib.to_host(A.H @ lib.to_device(y)), lib.to_host(B.H @ lib.to_device(y))
    assert rel_err(fa, fb) < 1e-6 and rel_err(aa, ab) < 1e-6
    assert rel_err(A @ x, B @ x) < 1e-5 and rel_err(A.H @ y, B.H @ y) < 1e-5


def test_device_k_constructs_without_copies_and_equals_host_k(lib, rng):
    kx, ky, kz = _k(rng, (4, 300))
    H = forge.Gnufft(kx, ky, nx=N, ny=N)
    dx, dy = lib.to_device(kx), lib.to_device(ky)
    G = no_k_upload(lambda: forge.Gnufft(dx, dy, nx=N, ny=N), kx.nbytes)
    assert G.gpu_enabled and G.oshape == (4, 300)
    _same_operator(lib, rng, G, H)
    # 3-D, kz given on the device; tolerance instead of the explicit kernel
    kz3 = kz / 4
    H3 = forge.Gnufft(kx, ky, kz3, nx=N, ny=N, nz=8, tolerance=1e-4)
    dz = lib.to_device(kz3)
    G3 = no_k_upload(lambda: forge.Gnufft(dx, dy, dz, nx=N, ny=N, nz=8, tolerance=1e-4), kx.nbytes)
    assert G3.kernel_width == H3.kernel_width
    _same_operator(lib, rng, G3, H3)
    # pickled with its samples brought to the host
    P = pickle.loads(pickle.dumps(G))
    _same_operator(lib, rng, P, H)


def test_device_k_units_are_converted_on_the_device(lib, rng):
    kx, ky, _ = _k(rng, (500,))
    H = forge.Gnufft(kx, ky, nx=N, ny=N)
    for units, f in (("normalized", 1 / N), ("radians", 2 * np.pi / N)):
        hx, hy = (kx * f).astype(np.float32), (ky * f).astype(np.float32)
        Hu = forge.Gnufft(hx, hy, nx=N, ny=N, units=units)
        dx, dy = lib.to_device(hx), lib.to_device(hy)
        G = no_k_upload(lambda: forge.Gnufft(dx, dy, nx=N, ny=N, units=units), kx.nbytes)
        _same_operator(lib, rng, G, Hu)
        G.set_points(lib.to_device(kx), lib.to_device(ky), units="cycles")
        _same_operator(lib, rng, G, H)
        no_k_upload(lambda: G.set_points(dx, dy), kx.nbytes)  # the constructor's units
        _same_operator(lib, rng, G, Hu)
    # device k of another real dtype and layout: converted on the device
    d64 = lib.to_device(np.ascontiguousarray(np.stack([kx, ky]).astype(np.float64)))
    G = forge.Gnufft(d64[0], d64[1], nx=N, ny=N)
    _same_operator(lib, rng, G, H)


def test_set_points_per_frame_on_device_k(lib, rng):
    frames = [_k(rng, (3, 200 + 40 * f)) for f in range(4)]
    G = forge.Gnufft(lib.to_device(frames[0][0]), lib.to_device(frames[0][1]), nx=N, ny=N)
    dev = [(lib.to_device(k[0]), lib.to_device(k[1])) for k in frames]
    x = lib.to_device(crandn(rng, N, N, dtype=np.complex64))
    outs = []

    def loop():
        for dx, dy in dev:
            G.set_points(dx, dy)
            y = G @ x
            outs.append((G.oshape, y, G.H @ y))

    no_k_upload(loop, frames[0][0].nbytes)
    xh = lib.to_host(x)
    for k, (shape, y, z) in zip(frames, outs):
        H = forge.Gnufft(k[0], k[1], nx=N, ny=N)
        assert shape == k[0].shape
        yh = H @ xh
        assert rel_err(lib.to_host(y), yh) < 1e-5
        assert rel_err(lib.to_host(z), H.H @ yh) < 1e-5


def test_device_k_refusals(lib, rng):
    kx, ky, _ = _k(rng, (100,))
    dx, dy = lib.to_device(kx), lib.to_device(ky)
    with pytest.raises(forge.ResidencyError, match="Gnufft: kx is on a CUDA device but ky on the host"):
        forge.Gnufft(dx, ky, nx=N, ny=N)
    with pytest.raises(forge.ResidencyError, match="a float64 Gnufft has no GPU plan"):
        forge.Gnufft(dx, dy, nx=N, ny=N, dtype=np.float64)
    G = forge.Gnufft(kx, ky, nx=N, ny=N)
    with pytest.raises(ValueError, match=r"Gnufft.set_points: ky has 99 entries, expected 100"):
        G.set_points(dx, dy[:99])
    bad = kx.copy()
    bad[7] = 3 * N
    with pytest.raises(ValueError, match="Gnufft::set_points"):  # the host's message, found on the device
        G.set_points(lib.to_device(bad), dy)
    x = crandn(rng, N, N, dtype=np.complex64)
    assert G.oshape == (100,) and rel_err(G @ x, forge.Gnufft(kx, ky, nx=N, ny=N) @ x) == 0


def test_cupy_k_on_a_non_default_stream(rng):
    cupy = Lib("cupy").mod
    kx, ky, _ = _k(rng, (400,))
    H = forge.Gnufft(kx, ky, nx=N, ny=N)
    with cupy.cuda.Stream(non_blocking=True):
        dx, dy = cupy.asarray(kx) * 1, cupy.asarray(ky) * 1  # written on that stream
        G = forge.Gnufft(dx, dy, nx=N, ny=N)
    _same_operator(Lib("cupy"), rng, G, H)
