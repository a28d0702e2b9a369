#!/usr/bin/env python3
"""Overhead of forge's Python face over its C++ calls: the same Gdft (64x64x16 image, 131072 samples,
float32, field map on) applied to the same device arrays, timed in one run from Python (``G @ x``,
``G.H @ y``: array checks, output allocation by CuPy/PyTorch, the call into C++) and from a C++ loop in
the extension (``LinearOperator.time_apply``: LinearOperator::apply on the raw device pointers, no Python
per call). Two ways each: queued (calls back to back, one device synchronisation at the end: throughput)
and synchronised (a device synchronisation after every call: the latency of one call). The C++ and Python
loops alternate for --rounds rounds and the fastest round of each counts (clock and load drift).

    PYTHONPATH=<build>/python python3 benchmarks/bench_python_gdft.py [--library cupy|torch|numpy]
        [--repeats 30] [--nx 64 --ny 64 --nz 16 --samples 131072] [--max-overhead 0.05]

Prints one row per direction: ms per call from C++, from Python, and the overhead (Python - C++) / C++;
exits 1 when an overhead exceeds --max-overhead. With --library numpy it times the CPU path (use a small
problem: --nz 1 --samples 8192)."""

import argparse
import sys
import time

import numpy as np

import forge


def make_problem(nx, ny, nz, n1, rng):
    ix, iy, iz = forge.image_coords(nx, ny, nz)
    kx = rng.uniform(-nx / 2, nx / 2, n1).astype(np.float32)
    ky = rng.uniform(-ny / 2, ny / 2, n1).astype(np.float32)
    kz = rng.uniform(-nz / 2, nz / 2, n1).astype(np.float32) if nz > 1 else np.zeros(n1, np.float32)
    fm = (2 * np.pi * rng.uniform(-50, 50, nx * ny * nz)).astype(np.float32)  # rad/s
    t = np.linspace(0, 20e-3, n1, dtype=np.float32)  # s
    return forge.Gdft(kx, ky, kz, ix=ix, iy=iy, iz=iz, field_map=fm, t=t)


def to_library(name, a):
    if name == "cupy":
        import cupy

        return cupy.asarray(a), cupy.cuda.Device().synchronize
    if name == "torch":
        import torch

        return torch.from_numpy(a).to("cuda"), torch.cuda.synchronize
    return a, (lambda: None)


def time_python(fn, arg, repeats, sync, sync_each):
    fn(arg)
    sync()
    forge.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        out = fn(arg)
        if sync_each:
            sync()
            forge.synchronize()
    sync()
    forge.synchronize()
    del out
    return (time.perf_counter() - t0) / repeats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", choices=["cupy", "torch", "numpy"], default=None,
                    help="array library (default: cupy if importable with a device, else torch)")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--nx", type=int, default=64)
    ap.add_argument("--ny", type=int, default=64)
    ap.add_argument("--nz", type=int, default=16)
    ap.add_argument("--samples", type=int, default=131072)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-overhead", type=float, default=0.05)
    a = ap.parse_args()

    lib = a.library
    if lib is None:
        for cand in ("cupy", "torch"):
            try:
                __import__(cand)
                lib = cand
                break
            except ImportError:
                pass
    if lib in ("cupy", "torch") and not forge.cuda_available():
        print(f"bench_python_gdft: SKIPPED (no CUDA device for forge; device: {forge.device_name()})")
        return 0
    if lib is None:
        print("bench_python_gdft: SKIPPED (neither CuPy nor PyTorch is importable)")
        return 0

    rng = np.random.default_rng(1)
    G = make_problem(a.nx, a.ny, a.nz, a.samples, rng)
    G.prepare_device() if lib != "numpy" else None
    x = (rng.standard_normal(G.domain_size) + 1j * rng.standard_normal(G.domain_size)).astype(np.complex64)
    y = (rng.standard_normal(G.codomain_size) + 1j * rng.standard_normal(G.codomain_size)).astype(np.complex64)
    gx, sync = to_library(lib, x)
    gy, _ = to_library(lib, y)
    out_y = (G @ gx)  # output buffers of the right library and place for the C++ loop
    out_x = (G.H @ gy)
    sync()

    print(f"forge {forge.__version__}, device {forge.device_name()}, library {lib}")
    print(f"Gdft float32: image {a.nx}x{a.ny}x{a.nz} = {G.domain_size} px, {G.codomain_size} samples, "
          f"{a.repeats} calls per timing")
    print(f"{'direction':<10}{'timing':<14}{'C++ ms/call':>14}{'Python ms/call':>16}{'overhead':>11}")
    worst = 0.0
    for name, mode, inp, out, fn in (("forward", 0, gx, out_y, lambda v: G @ v),
                                     ("adjoint", 1, gy, out_x, lambda v: G.H @ v)):
        for sync_each in (False, True):
            cpp, py = float("inf"), float("inf")
            for _ in range(a.rounds):
                cpp = min(cpp, G._native.time_apply(inp, out, 1, mode, a.repeats, sync_each))
                py = min(py, time_python(fn, inp, a.repeats, sync, sync_each))
            over = (py - cpp) / cpp
            worst = max(worst, over)
            timing = "synchronised" if sync_each else "queued"
            print(f"{name:<10}{timing:<14}{cpp * 1e3:>14.3f}{py * 1e3:>16.3f}{over * 100:>10.2f}%")
    ok = worst <= a.max_overhead
    print(f"bench_python_gdft: worst overhead {worst * 100:.2f}% "
          f"({'within' if ok else 'ABOVE'} the {a.max_overhead * 100:.0f}% bound)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
