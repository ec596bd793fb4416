"""Row softmax over 1024 columns, 65536 rows, fp32 (short rows, many of them)."""
import torch
import torch.nn as nn

ROWS, COLS, DTYPE = 65536, 1024, torch.float32
SMALL = dict(ROWS=16, COLS=48)  # tests shrink to these for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS).to(DTYPE)]


def get_init_inputs():
    return []
