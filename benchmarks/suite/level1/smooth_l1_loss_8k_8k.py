"""smooth L1 (Huber) loss, mean over 8192x8192 fp32 predictions and targets: a full reduction to a scalar."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8192, 8192)
SMALL = dict(SHAPE=(16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target)


def get_inputs():
    return [torch.randn(SHAPE), torch.randn(SHAPE)]


def get_init_inputs():
    return []
