"""Causal attention with ALiBi linear position biases and an fp32 softmax, 8x16 heads x 2048 tokens, bf16.

Per-head slopes times the query-key distance are added to the scaled scores, future keys are masked,
the softmax runs in fp32 and is cast back before multiplying V. Two cuBLAS batched GEMMs around Triton
kernels that build the bias and do the masked softmax over 1 GB of scores.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, HEADS, SEQ, HEAD_DIM = 8, 16, 2048, 64
SMALL = dict(BATCH=2, HEADS=4, SEQ=16, HEAD_DIM=8)


class Model(nn.Module):
    def __init__(self, heads, seq, head_dim):
        super().__init__()
        self.scale = head_dim**-0.5
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])
        self.register_buffer("slopes", slopes[:, None, None])
        self.register_buffer("pos", torch.arange(seq))

    def forward(self, q, k, v):
        distance = (self.pos[None, :] - self.pos[:, None]).float()  # key - query, <= 0 where visible
        bias = self.slopes * distance  # (heads, seq, seq)
        scores = torch.matmul(q, k.transpose(-1, -2)).float() * self.scale + bias
        scores = scores.masked_fill(distance > 0, float("-inf"))
        probs = torch.softmax(scores, dim=-1).to(v.dtype)
        return torch.matmul(probs, v)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape).to(torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return [HEADS, SEQ, HEAD_DIM]
