#!/usr/bin/env python3
"""forge's Python package against SigPy, MRI-NUFFT (its FINUFFT backend) and mrpro (PyTorch) on the CPU: the jobs
each of them can run, on the same data, timed alternately in one process (docs/benchmarks.md, "Python peers").

    PYTHONPATH=build/python /tmp/peer-venv/bin/python benchmarks/bench_python_peers.py [--n 128] [--reps 5]
        [--coils 8] [--cg 20] [--cs 50]

The peers are not dependencies of forge: a virtual environment with `pip install sigpy mri-nufft finufft mrpro` runs
this, with forge's build on PYTHONPATH; a peer that is not installed gets "-". Jobs (single precision, each library's
default accuracy; plans and operators are made once, outside the timing):
  nufft-radial, nufft-spiral  forward and adjoint of one 2-D NUFFT on an n x n image: radial (n spokes of 2n samples)
                              and spiral (16 interleaves at the Nyquist spacing, forge.trajectories.spiral); error
                              against an exact float64 sum on 512 samples (forward) or 512 pixels (adjoint), after the
                              complex scalar that best matches (the libraries scale by 1 or 1/sqrt(n^2)); mrpro:
                              FourierOp on KTrajectory(kz=0, ky, kx) with forge's cycles/FOV as they are and an
                              encoding matrix of n (it computes 2 pi k / n; FINUFFT, eps 1e-6, via pytorch-finufft),
                              on torch tensors (other, coils, z, y, x) and (other, coils, k2, k1, k0)
  sense-cg                    SENSE on the spiral, `coils` coils, `cg` conjugate-gradient iterations on the normal
                              equations, no penalty: forge.solve_pwls_pcg(SENSE(Gnufft, maps), y) and SigPy's
                              SenseRecon(lamda=0); MRI-NUFFT's extras.optim.cg (a gradient method with momentum and
                              a step from the operator's Lipschitz constant, computed in every call) on its SENSE
                              operator (smaps); mrpro's optimizers.cg on (FourierOp @ SensitivityOp).gram (the NUFFT
                              part a Toeplitz embedding, its kernel made once with the operator, outside the timing,
                              as mrpro's IterativeSENSEReconstruction does) and right-hand side A^H y; error: NRMSE
                              of the magnitude against the true image (scale fit)
  l1-wavelet                  radial, n/4 spokes, `coils` coils, `cs` FISTA iterations of ||y - E x||^2 + lam ||W x||_1
                              (db4, no random shifts, the same lam: forge's relative lam = 1e-3 is SigPy's
                              lamda = 1e-3 max|E^H y| / 2 in SigPy's scaling of E):
                              forge.l1_wavelet_recon(solver='fista') and SigPy's L1WaveletRecon; mrpro's
                              optimizers.pgd (FISTA) on the wavelet coefficients c, x = W^H c, of
                              1/2 ||A W^H c - y||^2 + lamda ||c||_1 (WaveletOp db4, L1Norm, SigPy's lamda; gradients
                              by autograd; step 0.9 / ||A W^H||^2 from 30 power iterations in every call, as in
                              mrpro's FISTA example); error as sense-cg
Data: a two-level ellipse phantom, Gaussian coil maps (normalised to a root-sum-of-squares of 1), data from forge's
float64 exact DFT (Gdft) plus complex noise at 1% of the data's RMS. Times: the median of --reps runs (5 x --reps
for the NUFFTs; one warm-up run first: SigPy's numba compiles on it; torch at its default thread count). Ratios are
the peer's time over forge's (above 1: forge is faster).
"""
import argparse
import importlib.metadata
import os
import warnings
import statistics
import time

import numpy as np

import forge
from bench_env import cpu_model  # beside this script


def version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def median_time(f, reps):
    f()                                                       # warm-up (numba compiles, caches fill)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scaled_error(x, ref):
    """||a x - ref|| / ||ref|| with the complex a that minimises it."""
    x, ref = np.asarray(x, np.complex128).ravel(), np.asarray(ref, np.complex128).ravel()
    a = np.vdot(x, ref) / np.vdot(x, x)
    return float(np.linalg.norm(a * x - ref) / np.linalg.norm(ref))


def magnitude_nrmse(x, ref):
    ax, ar = np.abs(np.asarray(x)).ravel(), np.abs(ref).ravel()
    a = np.dot(ax, ar) / np.dot(ax, ax)
    return float(np.linalg.norm(a * ax - ar) / np.linalg.norm(ar))


def phantom(n):
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    img = ((xx ** 2 + (yy / 0.8) ** 2) < 0.7) * (1 + 0.5 * (xx > 0.2)) - 0.6 * (np.hypot(xx + 0.3, yy + 0.1) < 0.15)
    return img.astype(np.complex64)


def coil_maps(n, nc):
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    a = 2 * np.pi * np.arange(nc) / nc
    m = np.exp(-((xx - np.cos(a)[:, None, None]) ** 2 + (yy - np.sin(a)[:, None, None]) ** 2) + 1j * a[:, None, None])
    return (m / np.sqrt((np.abs(m) ** 2).sum(0))).astype(np.complex64)


def exact_forward(img, kx, ky, rows):
    """forge's forward s_j = sum_r m(r) exp(-i 2 pi k_j . r), r = (x - n/2)/n, at samples `rows`, float64."""
    ny, nx = img.shape
    iy, ix = np.meshgrid((np.arange(ny) - ny // 2) / ny, (np.arange(nx) - nx // 2) / nx, indexing="ij")
    ph = np.outer(kx.ravel()[rows], ix.ravel()) + np.outer(ky.ravel()[rows], iy.ravel())
    return np.exp(-2j * np.pi * ph) @ img.ravel().astype(np.complex128)


def exact_adjoint(y, kx, ky, n, pixels):
    iy, ix = np.divmod(pixels, n)
    ph = np.outer((ix - n // 2) / n, kx.ravel()) + np.outer((iy - n // 2) / n, ky.ravel())
    return np.exp(2j * np.pi * ph) @ y.ravel().astype(np.complex128)


def simulate(kx, ky, img, maps, rng):
    """Coil data (coils, *kx.shape) from forge's float64 exact DFT, plus 1% complex noise."""
    n = img.shape[0]
    ix, iy = forge.image_coords(n, n)[:2]
    G = forge.Gdft(kx.ravel(), ky.ravel(), ix=ix, iy=iy, ishape=(n, n), dtype=np.float64)
    y = np.stack([G @ (m * img).astype(np.complex128) for m in maps]).reshape((len(maps),) + kx.shape)
    noise = rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)
    y = y + 0.01 * np.sqrt(np.mean(np.abs(y) ** 2)) / np.sqrt(2) * noise
    return y.astype(np.complex64)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=128)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--coils", type=int, default=8)
    p.add_argument("--cg", type=int, default=20)
    p.add_argument("--cs", type=int, default=50)
    args = p.parse_args()
    n, nc = args.n, args.coils
    rng = np.random.default_rng(0)

    try:
        import sigpy
        import sigpy.mri as mr
    except ImportError:
        sigpy = None
    try:
        from mrinufft import get_operator
    except ImportError:
        get_operator = None
    try:
        import torch
        from mrpro.algorithms.optimizers import cg as mrpro_cg, pgd
        from mrpro.data import KTrajectory, SpatialDimension
        from mrpro.operators import FourierOp, SensitivityOp, WaveletOp
        from mrpro.operators.functionals import L1Norm, L2NormSquared

        torch.manual_seed(0)
    except ImportError:
        torch = None
    # MRI-NUFFT: [-0.5, 0.5) -> radians; set after the imports, which can reset the filters
    warnings.filterwarnings("ignore", message="Samples will be rescaled")

    def mrpro_fourier(kx, ky):
        """mrpro's FourierOp for forge's k in cycles/FOV, kx and ky of shape (k1, k0)."""
        k = [torch.from_numpy(np.ascontiguousarray(a)).view(1, 1, 1, *a.shape) for a in (ky, kx)]
        grid = SpatialDimension(1, n, n)
        return FourierOp(grid, grid, KTrajectory(torch.zeros(1, 1, 1, 1, 1), *k))

    def mrpro_sense(kx, ky):
        return mrpro_fourier(kx, ky) @ SensitivityOp(torch.from_numpy(maps).view(1, nc, 1, n, n))

    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores, load {os.getloadavg()[0]:.2f} at the start; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    torch_threads = f", {torch.get_num_threads()} threads" if torch is not None else ""
    print(f"forge {forge.__version__}, SigPy {version('sigpy')}, MRI-NUFFT {version('mri-nufft')} (FINUFFT "
          f"{version('finufft')}), mrpro {version('mrpro')} (PyTorch {version('torch')}{torch_threads}), NumPy "
          f"{np.__version__}; median of {args.reps} runs (NUFFTs: {5 * args.reps}) after a warm-up")
    print()
    print("| job | size | forge (s) | SigPy (s) | MRI-NUFFT (s) | mrpro (s) | SigPy / forge | MRI-NUFFT / forge "
          "| mrpro / forge | error forge | error SigPy | error MRI-NUFFT | error mrpro |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    peers = ("sigpy", "mrinufft", "mrpro")

    def row(job, size, times, errors):
        f = times["forge"]
        cells = [f"{times[k]:.4f}" if times.get(k) is not None else "-" for k in ("forge",) + peers]
        ratios = [f"{times[k] / f:.2f}" if times.get(k) is not None else "-" for k in peers]
        errs = [f"{errors[k]:.1e}" if errors.get(k) is not None else "-" for k in ("forge",) + peers]
        print(f"| {job} | {size} | " + " | ".join(cells + ratios + errs) + " |", flush=True)

    img = phantom(n)
    maps = coil_maps(n, nc)
    trajectories = {"radial": forge.trajectories.radial(n, spokes=n),
                    "spiral": forge.trajectories.spiral(n, interleaves=16)}
    for name, (kx, ky) in trajectories.items():
        kx, ky = kx.astype(np.float32), ky.astype(np.float32)
        m = kx.size
        rows = rng.choice(m, 512, replace=False)
        pixels = rng.choice(n * n, 512, replace=False)
        yk = (rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(np.complex64)
        ref_f = exact_forward(img, kx, ky, rows)
        ref_a = exact_adjoint(yk, kx, ky, n, pixels)
        G = forge.Gnufft(kx.ravel(), ky.ravel(), nx=n, ny=n)
        tools = {"forge": (lambda x: G @ x, lambda y: G.H @ y)}
        if sigpy is not None:
            coord = np.stack([ky.ravel(), kx.ravel()], -1)    # SigPy: the last axis (y, x) as the image's axes
            tools["sigpy"] = (lambda x: sigpy.nufft(x, coord), lambda y: sigpy.nufft_adjoint(y, coord, (n, n)))
        if get_operator is not None:
            op = get_operator("finufft")(np.stack([ky.ravel(), kx.ravel()], -1) / n, shape=(n, n), density=False)
            tools["mrinufft"] = (lambda x: op.op(x), lambda y: op.adj_op(y))
        if torch is not None:
            F = mrpro_fourier(kx, ky)
            tools["mrpro"] = (lambda x: F(torch.from_numpy(x).view(1, 1, 1, n, n))[0],
                              lambda y: F.H(torch.from_numpy(y).view(1, 1, 1, *kx.shape))[0])
        for direction, d in (("forward", 0), ("adjoint", 1)):
            times, errors = {}, {}
            arg = img if d == 0 else yk
            for tool, fns in tools.items():
                times[tool] = median_time(lambda: fns[d](arg), 5 * args.reps)
                out = np.asarray(fns[d](arg)).ravel()
                errors[tool] = scaled_error(out[rows], ref_f) if d == 0 else scaled_error(out[pixels], ref_a)
            row(f"NUFFT {direction}, {name}", f"{n}^2, {kx.shape[0]} x {kx.shape[1]} samples", times, errors)

    # SENSE CG on the spiral
    kx, ky = (a.astype(np.float32) for a in trajectories["spiral"])
    y = simulate(kx, ky, img, maps, rng)
    S = forge.SENSE(forge.Gnufft(kx, ky, nx=n, ny=n), maps)
    times, errors, results = {}, {}, {}
    results["forge"] = lambda: forge.solve_pwls_pcg(S, y, niter=args.cg)
    if sigpy is not None:
        coord = np.stack([ky, kx], -1)
        results["sigpy"] = lambda: mr.app.SenseRecon(y, maps, lamda=0, coord=coord, max_iter=args.cg,
                                                     show_pbar=False).run()
    if get_operator is not None:
        from mrinufft.extras.optim import cg

        op = get_operator("finufft")(np.stack([ky.ravel(), kx.ravel()], -1) / n, shape=(n, n), n_coils=nc,
                                     smaps=maps, density=False)
        yc = y.reshape(nc, -1)
        results["mrinufft"] = lambda: cg(op, yc, max_iter=args.cg, tol=0.0, progressbar=False)
    gram_s = None
    if torch is not None:
        A = mrpro_sense(kx, ky)
        t0 = time.perf_counter()
        AhA = A.gram                                          # Toeplitz: the kernel is made here
        gram_s = time.perf_counter() - t0
        yt = torch.from_numpy(y).view(1, nc, 1, *kx.shape)
        results["mrpro"] = lambda: mrpro_cg(AhA, A.H(yt)[0], max_iterations=args.cg, tolerance=0.0)[0]
    for tool, f in results.items():
        times[tool] = median_time(f, args.reps)
        errors[tool] = magnitude_nrmse(f(), img)
    row(f"SENSE CG, spiral, {args.cg} iterations", f"{n}^2, {nc} coils, {kx.size} samples", times, errors)

    # L1-wavelet on undersampled radial
    kx, ky = (a.astype(np.float32) for a in forge.trajectories.radial(n, spokes=n // 4))
    y = simulate(kx, ky, img, maps, rng)
    G = forge.Gnufft(kx, ky, nx=n, ny=n)
    lam = 1e-3
    times, errors, results = {}, {}, {}
    results["forge"] = lambda: forge.l1_wavelet_recon(G, y, lam=lam, maps=maps, niter=args.cs, solver="fista",
                                                      wavelet="db4", random_shift=False)
    if sigpy is not None:
        coord = np.stack([ky, kx], -1)
        E = mr.linop.Sense(maps, coord=coord)
        lamda = lam * float(np.abs(E.H * y).max()) / 2
        results["sigpy"] = lambda: mr.app.L1WaveletRecon(y, maps, lamda, coord=coord, wave_name="db4",
                                                         max_iter=args.cs, show_pbar=False).run()
    if torch is not None:
        A = mrpro_sense(kx, ky)
        W = WaveletOp(domain_shape=(n, n), dim=(-2, -1), wavelet_name="db4")
        yt = torch.from_numpy(y).view(1, nc, 1, *kx.shape)
        AW = A @ W.H
        f_data = 0.5 * L2NormSquared(target=yt) @ AW
        g_l1 = lam * float(A.H(yt)[0].abs().max()) / 2 * L1Norm()

        def mrpro_fista():
            c0 = W(torch.zeros(1, 1, 1, n, n, dtype=torch.complex64))[0]
            norm = AW.operator_norm(torch.randn_like(c0), dim=None, max_iterations=30).item()
            (c,) = pgd(f_data, g_l1, c0, stepsize=0.9 / norm ** 2, max_iterations=args.cs)
            return W.H(c)[0].detach()

        results["mrpro"] = mrpro_fista
    for tool, f in results.items():
        times[tool] = median_time(f, args.reps)
        errors[tool] = magnitude_nrmse(f(), img)
    row(f"L1-wavelet FISTA, radial, {args.cs} iterations", f"{n}^2, {nc} coils, {kx.shape[0]} spokes x "
        f"{kx.shape[1]}", times, errors)
    print()
    print(f"load {os.getloadavg()[0]:.2f} at the end" +
          (f"; mrpro's SENSE gram (Toeplitz kernel) took {gram_s:.2f} s to make" if gram_s is not None else ""))


if __name__ == "__main__":
    main()
