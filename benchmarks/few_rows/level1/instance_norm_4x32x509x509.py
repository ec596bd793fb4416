"""Instance norm of 4x32x509x509 fp32 (128 rows of 259081, 133 MB in), no affine, eval mode."""
import torch
import torch.nn as nn

SHAPE = (4, 32, 509, 509)
SMALL = dict(SHAPE=(1, 2, 97, 97))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(SHAPE[1])

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
