"""Map estimation and coil preprocessing from data: coil sensitivities, field maps, noise covariance and
whitening, coil compression."""

import warnings

import numpy as np

from . import _arrays, _native
from ._operator import _zeros_or


# Host arrays in, NumPy arrays out; images and maps in complex64, pixel vectors flattened with x fastest
# (the C order of (nz, ny, nx)); coil data coil-major, shape (n_coils, samples), as the operators take them.

def _host_2d(values, arg, where, complex_dtype=np.complex64):
    a = _arrays.to_numpy(values, arg, where)
    if a.dtype.kind not in "fiuc":
        raise TypeError(f"{where}: {arg} must be numbers, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{where}: {arg} must be a 2-D array, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=complex_dtype)


def coil_maps(data, kx, ky, kz=None, *, nx, ny, nz=1, calibration=None, kernel=5, threshold=0.05,
              max_dropped_energy=1e-3, return_mask=False, return_stats=False, units="cycles"):
    """Coil sensitivity maps from the data themselves (docs/map-estimation.md): low-resolution coil images
    from the central calibration x calibration (cycles/FOV) box of k-space (None: 48 for 2-D non-Cartesian
    data, else 24; a spiral's off-resonance phase needs the finer one) (on a grid of about 2 x
    calibration points per axis where the image grid is finer), then the local eigenvector (Walsh / Inati
    adaptive combine) over kernel^d windows, interpolated onto the image grid and normalised so that
    sum_c |S_c|^2 = 1 inside the object and 0 outside it. The mask keeps every pixel that stands out of the
    background and never drops more than max_dropped_energy of the calibration image's energy (threshold:
    at most this fraction of the largest local amplitude); one that would drop over 1% is replaced by the
    whole grid, with a warning, as are spikes left out of the calibration.

    data: complex (n_coils, n1), or (n_coils, *trajectory shape) e.g. a SENSE operator's oshape; kx, ky, kz:
    n1 entries each, in cycles/FOV (or ``units`` 'normalized' / 'radians', as the operators take them).
    Returns maps of shape (n_coils, nx*ny*nz) (complex64; SENSE takes them as they are), with
    return_mask=True also the boolean object mask (nx*ny*nz,), and with return_stats=True last a dict:
    dropped_energy (share of the calibration image's energy outside the mask), mask_dropped, outliers
    (calibration samples left out as spikes), level (the mask's amplitude level relative to the largest),
    map_grid and calibration_width."""
    where = "coil_maps"
    a = _arrays.to_numpy(data, "data", where)
    y = _host_2d(a.reshape(a.shape[0], -1) if a.ndim > 2 else a, "data", where)
    nc, n1 = y.shape
    d = np.float32
    kx = _arrays.host_real(kx, "kx", where, d, n1, "data.shape[1] (samples per coil)", ndim=None)
    ky = _arrays.host_real(ky, "ky", where, d, n1, "data.shape[1] (samples per coil)", ndim=None)
    kz = _arrays.host_real(_zeros_or(kz, n1, d), "kz", where, d, n1, "data.shape[1] (samples per coil)", ndim=None)
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    kx, ky, kz = _arrays.k_units(kx, ky, kz, units, (nx, ny, nz), where)
    kernel = _arrays.count(kernel, "kernel", where, maximum=_arrays.INT_MAX)
    n2 = nx * ny * nz
    maps = np.empty((nc, n2), np.complex64)
    mask = np.empty(n2, np.uint8)
    calibration = 0.0 if calibration is None else float(calibration)
    stats = _native.coil_maps(y, kx, ky, kz, nx, ny, nz, nc, calibration, kernel, float(threshold),
                              float(max_dropped_energy), maps, mask)
    if stats["mask_dropped"]:
        warnings.warn(f"coil_maps: the mask would drop {100 * stats['dropped_energy']:.1f}% of the calibration "
                      "image's energy (over 1%): the maps cover the whole grid instead", RuntimeWarning, stacklevel=2)
    if stats["outliers"]:
        warnings.warn(f"coil_maps: {stats['outliers']} calibration sample(s) left out as spikes (coil amplitude "
                      "over 1000 times the 99th percentile)", RuntimeWarning, stacklevel=2)
    out = (maps,) + ((mask.astype(bool),) if return_mask else ()) + ((dict(stats),) if return_stats else ())
    return out[0] if len(out) == 1 else out


def coil_maps_from_images(images, *, nx, ny, nz=1, kernel=5, threshold=0.05, return_mask=False):
    """Coil maps from (low-resolution) coil images of shape (n_coils, nx*ny*nz) by the local eigenvector
    method of coil_maps(). Returns maps (n_coils, nx*ny*nz) complex64 (and the mask with return_mask)."""
    where = "coil_maps_from_images"
    imgs = _host_2d(images, "images", where)
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    kernel = _arrays.count(kernel, "kernel", where, maximum=_arrays.INT_MAX)
    maps = np.empty(imgs.shape, np.complex64)
    mask = np.empty(imgs.shape[1], np.uint8)
    _native.coil_maps_from_images(imgs, nx, ny, nz, kernel, float(threshold), maps, mask)
    return (maps, mask.astype(bool)) if return_mask else maps


def estimate_field_map(echoes, times, *, nx, ny, nz=1, beta=1e-2, iterations=200, init_kernel=3,
                       return_cost=False):
    """Field map (rad/s, float32, nx*ny*nz) from multi-echo complex images by penalized likelihood
    (docs/map-estimation.md): echoes of shape (n_echoes, nx*ny*nz), times their echo times in seconds.
    beta weighs the roughness penalty (0: per-pixel estimate); the sign follows forge's exp(-i w t).
    With return_cost=True also the cost after each iteration (it never increases)."""
    where = "estimate_field_map"
    e = _host_2d(echoes, "echoes", where)
    times = [float(v) for v in np.asarray(_arrays.to_numpy(times, "times", where), dtype=float).reshape(-1)]
    nx, ny, nz = _arrays.grid(nx, ny, nz, where)
    iterations = _arrays.count(iterations, "iterations", where, minimum=0, maximum=_arrays.INT_MAX)
    init_kernel = _arrays.count(init_kernel, "init_kernel", where, maximum=_arrays.INT_MAX)
    out = np.empty(e.shape[1], np.float32)
    cost = _native.estimate_field_map(e, times, nx, ny, nz, float(beta), iterations, init_kernel, out)
    return (out, np.asarray(cost)) if return_cost else out


def phase_difference_field_map(echoes, times):
    """The plain phase difference of the first two echoes, angle(y_0 conj(y_1)) / (t_1 - t_0), in rad/s."""
    where = "phase_difference_field_map"
    e = _host_2d(echoes, "echoes", where)
    times = [float(v) for v in np.asarray(_arrays.to_numpy(times, "times", where), dtype=float).reshape(-1)]
    out = np.empty(e.shape[1], np.float32)
    _native.phase_difference_field_map(e, times, out)
    return out


def extend_field_map(field_map, support=None, *, iterations=200):
    """The field map (rad/s) continued smoothly beyond the object (docs/map-estimation.md): kept where
    ``support`` is true, every other pixel filled by a harmonic (Laplace) fill of the support's values (an onion
    peel, then ``iterations`` Gauss-Seidel sweeps), so a time-segmented correction meets no jump or noise where
    there is no signal. field_map: (ny, nx) or (nz, ny, nx), x fastest; support: a boolean array of the same
    size, or None for the map's nonzero pixels (tools that write 0 outside the object). Returns float32 of
    field_map's shape; the values inside the support unchanged."""
    where = "extend_field_map"
    a = _arrays.to_numpy(field_map, "field_map", where)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{where}: field_map must be real numbers, got dtype {a.dtype}")
    if a.ndim not in (2, 3):
        raise ValueError(f"{where}: field_map must be (ny, nx) or (nz, ny, nx), got shape {a.shape}")
    fm = np.ascontiguousarray(a, dtype=np.float32)
    nz, ny, nx = (1,) + fm.shape if fm.ndim == 2 else fm.shape
    if support is None:
        s = np.zeros(0, np.uint8)
    else:
        s = np.ascontiguousarray(_arrays.to_numpy(support, "support", where)).astype(bool).astype(np.uint8)
        if s.size != fm.size:
            raise ValueError(f"{where}: support has {s.size} entries, expected field_map.size = {fm.size}")
    iterations = _arrays.count(iterations, "iterations", where, minimum=0, maximum=_arrays.INT_MAX)
    out = np.empty(fm.shape, np.float32)
    _native.extend_field_map(fm.reshape(-1), s.reshape(-1), support is not None, nx, ny, nz, iterations,
                             out.reshape(-1))
    return out


def _renamed(old, new):
    """The function under its name before the field_map spelling, kept until forge 0.3.0: it warns
    (DeprecationWarning) and calls the new one."""
    def call(*args, **kwargs):
        warnings.warn(f"forge.{old} is deprecated: renamed forge.{new.__name__}", DeprecationWarning, stacklevel=2)
        return new(*args, **kwargs)
    call.__name__ = old
    call.__doc__ = f"Deprecated (until forge 0.3.0): renamed {new.__name__}."
    return call


estimate_fieldmap = _renamed("estimate_fieldmap", estimate_field_map)
phase_difference_fieldmap = _renamed("phase_difference_fieldmap", phase_difference_field_map)
extend_fieldmap = _renamed("extend_fieldmap", extend_field_map)


def noise_covariance(noise):
    """Coil noise covariance (n_coils, n_coils), complex128, from noise-only samples of shape
    (n_coils, n_samples), each coil's mean removed."""
    n = _host_2d(noise, "noise", "noise_covariance")
    out = np.empty((n.shape[0], n.shape[0]), np.complex128)
    _native.noise_covariance(n, out)
    return out


def whitening_matrix(covariance):
    """W = L^-1 for covariance = L L^H: whitened data W @ data have identity noise covariance; apply it
    to coil maps too (W @ maps)."""
    c = _host_2d(covariance, "covariance", "whitening_matrix", np.complex128)
    out = np.empty(c.shape, np.complex128)
    _native.whitening_matrix(c, out)
    return out


def coil_compression_matrix(data, n_virtual, *, return_energy=False):
    """A (n_virtual, n_coils) compressing coil data of shape (n_coils, samples) to n_virtual virtual coils
    (SVD, as BART's cc): use A @ data and A @ maps. With return_energy=True also the fraction of the data's
    energy the virtual coils keep."""
    y = _host_2d(data, "data", "coil_compression_matrix")
    n_virtual = _arrays.count(n_virtual, "n_virtual", "coil_compression_matrix")
    if not 1 <= n_virtual <= y.shape[0]:
        raise ValueError(f"coil_compression_matrix: n_virtual is {n_virtual}, expected 1 to n_coils = {y.shape[0]}")
    out = np.empty((n_virtual, y.shape[0]), np.complex128)
    energy = _native.coil_compression_matrix(y, n_virtual, out)
    return (out, energy) if return_energy else out
