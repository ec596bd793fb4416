"""Softmax over the outer axis of a 9000 x 64 bf16 tensor (64 columns of 9000, each column strided across
memory), a test fixture written in Inductor's form: the module is the H200's online-softmax kernel of
softmax_rows_50k_small with its loads and store made column-wise (`x0 + 64*r0_1`), its rows made 64 columns of
9000 in the module, its launch and meta.json. Inductor splits such reductions itself where it can; this is the
one-kernel form a segment split takes with tiles of adjacent columns."""
import torch
import torch.nn as nn

ROWS, COLS, DTYPE = 9000, 64, torch.bfloat16


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(ROWS, COLS).to(DTYPE)]


def get_init_inputs():
    return []
