"""Soft-capped logits and their log-partition: cap * tanh((h @ W^T) / cap), then logsumexp in fp32, bf16.

Some recent decoder models cap final logits this way. 4096 tokens, width 2048, 32768-entry vocabulary:
cuBLAS computes the logits; the tanh cap and the fp32 row logsumexp are Triton. Returns both the capped
logits (256 MB) and the per-row normalizer.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, VOCAB = 4096, 2048, 32768
SMALL = dict(TOKENS=16, DIM=32, VOCAB=128)


class Model(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.head = nn.Linear(dim, vocab, bias=False).to(torch.bfloat16)
        self.cap = 30.0

    def forward(self, h):
        logits = self.cap * torch.tanh(self.head(h) / self.cap)
        return logits, torch.logsumexp(logits.float(), dim=-1)


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, VOCAB]
