"""Row softmax over 50304 columns (a padded GPT-2 vocabulary), 8192 rows, bf16."""
import torch
import torch.nn as nn

ROWS, COLS, DTYPE = 8192, 50304, torch.bfloat16
SMALL = dict(ROWS=16, COLS=48)  # tests shrink to these for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS).to(DTYPE)]


def get_init_inputs():
    return []
