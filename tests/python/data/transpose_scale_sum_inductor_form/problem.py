"""A transposed bf16 input scaled in float32, then summed over rows: written in Inductor's form with the
scale as its own pointwise kernel (buf0) before the reduction, the shape a prologue fusion inlines."""
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
