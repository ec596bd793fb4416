"""Language-model loss head: Linear(1024 -> 50304) logits, then cross-entropy with label smoothing 0.1, fp32.

4096 tokens over a GPT-2-sized (padded) vocabulary. cuBLAS computes the 824 MB of logits; the
log-softmax, the target gather, the smoothing term and the mean are Triton reductions.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, VOCAB = 4096, 1024, 50304
SMALL = dict(TOKENS=32, DIM=24, VOCAB=100)


class Model(nn.Module):
    def __init__(self, dim, vocab):
        super().__init__()
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, h, targets):
        return F.cross_entropy(self.head(h), targets, label_smoothing=0.1)


def get_inputs():
    return [torch.randn(TOKENS, DIM), torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return [DIM, VOCAB]
