"""GPT-style pre-norm decoder layer: LayerNorm, fused QKV, causal attention, output projection, GELU MLP, bf16.

16 sequences of 2048 tokens, width 1024, 16 heads, MLP 4096. GEMMs go to cuBLAS and the attention core
to the fused SDPA kernel; LayerNorms, bias+GELU, head split/merge and residual adds are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, DIM, HEADS = 16, 2048, 1024, 16
SMALL = dict(BATCH=2, SEQ=16, DIM=32, HEADS=4)


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        torch.manual_seed(0)
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.to(torch.bfloat16)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, HEADS]
