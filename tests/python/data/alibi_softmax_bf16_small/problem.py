"""Causal attention with ALiBi position biases and an fp32 softmax, bf16 (a scaled-down test fixture of the
suite's alibi_causal_attention_bf16_8x16x2k): the module Inductor wrote for it on the H200, with the sequence
cut from 2048 to 64 and the batch from 8 to 2 in the module, its launch and meta.json. One looped online
softmax kernel (masked scores, bias from positions and per-head slopes) between two cuBLAS batched GEMMs."""
import torch
import torch.nn as nn

BATCH, HEADS, SEQ, HEAD_DIM = 2, 16, 64, 64


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
