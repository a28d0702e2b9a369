"""forge operators inside PyTorch's autograd: ``forge.torch.apply(G, x)`` is G x as a differentiable step whose
backward is G^H (and the other way round for ``adjoint``; ``normal``'s backward is the normal itself, G^H G
being Hermitian). Import it explicitly (``import forge.torch``); it needs PyTorch.

PyTorch's convention for complex tensors (conjugate Wirtinger derivatives) makes the vector-Jacobian product of
a linear map x -> G x the adjoint G^H applied to the output's gradient, so the backward of each apply is one
apply of the adjoint, on the same device (CPU tensors on forge's host path, CUDA tensors on its GPU path).
Shapes follow the operator's ishape/oshape as for any forge apply; tensors must have the operator's dtype
(complex64, or complex128 for operators built with dtype=numpy.float64, which gradcheck wants)."""

import torch

from ._operator import _ADJOINT, _FORWARD, _NORMAL, LinearOperator, _require_operator

_MODES = {"forward": _FORWARD, "adjoint": _ADJOINT, "normal": _NORMAL}
_BACKWARD = {_FORWARD: _ADJOINT, _ADJOINT: _FORWARD, _NORMAL: _NORMAL}
_NAMES = {_FORWARD: "x", _ADJOINT: "y", _NORMAL: "x"}


class OperatorFunction(torch.autograd.Function):
    """One forge apply as an autograd Function: ``OperatorFunction.apply(x, G, mode)`` with mode 0 forward,
    1 adjoint, 2 normal."""

    @staticmethod
    def forward(ctx, x, op, mode):
        ctx.op, ctx.mode, ctx.shape = op, mode, x.shape
        # contiguous(): a view inside a network (a transpose, a slice) is copied in its logical order.
        return op._apply(x.detach().contiguous(), mode, _NAMES[mode])

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return None, None, None
        # Through the Function again, so that the backward is differentiable too (double backward, Hessian-vector
        # products); a 1-D output gradient gives a flat result: the input's own shape is the gradient's.
        g = OperatorFunction.apply(grad.contiguous(), ctx.op, _BACKWARD[ctx.mode])
        return g.reshape(ctx.shape), None, None



def apply(op, x, mode="forward"):
    """G x (mode 'forward'), G^H x ('adjoint') or G^H G x ('normal') as a differentiable step."""
    _require_operator(op, None, "forge.torch.apply", "op")
    if mode not in _MODES:
        raise ValueError(f"forge.torch.apply: mode must be 'forward', 'adjoint' or 'normal', got {mode!r}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"forge.torch.apply: x must be a torch.Tensor, got {type(x).__name__}")
    return OperatorFunction.apply(x, op, _MODES[mode])


def forward(op, x):
    return apply(op, x, "forward")


def adjoint(op, y):
    return apply(op, y, "adjoint")


def normal(op, x):
    return apply(op, x, "normal")


class Operator(torch.nn.Module):
    """A forge operator as a torch.nn.Module without parameters: ``Operator(G)(x)`` is ``apply(G, x)``;
    ``.H`` is the module of the adjoint, ``.N`` that of the normal."""

    def __init__(self, op, mode="forward"):
        super().__init__()
        if not isinstance(op, LinearOperator):
            raise TypeError(f"forge.torch.Operator: op must be a forge operator, got {type(op).__name__}")
        if mode not in _MODES:
            raise ValueError(f"forge.torch.Operator: mode must be 'forward', 'adjoint' or 'normal', got {mode!r}")
        self.op, self.mode = op, mode

    def forward(self, x):
        return apply(self.op, x, self.mode)

    @property
    def H(self):
        return Operator(self.op, {"forward": "adjoint", "adjoint": "forward", "normal": "normal"}[self.mode])

    @property
    def N(self):
        return Operator(self.op, "normal")

    def extra_repr(self):
        return f"{self.op!r}, mode={self.mode!r}"
