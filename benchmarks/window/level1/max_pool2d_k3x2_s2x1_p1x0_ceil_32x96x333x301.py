"""max_pool2d with a 3x2 window, stride (2, 1), padding (1, 0) and ceil_mode over 32x96x333x301 fp32
(1.2 GB in: a rectangular window whose last output row reads a partial window)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 96, 333, 301)
SMALL = dict(SHAPE=(2, 4, 37, 29))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
