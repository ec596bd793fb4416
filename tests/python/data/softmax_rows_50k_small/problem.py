"""Row softmax over 50304 columns, bf16 (a scaled-down test fixture of the suite's softmax_8k_50k_bf16): the
module Inductor wrote for it on the H200, with the rows cut from 8192 to 4 in the module, its launch and
meta.json. One looped online-softmax kernel; rows this long get only the two-pass templates, the second
pass forward or last chunk first."""
import torch
import torch.nn as nn

ROWS, COLS, DTYPE = 4, 50304, torch.bfloat16


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS).to(DTYPE)]


def get_init_inputs():
    return []
