"""Layer norm over the last three dims of 24x48x181x181 fp32 (rows of 1572528, 151 MB in), with an affine
weight and bias of the normalized shape."""
import torch
import torch.nn as nn

SHAPE = (24, 48, 181, 181)
SMALL = dict(SHAPE=(2, 3, 61, 53))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(SHAPE[1:])
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(SHAPE[1:]))
            self.norm.bias.copy_(0.1 * torch.randn(SHAPE[1:]))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
