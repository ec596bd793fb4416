"""nn.LayerNorm over the last dimension, with learned weight and bias (Welford reduction)."""
import torch
import torch.nn as nn

ROWS, HIDDEN = 128, 512


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        # Non-trivial affine parameters, so a kernel that ignores them is caught.
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
