"""Encoder input embeddings: token + position + segment embeddings summed, then LayerNorm(768), fp32.

256 sequences of 512 tokens over a 30522-entry vocabulary; the output is 403 MB. The three gathers,
the sum and the LayerNorm fuse into one Triton kernel (no GEMM here: the cost is the gather and the
normalization).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, DIM, VOCAB = 256, 512, 768, 30522
SMALL = dict(BATCH=2, SEQ=12, DIM=16, VOCAB=50)


class Model(nn.Module):
    def __init__(self, vocab, seq, dim):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(seq, dim)
        self.segments = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, ids, segment_ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.norm(self.tokens(ids) + self.positions(pos)[None] + self.segments(segment_ids))


def get_inputs():
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    # Two segments per sequence split at a random point, as in sentence-pair inputs.
    split = torch.randint(1, SEQ, (BATCH, 1))
    segment_ids = (torch.arange(SEQ)[None, :] >= split).long()
    return [ids, segment_ids]


def get_init_inputs():
    return [VOCAB, SEQ, DIM]
