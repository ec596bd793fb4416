"""layer_norm over the last dim of a 2-D tensor with long rows; input 4099x262147 float32, contiguous (fresh shape)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (4099, 262147)
DTYPE = torch.float32
SMALL = dict(SHAPE=(5, 9001))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(SHAPE[-1]))
        self.bias = nn.Parameter(0.1 * torch.randn(SHAPE[-1]))

    def forward(self, a):
        return F.layer_norm(a, (SHAPE[-1],), self.weight, self.bias, 1e-5)


def get_inputs():
    return [torch.randn(SHAPE, dtype=DTYPE)]


def get_init_inputs():
    return []
