"""nn.LayerNorm over 4 rows of 9000 (a test fixture shrunk from the corpus' layer_norm_large: the module Inductor
wrote on the H200 for 16384 x 4096, rows cut to 4 and the row length made 9000 in the module, its launch and
meta.json). One looped Welford kernel: a statistics loop, then the loop that writes the row."""
import torch
import torch.nn as nn

ROWS, HIDDEN = 4, 9000


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
