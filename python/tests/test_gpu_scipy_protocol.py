"""SciPy's operator protocol (matvec, rmatvec, matmat, rmatmat) on device arrays: CuPy arrays and CUDA tensors go
to forge's GPU path in their own layout ((n,), (n, 1), (n, k) columns, strided column views included) and stay
on the device; the results equal the host path's. Skips without a CUDA device, forge's CUDA build or CuPy/PyTorch."""

import numpy as np
import pytest

from reference import crandn, rel_err
from test_gpu import lib, make_gdft, no_transfers  # noqa: F401 (lib is a fixture)

pytestmark = pytest.mark.gpu


def test_protocol_on_device_arrays_equals_host(lib, rng):  # noqa: F811
    G, _ = make_gdft(rng, n=12, n1=400)
    G.prepare_device()
    x = crandn(rng, G.domain_size, dtype=np.complex64)
    y = crandn(rng, G.codomain_size, dtype=np.complex64)
    X = crandn(rng, G.domain_size, 3, dtype=np.complex64)
    Y = crandn(rng, G.codomain_size, 2, dtype=np.complex64)
    dx, dy, dX, dY = (lib.to_device(a) for a in (x, y, X, Y))
    got = no_transfers(lambda: [G.matvec(dx), G.matvec(dx[:, None]), G.rmatvec(dy), G.matmat(dX),
                                G.rmatmat(dY), G.matvec(dX[:, 1])])
    want = [G.matvec(x), G.matvec(x[:, None]), G.rmatvec(y), G.matmat(X), G.rmatmat(Y), G.matvec(X[:, 1])]
    for g, w in zip(got, want):
        assert lib.is_device_array(g) and tuple(g.shape) == w.shape
        assert rel_err(lib.to_host(g), w) < 1e-5
