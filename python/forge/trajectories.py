"""Common non-Cartesian trajectories as arrays of shape (interleaves or spokes, samples), ready for the operators:
radial (uniform or golden-angle spokes), spirals (Archimedean, interleaved), stacks of a 2-D trajectory along z,
and the sample times of a readout. k-space in cycles per field of view by default (forge's unit; ``units=
'normalized'`` gives cycles/pixel in [-0.5, 0.5), ``'radians'`` radians/pixel in [-pi, pi)), each axis within
[-n/2, n/2] for an n-pixel axis."""

import math

import numpy as np

from . import _arrays

GOLDEN_ANGLE = math.pi * (math.sqrt(5) - 1) / 2  # radians, about 111.25 degrees: the golden ratio of pi


def _to_units(k, n, units, where):
    if units == "cycles":
        return k
    if units == "normalized":
        return k / n
    if units == "radians":
        return k * (2 * math.pi / n)
    raise ValueError(f"{where}: units must be 'cycles', 'normalized' or 'radians', got {units!r}")


def radial(n, spokes, samples=None, *, golden=False, units="cycles"):
    """Radial spokes through the centre for an n x n image: (kx, ky), each (spokes, samples). A spoke runs from
    -n/2 in steps of n / samples (samples defaults to 2n: twice the Nyquist rate along the spoke) and holds the
    centre; spoke j lies at angle pi j / spokes (uniform over a half turn) or j * GOLDEN_ANGLE (golden=True)."""
    where = "radial"
    n = _arrays.count(n, "n", where)
    spokes = _arrays.count(spokes, "spokes", where)
    samples = 2 * n if samples is None else _arrays.count(samples, "samples", where)
    r = (np.arange(samples) - samples // 2) * (n / samples)
    angle = np.arange(spokes) * (GOLDEN_ANGLE if golden else math.pi / spokes)
    kx, ky = np.outer(np.cos(angle), r), np.outer(np.sin(angle), r)
    return _to_units(kx, n, units, where), _to_units(ky, n, units, where)


def golden_angle(n, spokes, samples=None, *, units="cycles"):
    """radial(..., golden=True): spoke j at j * GOLDEN_ANGLE, so any run of consecutive spokes covers k-space
    nearly uniformly (dynamic imaging, sliding windows)."""
    return radial(n, spokes, samples, golden=True, units=units)


def spiral(n, interleaves, samples=None, *, turns=None, units="cycles"):
    """Interleaved Archimedean spirals out to radius n/2 for an n x n image: (kx, ky), each (interleaves,
    samples). turns defaults to ceil(n / (2 interleaves)), the fewest for which neighbouring arms are at most
    1 cycle/FOV apart (Nyquist for the field of view); samples (per interleave) to ceil(pi n turns), which keeps
    the outer turn's samples about 1 cycle/FOV apart. Interleave i is rotated by 2 pi i / interleaves."""
    where = "spiral"
    n = _arrays.count(n, "n", where)
    interleaves = _arrays.count(interleaves, "interleaves", where)
    turns = math.ceil(n / (2 * interleaves)) if turns is None else float(turns)
    if not turns > 0:
        raise ValueError(f"{where}: turns must be positive, got {turns!r}")
    samples = math.ceil(math.pi * n * turns) if samples is None else _arrays.count(samples, "samples", where)
    tau = np.linspace(0, 1, samples)
    r = (n / 2) * tau * (1 - 1e-9)  # stays inside [-n/2, n/2]
    angle = 2 * math.pi * (turns * tau[None, :] + np.arange(interleaves)[:, None] / interleaves)
    kx, ky = r * np.cos(angle), r * np.sin(angle)
    return _to_units(kx, n, units, where), _to_units(ky, n, units, where)


def stack_of(kx, ky, nz, *, units="cycles"):
    """A 2-D trajectory repeated on nz partitions along z (stack of stars, stack of spirals): (kx, ky, kz), each
    of shape (nz, *kx.shape), kz = -nz/2, ..., nz/2 - 1 (cycles/FOV; in ``units`` for the nz-pixel axis). kx and
    ky are kept as given (pass them in the units asked for)."""
    where = "stack_of"
    nz = _arrays.count(nz, "nz", where)
    kx, ky = np.asarray(kx, dtype=float), np.asarray(ky, dtype=float)
    if kx.shape != ky.shape:
        raise ValueError(f"{where}: kx has shape {kx.shape}, ky {ky.shape}; they must match")
    kz = (np.arange(nz) - nz // 2).reshape((nz,) + (1,) * kx.ndim) * np.ones_like(kx)
    stack = lambda k: np.broadcast_to(k, (nz,) + k.shape).copy()
    return stack(kx), stack(ky), _to_units(kz, nz, units, where)


def sample_times(shape, dwell, *, echo_time=0.0):
    """Sample times in seconds for trajectories of ``shape`` whose last axis is the readout: echo_time + dwell *
    sample index (the same for every interleave, spoke and partition)."""
    shape = _arrays.shape_tuple(shape, "shape", "sample_times")
    if not dwell > 0:
        raise ValueError(f"sample_times: dwell must be a positive time in seconds, got {dwell!r}")
    return np.broadcast_to(echo_time + dwell * np.arange(shape[-1]), shape).copy()
