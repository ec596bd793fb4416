"""Encoder attention probabilities: softmax(Q K^T / sqrt(d)) with a key-padding mask, 8x16 heads x 2048x2048, bf16.

BERT-style encoders pad sequences to a common length and mask the padded keys. The batched GEMM is
cuBLAS; the scale, the mask built from per-sequence lengths, and an fp32 softmax cast back to bf16 are
Triton kernels over the 1 GB score tensor.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, HEADS, SEQ, HEAD_DIM = 8, 16, 2048, 64
SMALL = dict(BATCH=2, HEADS=2, SEQ=16, HEAD_DIM=8)


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = head_dim**-0.5

    def forward(self, q, k, lengths):
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        pos = torch.arange(k.shape[-2], device=k.device)
        keep = pos[None, :] < lengths[:, None]  # (batch, keys): True for real tokens
        scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        return torch.softmax(scores.float(), dim=-1).to(q.dtype)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.bfloat16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.bfloat16)
    # Every sequence keeps at least half its tokens, so no row is fully masked.
    lengths = torch.randint(SEQ // 2, SEQ + 1, (BATCH,))
    return [q, k, lengths]


def get_init_inputs():
    return [HEAD_DIM]
