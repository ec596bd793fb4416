"""The float64 reference model (G3's fallback) for models that choose their own precision in forward()."""

import pytest
import torch
import torch.nn as nn

from kernelopt.worker.measure.float64_mode import float64_everywhere


class SelectivePrecision(nn.Module):
    """A bf16 model with an fp32 router, an explicit fp32 softmax and fp32/default-dtype factories."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(16, 16) / 4)
        self.to(torch.bfloat16)
        self.router = nn.Linear(16, 4, bias=False)  # stays fp32

    def forward(self, x):
        h = (x @ self.w).float()
        probs = torch.softmax(self.router(h), dim=-1, dtype=torch.float32)
        bias = torch.zeros(4, dtype=torch.float32) + torch.ones(4)
        return (probs * bias).sum(-1) + h.to(torch.bfloat16).float().mean(-1) + h.type(torch.float16).sum(-1)


def _inputs():
    torch.manual_seed(1)
    return torch.randn(5, 16).to(torch.bfloat16)


def test_converting_the_module_alone_mixes_precisions():
    m, x = SelectivePrecision().double(), _inputs().double()
    with pytest.raises(RuntimeError, match="dtype"):
        m(x)


def test_every_floating_dtype_becomes_float64_and_the_default_is_restored():
    m, x = SelectivePrecision().double(), _inputs().double()
    with float64_everywhere():
        out = m(x)
    assert out.dtype == torch.float64
    assert torch.get_default_dtype() == torch.float32
    # The same arithmetic written out in float64 by hand: no step was rounded to a narrower type.
    h = x @ m.w
    probs = torch.softmax(h @ m.router.weight.T, dim=-1)
    want = probs.sum(-1) + h.mean(-1) + h.sum(-1)
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)


def test_the_default_dtype_is_restored_after_an_error():
    with pytest.raises(ValueError):
        with float64_everywhere():
            raise ValueError("boom")
    assert torch.get_default_dtype() == torch.float32
