"""Attention input stage: fused QKV projection, head split and rotary position embedding on Q and K, bf16.

8 sequences of 2048 tokens, width 4096, 32 heads of 128. cuBLAS does the 4096 -> 12288 projection;
Inductor writes the split, the rotate-half RoPE (cos/sin tables as buffers) and the transposes to
(batch, heads, seq, head_dim) as Triton kernels.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, DIM, HEADS = 8, 2048, 4096, 32
SMALL = dict(BATCH=2, SEQ=16, DIM=32, HEADS=4)


def _rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Model(nn.Module):
    def __init__(self, seq, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)  # (seq, head_dim)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.to(torch.bfloat16)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).unbind(dim=2)
        cos, sin = self.cos[:, None, :], self.sin[:, None, :]  # broadcast over heads
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [SEQ, DIM, HEADS]
