"""Real scanner data through forge's Python API: coil-map masks that keep the object, and trajectories as
scanners and other tools store them.

Data (never part of the repository):
- octopus-spiral: ``../shared/data/octopus-spiral`` beside the repository root ($FORGE_OCTOPUS_DIR overrides),
  read with scripts/real-data/convert_real_data.py's loader; SKIPPED when absent.
- brain-radial and phantom3d-radial: the BART arrays that scripts/real-data/fetch-real-data.sh converts from the
  gpunufft 0.10.8 source archive into ``${FORGE_DATA_CACHE:-~/.cache/forge-real-data}/cfl``
  ($FORGE_REAL_DATA_DIR overrides); SKIPPED when absent (no network when the archive was to be fetched).

The mask check. The gridded root-sum-of-squares image is the density-compensated adjoint of all samples, coil
by coil: ``rss^2 = sum_c |G^H (w y_c)|^2`` (Gnufft; w: Pipe-Menon weights from forge.density_compensation for
the 2D sets, the stored weights for the 3D one). Of its energy on the object, at most 1% may lie outside the mask
of forge.coil_maps (return_mask=True): coil maps that are zero over part of the object make SENSE drop that part
of the image. The object is defined without forge's mask: for the spiral phantom, the support of the field map
that came with it (nonzero inside the phantom; the worst of its 8 transposes and flips, its orientation aside);
for the brain, the gridded image smoothed over 2 pixels above a fifth of its 99th percentile, holes filled; for
the 3D phantom the same of the image of its Nyquist-sampled centre only (3182 centre-out spokes sample the sphere
of radius k at 1 cycle/FOV up to k = sqrt(3182 / 4 pi) = 15.9): at 80^3 from |k| <= 40 the spokes are 6 times too
few at the edge, and their streaks fill the field of view as brightly as the phantom's interior (the whole
image's smoothed support was 95% of the grid, and 7% of its energy, all of it near two faces where the
calibration images are empty, lay outside the mask). The
whole image's share outside the mask is no such measure: it counts what the gridded image holds where there is
no object, and undersampled real data hold much there (measured 2026-11-28 with masks that hold the whole
object: the brain's 64 spokes leave streaks over the background, 1.6% of the energy outside a mask with a margin
around the head; the 3D phantom's 3182 spokes for 80^3, 7.2%, most of it in the corners; the spiral phantom, 0.7%,
with an off-resonance halo over most of the field of view). test_energy_outside_mask_metric_* check the metric
itself where the answer is known.
"""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

import forge
from forge import io as fio

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "scripts" / "real-data" / "convert_real_data.py"
MAX_OUTSIDE = 0.01


def _converter():
    spec = importlib.util.spec_from_file_location("convert_real_data", CONVERTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _example():
    """python/examples/octopus_spiral.py (its NIfTI reader needs no nibabel)."""
    spec = importlib.util.spec_from_file_location("octopus_spiral", ROOT / "python" / "examples" / "octopus_spiral.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _octopus_dir():
    return pathlib.Path(os.environ.get("FORGE_OCTOPUS_DIR") or ROOT.parent / "shared" / "data" / "octopus-spiral")


def _converted_dir():
    if os.environ.get("FORGE_REAL_DATA_DIR"):
        return pathlib.Path(os.environ["FORGE_REAL_DATA_DIR"])
    cache = os.environ.get("FORGE_DATA_CACHE") or pathlib.Path.home() / ".cache" / "forge-real-data"
    return pathlib.Path(cache) / "cfl"


def _converted(name):
    folder = _converted_dir() / name
    if not (folder / "kspace.cfl").exists() or not (folder / "traj.cfl").exists():
        pytest.skip(f"{name}: {folder} has no converted arrays (bash scripts/real-data/fetch-real-data.sh makes them; "
                    f"it needs PyPI once)")
    return folder


def _coil_major(kspace):
    """[1, samples, readouts, coils] -> (coils, samples * readouts), samples fastest (as the trajectory's ravel)."""
    k = np.asarray(kspace)
    k = k.reshape(k.shape[1], k.shape[2], k.shape[3])
    return np.ascontiguousarray(k.reshape(-1, k.shape[2], order="F").T, dtype=np.complex64)


def _axes(traj):
    """[3, samples, readouts] -> kx, ky, kz float32 vectors, samples fastest."""
    t = np.asarray(traj).real.astype(np.float32)
    return tuple(np.ascontiguousarray(t[d].ravel(order="F")) for d in range(3))


def gridded_rss2(y, kx, ky, kz, *, nx, ny, nz=1, weights=None):
    """sum_c |G^H (w y_c)|^2 per pixel (x fastest), G a Gnufft on the nx x ny x nz grid, w the density weights
    (Pipe-Menon from forge.density_compensation when None)."""
    kz = None if nz == 1 else kz
    if weights is None:
        weights = forge.density_compensation(kx, ky, kz, nx=nx, ny=ny, nz=nz)
    w = np.asarray(weights, np.float32).ravel()
    G = forge.Gnufft(kx, ky, kz, nx=nx, ny=ny, nz=nz)
    rss2 = np.zeros(nx * ny * nz)
    for yc in y:
        rss2 += np.abs(np.asarray(G.H @ (w * yc).astype(np.complex64)).ravel()) ** 2
    return rss2


def energy_outside(rss2, mask):
    """The share of sum(rss2) on pixels where mask is False."""
    rss2 = np.asarray(rss2, np.float64).ravel()
    mask = np.asarray(mask, bool).ravel()
    assert rss2.shape == mask.shape
    return float(rss2[~mask].sum() / rss2.sum())


def object_support(rss2, shape):
    """The object by the gridded image alone: |rss| smoothed over 2 pixels above a fifth of its 99th percentile,
    the holes it encloses filled (dark ventricles, the phantom's tubes)."""
    ndi = pytest.importorskip("scipy.ndimage")
    r = ndi.gaussian_filter(np.sqrt(np.asarray(rss2, np.float64)).reshape(shape), 2.0)
    return ndi.binary_fill_holes(r > 0.2 * np.percentile(r, 99)).ravel()


def _check_mask(name, y, kx, ky, kz, *, nx, ny, nz=1, weights=None, objects=None):
    """The coil maps' mask holds at least 99% of the gridded energy on the object (the worst of 'objects', boolean
    arrays of the grid; default the object_support of the gridded image)."""
    maps, mask, stats = forge.coil_maps(y, kx, ky, None if nz == 1 else kz, nx=nx, ny=ny, nz=nz, return_mask=True,
                                        return_stats=True)
    assert maps.shape == (y.shape[0], nx * ny * nz) and mask.shape == (nx * ny * nz,)
    assert mask.any() and not stats["mask_dropped"] and stats["outliers"] == 0, stats
    rss2 = gridded_rss2(y, kx, ky, kz, nx=nx, ny=ny, nz=nz, weights=weights)
    if objects is None:
        objects = [object_support(rss2, (nz, ny, nx))]
    for obj in objects:
        obj = np.asarray(obj, bool).ravel()
        assert obj.shape == mask.shape and obj.any()
        dropped = energy_outside(rss2[obj], mask[obj])
        assert dropped <= MAX_OUTSIDE, (
            f"{name}: the coil-map mask ({100 * mask.mean():.1f}% of the {nx}x{ny}x{nz} grid) drops "
            f"{100 * dropped:.2f}% of the gridded energy on the object ({100 * obj.mean():.1f}% of the grid), "
            f"more than {100 * MAX_OUTSIDE:.0f}%; {100 * energy_outside(rss2, mask):.2f}% of the whole image's")


# ---- the metric itself, where the answer is known ----------------------------------------------------------

def _synthetic(n, nc, rng):
    """A smooth object: a Gaussian blob inside a centred disc (the mask) and a weaker one outside it, smooth
    coil sensitivities; returns (image, maps, mask, expected share) with the share computed in the image domain:
    rss^2 = |x|^2 sum_c |S_c|^2."""
    ix, iy, _ = forge.image_coords(n, n)                      # FOV units, x fastest
    x = np.exp(-((ix ** 2 + iy ** 2) / (2 * 0.08 ** 2))) + 0.5 * np.exp(
        -(((ix - 0.36) ** 2 + (iy + 0.3) ** 2) / (2 * 0.03 ** 2)))
    x = x.astype(np.complex64) * np.exp(1j * 2 * np.pi * 0.3 * ix).astype(np.complex64)
    mask = ix ** 2 + iy ** 2 <= 0.3 ** 2
    centres = rng.uniform(-0.5, 0.5, (nc, 2))
    maps = np.stack([np.exp(-((ix - a) ** 2 + (iy - b) ** 2) / 0.5) * np.exp(1j * np.pi * (a * ix + b * iy))
                     for a, b in centres]).astype(np.complex64)
    e = np.abs(x) ** 2 * (np.abs(maps) ** 2).sum(0)
    return x, maps, mask, float(e[~mask].sum() / e.sum())


def test_energy_outside_mask_metric_cartesian(rng):
    # Every k-space grid point once: density weights constant, the gridded coil images the true ones to the NUFFT's
    # accuracy, so the share is the image-domain one.
    n, nc = 64, 4
    x, maps, mask, expected = _synthetic(n, nc, rng)
    assert 0.02 < expected < 0.2
    kx, ky = (np.asarray(v, np.float32) for v in np.meshgrid(np.arange(n) - n // 2, np.arange(n) - n // 2))
    kx, ky = kx.ravel(), ky.ravel()
    G = forge.Gnufft(kx, ky, nx=n, ny=n)
    y = np.stack([G @ (maps[c] * x) for c in range(nc)])
    share = energy_outside(gridded_rss2(y, kx, ky, None, nx=n, ny=n), mask)
    assert share == pytest.approx(expected, rel=1e-3)
    assert energy_outside(np.ones(n * n), mask) == pytest.approx(1 - mask.mean())
    assert energy_outside(gridded_rss2(y, kx, ky, None, nx=n, ny=n), np.ones(n * n, bool)) == 0.0


def test_energy_outside_mask_metric_radial(rng):
    # Non-Cartesian: radial spokes, 2x oversampled readout, Pipe-Menon weights: the gridded images blur a little
    # (the weights are approximate), so the share comes out within 5% of the known one.
    n, nc, spokes, samples = 64, 4, 128, 128
    x, maps, mask, expected = _synthetic(n, nc, rng)
    r = (np.arange(samples) - samples // 2) * (n / samples)
    angles = np.arange(spokes) * np.pi / spokes
    kx = (r[:, None] * np.cos(angles)[None, :]).astype(np.float32).ravel()
    ky = (r[:, None] * np.sin(angles)[None, :]).astype(np.float32).ravel()
    G = forge.Gnufft(kx, ky, nx=n, ny=n)
    y = np.stack([G @ (maps[c] * x) for c in range(nc)])
    share = energy_outside(gridded_rss2(y, kx, ky, None, nx=n, ny=n), mask)
    assert share == pytest.approx(expected, rel=0.05)
    # the check itself: a mask that cuts the outer blob away is caught, one that keeps it passes
    assert share > MAX_OUTSIDE
    grown = mask | ((forge.image_coords(n, n)[0] - 0.36) ** 2 + (forge.image_coords(n, n)[1] + 0.3) ** 2 <= 0.12 ** 2)
    assert energy_outside(gridded_rss2(y, kx, ky, None, nx=n, ny=n), grown) < MAX_OUTSIDE


# ---- real data -------------------------------------------------------------------------------------------

def test_octopus_spiral_units_and_layout():
    folder = _octopus_dir()
    if not (folder / "rawdata_spiral.mat").exists():
        pytest.skip(f"octopus-spiral data not found at {folder}")
    arrays, info = _converter().load_octopus(folder)
    assert arrays["kspace"].shape == (1, 310, 54, 20) and arrays["traj"].shape == (3, 310, 54)
    k = arrays["traj"]
    kmax = float(np.abs(k[:2]).max())
    assert 95 < kmax <= 96 and not np.any(k[2])             # cycles/FOV of the 192 matrix, 2D
    assert 2 * np.floor((2 * kmax + 1.5) / 2) == 192        # BART's matrix estimate
    assert np.abs(k[:2, 0]).max() < 0.1                     # spiral-out: every interleave starts at the centre


def test_octopus_spiral_mask_keeps_the_object():
    folder = _octopus_dir()
    if not (folder / "rawdata_spiral.mat").exists():
        pytest.skip(f"octopus-spiral data not found at {folder}")
    arrays, info = _converter().load_octopus(folder)
    y = _coil_major(arrays["kspace"])
    kx, ky, kz = _axes(arrays["traj"])
    # the phantom: where the field map that came with it is nonzero, in each of its 8 transposes and flips
    fm = _example().read_nifti(folder / "fieldmap_unwrapped.nii.gz") != 0
    assert fm.shape == (192, 192) and 0.1 < fm.mean() < 0.3
    objects = [a[::fy, ::fx] for a in (fm, fm.T) for fy in (1, -1) for fx in (1, -1)]
    _check_mask("octopus-spiral", y, kx, ky, kz, nx=192, ny=192, objects=objects)


def test_brain_radial_mask_keeps_the_object():
    folder = _converted("brain-radial")
    y = _coil_major(fio.read_cfl(folder / "kspace"))
    kx, ky, kz = _axes(fio.read_cfl(folder / "traj"))
    assert y.shape == (32, 512 * 64) and float(np.abs(np.r_[kx, ky]).max()) == pytest.approx(128, abs=1e-3)
    _check_mask("brain-radial", y, kx, ky, kz, nx=256, ny=256)


def test_phantom3d_radial_mask_keeps_the_object():
    # The centre of k-space, |k_d| <= 40 cycles/FOV, on an 80^3 grid: the same field of view at half the
    # resolution (the full 160^3 covariance of 8 coils would take minutes on 2 cores); the stored density weights.
    # The object: the support of the image of the Nyquist-sampled centre (module docstring).
    folder = _converted("phantom3d-radial")
    k = np.asarray(fio.read_cfl(folder / "kspace"))[0]      # (samples, spokes, coils)
    t = np.asarray(fio.read_cfl(folder / "traj")).real      # (3, samples, spokes)
    w = np.asarray(fio.read_cfl(folder / "weights")).real.reshape(t.shape[1:])
    n = 80

    def selection(inner):
        y = np.ascontiguousarray(k[inner].T, dtype=np.complex64)
        return (y, *(np.ascontiguousarray(t[d][inner], dtype=np.float32) for d in range(3)))

    nyquist = np.sqrt(t.shape[2] / (4 * np.pi))             # 15.9 cycles/FOV
    y, kx, ky, kz = selection(np.sqrt((t ** 2).sum(axis=0)) <= nyquist)
    centre = gridded_rss2(y, kx, ky, kz, nx=n, ny=n, nz=n, weights=w[np.sqrt((t ** 2).sum(axis=0)) <= nyquist])
    obj = object_support(centre, (n, n, n))
    assert 0.2 < obj.mean() < 0.8, obj.mean()               # the cylinder, not the field of view
    inner = (np.abs(t) <= 40).all(axis=0)
    y, kx, ky, kz = selection(inner)
    _check_mask("phantom3d-radial (80^3 from |k| <= 40)", y, kx, ky, kz, nx=n, ny=n, nz=n, weights=w[inner],
                objects=[obj])


def test_phantom3d_radial_band_edge_samples_accepted():
    # The stored trajectory holds k = -0.50000006 cycles/pixel (float32 rounding past the band edge, -80.00001
    # cycles/FOV at 160): Gnufft takes it as it is, unclipped, and its adjoint equals that of the clipped
    # trajectory (the grid is periodic: -80 and +80 are the same sample, and 1e-5 cycles/FOV moves nothing).
    folder = _converted("phantom3d-radial")
    t = np.asarray(fio.read_cfl(folder / "traj")).real.astype(np.float32)
    k = np.asarray(fio.read_cfl(folder / "kspace"))[0]
    beyond = np.nonzero((np.abs(t) > 80).any(axis=(0, 1)))[0]
    assert beyond.size >= 1 and float(np.abs(t).max()) > 80
    spokes = np.union1d(beyond, np.arange(0, t.shape[2], 64))
    kx, ky, kz = (np.ascontiguousarray(t[d][:, spokes].ravel(order="F")) for d in range(3))
    assert min(kx.min(), ky.min(), kz.min()) < -80                # the unclipped sample is in the subset
    y = np.ascontiguousarray(k[:, spokes, 0].ravel(order="F"), dtype=np.complex64)
    G = forge.Gnufft(kx, ky, kz, nx=160, ny=160, nz=160)
    x = np.asarray(G.H @ y)
    assert np.all(np.isfinite(x)) and np.abs(x).max() > 0
    Gc = forge.Gnufft(*(np.clip(v, -80, 80) for v in (kx, ky, kz)), nx=160, ny=160, nz=160)
    xc = np.asarray(Gc.H @ y)
    assert np.linalg.norm(x - xc) <= 1e-4 * np.linalg.norm(xc)
