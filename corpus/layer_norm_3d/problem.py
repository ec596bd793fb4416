"""layer norm over the last three dims of a 4-D tensor, with affine weights."""
import torch
import torch.nn as nn

BATCH, C, H, W = 4, 8, 12, 12


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
