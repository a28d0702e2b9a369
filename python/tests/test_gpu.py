"""GPU path from Python: CuPy arrays and CUDA PyTorch tensors run on forge's CUDA pipelines, results are
arrays of the same library on the device, equal to the CPU path, and no vector crosses between host and
device (forge.transfer_stats). Every case skips without a CUDA device, forge's CUDA build, or the library."""

import numpy as np
import pytest

import forge
from reference import crandn, grid_problem, rel_err

pytestmark = pytest.mark.gpu


def _library(name):
    if not forge.built_with_cuda():
        pytest.skip("forge was built without CUDA")
    if not forge.cuda_available():
        pytest.skip("no CUDA device")
    if name == "cupy":
        cupy = pytest.importorskip("cupy")
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("CuPy sees no CUDA device")
        except cupy.cuda.runtime.CUDARuntimeError as e:
            pytest.skip(f"CuPy cannot use the device: {e}")
        return cupy
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


class Lib:
    """Moves NumPy arrays to the device and back with CuPy or PyTorch, and says whose an array is."""

    def __init__(self, name):
        self.name = name
        self.mod = _library(name)

    def to_device(self, a):
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.from_numpy(np.ascontiguousarray(a)).to("cuda")

    def to_host(self, a):
        return a.get() if self.name == "cupy" else a.cpu().numpy()

    def is_device_array(self, a):
        if self.name == "cupy":
            return isinstance(a, self.mod.ndarray)
        return isinstance(a, self.mod.Tensor) and a.device.type == "cuda"


@pytest.fixture(params=["cupy", "torch"])
def lib(request):
    return Lib(request.param)


def no_transfers(fn):
    forge.synchronize()
    forge.reset_transfer_stats()
    out = fn()
    forge.synchronize()
    s = forge.transfer_stats()
    assert s["host_to_device_count"] == 0 and s["device_to_host_count"] == 0, s
    return out


def make_gdft(rng, n=16, n1=700, dtype=np.float32):
    p = grid_problem(rng, n=n, n1=n1)
    return forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=dtype), p


def test_gdft_on_device_equals_host_and_stays_there(lib, rng):
    G, _ = make_gdft(rng)
    assert G.gpu_enabled
    G.prepare_device()
    x = crandn(rng, G.domain_size, dtype=np.complex64)
    y = crandn(rng, G.codomain_size, dtype=np.complex64)
    X = crandn(rng, 3, G.domain_size, dtype=np.complex64)
    gx, gy, gX = lib.to_device(x), lib.to_device(y), lib.to_device(X)
    fwd, adj, nrm, bat = no_transfers(lambda: (G @ gx, G.H @ gy, G.normal(gx), G @ gX))
    for a in (fwd, adj, nrm, bat):
        assert lib.is_device_array(a)
    assert tuple(bat.shape) == (3, G.codomain_size)
    assert rel_err(lib.to_host(fwd), G @ x) < 1e-5
    assert rel_err(lib.to_host(adj), G.H @ y) < 1e-5
    assert rel_err(lib.to_host(nrm), G.normal(x)) < 1e-5
    assert rel_err(lib.to_host(bat), G @ X) < 1e-5


def test_gfft_gnufft_and_time_segmentation_on_device(lib, rng):
    n = 16
    p = grid_problem(rng, n=n, n1=600)
    ops = [forge.Gfft(n, n), forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n)]
    ops.append(forge.TimeSegmentation(ops[1], p["field_map"], p["t"], 4))
    for G in ops:
        G.prepare_device()
        x = crandn(rng, G.domain_size, dtype=np.complex64)
        y = crandn(rng, G.codomain_size, dtype=np.complex64)
        gx, gy = lib.to_device(x), lib.to_device(y)
        fwd, adj = no_transfers(lambda: (G @ gx, G.H @ gy))
        assert lib.is_device_array(fwd) and lib.is_device_array(adj)
        assert rel_err(lib.to_host(fwd), G @ x) < 1e-4, G
        assert rel_err(lib.to_host(adj), G.H @ y) < 1e-4, G


def test_sense_pcg_on_device_equals_host_without_transfers(lib, rng):
    n, nc = 16, 4
    G, p = make_gdft(rng, n=n, n1=500)
    S = forge.SENSE(G, crandn(rng, nc, n * n, dtype=np.complex64))
    S.prepare_device()
    y = S @ crandn(rng, n * n, dtype=np.complex64)
    W = rng.uniform(0.5, 1.5, nc * 500).astype(np.float32)
    R = forge.QuadPenalty(n, n, beta=1.0)
    x_host = forge.solve_pwls_pcg(S, y, weights=W, penalty=R, niter=15)
    gy, gW = lib.to_device(y), lib.to_device(W)
    x_dev = no_transfers(lambda: forge.solve_pwls_pcg(S, gy, weights=gW, penalty=R, niter=15))
    assert lib.is_device_array(x_dev)
    # float rounding differs between the GPU and CPU sums and grows over the iterations (the C++ GPU
    # solver test bounds the same comparison by 5e-3)
    assert rel_err(lib.to_host(x_dev), x_host) < 5e-3


def test_nan_in_device_data_is_a_value_error(lib, rng):
    G, _ = make_gdft(rng, n=8, n1=100)
    y = crandn(rng, G.codomain_size, dtype=np.complex64)
    y[11] = np.nan
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: y has a NaN or Inf entry"):
        forge.solve_pwls_pcg(G, lib.to_device(y))
    b = crandn(rng, G.domain_size, dtype=np.complex64)
    b[3] = np.inf
    with pytest.raises(ValueError, match=r"solve_pwls_pcg_normal: b has a NaN or Inf entry"):
        forge.solve_pwls_pcg_normal(forge.NormalOf(G), lib.to_device(b))


def test_penalties_on_device_equal_host(lib, rng):
    n = 12
    x = crandn(rng, n * n, dtype=np.complex64)
    d = crandn(rng, n * n, dtype=np.complex64)
    gx, gd = lib.to_device(x), lib.to_device(d)
    for R in (forge.QuadPenalty(n, n, beta=0.5), forge.TVPenalty(n, n, beta=0.5, delta=0.1)):
        g = no_transfers(lambda: R.gradient(gx))
        assert lib.is_device_array(g)
        assert rel_err(lib.to_host(g), R.gradient(x)) < 1e-5
        assert abs(R.penalty(gx) - R.penalty(x)) < 1e-5 * R.penalty(x)
        assert abs(R.denom(gd, gx) - R.denom(d, x)) < 1e-5 * R.denom(d, x)


def test_mixed_residency_and_float64_device_input_are_refused(lib, rng):
    G, _ = make_gdft(rng, n=8, n1=100)
    y = crandn(rng, G.codomain_size, dtype=np.complex64)
    with pytest.raises(forge.ResidencyError, match="same place"):
        forge.solve_pwls_pcg(G, lib.to_device(y), weights=np.ones(G.codomain_size, np.float32))
    G64, _ = make_gdft(rng, n=8, n1=100, dtype=np.float64)
    with pytest.raises((forge.ResidencyError, forge.CudaError), match="float"):
        G64 @ lib.to_device(crandn(rng, G64.domain_size))


def test_torch_specifics(rng):
    torch = _library("torch")
    G, _ = make_gdft(rng, n=8, n1=120)
    x = crandn(rng, G.domain_size, dtype=np.complex64)
    t = torch.from_numpy(x).to("cuda").requires_grad_(True)
    with pytest.raises(ValueError, match=r"x requires gradients.*forge\.torch"):  # never a silent detach
        G @ t
    out = G @ t.detach()  # a view, no copy
    assert out.device.type == "cuda" and out.dtype == torch.complex64
    assert rel_err(out.cpu().numpy(), G @ x) < 1e-5
    # A non-default stream: forge orders its work after the stream's and finishes before returning.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.from_numpy(x).to("cuda") * 2
        b = G @ a
        c = b * 0.5
    s.synchronize()
    assert rel_err(c.cpu().numpy(), G @ x) < 1e-5


def test_cupy_specifics(rng):
    cupy = _library("cupy")
    G, _ = make_gdft(rng, n=8, n1=120)
    x = crandn(rng, G.domain_size, dtype=np.complex64)
    with cupy.cuda.Stream(non_blocking=True) as s:
        a = cupy.asarray(x) * 2
        b = G @ a
        c = b * 0.5
    s.synchronize()
    assert isinstance(c, cupy.ndarray)
    assert rel_err(c.get(), G @ x) < 1e-5
    with pytest.raises(ValueError, match="not C-contiguous.*cupy.ascontiguousarray"):
        G @ cupy.zeros(2 * G.domain_size, cupy.complex64)[::2]


def test_toeplitz_normal_and_its_solver_on_device_without_transfers(lib, rng):
    n, n1, nc = 16, 900, 3
    G, p = make_gdft(rng, n=n, n1=n1)
    N = forge.ToeplitzNormal(p["kx"], p["ky"], nx=n, ny=n, field_map=p["field_map"], t=p["t"], segments=6)
    assert N.kernels_built_on_gpu
    x = crandn(rng, n * n, dtype=np.complex64)
    N.prepare_device()
    gx = lib.to_device(x)
    nx_dev = no_transfers(lambda: N @ gx)
    assert lib.is_device_array(nx_dev)
    assert rel_err(lib.to_host(nx_dev), N @ x) < 1e-4
    S = forge.SENSE(forge.with_normal(G, N), crandn(rng, nc, n * n, dtype=np.complex64))
    S.prepare_device()
    b = S.H @ (S @ x)
    R = forge.QuadPenalty(n, n, beta=1.0)
    A = forge.NormalOf(S)
    x_host = forge.solve_pwls_pcg_normal(A, b, penalty=R, niter=10)
    gb = lib.to_device(b)
    x_dev = no_transfers(lambda: forge.solve_pwls_pcg_normal(A, gb, penalty=R, niter=10))
    assert lib.is_device_array(x_dev)
    assert rel_err(lib.to_host(x_dev), x_host) < 5e-3


def test_gdft_on_two_parts_equals_one_gpu(lib, rng):
    # {0, 0}: two parts on one GPU exercise the split and gather of set_devices on any machine
    G, p = make_gdft(rng, n=16, n1=701)
    M = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"])
    M.set_devices([0, 0])
    assert M.devices == [0, 0]
    x = lib.to_device(crandn(rng, G.domain_size, dtype=np.complex64))
    y = lib.to_device(crandn(rng, G.codomain_size, dtype=np.complex64))
    assert rel_err(lib.to_host(M @ x), lib.to_host(G @ x)) <= 1e-6
    assert rel_err(lib.to_host(M.H @ y), lib.to_host(G.H @ y)) <= 1e-6
