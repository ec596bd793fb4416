"""Mixture-of-experts router: Linear(4096 -> 64) gate logits, fp32 softmax, top-2 experts, renormalized weights.

32768 tokens of width 4096 in bf16 (256 MB). cuBLAS does the skinny GEMM; the softmax, the top-k
selection and the renormalization are Triton kernels. Returns (weights, expert indices).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, EXPERTS, TOP_K = 32768, 4096, 64, 2
SMALL = dict(TOKENS=24, DIM=32, EXPERTS=8, TOP_K=2)


class Model(nn.Module):
    def __init__(self, dim, experts, top_k):
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False).to(torch.bfloat16)
        self.top_k = top_k

    def forward(self, x):
        probs = torch.softmax(self.gate(x).float(), dim=-1)
        weights, experts = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights.to(x.dtype), experts


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, EXPERTS, TOP_K]
