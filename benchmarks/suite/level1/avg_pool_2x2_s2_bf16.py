"""avg_pool2d 2x2 stride 2 on 32x128x112x112 bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 128, 112, 112)
SMALL = dict(SHAPE=(16, 16, 16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.avg_pool2d(x, 2)


def get_inputs():
    return [torch.randn(SHAPE).to(torch.bfloat16)]


def get_init_inputs():
    return []
