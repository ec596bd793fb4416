"""max_pool1d kernel 4, stride 2, padding 2, dilation 2 over 48x96x163841 fp32 (3.0 GB in: a dilated
temporal pool over long sequences; Inductor's unsqueezed 2-D form, recognized by pattern:window)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (48, 96, 163841)
SMALL = dict(SHAPE=(2, 4, 203))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool1d(x, kernel_size=4, stride=2, padding=2, dilation=2)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
