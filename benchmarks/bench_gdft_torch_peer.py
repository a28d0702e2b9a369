#!/usr/bin/env python3
"""forge's exact field-corrected DFT against the same sum written in PyTorch, in one run on one GPU.

The peer is what a PyTorch user would write: per block of samples, the phase matrix
2 pi (k . r) + field_map t (one addmm, float32), exp(-i phase) by torch.polar (complex64) and one complex
matrix product with the coil vectors (cuBLAS CGEMM in FP32, torch's default with TF32 off); the adjoint
sums E^H y over the same blocks. forge is forge.Gdft applied to the same torch tensors (G @ X and G.H @ Y,
X of shape (coils, pixels): SENSE's coil batch). The geometry is of bench_gdft_gpu's kind: random k over the
grid's extent, 25 ms readouts, a smooth +-150 Hz field map. Times are the median of --reps calls after a
warm-up (CUDA events); errors are against a float64 sum (torch, float64) at --rows outputs of the first
and the last coil, the larger of the two.

    PYTHONPATH=<build>/python python3 benchmarks/bench_gdft_torch_peer.py [--sizes 64x64x16,128x128x32]
        [--samples 131072] [--coils 1,8,32] [--reps 3] [--rows 32]

Prints one row per size, coil count and direction: seconds and coil-pairs/s of each, forge's speed-up,
and both errors."""

import argparse
import sys

import numpy as np

import forge


def make_geometry(nx, ny, nz, n1, rng):
    ix, iy, iz = forge.image_coords(nx, ny, nz)
    kx = (rng.uniform(-0.5, 0.5, n1) * nx).astype(np.float32)
    ky = (rng.uniform(-0.5, 0.5, n1) * ny).astype(np.float32)
    kz = (rng.uniform(-0.5, 0.5, n1) * nz).astype(np.float32)
    t = np.linspace(0, 0.025, n1, dtype=np.float32)
    fm = (2 * np.pi * 150 * np.sin(2.0 * ix) * np.cos(3.0 * iy + iz)).astype(np.float32)  # rad/s
    return kx, ky, kz, t, ix, iy, iz, fm


class TorchDft:
    """The exact DFT in PyTorch, blocked over samples so that a block's phase matrix stays near 2^28 entries."""

    def __init__(self, torch, kx, ky, kz, t, ix, iy, iz, fm, dtype):
        dev = "cuda"
        self.torch = torch
        self.K = torch.tensor(np.stack([kx, ky, kz], 1), device=dev, dtype=dtype)  # n1 x 3
        self.R = 2 * np.pi * torch.tensor(np.stack([ix, iy, iz]), device=dev, dtype=dtype)  # 3 x n2
        self.T = torch.tensor(t, device=dev, dtype=dtype)
        self.W = torch.tensor(fm, device=dev, dtype=dtype)
        self.n1, self.n2 = len(kx), len(ix)
        self.block = max(256, (1 << 28) // self.n2)

    def phase_factors(self, j0, j1, sign):  # exp(sign i phase) for samples j0..j1-1: (j1 - j0) x n2
        ph = self.torch.addmm(self.torch.outer(self.T[j0:j1], self.W), self.K[j0:j1], self.R)
        return self.torch.polar(self.torch.ones_like(ph), sign * ph)

    def forward(self, X):  # X: n2 x coils -> n1 x coils
        out = self.torch.empty((self.n1, X.shape[1]), dtype=X.dtype, device=X.device)
        for j0 in range(0, self.n1, self.block):
            j1 = min(j0 + self.block, self.n1)
            out[j0:j1] = self.phase_factors(j0, j1, -1) @ X
        return out

    def adjoint(self, Y):  # Y: n1 x coils -> n2 x coils
        out = self.torch.zeros((self.n2, Y.shape[1]), dtype=Y.dtype, device=Y.device)
        for j0 in range(0, self.n1, self.block):
            j1 = min(j0 + self.block, self.n1)
            out += self.phase_factors(j0, j1, -1).mH @ Y[j0:j1]
        return out


def float64_rows(ref64, forward, inp, rows):
    """Float64 outputs at the given rows for one input vector (float64 sum in torch)."""
    torch = ref64.torch
    if forward:
        ph = torch.addmm(torch.outer(ref64.T[rows], ref64.W), ref64.K[rows], ref64.R)  # rows x n2
        return torch.polar(torch.ones_like(ph), -ph) @ inp
    ph = torch.addmm(torch.outer(ref64.T, ref64.W[rows]), ref64.K, ref64.R[:, rows])  # n1 x rows
    return torch.polar(torch.ones_like(ph), ph).T @ inp


def rel_error(a, b):
    return float((a - b).norm() / b.norm())


def median_seconds(torch, fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    return sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64x64x16,128x128x32")
    ap.add_argument("--samples", type=int, default=131072)
    ap.add_argument("--coils", default="1,8,32")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rows", type=int, default=32)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_gdft_torch_peer: SKIPPED (PyTorch is not importable)")
        return 0
    if not forge.cuda_available() or not torch.cuda.is_available():
        print(f"bench_gdft_torch_peer: SKIPPED (no CUDA device; forge sees {forge.device_name()})")
        return 0
    coils = [int(c) for c in a.coils.split(",")]
    print(f"bench_gdft_torch_peer: forge {forge.__version__} against PyTorch {torch.__version__} on "
          f"{torch.cuda.get_device_name()}, float32, {a.samples} samples, median of {a.reps} after a warm-up")
    print(f"{'pixels':>14} {'coils':>5} {'dir':<8} {'forge s':>9} {'torch s':>9} {'forge pairs/s':>14} "
          f"{'torch pairs/s':>14} {'speed-up':>9} {'forge err':>10} {'torch err':>10}")
    rng = np.random.default_rng(7)
    for size in a.sizes.split(","):
        nx, ny, nz = (int(v) for v in size.split("x"))
        geo = make_geometry(nx, ny, nz, a.samples, rng)
        kx, ky, kz, t, ix, iy, iz, fm = geo
        G = forge.Gdft(kx, ky, kz, ix=ix, iy=iy, iz=iz, field_map=fm, t=t)
        G.prepare_device()
        peer = TorchDft(torch, *geo, dtype=torch.float32)
        ref64 = TorchDft(torch, *geo, dtype=torch.float64)
        n1, n2 = peer.n1, peer.n2
        for nb in coils:
            X = torch.randn((nb, n2), dtype=torch.complex64, device="cuda")  # forge's layout: coils x pixels
            Y = torch.randn((nb, n1), dtype=torch.complex64, device="cuda")
            for forward in (True, False):
                inp = X if forward else Y
                inp_forge = inp[0] if nb == 1 else inp
                inp_torch = inp.T.contiguous()  # the peer's layout: entries x coils
                op = G if forward else G.H
                fn_torch = peer.forward if forward else peer.adjoint
                out_forge = op @ inp_forge
                out_torch = fn_torch(inp_torch)
                t_forge = median_seconds(torch, lambda: op @ inp_forge, a.reps)
                t_torch = median_seconds(torch, lambda: fn_torch(inp_torch), a.reps)
                out_forge = out_forge.reshape(nb, -1)
                n_out = n1 if forward else n2
                rows = torch.linspace(0, n_out - 1, a.rows, device="cuda").long()
                err_forge = err_torch = 0.0
                for c in sorted({0, nb - 1}):
                    ref = float64_rows(ref64, forward, inp[c].to(torch.complex128), rows)
                    err_forge = max(err_forge, rel_error(out_forge[c, rows].to(torch.complex128), ref))
                    err_torch = max(err_torch, rel_error(out_torch[rows, c].to(torch.complex128), ref))
                pairs = float(nb) * n1 * n2
                print(f"{f'{nx}x{ny}x{nz}':>14} {nb:>5} {'forward' if forward else 'adjoint':<8} {t_forge:>9.4f} "
                      f"{t_torch:>9.4f} {pairs / t_forge:>14.3e} {pairs / t_torch:>14.3e} "
                      f"{t_torch / t_forge:>8.1f}x {err_forge:>10.2e} {err_torch:>10.2e}", flush=True)
                del out_forge, out_torch
    return 0


if __name__ == "__main__":
    sys.exit(main())
