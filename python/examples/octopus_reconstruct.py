"""OCTOPUS's real spiral through forge's whole reconstruction pipeline (forge.reconstruct), with and without field
correction (docs/python.md, "The real spiral through the whole reconstruction").

The data are read and put into forge's units by python/examples/octopus_spiral.py (load, orient): 20 coils, 54
spiral-out interleaves of 310 samples, k in cycles/FOV, sample times TE + dwell j, the measured field map (rad/s)
in forge's (ny, nx) orientation, continued beyond the object by forge.extend_field_map. forge.reconstruct then does
the rest as forge-recon does: coil maps estimated from the data, the operator chosen by forge's cost model (nufft
without the field map, time segmentation with it), penalized least squares (quadratic roughness penalty, CG). The
script writes one PNG (uncorrected | field-corrected | field map, y up) and prints the time, the pipeline's choices
and each image's edge sharpness and interior variation (octopus_spiral.sharpness, interior_variation: the data ship
no reference image, so the measures need none).

    PYTHONPATH=build/python build/python-env/bin/python python/examples/octopus_reconstruct.py \\
        ../shared/data/octopus-spiral -o octopus_out
"""

import argparse
import importlib.util
import pathlib
import time

import numpy as np

import forge

HERE = pathlib.Path(__file__).resolve().parent


def _octopus_spiral():
    spec = importlib.util.spec_from_file_location("octopus_spiral", HERE / "octopus_spiral.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ex = _octopus_spiral()


def run(folder, *, iterations=50, operator="auto", device="cpu"):
    """Both reconstructions of the OCTOPUS files in ``folder``. Returns a dict: ``uncorrected``, ``corrected``
    (complex64 (192, 192) images), ``field_map`` (rad/s, extended), their ``reports`` and wall ``seconds`` (each
    forge.reconstruct call, maps estimation included), ``sharpness`` and ``interior_variation`` of each image over
    the object's mask (from the uncorrected image)."""
    data, kx, ky, t, _, fm_nifti = ex.load(folder)
    field_map = forge.extend_field_map(ex.orient(fm_nifti, **ex.FIELDMAP_ORIENTATION))
    nc = data.shape[0]
    y = data.reshape(nc, -1) / np.abs(data).max()               # (coils, samples): interleave-major samples
    k = np.stack([kx.reshape(-1), ky.reshape(-1)])              # (2, samples), cycles/FOV
    times = t.reshape(-1)                                       # (samples,), s
    out = {"field_map": field_map, "reports": {}, "seconds": {}}
    for name, fm in (("uncorrected", None), ("corrected", field_map)):
        t0 = time.perf_counter()
        x, report = forge.reconstruct(y, k, times=times, field_map=fm, shape=(ex.N, ex.N), maps="estimate",
                                      operator=operator, iterations=iterations, device=device, return_report=True)
        out["seconds"][name] = time.perf_counter() - t0
        out[name], out["reports"][name] = x, report
    mask = ex.object_mask(out["uncorrected"])
    out["sharpness"] = {n: ex.sharpness(out[n], mask) for n in ("uncorrected", "corrected")}
    out["interior_variation"] = {n: ex.interior_variation(out[n], mask) for n in ("uncorrected", "corrected")}
    return out


def write_panels(path, panels, gap=4):
    """Images in [0, 1] of one height side by side, ``gap`` white columns between them, as octopus_spiral's PNG."""
    cols = []
    for i, p in enumerate(panels):
        if i:
            cols.append(np.ones((p.shape[0], gap)))
        cols.append(np.clip(p, 0, 1))
    ex.write_png(path, np.concatenate(cols, axis=1), 1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="folder holding rawdata_spiral.mat, ktraj.npy, dcf.mat, fieldmap_unwrapped.nii.gz")
    p.add_argument("-o", "--output", default="octopus_out", help="folder for the PNG")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--operator", default="auto", choices=("auto", "nufft", "timeseg", "toeplitz", "dft"))
    p.add_argument("--device", default="cpu", choices=("auto", "cpu", "gpu"))
    args = p.parse_args()
    out_dir = pathlib.Path(args.output)
    out_dir.mkdir(parents=True, exist_ok=True)

    r = run(args.data, iterations=args.iterations, operator=args.operator, device=args.device)
    scale = np.percentile(np.abs(r["corrected"]), 99.5)
    fm = r["field_map"]
    lim = np.abs(fm).max()
    png = out_dir / "octopus_reconstruct.png"
    write_panels(png, [np.abs(r["uncorrected"]) / scale, np.abs(r["corrected"]) / scale, 0.5 + 0.5 * fm / lim])
    for name in ("uncorrected", "corrected"):
        rep = r["reports"][name]
        solve = rep["solves"][0]
        segments = "" if solve["segments"] is None else f" ({solve['segments']} segments)"
        print(f"{name:12s} {r['seconds'][name]:6.1f} s (solve {solve['seconds']:.1f} s, maps "
              f"{rep['maps']['seconds']:.2f} s)  operator {rep['operator']['name']}{segments}, "
              f"{solve['iterations']} CG ({solve['stop_reason']})  edge sharpness {r['sharpness'][name]:.4f}  "
              f"interior variation {r['interior_variation'][name]:.4f}")
    print(f"field map {fm.min() / 2 / np.pi:.0f} to {fm.max() / 2 / np.pi:.0f} Hz (extended); "
          f"PNG (uncorrected | corrected | field map, grey = 0 Hz): {png}")


if __name__ == "__main__":
    main()
