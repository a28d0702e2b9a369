"""SigPy's L1WaveletRecon and TotalVariationRecon on bench_cs.sh's BART files (called by bench_cs.sh).

    python bench_cs_sigpy.py DIR ITER LAMBDA...

Reads DIR/{traj,ksp,sens,ref}.cfl, scales them as bench_cs does (maps to a largest root-sum-of-squares of 1, data to
an RMS of 1), runs each app for ITER iterations at each lambda on the CPU and prints a Markdown row per run: NRMSE of
the magnitude after the least-squares scale fit (forge's magnitude_quality) and the wall time (the first run includes
numba's compilation). LAMBDA is relative to max |E^H y|, as bench_cs's: SigPy's objective has 1/2 ||E x - y||^2, so
its lambda is LAMBDA * max |E^H y| / 2.
"""
import sys
import time

import numpy as np
import sigpy
import sigpy.mri as mr


def read_cfl(base):
    with open(base + ".hdr") as f:
        f.readline()
        dims = [int(d) for d in f.readline().split()]
    data = np.fromfile(base + ".cfl", dtype=np.complex64)
    return np.squeeze(data.reshape(dims, order="F"))  # BART writes 16 dimensions; drop the singleton ones


def nrmse(x, ref):
    ax, ar = np.abs(x).ravel(), np.abs(ref).ravel()
    a = np.dot(ax, ar) / np.dot(ax, ax)
    return np.linalg.norm(a * ax - ar) / np.linalg.norm(ar)


def main():
    d, niter, lambdas = sys.argv[1], int(sys.argv[2]), [float(v) for v in sys.argv[3:]]
    traj = read_cfl(d + "/traj")  # 3 x samples x spokes, cycles/FOV
    ksp = read_cfl(d + "/ksp")  # samples x spokes x coils
    sens = read_cfl(d + "/sens")  # x x y x coils
    ref = read_cfl(d + "/ref")  # x x y
    coord = np.ascontiguousarray(np.real(traj[:2]).transpose(1, 2, 0)).astype(np.float32)
    y = np.ascontiguousarray(ksp.transpose(2, 0, 1))
    y = y / np.sqrt(np.mean(np.abs(y) ** 2))
    mps = np.ascontiguousarray(sens.transpose(2, 0, 1))
    mps = mps / np.sqrt(np.max(np.sum(np.abs(mps) ** 2, axis=0)))
    scale = float(np.max(np.abs(mr.linop.Sense(mps, coord=coord).H * y))) / 2
    print(f"SigPy {sigpy.__version__} ({niter} iterations, CPU; lambda relative to max |E^H y|):")
    print()
    print("| method | lambda | NRMSE | wall (s) |")
    print("| --- | --- | --- | --- |")
    for name, app in (("L1WaveletRecon", mr.app.L1WaveletRecon), ("TotalVariationRecon", mr.app.TotalVariationRecon)):
        for lam in lambdas:
            t0 = time.perf_counter()
            x = app(y, mps, lam * scale, coord=coord, max_iter=niter, show_pbar=False).run()
            t1 = time.perf_counter()
            print(f"| {name} | {lam:g} | {nrmse(np.asarray(x), ref):.4f} | {t1 - t0:.2f} |")


if __name__ == "__main__":
    main()
