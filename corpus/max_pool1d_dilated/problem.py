"""max_pool1d, kernel 4, stride 2, padding 2, dilation 2 over an odd length (Inductor's unsqueezed 2-D form)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, LENGTH = 4, 8, 203


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool1d(x, kernel_size=4, stride=2, padding=2, dilation=2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return []
