"""Independent float64 references: the field-corrected DFT written out as a dense matrix."""

import numpy as np


def dft_matrix(kx, ky, kz, ix, iy, iz, field_map, t):
    """E[j, k] = exp(-i (2 pi (kx_j ix_k + ky_j iy_k + kz_j iz_k) + field_map_k t_j)), in float64."""
    f = lambda a: np.asarray(a, dtype=np.float64)
    phase = 2 * np.pi * (np.outer(f(kx), f(ix)) + np.outer(f(ky), f(iy)) + np.outer(f(kz), f(iz)))
    phase += np.outer(f(t), f(field_map))
    return np.exp(-1j * phase)


def rel_err(a, b):
    a = np.asarray(a, dtype=np.complex128)
    b = np.asarray(b, dtype=np.complex128)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def grid_problem(rng, n=12, n1=300, fm_hz=60.0, t_max=8e-3):
    """A 2-D n x n image grid, n1 random samples in [-n/2, n/2), a smooth-ish random field map (rad/s)."""
    import forge

    ix, iy, iz = forge.image_coords(n, n, dtype=np.float64)
    kx = rng.uniform(-n / 2, n / 2, n1)
    ky = rng.uniform(-n / 2, n / 2, n1)
    kz = np.zeros(n1)
    fm = 2 * np.pi * rng.uniform(-fm_hz, fm_hz, n * n)
    t = np.linspace(0, t_max, n1)
    return dict(kx=kx, ky=ky, kz=kz, ix=ix, iy=iy, iz=iz, field_map=fm, t=t)


def crandn(rng, *shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
