"""Mixture-of-experts feed-forward layer with top-2 routing over 8 SwiGLU experts, static shapes, bf16.

4096 tokens of width 1024, expert hidden 2048. RMSNorm, then an fp32 router (selective precision, as
large MoE models keep routing stable) whose softmax and torch.topk pick two experts per token; every expert runs on every token as batched GEMMs (a dense dispatch keeps shapes static),
and torch.gather picks each token's two expert outputs, weighted and added to the residual. Batched
GEMMs are cuBLAS; the norm, routing, SiLU*up, gather and weighted sum are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, HIDDEN, EXPERTS, TOP_K = 4096, 1024, 2048, 8, 2
SMALL = dict(TOKENS=12, DIM=16, HIDDEN=24, EXPERTS=4, TOP_K=2)


class Model(nn.Module):
    def __init__(self, dim, hidden, experts, top_k):
        super().__init__()
        torch.manual_seed(0)
        self.top_k = top_k
        self.norm_weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.w_gate = nn.Parameter(torch.randn(experts, dim, hidden) / dim**0.5)
        self.w_up = nn.Parameter(torch.randn(experts, dim, hidden) / dim**0.5)
        self.w_down = nn.Parameter(torch.randn(experts, hidden, dim) / hidden**0.5)
        self.to(torch.bfloat16)
        self.router = nn.Linear(dim, experts, bias=False)  # stays fp32

    def forward(self, x):
        xf = x.float()
        h = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.norm_weight
        probs = torch.softmax(self.router(h.float()), dim=-1)
        weights, chosen = torch.topk(probs, self.top_k, dim=-1)  # (tokens, top_k)
        weights = (weights / weights.sum(-1, keepdim=True)).to(x.dtype)
        # Dense dispatch: (experts, tokens, hidden) through each expert's SwiGLU.
        hb = h.unsqueeze(0)
        act = F.silu(torch.matmul(hb, self.w_gate)) * torch.matmul(hb, self.w_up)
        expert_out = torch.matmul(act, self.w_down).transpose(0, 1)  # (tokens, experts, dim)
        index = chosen.unsqueeze(-1).expand(-1, -1, x.shape[-1])
        picked = torch.gather(expert_out, 1, index)  # (tokens, top_k, dim)
        return x + (picked * weights.unsqueeze(-1)).sum(dim=1)


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, HIDDEN, EXPERTS, TOP_K]
