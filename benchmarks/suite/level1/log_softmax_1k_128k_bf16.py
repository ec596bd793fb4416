"""Row log-softmax over a 128256-token vocabulary (an LLM's logits), 1024 rows, bf16."""
import torch
import torch.nn as nn

ROWS, COLS, DTYPE = 1024, 128256, torch.bfloat16
SMALL = dict(ROWS=16, COLS=48)  # tests shrink to these for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS).to(DTYPE)]


def get_init_inputs():
    return []
