"""Row log-softmax over an LLM vocabulary: 12000 tokens x 128256 logits (Llama-3 vocabulary), fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 6.2 GB in, 6.2 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn

SHAPE = (12000, 128256)
SMALL = dict(SHAPE=(8, 1000))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
