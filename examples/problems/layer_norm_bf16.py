"""bfloat16 nn.LayerNorm: bf16 loads/stores with fp32 accumulation inside the kernel."""
import torch
import torch.nn as nn

ROWS, HIDDEN = 128, 512
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.norm.bias.copy_(0.1 * torch.randn(hidden))
        self.to(DTYPE)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(ROWS, HIDDEN, dtype=DTYPE)]


def get_init_inputs():
    return [HIDDEN]
