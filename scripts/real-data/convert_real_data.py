#!/usr/bin/env python3
"""Converts three real (scanner) data sets into BART's .cfl/.hdr arrays, the input of
``forge-recon --bart-kspace K --bart-traj T`` and of ``bart pics -t T K maps img``.

    python3 convert_real_data.py OUT_DIR [--octopus DIR] [--gpunufft-data DIR] [--only NAME[,NAME]]

Every data set goes into a folder of its own under OUT_DIR, with

- ``kspace``: complex64 ``[1, samples, readouts, coils]`` (BART's READ dimension 1, the samples of one readout
  along PHS1, the readouts along PHS2, the coils along COIL);
- ``traj``: ``[3, samples, readouts]``, kx, ky, kz in cycles per FOV (BART's unit and forge's: an N-pixel
  axis holds k in [-N/2, N/2]; kz = 0 for 2D), so that BART's matrix estimate from the trajectory,
  ``2 floor((2 max|k| + 1.5) / 2)`` per axis, is the data set's image matrix;
- ``info.json``: the matrix, the FOV, what the arrays hold and where they came from;
- and per data set: ``dcf`` (octopus-spiral: the density compensation stored with the data),
  ``fieldmap`` (octopus-spiral: the measured field map in rad/s, as the NIfTI file holds it; its orientation
  relative to the image is not established), ``weights`` (phantom3d-radial: the density weights stored with
  the data), all real values as complex64 arrays of BART's layout.

The data sets (facts about the sources; none of their files or code is copied here):

octopus-spiral
    2D spiral-out GRE of a phantom, 20 coils, 310 samples x 54 interleaves, image 192 x 192 over a 384 mm FOV,
    dwell 10 us, TE 4.6 ms. ``rawdata_spiral.mat`` (variable ``dat``: samples x interleaves x coils),
    ``ktraj.npy`` (kx + i ky in cycles per metre), ``dcf.mat`` (``dcf_out``), ``fieldmap_unwrapped.nii.gz``.
    k in cycles/FOV = k [1/m] x 0.384 m (|k| <= 95.9 of 96).
brain-radial
    2D radial brain, 32 coils, 64 spokes of 512 samples, image 256 x 256, readout 2x oversampled.
    ``brain_64spokes.mat``: ``rawdata`` (samples x spokes x coils), ``k`` (kx + i ky in cycles per pixel of
    the 256 image, [-0.5, 0.5]). k in cycles/FOV = k x 256 (|k| <= 128, samples 0.5 cycles/FOV apart).
phantom3d-radial
    3D centre-out radial phantom, 8 coils, 3182 spokes of 207 samples, image 160^3.
    ``rawdata_phantom_regridding.mat``: ``rawdata`` (samples x spokes x coils), ``k`` (658674 x 3, row
    a + 207 b is sample a of spoke b, cycles per pixel in [-0.5, 0.5]), density weights ``w`` (3182 x 207,
    MATLAB order: element a + 207 b of its column-major vector is sample a of spoke b). k in cycles/FOV =
    k x 160. One coordinate is -0.50000006 (float32 rounding past the band edge, -80.00001 cycles/FOV): it is
    kept as stored; forge takes it as the edge.

Needs NumPy and SciPy (scipy.io.loadmat; h5py for MATLAB v7.3 files); nibabel only for the field map (skipped
with a note without it). The writer is self-contained (no built forge needed)."""

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATASETS = ("octopus-spiral", "brain-radial", "phantom3d-radial")
BRAIN_MAT = "brain_64spokes.mat"
PHANTOM_MAT = "rawdata_phantom_regridding.mat"


def default_octopus_dir():
    """The octopus-spiral folder: $FORGE_OCTOPUS_DIR, else ../shared/data/octopus-spiral beside the repository."""
    env = os.environ.get("FORGE_OCTOPUS_DIR")
    if env:
        return pathlib.Path(env)
    return ROOT.parent / "shared" / "data" / "octopus-spiral"


def default_cache_dir():
    return pathlib.Path(os.environ.get("FORGE_DATA_CACHE") or pathlib.Path.home() / ".cache" / "forge-real-data")


# ---------------------------------------------------------------------------------------------------------
# BART arrays

def write_cfl(base, array):
    """BART's pair base.hdr / base.cfl: complex64, column-major (first axis fastest). Written under temporary
    names and renamed, so a reader never sees half a file."""
    a = np.asarray(array)
    dims = a.shape if a.ndim else (1,)
    base = os.fspath(base)
    values = np.asfortranarray(a.astype(np.complex64, copy=False)).ravel(order="F").astype("<c8", copy=False)
    for path, data in ((base + ".hdr", ("# Dimensions\n" + " ".join(str(d) for d in dims) + " \n").encode()),
                       (base + ".cfl", values.tobytes())):
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)


def read_cfl(base):
    """The array of base.hdr / base.cfl (complex64, BART's dimensions, trailing 1s dropped)."""
    base = os.fspath(base)
    with open(base + ".hdr") as f:
        lines = f.read().splitlines()
    dims = [int(v) for v in lines[lines.index("# Dimensions") + 1].split()]
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    data = np.fromfile(base + ".cfl", dtype="<c8")
    return data.reshape(dims, order="F")


def _loadmat(path):
    """A .mat file's variables as NumPy arrays (MATLAB v5 by scipy.io.loadmat, v7.3 by h5py)."""
    import scipy.io
    try:
        return {k: v for k, v in scipy.io.loadmat(path).items() if not k.startswith("__")}
    except NotImplementedError:  # v7.3: HDF5, arrays stored transposed, complex as a compound type
        import h5py
        out = {}
        with h5py.File(path, "r") as f:
            for k, v in f.items():
                a = v[()]
                if a.dtype.names and {"real", "imag"} <= set(a.dtype.names):
                    a = a["real"] + 1j * a["imag"]
                out[k] = np.asarray(a).T
        return out


def _traj(kx, ky, kz=None):
    """[3, samples, readouts] float32 (as complex64 in the file) from per-axis (samples, readouts) arrays."""
    kz = np.zeros_like(kx) if kz is None else kz
    return np.stack([kx, ky, kz]).astype(np.float32)


# ---------------------------------------------------------------------------------------------------------
# Loaders: each returns (arrays, info), arrays a dict name -> array in BART's layout.

def load_octopus(folder):
    folder = pathlib.Path(folder)
    import scipy.io
    dat = scipy.io.loadmat(folder / "rawdata_spiral.mat")["dat"]              # samples x interleaves x coils
    ktraj = np.load(folder / "ktraj.npy")                                     # cycles/m, kx + i ky
    fov_m = 0.384
    k = ktraj * fov_m                                                          # cycles/FOV
    ns, nr, nc = dat.shape
    if ktraj.shape != (ns, nr):
        raise ValueError(f"octopus-spiral: ktraj {ktraj.shape} does not match the data's {(ns, nr)}")
    arrays = {
        "kspace": dat.astype(np.complex64).reshape(1, ns, nr, nc),
        "traj": _traj(k.real, k.imag),
        "dcf": scipy.io.loadmat(folder / "dcf.mat")["dcf_out"].astype(np.float32).reshape(1, ns, nr),
    }
    notes = []
    try:
        import nibabel
        fm = np.asarray(nibabel.load(folder / "fieldmap_unwrapped.nii.gz").dataobj, dtype=np.float32)
        arrays["fieldmap"] = fm.reshape(fm.shape[0], fm.shape[1], 1)
    except ImportError:
        notes.append("fieldmap not written: nibabel missing")
    info = dict(name="octopus-spiral", dims=2, matrix=[192, 192, 1], fov_mm=[384, 384],
                samples=ns, readouts=nr, coils=nc, dwell_s=1e-5, echo_time_s=4.6e-3,
                trajectory="spiral-out, 54 interleaves", k_scale="k[cycles/FOV] = k[1/m] x 0.384",
                max_abs_k=float(np.abs(k).max()),
                source="imr-framework/OCTOPUS sample_data (Siemens 3T Prisma phantom)",
                fieldmap_note="rad/s, as fieldmap_unwrapped.nii.gz holds it (x, y as stored); its orientation "
                              "and sign relative to the image are not established", notes=notes)
    return arrays, info


def load_brain(mat):
    d = _loadmat(mat)
    raw, k = d["rawdata"], d["k"]                                               # (512, 64, 32), (512, 64)
    ns, nr, nc = raw.shape
    n = 256
    kc = k * n                                                                  # cycles/FOV, |k| <= 128
    arrays = {"kspace": raw.astype(np.complex64).reshape(1, ns, nr, nc),
              "traj": _traj(kc.real, kc.imag)}
    info = dict(name="brain-radial", dims=2, matrix=[n, n, 1], samples=ns, readouts=nr, coils=nc,
                trajectory="radial, full spokes, readout 2x oversampled",
                k_scale="k[cycles/FOV] = k[cycles/pixel] x 256", max_abs_k=float(np.abs(kc).max()),
                source="gpunufft 0.10.8 sdist (PyPI, MIT), matlab/demo/data/" + BRAIN_MAT, notes=[])
    return arrays, info


def load_phantom3d(mat):
    d = _loadmat(mat)
    raw, k, w = d["rawdata"], d["k"], d["w"]                                    # (207, 3182, 8), (658674, 3)
    ns, nr, nc = raw.shape
    n = 160
    if k.shape != (ns * nr, 3):
        raise ValueError(f"phantom3d-radial: k {k.shape} does not match the data's {ns} x {nr} samples")
    # Row a + ns b of k is sample a of spoke b: a C-order (nr, ns, 3) array, transposed to (3, ns, nr). The
    # product with 160 is taken in float32, the stored precision (-0.50000006 -> -80.00001).
    kc = (k.astype(np.float32) * np.float32(n)).reshape(nr, ns, 3).transpose(2, 1, 0)
    weights = np.asarray(w, np.float32).ravel(order="F").reshape(nr, ns).T     # (ns, nr)
    arrays = {"kspace": raw.astype(np.complex64).reshape(1, ns, nr, nc),
              "traj": np.ascontiguousarray(kc),
              "weights": weights.reshape(1, ns, nr)}
    info = dict(name="phantom3d-radial", dims=3, matrix=[n, n, n], samples=ns, readouts=nr, coils=nc,
                trajectory="3D radial, centre-out half spokes",
                k_scale="k[cycles/FOV] = k[cycles/pixel] x 160", max_abs_k=float(np.abs(kc).max()),
                beyond_band=int(np.count_nonzero(np.abs(kc) > n / 2)),
                source="gpunufft 0.10.8 sdist (PyPI, MIT), matlab/demo/data/" + PHANTOM_MAT, notes=[])
    return arrays, info


def write_dataset(out, arrays, info):
    folder = pathlib.Path(out) / info["name"]
    folder.mkdir(parents=True, exist_ok=True)
    for name, a in arrays.items():
        write_cfl(folder / name, a)
    info = dict(info, arrays={k: list(v.shape) for k, v in arrays.items()})
    tmp = folder / f"info.json.tmp{os.getpid()}"
    tmp.write_text(json.dumps(info, indent=1) + "\n")
    os.replace(tmp, folder / "info.json")
    return folder


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output folder (one sub-folder per data set)")
    ap.add_argument("--octopus", type=pathlib.Path, default=default_octopus_dir(),
                    help="octopus-spiral folder (default: $FORGE_OCTOPUS_DIR or ../shared/data/octopus-spiral)")
    ap.add_argument("--gpunufft-data", type=pathlib.Path, default=default_cache_dir() / "mat",
                    help=f"folder with {BRAIN_MAT} and {PHANTOM_MAT} (default: the cache's mat/)")
    ap.add_argument("--only", default=",".join(DATASETS), help="comma-separated data sets (default: all)")
    a = ap.parse_args(argv)
    wanted = [s for s in a.only.split(",") if s]
    for s in wanted:
        if s not in DATASETS:
            ap.error(f"unknown data set {s!r} (known: {', '.join(DATASETS)})")
    sources = {"octopus-spiral": (a.octopus, load_octopus, a.octopus / "rawdata_spiral.mat"),
               "brain-radial": (a.gpunufft_data / BRAIN_MAT, load_brain, a.gpunufft_data / BRAIN_MAT),
               "phantom3d-radial": (a.gpunufft_data / PHANTOM_MAT, load_phantom3d, a.gpunufft_data / PHANTOM_MAT)}
    missing = 0
    for name in wanted:
        src, loader, probe = sources[name]
        if not probe.exists():
            print(f"convert_real_data: {name}: {probe} not found, skipped", file=sys.stderr)
            missing += 1
            continue
        t0 = time.perf_counter()
        arrays, info = loader(src)
        folder = write_dataset(a.out, arrays, info)
        k = arrays["kspace"]
        print(f"convert_real_data: {name}: kspace {list(k.shape)}, traj {list(arrays['traj'].shape)}, "
              f"max |k| {info['max_abs_k']:.5f} cycles/FOV, matrix {info['matrix']} -> {folder} "
              f"({time.perf_counter() - t0:.1f} s)")
        for note in info["notes"]:
            print(f"convert_real_data: {name}: {note}", file=sys.stderr)
    return 3 if missing == len(wanted) else 0


if __name__ == "__main__":
    sys.exit(main())
