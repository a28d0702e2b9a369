"""forge operators as SciPy linear operators (scipy.sparse.linalg.LinearOperator), for SciPy's iterative solvers
(lsqr, lsmr, cg, gmres, svds, ...). SciPy is imported only here, when the conversion is asked for."""

import numpy as np

from ._operator import LinearOperator, _require_operator


def as_linear_operator(G):
    """G as a ``scipy.sparse.linalg.LinearOperator`` of shape ``(G.codomain_size, G.domain_size)`` and dtype
    ``G.dtype`` on flat host vectors: matvec is G's forward, rmatvec its adjoint, matmat one batched call, ``.H``
    G's adjoint operator. Vectors SciPy hands in are converted to G's dtype (SciPy's solvers work in
    float64/complex128 unless the operator's dtype says otherwise); results are NumPy arrays.
    ``scipy.sparse.linalg.aslinearoperator(G)`` works too (G's own matvec, rmatvec and rmatmat)."""
    _require_operator(G, None, "as_linear_operator")
    try:
        from scipy.sparse.linalg import LinearOperator as SciPyOperator
    except ImportError:
        raise ImportError("as_linear_operator needs SciPy (pip install scipy)") from None

    cd = G.dtype

    def vec(x):
        return np.ascontiguousarray(np.asarray(x).reshape(-1), dtype=cd)

    def mat(X):  # SciPy's (n, k) columns -> forge's (k, n) batch
        return np.ascontiguousarray(np.asarray(X).T, dtype=cd)

    class _ForgeScipyOperator(SciPyOperator):
        def __init__(self):
            super().__init__(dtype=cd, shape=G.shape)
            self.forge_operator = G

        def _matvec(self, x):
            return G.forward(vec(x))

        def _rmatvec(self, y):
            return G.adjoint(vec(y))

        def _matmat(self, X):
            return G.forward(mat(X)).T

        def _rmatmat(self, Y):
            return G.adjoint(mat(Y)).T

        def _adjoint(self):
            return as_linear_operator(G.H)

    return _ForgeScipyOperator()


def _method(self):
    """This operator as a scipy.sparse.linalg.LinearOperator (forge.as_linear_operator)."""
    return as_linear_operator(self)


LinearOperator.aslinearoperator = _method
