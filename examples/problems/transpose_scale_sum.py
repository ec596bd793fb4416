"""A transposed bf16 input scaled in float32, then summed over rows (1024 x 64 in, 64 out).

The problem of tests/python/data/transpose_scale_sum_inductor_form, a bundle written by hand in Inductor's form
with the scale as its own pointwise kernel before the reduction (a prologue fusion case, docs/optimize.md,
"Regions"). Captured on a GPU, Inductor may inline the scale into the reduction itself: `kernelopt inspect` on the
capture says whether it left the two kernels apart.
"""
import torch
import torch.nn as nn

ROWS, COLS = 1024, 64


class Model(nn.Module):
    def forward(self, x):
        return (x.t().float() * 2.0).sum(-1)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
