"""forge.torch: operators inside PyTorch's autograd. gradcheck in float64 for Gdft, Gnufft, SENSE and
ToeplitzNormal (forward, adjoint, normal), and a small unrolled reconstruction network trained a few steps whose
autograd gradients equal central finite differences. Skipped without PyTorch."""

import numpy as np
import pytest

import forge
from reference import crandn, grid_problem, rel_err

torch = pytest.importorskip("torch")
ftorch = pytest.importorskip("forge.torch")


def operators(rng, n=5, n1=30):
    p = grid_problem(rng, n=n, n1=n1)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"], ishape=(n, n),
                   dtype=np.float64)
    kx = rng.uniform(-n / 2, n / 2, (2, n1 // 2))
    ky = rng.uniform(-n / 2, n / 2, (2, n1 // 2))
    Gn = forge.Gnufft(kx, ky, nx=n + 1, ny=n + 1, dtype=np.float64)
    S = forge.SENSE(G, crandn(rng, 2, n, n))
    T = forge.ToeplitzNormal(kx, ky, nx=n + 1, ny=n + 1, weights=rng.uniform(0.5, 1, (2, n1 // 2)), dtype=np.float64)
    return {"Gdft": G, "Gnufft": Gn, "SENSE": S, "ToeplitzNormal": T}


def tensor(rng, *shape):
    return torch.from_numpy(crandn(rng, *shape)).requires_grad_(True)


@pytest.mark.parametrize("name", ["Gdft", "Gnufft", "SENSE", "ToeplitzNormal"])
def test_gradcheck(rng, name):
    A = operators(rng)[name]
    x, y = tensor(rng, *A.ishape), tensor(rng, *A.oshape)
    assert torch.autograd.gradcheck(lambda v: ftorch.forward(A, v), (x,), eps=1e-6, atol=1e-8)
    assert torch.autograd.gradcheck(lambda v: ftorch.adjoint(A, v), (y,), eps=1e-6, atol=1e-8)
    assert torch.autograd.gradcheck(lambda v: ftorch.normal(A, v), (x,), eps=1e-6, atol=1e-8)
    assert torch.autograd.gradgradcheck(lambda v: ftorch.forward(A, v), (x,), eps=1e-6, atol=1e-8)
    out = ftorch.Operator(A)(x)
    assert rel_err(out.detach().numpy(), A @ x.detach().numpy()) == 0


def test_views_go_in_by_their_values(rng):
    A = operators(rng)["Gnufft"]
    big = tensor(rng, A.ishape[1], A.ishape[0])  # its transpose has A's ishape but is not contiguous
    out = ftorch.forward(A, big.t())
    assert rel_err(out.detach().numpy(), A @ np.ascontiguousarray(big.detach().numpy().T)) == 0
    out.abs().sum().backward()
    assert big.grad is not None and big.grad.shape == big.shape


def test_requires_grad_is_refused_by_plain_applies(rng):
    A = operators(rng)["Gdft"]
    x = tensor(rng, *A.ishape)
    with pytest.raises(ValueError, match=r"Gdft.forward: x requires gradients.*forge.torch.apply\(op, x\).*detach"):
        A @ x
    with pytest.raises(ValueError, match="solve_pwls_pcg: y requires gradients"):
        forge.solve_pwls_pcg(A, tensor(rng, *A.oshape))
    assert rel_err((A @ x.detach()).numpy(), A @ x.detach().numpy()) == 0


class Unrolled(torch.nn.Module):
    """K gradient steps on ||A x - y||^2 with learned step sizes and a learned real pixel-wise damping."""

    def __init__(self, A, K=3):
        super().__init__()
        self.A = ftorch.Operator(A)
        self.steps = torch.nn.Parameter(torch.full((K,), 0.02, dtype=torch.float64))
        self.damping = torch.nn.Parameter(torch.ones(A.ishape, dtype=torch.float64))

    def forward(self, y):
        x = self.A.H(y)
        for s in self.steps:
            x = self.damping * (x - s * self.A.H(self.A(x) - y))
        return x


def test_unrolled_network_trains_with_exact_gradients(rng):
    A = operators(rng)["SENSE"]
    x_true = torch.from_numpy(crandn(rng, *A.ishape))
    y = torch.from_numpy(A @ x_true.numpy()) + 0.01 * torch.from_numpy(crandn(rng, *A.oshape))
    net = Unrolled(A)

    def loss_fn():
        return torch.sum(torch.abs(net(y) - x_true) ** 2)

    loss = loss_fn()
    loss.backward()
    grads = [p.grad.clone() for p in net.parameters()]
    # Central differences of the loss in float64 along a few coordinates of each parameter.
    h = 1e-6
    with torch.no_grad():
        for p, g in zip(net.parameters(), grads):
            flat, gflat = p.view(-1), g.view(-1)
            for i in sorted(set(rng.integers(0, flat.numel(), 3).tolist())):
                old = flat[i].item()
                flat[i] = old + h
                up = loss_fn().item()
                flat[i] = old - h
                down = loss_fn().item()
                flat[i] = old
                fd = (up - down) / (2 * h)
                assert abs(fd - gflat[i].item()) <= 1e-6 * max(1.0, abs(fd)), (i, fd, gflat[i].item())
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
