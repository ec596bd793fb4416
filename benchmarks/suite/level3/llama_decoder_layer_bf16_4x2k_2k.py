"""LLaMA-style decoder layer: RMSNorm, grouped-query attention with rotary embeddings, SwiGLU MLP, bf16.

4 sequences of 2048 tokens, width 2048, 16 query heads sharing 4 key/value heads (head_dim 128), MLP
5632. cuBLAS GEMMs and the SDPA kernel; RMSNorms, RoPE, the KV-head broadcast, SiLU*up and residual
adds are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, DIM, HEADS, KV_HEADS, HIDDEN = 4, 2048, 2048, 16, 4, 5632
SMALL = dict(BATCH=2, SEQ=16, DIM=32, HEADS=4, KV_HEADS=2, HIDDEN=48)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def _rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Model(nn.Module):
    def __init__(self, seq, dim, heads, kv_heads, hidden):
        super().__init__()
        torch.manual_seed(0)
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attn_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.mlp_norm = RMSNorm(dim)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        inv_freq = 1.0 / (500000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.to(torch.bfloat16)

    def _rope(self, t):
        return t * self.cos + _rotate_half(t) * self.sin

    def forward(self, x):
        b, s, d = x.shape
        h = self.attn_norm(x)
        q = self._rope(self.wq(h).view(b, s, self.heads, self.head_dim).transpose(1, 2))
        k = self._rope(self.wk(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2))
        v = self.wv(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [SEQ, DIM, HEADS, KV_HEADS, HIDDEN]
