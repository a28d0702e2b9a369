"""Operators carry ishape/oshape: shaped arrays in give shaped arrays out (batches as leading axes), 1-D arrays
stay 1-D, and arrays in another memory order are copied (geometry) or refused (vectors), never reinterpreted."""

import numpy as np
import pytest

import forge
from reference import crandn, dft_matrix, rel_err


def spiral(n, interleaves, samples, rng):
    r = np.linspace(0, n / 2 * 0.95, samples)
    a = 2 * np.pi * (4 * np.linspace(0, 1, samples)[None, :] + np.arange(interleaves)[:, None] / interleaves)
    a = a + rng.uniform(0, 0.1)
    return r * np.cos(a), r * np.sin(a)  # (interleaves, samples) each


def test_grid_operators_have_image_and_trajectory_shapes(rng):
    kx, ky = spiral(12, 3, 40, rng)
    G = forge.Gnufft(kx, ky, nx=16, ny=12, dtype=np.float64)
    assert G.ishape == (12, 16) and G.oshape == (3, 40)
    assert forge.Gnufft(kx.reshape(-1), ky.reshape(-1), nx=12, ny=12, nz=4).ishape == (4, 12, 12)
    assert forge.Gfft(8, 6, 4).ishape == (4, 6, 8) and forge.Gfft(8, 6).oshape == (6, 8)
    T = forge.ToeplitzNormal(kx, ky, nx=16, ny=12, dtype=np.float64)
    assert T.ishape == T.oshape == (12, 16)
    w = forge.density_compensation(kx, ky, nx=16, ny=12)
    assert w.shape == (3, 40)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shaped_applies_match_the_dense_dft(rng, dtype):
    n, nil, ns = 12, 3, 50
    kx, ky = spiral(n, nil, ns, rng)
    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    E = dft_matrix(kx.reshape(-1), ky.reshape(-1), np.zeros(nil * ns), ix, iy, iz, np.zeros(n * n),
                   np.zeros(nil * ns))
    G = forge.Gnufft(kx, ky, nx=n, ny=n, tolerance=1e-5 if dtype == np.float32 else 1e-10, dtype=dtype)
    cd = G.complex_dtype
    img = crandn(rng, n, n, dtype=cd)
    y = G @ img
    assert y.shape == (nil, ns) and y.dtype == cd
    assert rel_err(y.reshape(-1), E @ img.reshape(-1).astype(complex)) < 1e-4
    x = G.H @ y
    assert x.shape == (n, n)
    assert rel_err(x.reshape(-1), E.conj().T @ y.reshape(-1).astype(complex)) < 1e-4
    assert G.normal(img).shape == (n, n)
    # Flat vectors keep their flat results (what forge took before operators had shapes).
    assert (G @ img.reshape(-1)).shape == (nil * ns,)
    assert (G.H @ y.reshape(-1)).shape == (n * n,)
    assert rel_err(G.H @ y.reshape(-1), x.reshape(-1)) == 0
    assert (G @ img.reshape(1, -1)).shape == (1, nil * ns)


def test_leading_batch_axes(rng):
    n = 8
    kx, ky = spiral(n, 2, 30, rng)
    G = forge.Gnufft(kx, ky, nx=n, ny=n, dtype=np.float64)
    X = crandn(rng, 2, 3, n, n)
    Y = G @ X
    assert Y.shape == (2, 3, 2, 30)
    for i in range(2):
        for j in range(3):
            assert rel_err(Y[i, j], G @ X[i, j]) < 1e-14
    assert (G.H @ Y).shape == (2, 3, n, n)
    assert rel_err((G.H @ Y)[1, 2], G.H @ Y[1, 2]) < 1e-14


def test_gdft_shapes_from_its_geometry(rng):
    n = 8
    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    kx, ky = rng.uniform(-n / 2, n / 2, (2, 4, 10))
    fm = rng.uniform(-100, 100, (n, n))
    t = np.linspace(0, 5e-3, 40).reshape(4, 10)
    G = forge.Gdft(kx, ky, ix=ix.reshape(n, n), iy=iy.reshape(n, n), field_map=fm, t=t, dtype=np.float64)
    assert G.ishape == (n, n) and G.oshape == (4, 10)
    E = dft_matrix(kx.reshape(-1), ky.reshape(-1), np.zeros(40), ix, iy, iz, fm.reshape(-1), t.reshape(-1))
    img = crandn(rng, n, n)
    assert rel_err((G @ img).reshape(-1), E @ img.reshape(-1)) < 1e-12
    G2 = forge.Gdft(kx, ky, ix=ix, iy=iy, field_map=fm, t=t, ishape=(n, n), dtype=np.float64)
    assert G2.ishape == (n, n) and rel_err(G2 @ img, G @ img) == 0
    with pytest.raises(ValueError, match=r"Gdft: ishape \(3, 3\) holds 9 entries"):
        forge.Gdft(kx, ky, ix=ix, iy=iy, ishape=(3, 3))


def test_fortran_ordered_geometry_is_read_by_value(rng):
    n = 8
    kx, ky = spiral(n, 3, 20, rng)
    ix, iy, _ = forge.image_coords(n, n, dtype=np.float64)
    fm = rng.uniform(-100, 100, (n, n))
    G = forge.Gdft(kx, ky, ix=ix.reshape(n, n), iy=iy.reshape(n, n), field_map=fm, dtype=np.float64)
    Gf = forge.Gdft(np.asfortranarray(kx), np.asfortranarray(ky), ix=np.asfortranarray(ix.reshape(n, n)),
                    iy=np.asfortranarray(iy.reshape(n, n)), field_map=np.asfortranarray(fm), dtype=np.float64)
    img = crandn(rng, n, n)
    assert rel_err(Gf @ img, G @ img) == 0


def test_other_memory_orders_of_vectors_are_refused(rng):
    G = forge.Gfft(8, 6, dtype=np.float64)
    img = np.asfortranarray(crandn(rng, 6, 8))
    with pytest.raises(ValueError, match=r"x is not C-contiguous \(it is in Fortran order\).*ascontiguousarray"):
        G @ img
    with pytest.raises(ValueError, match="not C-contiguous"):
        G @ crandn(rng, 6, 16)[:, ::2]
    assert rel_err(G @ np.ascontiguousarray(img), G @ img.copy(order="C")) == 0
    with pytest.raises(ValueError, match=r"x has shape \(8, 6\), expected \(6, 8\) or \(\.\.\., 6, 8\) or flat"):
        G @ crandn(rng, 8, 6)


def test_sense_takes_shaped_maps(rng):
    n, nc = 8, 3
    kx, ky = spiral(n, 2, 30, rng)
    G = forge.Gnufft(kx, ky, nx=n, ny=n, dtype=np.float64)
    maps = crandn(rng, nc, n, n)
    S = forge.SENSE(G, maps)
    Sflat = forge.SENSE(G, maps.reshape(nc, -1))
    assert S.ishape == (n, n) and S.oshape == (nc, 2, 30) and S.n_coils == nc
    img = crandn(rng, n, n)
    y = S @ img
    assert y.shape == (nc, 2, 30)
    for c in range(nc):
        assert rel_err(y[c], G @ (maps[c] * img)) < 1e-14
    assert rel_err(y.reshape(-1), Sflat @ img.reshape(-1)) == 0
    assert (S.H @ y).shape == (n, n)
    msg = r"SENSE: maps has shape \(3, 7, 8\), expected \(n_coils, 64\).*\(n_coils, 8, 8\)"
    with pytest.raises(ValueError, match=msg):
        forge.SENSE(G, maps[:, :7])
    Ts = forge.TimeSegmentation(G, rng.uniform(-50, 50, (n, n)), np.linspace(0, 1e-3, 60).reshape(2, 30), 3)
    assert Ts.ishape == (n, n) and Ts.oshape == (2, 30)


def test_solver_returns_the_image_shape(rng):
    n, nc = 8, 2
    kx, ky = spiral(n, 4, 40, rng)
    S = forge.SENSE(forge.Gnufft(kx, ky, nx=n, ny=n, dtype=np.float64), crandn(rng, nc, n, n))
    y = crandn(rng, *S.oshape)
    R = forge.QuadPenalty(n, n, beta=1e-3, dtype=np.float64)
    x = forge.solve_pwls_pcg(S, y, penalty=R, niter=5)
    assert x.shape == (n, n)
    xf = forge.solve_pwls_pcg(S, y.reshape(-1), penalty=R, niter=5)
    assert xf.shape == (n * n,) and rel_err(x.reshape(-1), xf) < 1e-12
    assert R.gradient(x).shape == (n, n) and rel_err(R.gradient(x).reshape(-1), R.gradient(xf)) == 0
    N = forge.NormalOf(S)
    xn = forge.solve_pwls_pcg_normal(N, S.H @ y, penalty=R, niter=5)
    assert xn.shape == (n, n)


def test_a_penalty_on_another_grid_is_refused(rng):
    G = forge.Gnufft(*rng.uniform(-4, 4, (2, 2, 30)), nx=8, ny=16, dtype=np.float64)
    y = crandn(rng, *G.oshape)
    with pytest.raises(ValueError, match=r"penalty is on a \(8, 16\) grid.*the operator's image is \(16, 8\)"):
        forge.solve_pwls_pcg(G, y, penalty=forge.QuadPenalty(16, 8, beta=1.0, dtype=np.float64))
    x = forge.solve_pwls_pcg(G, y, penalty=forge.QuadPenalty(8, 16, beta=1.0, dtype=np.float64), niter=2)
    assert x.shape == (16, 8)


def test_coil_maps_take_shaped_data_and_units(rng):
    n, nc = 16, 3
    kx, ky = forge.trajectories.radial(n, 24)  # (24, 32)
    S = forge.SENSE(forge.Gnufft(kx, ky, nx=n, ny=n), crandn(rng, nc, n, n, dtype=np.complex64))
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    y = S @ (xx**2 + yy**2 < 0.6).astype(np.complex64)
    flat = forge.coil_maps(y.reshape(nc, -1), kx.reshape(-1), ky.reshape(-1), nx=n, ny=n, calibration=8)
    shaped = forge.coil_maps(y, kx / n, ky / n, nx=n, ny=n, calibration=8, units="normalized")
    assert shaped.shape == (nc, n * n) and rel_err(shaped, flat) < 1e-6
