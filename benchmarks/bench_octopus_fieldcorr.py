"""Field correction of OCTOPUS's real spiral (docs/benchmarks.md, "Field correction on a real spiral"): forge's
against OCTOPUS's own, on the same data, with one sharpness measure.

    PYTHONPATH=build/python build/python-env/bin/python benchmarks/bench_octopus_fieldcorr.py OCTOPUS_CHECKOUT \\
        [--data ../shared/data/octopus-spiral] [--method MFI|fsCPR] [--coils 20] [--out bench_octopus]

OCTOPUS_CHECKOUT is a checkout of https://github.com/imr-framework/OCTOPUS (GPL-3.0; the folder holding OCTOPUS/ORC.py).
Its code is run from there, never copied: a second process in a virtual environment (default build/octopus-env,
made on first use with pip: pynufft==2019.2.3 as OCTOPUS pins it, NumPy < 2, SciPy, nibabel; SciPy's removed pinv2 is
mapped to pinv, which pynufft 2019.2.3 needs) imports OCTOPUS.ORC and
corrects each coil as OCTOPUS's Examples/ORC_main.py does: field map = fliplr(NIfTI) / (2 pi) Hz (or, with
--fieldmap-layout forge, the orientation python/examples/octopus_spiral.py found, in OCTOPUS's layout), sample times
linspace(TE, TE + 310 dwell, 310), Lx = 2, each coil image by pynufft's CG (50 iterations), root-sum-of-squares.
forge reconstructs with python/examples/octopus_spiral.py's functions (SENSE, time segmentation around Gnufft, the
field map oriented as found there and extended beyond the object): the density-compensated adjoint, and the solve
with --iterations CG steps (default 50, as each of OCTOPUS's pynufft solves; beta 1e-5). The OCTOPUS image is put
on forge's pixel grid by the transpose/flip that best correlates its magnitude with forge's uncorrected image (the
two tools lay out the image axes differently), then all images are measured over the same object mask with
octopus_spiral.sharpness (edge sharpness) and interior_variation. Prints one line per image; forge's sharper
corrected image must be at least as sharp as OCTOPUS's (exit 1 otherwise).
"""

import argparse
import importlib.util
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def peer(args):
    """Runs inside the OCTOPUS environment: OCTOPUS's own correction of every coil, saved as (N, N) rss."""
    sys.path.insert(0, str(pathlib.Path(args.octopus).resolve()))
    import math

    import nibabel as nib
    import scipy.io as sio

    import scipy.linalg

    if not hasattr(scipy.linalg, "pinv2"):  # removed in SciPy 1.9; pynufft 2019.2.3 calls it (SVD pseudo-inverse)
        scipy.linalg.pinv2 = scipy.linalg.pinv
    import OCTOPUS.ORC as ORC

    data = pathlib.Path(args.data)
    raw = sio.loadmat(data / "rawdata_spiral.mat")["dat"]           # (310, 54, 20)
    ktraj = np.load(data / "ktraj.npy")
    a = nib.load(str(data / "fieldmap_unwrapped.nii.gz")).get_fdata() / (2 * math.pi)
    # OCTOPUS's example flips the map left-right; 'forge' gives OCTOPUS forge's orientation in OCTOPUS's layout
    # (OCTOPUS's image is forge's transposed: its axis 0 is kx)
    fmap = np.fliplr(a) if args.fieldmap_layout == "octopus" else np.ascontiguousarray(forge_map(a).T)
    FOV, dt, TE, N = 384e-3, 10e-6, 4.6e-3, 192
    npoints, nshots = raw.shape[0], raw.shape[1]
    t_ro = npoints * dt
    T = np.linspace(TE, TE + t_ro, npoints).reshape((npoints, 1))
    params = {"FOV": FOV, "N": N, "Npoints": npoints, "Nshots": nshots, "t_vector": T, "t_readout": t_ro}
    method = {"MFI": ORC.MFI, "fsCPR": ORC.fs_CPR}[args.method]
    coils = min(args.coils, raw.shape[2])
    images = np.zeros((coils, N, N), complex)
    t0 = time.time()
    for c in range(coils):
        images[c] = method(raw[:, :, c], "raw", ktraj, fmap.copy(), 2, 1, params)
        print(f"OCTOPUS {args.method}: coil {c + 1}/{coils} ({time.time() - t0:.0f} s)", flush=True)
    np.save(args.peer_out, np.sqrt((np.abs(images) ** 2).sum(0)))
    print(f"OCTOPUS {args.method}: {time.time() - t0:.1f} s for {coils} coils", flush=True)


def forge_map(a):
    """The NIfTI array as forge's (ny, nx) map, as python/examples/octopus_spiral.py orients it (numpy only)."""
    spec = importlib.util.spec_from_file_location("octopus_spiral", ROOT / "python" / "examples" / "octopus_spiral.py")
    text = spec.loader.get_source("octopus_spiral")
    start = text.index("FIELDMAP_ORIENTATION = ")
    o = eval(text[start + len("FIELDMAP_ORIENTATION = "):text.index("\n", start)], {"dict": dict})
    b = a.T if o["transpose"] else a
    b = b[::-1, :] if o["flip_y"] else b
    b = b[:, ::-1] if o["flip_x"] else b
    return o["sign"] * b


def octopus_env(path):
    py = path / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "pynufft==2019.2.3", "numpy<2", "scipy", "nibabel"],
                       check=True)
    return py


def best_layout(image, reference):
    """image as it best matches reference (magnitude correlation) among its 8 transposes/flips: (name, image)."""
    best = None
    for tr in (False, True):
        for fy in (False, True):
            for fx in (False, True):
                a = image.T if tr else image
                a = a[::-1, :] if fy else a
                a = a[:, ::-1] if fx else a
                c = np.corrcoef(np.abs(a).ravel(), np.abs(reference).ravel())[0, 1]
                if best is None or c > best[0]:
                    best = (c, f"transpose={tr} flip_y={fy} flip_x={fx}", np.ascontiguousarray(a))
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("octopus", help="an OCTOPUS checkout (the folder holding OCTOPUS/ORC.py)")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "octopus-spiral"))
    p.add_argument("--method", choices=("MFI", "fsCPR"), default="MFI")
    p.add_argument("--coils", type=int, default=20, help="coils OCTOPUS corrects (all 20 take minutes)")
    p.add_argument("--fieldmap-layout", choices=("octopus", "forge"), default="octopus",
                   help="the field map OCTOPUS gets: octopus (its example's fliplr) or forge (the orientation found)")
    p.add_argument("--env", default=str(ROOT / "build" / "octopus-env"), help="OCTOPUS's virtual environment")
    p.add_argument("--out", default="bench_octopus", help="folder for the images (.npy, .png)")
    p.add_argument("--iterations", type=int, default=50,
                   help="CG iterations of forge's solves (default 50, as each of OCTOPUS's pynufft solves)")
    p.add_argument("--figures",
                   help="also write 144x144 crops of forge's adjoints and of OCTOPUS's image here (docs/real-data)")
    p.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--peer-out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.peer:
        return peer(args)
    if not (pathlib.Path(args.octopus) / "OCTOPUS" / "ORC.py").exists():
        sys.exit(f"bench_octopus_fieldcorr: {args.octopus} holds no OCTOPUS/ORC.py (give an OCTOPUS checkout)")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    peer_npy = out / f"octopus_{args.method}_{args.fieldmap_layout}.npy"
    t0 = time.time()
    subprocess.run([str(octopus_env(pathlib.Path(args.env))), __file__, args.octopus, "--peer", "--data", args.data,
                    "--method", args.method, "--coils", str(args.coils), "--fieldmap-layout", args.fieldmap_layout,
                    "--peer-out", str(peer_npy)],
                   check=True, env={**os.environ, "PYTHONPATH": "", "MPLBACKEND": "Agg"})
    t_peer = time.time() - t0

    spec = importlib.util.spec_from_file_location("octopus_spiral", ROOT / "python" / "examples" / "octopus_spiral.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    import forge

    data, kx, ky, t, w, fm_nifti = ex.load(args.data)
    fm = forge.extend_field_map(ex.orient(fm_nifti, **ex.FIELDMAP_ORIENTATION))
    t0 = time.time()
    u_adj, u_it, maps = ex.reconstruct(data, kx, ky, t, w, None, iterations=args.iterations, beta=1e-5)
    t1 = time.time()
    c_adj, c_it, _ = ex.reconstruct(data, kx, ky, t, w, fm, maps=maps, iterations=args.iterations, beta=1e-5)
    t_forge = time.time() - t1
    corr, layout, octopus = best_layout(np.load(peer_npy), u_adj)
    mask = ex.object_mask(u_adj)
    cg = f"{args.iterations} CG, beta 1e-5"
    rows = [("uncorrected (forge SENSE adjoint)", u_adj), (f"uncorrected (forge SENSE, {cg})", u_it),
            ("forge corrected (SENSE adjoint, time segmentation)", c_adj),
            (f"forge corrected (SENSE, time segmentation, {cg})", c_it),
            (f"OCTOPUS {args.method} corrected (Lx 2, rss of {args.coils} coils, field map layout "
             f"{args.fieldmap_layout})", octopus)]
    print(f"OCTOPUS image on forge's grid: {layout} (correlation {corr:.3f} with forge's uncorrected)")
    scores = {}
    print("edge sharpness  interior variation  image")
    for name, img in rows:
        scores[name] = ex.sharpness(img, mask)
        print(f"{scores[name]:14.5f}  {ex.interior_variation(img, mask):18.4f}  {name}")
    peer_name = f"octopus_{args.method}_{args.fieldmap_layout}"
    for name, img in (("forge_uncorrected", u_it), ("forge_corrected", c_it), (peer_name, octopus)):
        ex.write_png(out / f"{name}.png", img, np.percentile(np.abs(img), 99.5))
    if args.figures:
        fig = pathlib.Path(args.figures)
        fig.mkdir(parents=True, exist_ok=True)
        rows_, cols_ = np.nonzero(mask)
        cy, cx = (rows_.min() + rows_.max()) // 2, (cols_.min() + cols_.max()) // 2
        crop = (slice(max(cy - 72, 0), cy + 72), slice(max(cx - 72, 0), cx + 72))
        for name, img in (("uncorrected", u_adj), ("forge_corrected", c_adj), ("octopus_corrected", octopus)):
            ex.write_png(fig / f"{name}.png", img[crop], np.percentile(np.abs(img), 99.5))
    print(f"time: OCTOPUS {t_peer:.0f} s (its environment included), forge {t1 - t0:.1f} s uncorrected + "
          f"{t_forge:.1f} s corrected (2 threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})")
    best_forge = max(scores[rows[2][0]], scores[rows[3][0]])
    if best_forge < scores[rows[4][0]]:
        print("FAIL: forge's corrected image is less sharp than OCTOPUS's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
