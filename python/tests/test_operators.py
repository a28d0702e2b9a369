"""Operators from Python against independent float64 references (dense DFT matrices, NumPy's FFT) and the
adjoint identity <G x, y> = <x, G^H y>."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, grid_problem, rel_err

DTYPES = [(np.float64, 1e-12), (np.float32, 5e-6)]  # (operator precision, accuracy bound vs float64)


def cdtype(d):
    return np.complex64 if np.dtype(d) == np.float32 else np.complex128


def check_adjoint(G, rng, tol):
    x = crandn(rng, G.domain_size, dtype=G.complex_dtype)
    y = crandn(rng, G.codomain_size, dtype=G.complex_dtype)
    lhs = np.vdot((G @ x).astype(np.complex128), y.astype(np.complex128))
    rhs = np.vdot(x.astype(np.complex128), (G.H @ y).astype(np.complex128))
    assert abs(lhs - rhs) <= tol * abs(lhs)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_gdft_matches_dense_float64_dft(rng, dtype, tol):
    p = grid_problem(rng)
    E = dft_matrix(**p)
    G = forge.Gdft(p["kx"], p["ky"], p["kz"], ix=p["ix"], iy=p["iy"], iz=p["iz"], field_map=p["field_map"],
                   t=p["t"], dtype=dtype)
    assert G.shape == E.shape
    x = crandn(rng, G.domain_size, dtype=cdtype(dtype))
    y = crandn(rng, G.codomain_size, dtype=cdtype(dtype))
    fwd, adj = G @ x, G.H @ y
    assert isinstance(fwd, np.ndarray) and fwd.dtype == cdtype(dtype) and fwd.shape == (G.codomain_size,)
    assert rel_err(fwd, E @ x.astype(np.complex128)) < tol
    assert rel_err(adj, E.conj().T @ y.astype(np.complex128)) < tol
    assert rel_err(G.forward(x), fwd) == 0 and rel_err(G.adjoint(y), adj) == 0
    check_adjoint(G, rng, 10 * tol)


def test_gdft_normal_and_batches(rng):
    p = grid_problem(rng)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=np.float64)
    X = crandn(rng, 3, G.domain_size)
    Y = G @ X
    assert Y.shape == (3, G.codomain_size)
    for b in range(3):
        assert rel_err(Y[b], G @ X[b]) < 1e-14
    assert rel_err(G.normal(X), G.H @ Y) < 1e-13
    assert G.H.H is G and G.H.shape == (G.domain_size, G.codomain_size)


def test_gdft_default_geometry_is_the_centred_dft(rng):
    # Cartesian grid, no field map: the centred DFT fftshift(fft2(ifftshift(x))) with x fastest.
    n = 8
    ix, iy, _ = forge.image_coords(n, n, dtype=np.float64)
    kx, ky = ix * n, iy * n
    G = forge.Gdft(kx, ky, ix=ix, iy=iy, dtype=np.float64)
    img = crandn(rng, n, n)  # (ny, nx): C order is x fastest
    ref = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(img)))
    assert rel_err(G @ img.reshape(-1), ref.reshape(-1)) < 1e-13


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_gfft_is_numpys_centred_fft(rng, dtype, tol):
    nx, ny, nz = 8, 6, 4
    G = forge.Gfft(nx, ny, nz, dtype=dtype)
    img = crandn(rng, nz, ny, nx, dtype=cdtype(dtype))
    ref = np.fft.fftshift(np.fft.fftn(np.fft.ifftshift(img.astype(np.complex128))))
    assert rel_err(G @ img.reshape(-1), ref.reshape(-1)) < tol
    assert rel_err(G.H @ (G @ img.reshape(-1)), nx * ny * nz * img.reshape(-1)) < 10 * tol


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_gdftr2_is_gdft_times_the_sample_sinc(rng, dtype, tol):
    # With a constant field map the gradients vanish and the R2 factor is sinc(kx/nx) sinc(ky/ny) per sample.
    n = 10
    p = grid_problem(rng, n=n, n1=200)
    fm = np.full(n * n, 2 * np.pi * 30.0)
    E = dft_matrix(p["kx"], p["ky"], p["kz"], p["ix"], p["iy"], p["iz"], fm, p["t"])
    B = np.sinc(p["kx"] / n) * np.sinc(p["ky"] / n)
    G = forge.GdftR2(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=fm, t=p["t"], nx=n, ny=n, dtype=dtype)
    x = crandn(rng, n * n, dtype=cdtype(dtype))
    assert rel_err(G @ x, B * (E @ x.astype(np.complex128))) < tol
    check_adjoint(G, rng, 10 * tol)


def test_gnufft_approximates_the_field_free_dft(rng):
    n = 16
    p = grid_problem(rng, n=n, n1=500)
    E = dft_matrix(p["kx"], p["ky"], p["kz"], p["ix"], p["iy"], p["iz"], np.zeros(n * n), p["t"])
    G = forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n, dtype=np.float64)
    x = crandn(rng, n * n)
    assert rel_err(G @ x, E @ x) < 2e-4  # oversampling 2, kernel width 5
    check_adjoint(G, rng, 1e-12)


@pytest.mark.parametrize("dtype,tolerance", [(np.float32, 1e-5), (np.float64, 1e-9)])
def test_gnufft_takes_radial_spokes_that_end_at_plus_half_n(rng, dtype, tolerance):
    # SigPy's and BART's radial spokes run from -N/2 to +N/2 inclusive. The image grid is periodic in k
    # (the pixels sit at multiples of 1/N), so +N/2 is the sample at -N/2: the exact DFT at +N/2 is matched.
    n, spokes, pts = 16, 24, 17
    r = np.linspace(-n / 2, n / 2, pts)
    a = np.pi * np.arange(spokes) / spokes + rng.uniform(0, np.pi / spokes)
    kx = np.concatenate([np.outer(np.cos(a), r).reshape(-1), [n / 2, n / 2, -n / 2]])
    ky = np.concatenate([np.outer(np.sin(a), r).reshape(-1), [0.0, n / 2, n / 2]])
    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    E = dft_matrix(kx, ky, np.zeros_like(kx), ix, iy, iz, np.zeros(n * n), np.zeros_like(kx))
    G = forge.Gnufft(kx, ky, nx=n, ny=n, tolerance=tolerance, dtype=dtype)
    x = crandn(rng, n * n, dtype=cdtype(dtype))
    y = crandn(rng, kx.size, dtype=cdtype(dtype))
    assert rel_err(G @ x, E @ x.astype(np.complex128)) <= tolerance
    assert rel_err(G.H @ y, E.conj().T @ y.astype(np.complex128)) <= tolerance
    # The same trajectory with every +N/2 moved to -N/2 gives the same samples (to rounding).
    Gm = forge.Gnufft(np.where(kx == n / 2, -n / 2, kx), np.where(ky == n / 2, -n / 2, ky), nx=n, ny=n,
                      tolerance=tolerance, dtype=dtype)
    assert rel_err(Gm @ x, G @ x) <= 10 * np.finfo(dtype).eps
    w = forge.density_compensation(kx, ky, nx=n, ny=n, dtype=dtype)
    assert w.shape == kx.shape and np.all(w > 0)


@pytest.mark.parametrize("dtype,tolerance", [(np.float32, 1e-2), (np.float32, 1e-4), (np.float64, 1e-3),
                                             (np.float64, 1e-7)])
def test_gnufft_reaches_a_requested_tolerance(rng, dtype, tolerance):
    n = 16
    p = grid_problem(rng, n=n, n1=600)
    E = dft_matrix(p["kx"], p["ky"], p["kz"], p["ix"], p["iy"], p["iz"], np.zeros(n * n), p["t"])
    G = forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n, tolerance=tolerance, dtype=dtype)
    assert G.tolerance == tolerance and G.oversampling == 2.0 and 2 <= G.kernel_width <= 16
    x = crandn(rng, n * n, dtype=cdtype(dtype))
    y = crandn(rng, 600, dtype=cdtype(dtype))
    assert rel_err(G @ x, E @ x.astype(np.complex128)) <= tolerance
    assert rel_err(G.H @ y, E.conj().T @ y.astype(np.complex128)) <= tolerance
    with pytest.raises(ValueError, match="tolerance"):
        forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n, tolerance=-1.0, dtype=dtype)
    with pytest.raises(Exception, match="tolerance"):
        forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n, tolerance=1e-14, dtype=dtype)


def test_time_segmentation_approximates_gdft(rng):
    n = 16
    p = grid_problem(rng, n=n, n1=500, fm_hz=80.0, t_max=10e-3)
    E = dft_matrix(**p)
    L, rms, mx = forge.TimeSegmentation.choose_segments(p["field_map"], p["t"], 1e-3, dtype=np.float64)
    assert 1 <= L <= 64 and rms <= 1e-3 and mx >= rms
    G = forge.Gnufft(p["kx"], p["ky"], nx=n, ny=n, kernel_width=6, dtype=np.float64)
    T = forge.TimeSegmentation(G, p["field_map"], p["t"], L, interpolator="minmax")
    assert T.segments == L and T.shape == E.shape
    x = crandn(rng, n * n)
    assert rel_err(T @ x, E @ x) < 1e-3  # the requested error
    check_adjoint(T, rng, 1e-12)


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_sense_matches_the_dense_coil_stack(rng, dtype, tol):
    p = grid_problem(rng, n=10, n1=150)
    E = dft_matrix(**p)
    nc = 3
    maps = crandn(rng, nc, 100, dtype=cdtype(dtype))
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], dtype=dtype)
    S = forge.SENSE(G, maps)
    assert S.n_coils == nc and S.shape == (nc * 150, 100)
    A = np.vstack([E * maps[c].astype(np.complex128)[None, :] for c in range(nc)])
    x = crandn(rng, 100, dtype=cdtype(dtype))
    y = crandn(rng, nc * 150, dtype=cdtype(dtype))
    assert rel_err(S @ x, A @ x.astype(np.complex128)) < tol
    assert rel_err(S.H @ y, A.conj().T @ y.astype(np.complex128)) < tol
    check_adjoint(S, rng, 10 * tol)


def test_pcsense_matches_the_dense_shot_stack(rng):
    n, nshots, nsamp, nc = 8, 3, 60, 2
    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    kx = rng.uniform(-n / 2, n / 2, (nshots, nsamp))
    ky = rng.uniform(-n / 2, n / 2, (nshots, nsamp))
    t = np.tile(np.linspace(0, 5e-3, nsamp), (nshots, 1))
    fm = 2 * np.pi * rng.uniform(-40, 40, n * n)
    maps = crandn(rng, nc, n * n)
    phases = rng.uniform(-np.pi, np.pi, (nshots, n * n))
    A = forge.pcSENSE(kx, ky, t=t, ix=ix, iy=iy, field_map=fm, maps=maps, shot_phases=phases, dtype=np.float64)
    assert A.n_shots == nshots and A.n_coils == nc and A.shape == (nc * nshots * nsamp, n * n)
    rows = []
    for c in range(nc):
        for s in range(nshots):
            E = dft_matrix(kx[s], ky[s], np.zeros(nsamp), ix, iy, iz, fm, t[s])
            rows.append(E * (maps[c] * np.exp(-1j * phases[s]))[None, :])
    D = np.vstack(rows)
    x = crandn(rng, n * n)
    assert rel_err(A @ x, D @ x) < 1e-12
    check_adjoint(A, rng, 1e-12)


def test_density_compensation_of_a_full_cartesian_grid_is_uniform():
    n = 16
    ix, iy, _ = forge.image_coords(n, n, dtype=np.float64)
    w = forge.density_compensation(ix * n, iy * n, nx=n, ny=n, dtype=np.float64)
    assert w.shape == (n * n,) and np.all(w > 0)
    # One sample per (cycle/FOV)^2: W = 1 / n2 everywhere.
    assert np.max(np.abs(w * n * n - 1)) < 0.02


def test_jax_host_arrays_come_back_as_jax_arrays(rng):
    import os

    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # host arrays; no GPU memory taken from other libraries
    jnp = pytest.importorskip("jax.numpy")
    G = forge.Gfft(8, 8, dtype=np.float32)
    x = crandn(rng, 64, dtype=np.complex64)
    y = G @ jnp.asarray(x)
    assert type(y).__module__.split(".")[0] in ("jax", "jaxlib")
    assert rel_err(np.asarray(y), G @ x) == 0


def test_torch_cpu_tensors_come_back_as_tensors(rng):
    torch = pytest.importorskip("torch")
    G = forge.Gfft(8, 8, dtype=np.float64)
    x = crandn(rng, 2, 64)
    t = torch.from_numpy(x).requires_grad_(True)
    with pytest.raises(ValueError, match=r"x requires gradients.*forge\.torch"):  # never a silent detach
        G @ t
    y = G @ t.detach()
    assert isinstance(y, torch.Tensor) and y.device.type == "cpu" and y.dtype == torch.complex128
    assert tuple(y.shape) == (2, 64)
    assert rel_err(y.numpy(), G @ x) == 0
    with pytest.raises(TypeError, match=r"x has dtype complex64, expected complex128; convert it with "
                                        r"\.to\(torch\.complex128\)"):
        G @ t.detach().to(torch.complex64)
