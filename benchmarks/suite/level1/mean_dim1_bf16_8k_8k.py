"""mean over the last dim of 8192x8192 bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8192, 8192)
SMALL = dict(SHAPE=(16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x.mean(dim=-1)


def get_inputs():
    return [torch.randn(SHAPE).to(torch.bfloat16)]


def get_init_inputs():
    return []
