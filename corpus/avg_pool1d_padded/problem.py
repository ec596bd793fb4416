"""avg_pool1d, kernel 5, stride 2, padding 2, padding not counted, over an odd length."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, LENGTH = 4, 8, 301


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool1d(x, kernel_size=5, stride=2, padding=2, count_include_pad=False)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return []
