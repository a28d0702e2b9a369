"""The Toeplitz normal operator against G^H W G of the exact DFT (dense float64 matrix), inside SENSE and in
the normal-equations solver; the map estimators against synthetic maps they must recover."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, rel_err


def grid_trajectory(rng, n, n1):
    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    kx = rng.uniform(-n / 2, n / 2, n1)
    ky = rng.uniform(-n / 2, n / 2, n1)
    return kx, ky, ix, iy, iz


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-11), (np.float32, 2e-5)])
def test_field_free_toeplitz_equals_exact_normal(rng, dtype, tol):
    n, n1 = 10, 400
    kx, ky, ix, iy, iz = grid_trajectory(rng, n, n1)
    w = rng.uniform(0.2, 2.0, n1)
    E = dft_matrix(kx, ky, np.zeros(n1), ix, iy, iz, np.zeros(n * n), np.zeros(n1))
    N = forge.ToeplitzNormal(kx, ky, nx=n, ny=n, weights=w, dtype=dtype)
    assert N.shape == (n * n, n * n) and N.segments == 0 and N.kernel_count == 1 and N.grouped_axis is None
    cd = np.complex64 if dtype == np.float32 else np.complex128
    x = crandn(rng, 2, n * n, dtype=cd)
    ref = (E.conj().T @ (w[:, None] * (E @ x.T.astype(np.complex128)))).T
    assert rel_err(N @ x, ref) < tol
    assert rel_err(N.H @ x, ref) < tol and rel_err(N.normal(x[0]), N @ (N @ x[0])) < 10 * tol


def test_field_corrected_toeplitz_meets_its_error_target(rng):
    n, n1 = 12, 600
    kx, ky, ix, iy, iz = grid_trajectory(rng, n, n1)
    t = np.linspace(0, 10e-3, n1)
    fm = 2 * np.pi * 40 * np.sin(np.linspace(0, 3, n * n))  # +-40 Hz
    E = dft_matrix(kx, ky, np.zeros(n1), ix, iy, iz, fm, t)
    target = 1e-3
    N = forge.ToeplitzNormal(kx, ky, nx=n, ny=n, field_map=fm, t=t, target_error=target, dtype=np.float64)
    assert N.segments == forge.ToeplitzNormal.choose_segments(fm, t, target, dtype=np.float64) >= 1
    assert N.kernel_count >= 1 and N.kernel_bytes > 0 and N.build_seconds >= 0
    x = crandn(rng, n * n)
    err = rel_err(N @ x, E.conj().T @ (E @ x))
    assert err < 3 * target
    # more segments, smaller error
    N8 = forge.ToeplitzNormal(kx, ky, nx=n, ny=n, field_map=fm, t=t, segments=N.segments + 4, dtype=np.float64)
    assert rel_err(N8 @ x, E.conj().T @ (E @ x)) < err


def test_sense_with_toeplitz_normal_and_normal_equations_solver(rng):
    n, n1, nc = 10, 500, 3
    kx, ky, ix, iy, iz = grid_trajectory(rng, n, n1)
    G = forge.Gdft(kx, ky, ix=ix, iy=iy, dtype=np.float64)
    T = forge.ToeplitzNormal(kx, ky, nx=n, ny=n, dtype=np.float64)
    Gt = forge.with_normal(G, T)
    maps = crandn(rng, nc, n * n)
    S, St = forge.SENSE(G, maps), forge.SENSE(Gt, maps)
    x = crandn(rng, n * n)
    assert rel_err(St @ x, S @ x) < 1e-14  # forward and adjoint stay exact
    assert rel_err(St.normal(x), S.normal(x)) < 1e-11
    y = S @ crandn(rng, n * n) + 0.01 * crandn(rng, nc * n1)
    R = forge.QuadPenalty(n, n, beta=0.5, dtype=np.float64)
    x_ref = forge.solve_pwls_pcg(S, y, penalty=R, niter=8)
    x_toe, info = forge.solve_pwls_pcg_normal(forge.NormalOf(St), St.H @ y, penalty=R, niter=8, return_info=True)
    assert info["iterations"] == 8
    assert rel_err(x_toe, x_ref) < 1e-8


def test_toeplitz_argument_errors(rng):
    kx, ky, *_ = grid_trajectory(rng, 8, 50)
    with pytest.raises(ValueError, match="weights has 49 entries"):
        forge.ToeplitzNormal(kx, ky, nx=8, ny=8, weights=np.ones(49))
    with pytest.raises(ValueError, match="field_map has 10 entries, expected 64"):
        forge.ToeplitzNormal(kx, ky, nx=8, ny=8, field_map=np.zeros(10), t=np.zeros(50))
    with pytest.raises(ValueError, match="needs the sample times t"):
        forge.ToeplitzNormal(kx, ky, nx=8, ny=8, field_map=np.zeros(64))
    with pytest.raises(ValueError, match="build must be"):
        forge.ToeplitzNormal(kx, ky, nx=8, ny=8, build="gpu")
    G = forge.Gdft(kx, ky, ix=np.zeros(64), iy=np.zeros(64))
    with pytest.raises(ValueError, match="must be square"):
        forge.solve_pwls_pcg_normal(G, np.zeros(64, np.complex64))
    T = forge.ToeplitzNormal(kx, ky, nx=4, ny=4)
    with pytest.raises(ValueError, match="expected 64 -> 64"):
        forge.with_normal(G, T)


def smooth_maps(n, nc):
    """Smooth complex coil maps on an n x n grid with sum_c |S_c|^2 = 1 (x fastest)."""
    y, x = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    S = []
    for c in range(nc):
        a = 2 * np.pi * c / nc
        S.append(np.exp(-((x - 0.8 * np.cos(a)) ** 2 + (y - 0.8 * np.sin(a)) ** 2)) * np.exp(1j * (x * np.sin(a) + y)))
    S = np.array([s.reshape(-1) for s in S])
    return S / np.sqrt(np.sum(np.abs(S) ** 2, axis=0))


def test_coil_maps_recover_smooth_maps_of_a_real_object(rng):
    n, nc = 32, 4
    S = smooth_maps(n, nc)
    y, x = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    obj = ((x**2 / 0.7 + y**2 / 0.5) < 1).astype(float).reshape(-1) * (1 + 0.3 * x.reshape(-1))
    maps, mask = forge.coil_maps_from_images(S * obj, nx=n, ny=n, return_mask=True)
    assert maps.shape == (nc, n * n) and maps.dtype == np.complex64 and mask.dtype == bool
    inner = mask & (obj > 0)
    assert inner.sum() > 0.3 * (obj > 0).sum()
    assert rel_err(maps[:, inner], S[:, inner]) < 0.05
    assert np.all(maps[:, ~mask] == 0)

    # From k-space data: a fully sampled Cartesian grid of the same object, through the exact DFT.
    ix, iy, _ = forge.image_coords(n, n, dtype=np.float64)
    G = forge.Gdft(ix * n, iy * n, ix=ix, iy=iy, dtype=np.float64)
    data = np.array([G @ (S[c] * obj) for c in range(nc)])
    maps_k = forge.coil_maps(data, ix * n, iy * n, nx=n, ny=n, calibration=12)
    inner &= np.abs(maps_k[0]) > 0
    assert rel_err(maps_k[:, inner], S[:, inner]) < 0.1
    with pytest.raises(ValueError, match="kx has 10 entries"):
        forge.coil_maps(data, np.zeros(10), np.zeros(10), nx=n, ny=n)


def test_fieldmap_estimate_recovers_a_smooth_map(rng):
    n = 24
    y, x = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    fm = (2 * np.pi * 50 * (0.5 * x + 0.3 * y**2)).reshape(-1)  # rad/s
    mag = 1 + 0.2 * np.cos(3 * x).reshape(-1)
    times = [2e-3, 3.5e-3, 5e-3]
    # forward model exp(-i w t): the phase falls with TE for positive w
    echoes = np.array([mag * np.exp(-1j * fm * te) for te in times])
    echoes += 0.01 * crandn(rng, *echoes.shape)
    est, cost = forge.estimate_field_map(echoes, times, nx=n, ny=n, beta=1e-3, return_cost=True)
    assert est.shape == (n * n,) and est.dtype == np.float32
    rms = lambda v: np.sqrt(np.mean((v - fm) ** 2))
    assert rms(est) < 0.03 * np.abs(fm).max()
    assert np.all(np.diff(cost) <= 1e-9 * abs(cost[0]))
    pd = forge.phase_difference_field_map(echoes, times)
    # the plain two-echo difference carries the noise of two echoes only, unpenalised
    assert rms(est) < rms(pd) < 0.06 * np.abs(fm).max()
    with pytest.raises(ValueError):
        forge.estimate_field_map(echoes[:1], times[:1], nx=n, ny=n)


def test_whitening_and_coil_compression(rng):
    nc, ns = 6, 20000
    A = crandn(rng, nc, nc) + 3 * np.eye(nc)
    noise = A @ crandn(rng, nc, ns) / np.sqrt(2)
    C = forge.noise_covariance(noise)
    assert C.shape == (nc, nc) and np.allclose(C, C.conj().T)
    ref = np.cov(noise)  # rows are variables: the same estimator (mean removed, n - 1)
    assert rel_err(C, ref) < 1e-5
    W = forge.whitening_matrix(C)
    assert rel_err(W @ C @ W.conj().T, np.eye(nc)) < 1e-10
    # data of rank 2 in 6 coils: two virtual coils keep all the energy
    data = crandn(rng, nc, 2) @ crandn(rng, 2, 500)
    Acc, energy = forge.coil_compression_matrix(data, 2, return_energy=True)
    assert Acc.shape == (2, nc) and energy > 1 - 1e-6
    assert rel_err(Acc @ Acc.conj().T, np.eye(2)) < 1e-10
    assert rel_err(Acc.conj().T @ (Acc @ data), data) < 1e-5  # nothing lost
    with pytest.raises(ValueError, match="n_virtual is 7"):
        forge.coil_compression_matrix(data, 7)
    with pytest.raises(ValueError, match="not positive definite"):
        forge.whitening_matrix(np.zeros((2, 2)) + np.eye(2) * [1, 0])


def test_extend_fieldmap_keeps_the_object_and_fills_smoothly():
    ny, nx = 40, 48
    yy, xx = np.mgrid[0:ny, 0:nx]
    inside = ((xx - 22) / 16) ** 2 + ((yy - 19) / 13) ** 2 < 1
    truth = (2 * np.pi * (100 + 3 * (xx - 22) - 2 * (yy - 19))).astype(np.float32)
    fm = np.where(inside, truth, 0).astype(np.float32)
    e = forge.extend_field_map(fm)
    assert e.shape == fm.shape and e.dtype == np.float32
    assert np.array_equal(e[inside], fm[inside])
    assert e.min() >= fm[inside].min() and e.max() <= fm[inside].max()
    steps = max(np.abs(np.diff(e, axis=0)).max(), np.abs(np.diff(e, axis=1)).max())
    assert steps <= 1.5 * 2 * np.pi * 3           # no jump at the edge (the zero-filled map jumps by 2 pi 60 or more)
    noisy = np.where(inside, fm, np.random.default_rng(1).normal(0, 3000, fm.shape)).astype(np.float32)
    assert np.array_equal(forge.extend_field_map(noisy, inside), e)   # what lies outside the support is ignored
    with pytest.raises(ValueError, match="support has 3 entries"):
        forge.extend_field_map(fm, np.ones(3, bool))
    with pytest.raises(ValueError, match="support is empty"):
        forge.extend_field_map(fm, np.zeros(fm.shape, bool))


def test_field_map_functions_under_their_old_names_warn_and_give_the_same_result():
    rng = np.random.default_rng()
    ny, nx = 12, 16
    echoes = (rng.standard_normal((2, nx * ny)) + 1j * rng.standard_normal((2, nx * ny))).astype(np.complex64)
    times = [0.0, 2.5e-3]
    fm = np.where(rng.random((ny, nx)) < 0.7, rng.standard_normal((ny, nx)), 0).astype(np.float32)
    pairs = [(forge.phase_difference_fieldmap, forge.phase_difference_field_map, (echoes, times), {}),
             (forge.estimate_fieldmap, forge.estimate_field_map, (echoes, times), dict(nx=nx, ny=ny, iterations=5)),
             (forge.extend_fieldmap, forge.extend_field_map, (fm,), dict(iterations=5))]
    for old, new, args, kwargs in pairs:
        with pytest.warns(DeprecationWarning, match=f"forge.{old.__name__} is deprecated: renamed forge.{new.__name__}"):
            got = old(*args, **kwargs)
        assert np.array_equal(got, new(*args, **kwargs))
