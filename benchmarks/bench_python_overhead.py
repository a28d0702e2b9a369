#!/usr/bin/env python3
"""The Python layer's cost per apply on the host: a 4x4 Gfft (whose C++ apply takes well under a microsecond)
applied from Python to NumPy arrays, flat and shaped, forward, adjoint (``G.H @ y``) and normal, and through the
algebra (``(2 * G) @ x``, a C++ Chain of two parts). CPU time per call (time.process_time, the best of --rounds
rounds of --calls calls, so that other processes on the machine count little); run with OMP_NUM_THREADS=1.

    OMP_NUM_THREADS=1 PYTHONPATH=<build>/python python3 benchmarks/bench_python_overhead.py [--calls 2000 --rounds 25]

Prints the CPU model and load, then microseconds per call for each case."""

import argparse
import os
import time

import numpy as np

import forge
from bench_env import cpu_model  # beside this script


def best_us(fn, calls, rounds):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=25)
    a = ap.parse_args()
    G = forge.Gfft(4, 4)
    x, xi = np.ones(16, np.complex64), np.ones((4, 4), np.complex64)
    A = 2 * G
    cases = [("G @ x (flat)", lambda: G @ x), ("G.H @ y (flat)", lambda: G.H @ x),
             ("G.normal(x) (flat)", lambda: G.normal(x)), ("G @ x (shaped (4, 4))", lambda: G @ xi),
             ("(2 * G) @ x (shaped)", lambda: A @ xi)]
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores, load average {os.getloadavg()[0]:.2f}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    for name, fn in cases:
        fn()
        print(f"{name:26s} {best_us(fn, a.calls, a.rounds):7.2f} us per call")


if __name__ == "__main__":
    main()
