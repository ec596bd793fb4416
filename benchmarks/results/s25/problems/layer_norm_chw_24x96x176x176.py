"""layer norm over the last three dims (C, H, W) of a 24 x 96 x 176 x 176 fp32 tensor (285 MB in), affine."""
import torch
import torch.nn as nn

BATCH, C, H, W = 24, 96, 176, 176
SMALL = dict(BATCH=2, C=3, H=5, W=7)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm((C, H, W))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []
