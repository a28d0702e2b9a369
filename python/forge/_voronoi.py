"""Density compensation by Voronoi cells: each sample weighs the area (2-D) or volume (3-D) of the k-space region
closer to it than to any other sample. SciPy's Voronoi tessellation (Qhull) makes the cells."""

import numpy as np

from . import _arrays
from ._operator import _zeros_or


def voronoi_density_compensation(kx, ky, kz=None, *, nx, ny, nz=1, units="cycles"):
    """Voronoi density compensation weights of a trajectory on an nx x ny x nz grid: a NumPy float64 array of the
    trajectory's shape, each sample's cell area (volume) in (cycles/FOV)^d divided by the number of pixels, so
    that a fully sampled Cartesian grid gets 1 / (nx ny nz) everywhere (the scale of density_compensation's
    Pipe-Menon weights: G^H diag(w) G ~ I). Repeated samples (the centre of radial spokes) share their cell. The
    outermost cells are closed by a ring (sphere) of guard points one typical sample spacing beyond the
    trajectory. 3-D when nz > 1 or kz is not all zeros. Needs SciPy."""
    where = "voronoi_density_compensation"
    try:
        from scipy.spatial import ConvexHull, Voronoi
    except ImportError:
        raise ImportError(f"{where} needs SciPy (pip install scipy)") from None
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    kx, shape = _arrays.shaped_real(kx, "kx", where, np.float64)
    n1 = kx.size
    ky = _arrays.host_real(ky, "ky", where, np.float64, n1, "the length of kx", ndim=None)
    kz = _arrays.host_real(_zeros_or(kz, n1, np.float64), "kz", where, np.float64, n1, "the length of kx", ndim=None)
    kx, ky, kz = _arrays.k_units(kx, ky, kz, units, (nx, ny, nz), where)
    three_d = nz > 1 or bool(np.any(kz != 0))
    pts = np.stack([kx, ky, kz] if three_d else [kx, ky], axis=1)
    if not np.all(np.isfinite(pts)):
        raise ValueError(f"{where}: the trajectory has NaN or Inf entries")
    unique, inverse, counts = np.unique(pts, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if len(unique) < pts.shape[1] + 2:
        raise ValueError(f"{where}: {len(unique)} distinct samples are too few for a Voronoi tessellation")
    guard = _guard_points(unique)
    vor = Voronoi(np.concatenate([unique, guard]))
    cell = np.empty(len(unique))
    for i in range(len(unique)):
        region = vor.regions[vor.point_region[i]]
        if -1 in region or not region:
            raise ValueError(f"{where}: the cell of sample {np.flatnonzero(inverse == i)[0]} is not closed")
        cell[i] = ConvexHull(vor.vertices[region]).volume  # area in 2-D
    return (cell[inverse] / counts[inverse] / (nx * ny * nz)).reshape(shape)


def _guard_points(pts):
    """Points one typical spacing outside the samples' extent, as dense as the samples, that close the outer cells."""
    from scipy.spatial import cKDTree

    centre = (pts.max(axis=0) + pts.min(axis=0)) / 2
    spacing = float(np.median(cKDTree(pts).query(pts, k=2)[0][:, 1]))
    spacing = spacing if spacing > 0 else 1.0
    radius = float(np.max(np.linalg.norm(pts - centre, axis=1))) + spacing
    if pts.shape[1] == 2:
        m = max(16, int(np.ceil(2 * np.pi * radius / spacing)))
        a = 2 * np.pi * np.arange(m) / m
        return centre + radius * np.stack([np.cos(a), np.sin(a)], axis=1)
    m = max(64, int(np.ceil(4 * np.pi * radius**2 / spacing**2)))
    i = np.arange(m) + 0.5  # a Fibonacci sphere: nearly even points
    phi, theta = np.arccos(1 - 2 * i / m), np.pi * (1 + 5**0.5) * i
    return centre + radius * np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)
