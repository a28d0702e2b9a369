"""k-space units on the trajectory-taking constructors, forge.trajectories, and Voronoi density compensation
against the analytic density of radial spokes and of a Cartesian grid."""

import math

import numpy as np
import pytest

import forge
from forge import trajectories as traj
from reference import crandn, dft_matrix, rel_err


@pytest.mark.parametrize("units,scale", [("normalized", lambda n: 1 / n), ("radians", lambda n: 2 * np.pi / n)])
def test_units_give_the_same_operators(rng, units, scale):
    nx, ny = 12, 10
    kx, ky = rng.uniform(-ny / 2, ny / 2, (2, 3, 50))
    x = crandn(rng, ny, nx)
    G = forge.Gnufft(kx, ky, nx=nx, ny=ny, dtype=np.float64)
    Gu = forge.Gnufft(kx * scale(nx), ky * scale(ny), nx=nx, ny=ny, units=units, dtype=np.float64)
    assert rel_err(Gu @ x, G @ x) < 1e-12
    ix, iy, iz = forge.image_coords(nx, ny, dtype=np.float64)
    E = dft_matrix(kx.reshape(-1), ky.reshape(-1), np.zeros(150), ix, iy, iz, np.zeros(nx * ny), np.zeros(150))
    Gd = forge.Gdft(kx * scale(nx), ky * scale(ny), ix=ix, iy=iy, ishape=(ny, nx), units=units, dtype=np.float64)
    assert rel_err((Gd @ x).reshape(-1), E @ x.reshape(-1)) < 1e-12
    T = forge.ToeplitzNormal(kx * scale(nx), ky * scale(ny), nx=nx, ny=ny, units=units, dtype=np.float64)
    assert rel_err(T @ x, Gd.H @ (Gd @ x)) < 1e-10
    w = forge.density_compensation(kx * scale(nx), ky * scale(ny), nx=nx, ny=ny, units=units)
    assert rel_err(w, forge.density_compensation(kx, ky, nx=nx, ny=ny)) < 1e-6
    with pytest.raises(ValueError, match=r"Gdft: units='normalized' needs the image grid"):
        forge.Gdft(kx, ky, ix=ix, iy=iy, units="normalized")
    with pytest.raises(ValueError, match="units must be 'cycles', 'normalized' or 'radians', got 'hz'"):
        forge.Gnufft(kx, ky, nx=nx, ny=ny, units="hz")


def test_radial_and_golden_angle_spokes():
    kx, ky = traj.radial(16, 8)
    assert kx.shape == (8, 32) and np.allclose(np.hypot(kx, ky)[:, 16], 0)
    assert np.isclose(kx.min(), -8) and kx.max() < 8 + 1e-12
    angles = np.arctan2(ky[:, -1], kx[:, -1]) % np.pi
    assert np.allclose(np.sort(angles), np.pi * np.arange(8) / 8)
    gx, gy = traj.golden_angle(16, 5, 10)
    assert np.allclose(np.arctan2(gy[:, -1], gx[:, -1]) % (2 * np.pi), (np.arange(5) * traj.GOLDEN_ANGLE) % (2 * np.pi))
    nx_, ny_ = traj.radial(16, 8, units="normalized")
    assert np.allclose(nx_, kx / 16) and np.all(np.abs(nx_) <= 0.5)
    rx, _ = traj.radial(16, 8, units="radians")
    assert np.allclose(rx, kx * 2 * np.pi / 16)


def test_spiral_covers_k_space_at_nyquist():
    n, nil = 32, 4
    kx, ky = traj.spiral(n, nil)
    turns = math.ceil(n / (2 * nil))
    assert kx.shape == (nil, math.ceil(math.pi * n * turns))
    r = np.hypot(kx, ky)
    assert r.max() <= n / 2 and np.isclose(r.max(), n / 2, rtol=1e-6)
    # Every point of the disk is within about a cycle/FOV of a sample (field of view covered without aliasing).
    cKDTree = pytest.importorskip("scipy.spatial").cKDTree

    g = np.stack(np.meshgrid(np.linspace(-n / 2.2, n / 2.2, 60), np.linspace(-n / 2.2, n / 2.2, 60)), -1).reshape(-1, 2)
    g = g[np.hypot(g[:, 0], g[:, 1]) < n / 2.2]
    assert cKDTree(np.stack([kx.reshape(-1), ky.reshape(-1)], 1)).query(g)[0].max() < 0.75
    forge.Gnufft(kx, ky, nx=n, ny=n)  # within the grid's range


def test_stack_of_and_sample_times():
    kx, ky = traj.radial(8, 4)
    sx, sy, sz = traj.stack_of(kx, ky, 6)
    assert sx.shape == sy.shape == sz.shape == (6, 4, 16)
    assert np.allclose(sz[:, 0, 0], np.arange(6) - 3) and np.allclose(sx[2], kx)
    G = forge.Gnufft(sx, sy, sz, nx=8, ny=8, nz=6)
    assert G.ishape == (6, 8, 8) and G.oshape == (6, 4, 16)
    t = traj.sample_times(sx.shape, 4e-6, echo_time=1e-3)
    assert t.shape == sx.shape and np.isclose(t[3, 2, 5], 1e-3 + 5 * 4e-6)


def test_voronoi_matches_the_radial_ramp_and_the_cartesian_grid():
    pytest.importorskip("scipy")
    n, spokes, samples = 32, 64, 64
    kx, ky = traj.radial(n, spokes, samples)
    w = forge.voronoi_density_compensation(kx, ky, nx=n, ny=n)
    assert w.shape == kx.shape
    r = np.hypot(kx, ky)
    dr = n / samples
    ring = (r > 0.25 * n / 2) & (r < 0.8 * n / 2)
    analytic = np.pi * r * dr / spokes / (n * n)  # the circle at r shared by 2 * spokes samples, times dr
    assert np.max(np.abs(w[ring] / analytic[ring] - 1)) < 0.02
    centre = r == 0
    assert np.allclose(w[centre], w[centre][0]) and w[centre].sum() < 2 * analytic[ring].min()
    # A full Cartesian grid: every inner cell is one pixel of k-space.
    gx, gy = np.meshgrid(np.arange(-8, 8.0), np.arange(-8, 8.0))
    wc = forge.voronoi_density_compensation(gx, gy, nx=16, ny=16)
    inner = (np.abs(gx) < 7) & (np.abs(gy) < 7)
    assert np.allclose(wc[inner], 1 / 256, rtol=1e-9)
    # 3-D: a stack of full Cartesian planes.
    sx, sy, sz = traj.stack_of(gx, gy, 6)
    w3 = forge.voronoi_density_compensation(sx, sy, sz, nx=16, ny=16, nz=6)
    inner3 = (np.abs(sx) < 7) & (np.abs(sy) < 7) & (np.abs(sz) < 2)
    assert np.allclose(w3[inner3], 1 / (256 * 6), rtol=1e-9)
