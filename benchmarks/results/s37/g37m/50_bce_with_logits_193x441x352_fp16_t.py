"""bce_with_logits loss over two 3-D tensors, reduction=mean; input 193x441x352 float16, transposed.

Problem 50 (family losses) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (193, 441, 352)
DTYPE = torch.float16
LAYOUT = 'transposed'  # how get_inputs lays the input out in memory
REDUCTION = 'mean'
SMALL = dict(SHAPE=(29, 27, 48))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b):
        return F.binary_cross_entropy_with_logits(a, b, reduction=REDUCTION)


def get_inputs():
    return [
        torch.randn(*SHAPE[:-2], SHAPE[-1], SHAPE[-2], dtype=DTYPE).transpose(-2, -1),
        torch.rand(*SHAPE[:-2], SHAPE[-1], SHAPE[-2], dtype=DTYPE).transpose(-2, -1),
    ]


def get_init_inputs():
    return []
