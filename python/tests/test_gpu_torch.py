"""forge.torch on CUDA tensors: the forward and the backward (the adjoint) of Gdft, Gnufft and SENSE run on the
device, equal the CPU path's, and move no vector between host and device; gradcheck in float64 for Gfft (its GPU
path has both precisions). Skips without a CUDA device, forge's CUDA build or PyTorch."""

import numpy as np
import pytest

import forge
from reference import crandn, rel_err
from test_gpu import Lib, make_gdft, no_transfers

pytestmark = pytest.mark.gpu


@pytest.fixture
def torch():
    return Lib("torch").mod


def test_backward_on_device_equals_host(torch, rng):
    ftorch = pytest.importorskip("forge.torch")
    G, _ = make_gdft(rng, n=12, n1=400)
    kx, ky = rng.uniform(-6, 6, (2, 3, 200))
    ops = [G, forge.Gnufft(kx, ky, nx=12, ny=12), forge.SENSE(G, crandn(rng, 3, G.domain_size, dtype=np.complex64))]
    for A in ops:
        A.prepare_device()
        x0 = crandn(rng, *A.ishape, dtype=np.complex64)
        # the output's own shape: oshape for a shaped input, flat for a flat one (SENSE over a flat Gdft)
        w = crandn(rng, *(A @ x0).shape, dtype=np.complex64)
        grads = []
        for device in ("cpu", "cuda"):
            x = torch.from_numpy(x0).to(device).requires_grad_(True)
            wt = torch.from_numpy(w).to(device)

            def step():
                loss = torch.sum(torch.real(torch.conj(wt) * ftorch.forward(A, x)))
                loss.backward()
                return loss

            (no_transfers(step) if device == "cuda" else step())
            assert x.grad.device.type == device
            grads.append(x.grad.cpu().numpy())
        assert rel_err(grads[1], grads[0]) < 1e-4
        assert rel_err(grads[0], (A.H @ w).reshape(A.ishape)) < 1e-5  # d Re<w, A x> / d conj(x) = A^H w


def test_gradcheck_gfft_on_device(torch, rng):
    ftorch = pytest.importorskip("forge.torch")
    G = forge.Gfft(4, 6, dtype=np.float64)
    x = torch.from_numpy(crandn(rng, 6, 4)).to("cuda").requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: ftorch.forward(G, v), (x,), eps=1e-6, atol=1e-8)
