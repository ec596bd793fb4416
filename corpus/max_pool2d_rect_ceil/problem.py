"""max_pool2d with a 3x2 window, stride (2, 1), padding (1, 0) and ceil_mode over odd extents."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, HEIGHT, WIDTH = 2, 4, 37, 29


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), ceil_mode=True)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
