"""Squeeze-and-excitation gate: global average pool, Linear 256 -> 16 -> 256 with ReLU and sigmoid, channel rescale.

64x256x56x56 fp32 (205 MB). The pool is a Triton reduction, the two tiny GEMMs go to cuBLAS, and the
sigmoid gate multiplies the full activation in a Triton pointwise kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW, REDUCE = 64, 256, 56, 16
SMALL = dict(BATCH=2, CH=16, HW=6, REDUCE=4)


class Model(nn.Module):
    def __init__(self, ch, reduce):
        super().__init__()
        self.fc1 = nn.Linear(ch, ch // reduce)
        self.fc2 = nn.Linear(ch // reduce, ch)

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        g = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * g[:, :, None, None]


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW)]


def get_init_inputs():
    return [CH, REDUCE]
