"""Decoder attention probabilities: causal-masked softmax(Q K^T / sqrt(d)), 4x16 heads x 2048x2048, fp32.

Models that return their attention maps materialize this tensor (1 GB here). cuBLAS does Q K^T; the
scale, the lower-triangular mask (a constant buffer) and the softmax are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, HEADS, SEQ, HEAD_DIM = 4, 16, 2048, 64
SMALL = dict(BATCH=2, HEADS=2, SEQ=16, HEAD_DIM=8)


class Model(nn.Module):
    def __init__(self, seq, head_dim):
        super().__init__()
        self.scale = head_dim**-0.5
        self.register_buffer("causal", torch.ones(seq, seq, dtype=torch.bool).tril())

    def forward(self, q, k):
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        scores = scores.masked_fill(~self.causal, float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return [SEQ, HEAD_DIM]
