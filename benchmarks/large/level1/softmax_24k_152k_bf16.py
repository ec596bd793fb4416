"""Row softmax over an LLM vocabulary in bf16: 24000 tokens x 152064 logits (Qwen-2 vocabulary).

Large tier (benchmarks/large): every input is 4-9 GB (here 7.3 GB in, 7.3 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Inputs are made in bf16 directly
(no fp32 copy of the full tensor); math upcasts to fp32 inside the kernel.
"""
import torch
import torch.nn as nn

SHAPE = (24000, 152064)
DTYPE = torch.bfloat16
SMALL = dict(SHAPE=(8, 1520))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(SHAPE, dtype=DTYPE)]


def get_init_inputs():
    return []
