"""Attention scores: batched q @ k^T (extern bmm), scaled, then softmax over keys."""
import math

import torch
import torch.nn as nn

BATCH_HEADS, SEQ, HEAD_DIM = 8, 64, 32


class Model(nn.Module):
    def forward(self, q, k):
        return torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(HEAD_DIM), dim=-1)


def get_inputs():
    return [torch.randn(BATCH_HEADS, SEQ, HEAD_DIM), torch.randn(BATCH_HEADS, SEQ, HEAD_DIM)]


def get_init_inputs():
    return []
