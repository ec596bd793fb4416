"""L1 normalize over dim 0 of a 77 x 24 x 41 bfloat16 tensor laid out with its last two dims transposed (a fixture
in Inductor's form).

Captured on the GPU at 663 x 227 x 2099 and shrunk: Inductor writes one looped reduction whose rows (the 77 values
of a column) run across the contiguous axis, `x0 + 984*r0_1`, summing |x| in a first loop and dividing in a second.
The single-pass rewrite's column tiles (32 or 64 columns a program) hold a program's columns whole.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (77, 24, 41)


class Model(nn.Module):
    def forward(self, x):
        return F.normalize(x, p=1.0, dim=0)


def get_inputs():
    return [torch.randn(SHAPE[0], SHAPE[2], SHAPE[1], dtype=torch.bfloat16).transpose(-2, -1)]


def get_init_inputs():
    return []
