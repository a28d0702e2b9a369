#!/usr/bin/env python3
"""Gnufft (forge's Python module) against FINUFFT (pip package finufft) on the CPU, same points, same
image, same requested tolerance, single precision, timed alternately in one process.

    PYTHONPATH=build/python python3 benchmarks/bench_nufft_peer.py [--cases 2d,3d,3dbig]
        [--tols 1e-3,1e-4,1e-5] [--reps 5] [--points uniform,spiral] [--plan-only]

forge's forward s_j = sum_r m(r) exp(-i 2 pi k_j . r) with r = (x - N/2)/N is FINUFFT's type 2 with
isign -1, points 2 pi k_j / N and modes in increasing order (modeord 0); the adjoint is type 1 with
isign +1. forge's image is x fastest, so FINUFFT gets it as (z, y, x) with points (kz, ky, kx).
Prints per case: plan time (constructor / Plan + setpts), median execute time of each direction, the
ratio forge / FINUFFT, and each library's relative error against an exact float64 sum on a subset of
samples (forward) or pixels (adjoint). FINUFFT is not a dependency of forge: install it only to run this.
--plan-only: only the plans, alternating, median and minimum of --reps: forge's constructor (check, sort, FFTW
plan; one plan serves both directions) against FINUFFT's Plan + setpts of type 2 and of type 1, and against one
type alone, on the same number of threads (OMP_NUM_THREADS; FINUFFT gets it as nthreads).

    PYTHONPATH=build/python python3 benchmarks/bench_nufft_peer.py --gpu cupy [--cases ...] [--tols ...] [--reps 5]

--gpu cupy|torch: the GPU plans (forge's CUDA build, float32), median and minimum of --reps after a warm-up, each
ended by a device synchronisation: forge's constructor from host k (upload, device sort, cuFFT plan), the same from
k already on the device ("plan with device k": CuPy arrays or CUDA tensors, checked and sorted there, no host
copy), set_points on device k (a new trajectory, plans kept), and cufinufft's (pip package cufinufft, when
installed) Plan + setpts of type 2 and type 1 from points on the device: the device-k rows compare like with like.
"""
import argparse
import os
import statistics
import time

import numpy as np

import forge
from bench_env import cpu_model  # beside this script

finufft = None  # imported when a CPU mode runs (not a dependency of forge; --help and --gpu need it not)


def machine_line():
    load = os.getloadavg()
    return (f"{cpu_model()}, {os.cpu_count()} logical CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")


def trajectory(kind, n1, shape, rng):
    """k in cycles/FOV per axis (x, y, z), each in [-N/2, N/2): uniform random, or a variable-density
    spiral (2D) / stack of spirals (3D)."""
    N = shape
    if kind == "uniform":
        ks = [rng.uniform(-n / 2, n / 2, n1) if n > 1 else np.zeros(n1) for n in N]
    else:
        arms = 64
        per = n1 // arms
        n1 = per * arms
        f = np.tile(np.linspace(0, 1, per, endpoint=False), arms)
        arm = np.repeat(np.arange(arms), per)
        turns = max(N[0], N[1]) / 8
        r = f ** 1.5
        th = 2 * np.pi * (turns * f + arm / arms)
        kx = r * (N[0] / 2 - 0.5) * np.cos(th)
        ky = r * (N[1] / 2 - 0.5) * np.sin(th)
        kz = rng.uniform(-N[2] / 2, N[2] / 2, n1) if N[2] > 1 else np.zeros(n1)
        ks = [kx, ky, kz]
    out = []
    for k, n in zip(ks, N):
        k = k.astype(np.float32)
        k[k >= n / 2] = -n / 2  # float32 rounding can reach +N/2, outside [-N/2, N/2)
        out.append(k)
    return out


def exact_forward(ks, shape, img, rows):
    """float64 s_j = sum_r m(r) exp(-i 2 pi k_j . r) for samples rows."""
    Nx, Ny, Nz = shape
    m = img.astype(np.complex128).reshape(Nz, Ny, Nx)
    px = (np.arange(Nx) - Nx // 2) / Nx if Nx > 1 else np.zeros(1)
    py = (np.arange(Ny) - Ny // 2) / Ny if Ny > 1 else np.zeros(1)
    pz = (np.arange(Nz) - Nz // 2) / Nz if Nz > 1 else np.zeros(1)
    out = np.empty(len(rows), np.complex128)
    for i, j in enumerate(rows):
        ex = np.exp(-2j * np.pi * float(ks[0][j]) * px)
        ey = np.exp(-2j * np.pi * float(ks[1][j]) * py)
        ez = np.exp(-2j * np.pi * float(ks[2][j]) * pz)
        out[i] = np.einsum("zyx,z,y,x->", m, ez, ey, ex)
    return out


def exact_adjoint(ks, shape, data, pixels):
    """float64 m(r) = sum_j s_j exp(+i 2 pi k_j . r) for the given flat pixel indices."""
    Nx, Ny, Nz = shape
    k = [np.asarray(a, np.float64) for a in ks]
    d = data.astype(np.complex128)
    out = np.empty(len(pixels), np.complex128)
    for i, p in enumerate(pixels):
        x, y, z = p % Nx, (p // Nx) % Ny, p // (Nx * Ny)
        r = [(x - Nx // 2) / Nx if Nx > 1 else 0.0, (y - Ny // 2) / Ny if Ny > 1 else 0.0,
             (z - Nz // 2) / Nz if Nz > 1 else 0.0]
        out[i] = np.sum(d * np.exp(2j * np.pi * (k[0] * r[0] + k[1] * r[1] + k[2] * r[2])))
    return out


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.complex128) - b) / np.linalg.norm(b))


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


def run_case(name, shape, n1, kind, tols, reps, nsub, rng):
    ks = trajectory(kind, n1, shape, rng)
    n1 = ks[0].size
    Nx, Ny, Nz = shape
    n2 = Nx * Ny * Nz
    dims = [n for n in (Nz, Ny, Nx) if n > 1]
    img = (rng.standard_normal(n2) + 1j * rng.standard_normal(n2)).astype(np.complex64)
    data = (rng.standard_normal(n1) + 1j * rng.standard_normal(n1)).astype(np.complex64)
    rows = rng.choice(n1, min(nsub, n1), replace=False)
    pixels = rng.choice(n2, min(nsub, n2), replace=False)
    ref_f = exact_forward(ks, shape, img, rows)
    ref_a = exact_adjoint(ks, shape, data, pixels)
    # FINUFFT's points: 2 pi k / N in float32, in (z, y, x) order for the axes longer than 1.
    pts = [(2 * np.pi * ks[a].astype(np.float64) / shape[a]).astype(np.float32) for a in (2, 1, 0) if shape[a] > 1]
    for tol in tols:
        tp0, G = timed(lambda: forge.Gnufft(ks[0], ks[1], ks[2], nx=Nx, ny=Ny, nz=Nz, tolerance=tol,
                                             dtype=np.float32))

        def fin_plans():
            p2 = finufft.Plan(2, tuple(dims), eps=tol, isign=-1, dtype="complex64")
            p2.setpts(*pts)
            p1 = finufft.Plan(1, tuple(dims), eps=tol, isign=1, dtype="complex64")
            p1.setpts(*pts)
            return p2, p1

        tp1, (p2, p1) = timed(fin_plans)
        f_img = img.reshape(dims)
        tf, ta, ff, fa = [], [], [], []
        out = {}
        for r in range(reps + 1):  # the first round warms up, alternating forge and FINUFFT
            t, out["gf"] = timed(lambda: G.forward(img))
            tf.append(t) if r else None
            t, out["ff"] = timed(lambda: p2.execute(f_img))
            ff.append(t) if r else None
            t, out["ga"] = timed(lambda: G.adjoint(data))
            ta.append(t) if r else None
            t, out["fa"] = timed(lambda: p1.execute(data))
            fa.append(t) if r else None
        e_gf, e_ff = rel(out["gf"][rows], ref_f), rel(out["ff"][rows], ref_f)
        e_ga = rel(out["ga"][pixels], ref_a)
        e_fa = rel(np.asarray(out["fa"]).reshape(-1)[pixels], ref_a)
        med = statistics.median
        print(f"| {name:<22} | {kind:<7} | {tol:5.0e} | W {G.kernel_width:2d} | "
              f"{med(tf) * 1e3:8.2f} | {med(ff) * 1e3:8.2f} | {med(tf) / med(ff):5.2f} | "
              f"{med(ta) * 1e3:8.2f} | {med(fa) * 1e3:8.2f} | {med(ta) / med(fa):5.2f} | "
              f"{e_gf:8.1e} {e_ff:8.1e} | {e_ga:8.1e} {e_fa:8.1e} | {tp0 * 1e3:7.1f} {tp1 * 1e3:7.1f} |",
              flush=True)


def plan_case(name, shape, n1, kind, tols, reps, rng):
    ks = trajectory(kind, n1, shape, rng)
    n1 = ks[0].size
    Nx, Ny, Nz = shape
    dims = tuple(n for n in (Nz, Ny, Nx) if n > 1)
    pts = [(2 * np.pi * ks[a].astype(np.float64) / shape[a]).astype(np.float32) for a in (2, 1, 0) if shape[a] > 1]
    nthreads = int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count()
    for tol in tols:
        tg, tf2, tf1 = [], [], []
        for r in range(reps + 1):  # the first round warms up
            t, G = timed(lambda: forge.Gnufft(ks[0], ks[1], ks[2], nx=Nx, ny=Ny, nz=Nz, tolerance=tol,
                                               dtype=np.float32))
            del G
            tg.append(t) if r else None

            def one(tp, sign):
                p = finufft.Plan(tp, dims, eps=tol, isign=sign, dtype="complex64", nthreads=nthreads)
                p.setpts(*pts)
                return p

            t, p2 = timed(lambda: one(2, -1))
            t1, p1 = timed(lambda: one(1, 1))
            del p2, p1
            if r:
                tf2.append(t)
                tf1.append(t + t1)
        med = statistics.median
        print(f"| {name:<22} | {kind:<7} | {tol:5.0e} | {med(tg) * 1e3:8.1f} ({min(tg) * 1e3:7.1f}) | "
              f"{med(tf1) * 1e3:8.1f} ({min(tf1) * 1e3:7.1f}) | {med(tf2) * 1e3:8.1f} ({min(tf2) * 1e3:7.1f}) | "
              f"{med(tg) / med(tf1):5.2f} | {med(tg) / med(tf2):5.2f} |", flush=True)


class DeviceLib:
    """k to the device and a synchronisation of it, in CuPy or PyTorch."""

    def __init__(self, name):
        self.name = name
        if name == "cupy":
            import cupy

            self.mod = cupy
        else:
            import torch

            self.mod = torch

    def to_device(self, a):
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.from_numpy(np.ascontiguousarray(a)).to("cuda")

    def sync(self):
        if self.name == "cupy":
            self.mod.cuda.Device().synchronize()
        else:
            self.mod.cuda.synchronize()
        forge.synchronize()


def gpu_plan_case(name, shape, n1, kind, tols, reps, rng, lib, cufinufft):
    ks = trajectory(kind, n1, shape, rng)
    Nx, Ny, Nz = shape
    dims = tuple(n for n in (Nz, Ny, Nx) if n > 1)
    dk = [lib.to_device(k) for k in ks]
    # a second trajectory of the same size for set_points: the mirrored one
    dm = [lib.to_device(np.where(k == -n / 2, k, -k).astype(np.float32)) for k, n in zip(ks, shape)]
    pts = [lib.to_device((2 * np.pi * ks[a].astype(np.float64) / shape[a]).astype(np.float32))
           for a in (2, 1, 0) if shape[a] > 1]

    def timed_sync(f):
        lib.sync()
        t0 = time.perf_counter()
        r = f()
        lib.sync()
        return time.perf_counter() - t0, r

    for tol in tols:
        th, td, ts, tc = [], [], [], []
        for r in range(reps + 1):  # the first round warms up
            t, G = timed_sync(lambda: forge.Gnufft(ks[0], ks[1], ks[2], nx=Nx, ny=Ny, nz=Nz, tolerance=tol))
            th.append(t) if r else None
            del G
            t, G = timed_sync(lambda: forge.Gnufft(dk[0], dk[1], dk[2], nx=Nx, ny=Ny, nz=Nz, tolerance=tol))
            td.append(t) if r else None
            t, _ = timed_sync(lambda: G.set_points(dm[0], dm[1], dm[2]))
            ts.append(t) if r else None
            del G
            if cufinufft is not None:
                def plans():
                    p2 = cufinufft.Plan(2, dims, eps=tol, isign=-1, dtype="complex64")
                    p2.setpts(*pts)
                    p1 = cufinufft.Plan(1, dims, eps=tol, isign=1, dtype="complex64")
                    p1.setpts(*pts)
                    return p2, p1

                t, ps = timed_sync(plans)
                tc.append(t) if r else None
                del ps
        med = statistics.median

        def cell(v):
            return f"{med(v) * 1e3:8.2f} ({min(v) * 1e3:7.2f})" if v else "       -          "

        ratio = f"{med(td) / med(tc):5.2f}" if tc else "    -"
        print(f"| {name:<22} | {kind:<7} | {tol:5.0e} | {cell(th)} | {cell(td)} | {cell(ts)} | {cell(tc)} | {ratio} |",
              flush=True)


def gpu_plans(a, cases, tols):
    if not (forge.built_with_cuda() and forge.cuda_available()):
        raise SystemExit("bench_nufft_peer --gpu: forge has no CUDA device here (a CUDA build on a GPU machine)")
    lib = DeviceLib(a.gpu)
    try:
        import cufinufft
    except ImportError:
        cufinufft = None
    peer = f"cufinufft {cufinufft.__version__}" if cufinufft is not None else "cufinufft not installed"
    print(f"bench_nufft_peer --gpu {a.gpu}: forge Gnufft plans vs {peer} (float32) on {forge.device_name()}; "
          f"{machine_line()}")
    print("plan times in ms, median (minimum) of --reps after a warm-up, each ended by a device synchronisation; "
          "forge: constructor from host k (upload, device sort, cuFFT plan), the same with k already on the device, "
          "set_points on device k; cufinufft: Plan + setpts of type 2 and type 1, points on the device; "
          "ratio = forge (device k) / cufinufft")
    print("| case                   | points  | tol   | forge, host k      | forge, device k    | set_points, device k "
          "| cufinufft          | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(2024)
    for c in a.cases.split(","):
        name, shape, n1 = cases[c]
        for kind in a.points.split(","):
            gpu_plan_case(name, shape, n1, kind, tols, a.reps, rng, lib, cufinufft)
    print(f"load after: {os.getloadavg()[0]:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="2d,3d")
    ap.add_argument("--tols", default="1e-3,1e-4,1e-5")
    ap.add_argument("--points", default="uniform,spiral")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--subset", type=int, default=200, help="samples / pixels checked against the exact sum")
    ap.add_argument("--plan-only", action="store_true", help="time the plans only (forge constructor, FINUFFT "
                    "Plan + setpts)")
    ap.add_argument("--gpu", choices=("cupy", "torch"), help="time the GPU plans, with k on the host and on the "
                    "device in this library, against cufinufft's (when installed)")
    a = ap.parse_args()
    cases = {"2d": ("2D 256x256, 131072", (256, 256, 1), 131072),
             "3d": ("3D 64^3, 524288", (64, 64, 64), 524288),
             "3dbig": ("3D 128x128x64, 2M", (128, 128, 64), 2000000)}
    tols = [float(t) for t in a.tols.split(",")]
    if a.gpu:
        gpu_plans(a, cases, tols)
        return
    global finufft
    import finufft

    if a.plan_only:
        print(f"bench_nufft_peer --plan-only: forge Gnufft vs FINUFFT {finufft.__version__} (CPU, float32); "
              f"{machine_line()}")
        print("plan times in ms, median (minimum) of --reps after a warm-up, alternating; forge: constructor (one plan "
              "for both directions); FINUFFT: Plan + setpts of type 2 and type 1, and of type 2 alone; ratio = forge / "
              "FINUFFT")
        print("| case                   | points  | tol   | forge             | FINUFFT 2 types   | FINUFFT 1 type    "
              "| ratio (2) | ratio (1) |")
        print("|---|---|---|---|---|---|---|---|")
        rng = np.random.default_rng(2024)
        for c in a.cases.split(","):
            name, shape, n1 = cases[c]
            for kind in a.points.split(","):
                plan_case(name, shape, n1, kind, tols, a.reps, rng)
        print(f"load after: {os.getloadavg()[0]:.2f}")
        return
    print(f"bench_nufft_peer: forge Gnufft vs FINUFFT {finufft.__version__} (CPU, float32); {machine_line()}")
    print("times in ms (median of --reps after a warm-up); ratio = forge / FINUFFT; errors vs an exact float64 "
          f"sum on {a.subset} samples (fwd) / pixels (adj); plan = constructor / Plan + setpts of both directions")
    print("| case                   | points  | tol   | W    | fwd forge | fwd fin | ratio | adj forge | adj fin "
          "| ratio | fwd err forge  fin | adj err forge  fin | plan forge  fin |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(2024)
    for c in a.cases.split(","):
        name, shape, n1 = cases[c]
        for kind in a.points.split(","):
            run_case(name, shape, n1, kind, tols, a.reps, a.subset, rng)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
