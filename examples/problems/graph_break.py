"""Deliberate graph break between two halves: two graphs, the second takes an intermediate."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, DIM = 64, 128


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = F.gelu(self.fc(x))
        torch._dynamo.graph_break()  # splits compilation: h crosses the break as a plain tensor
        return torch.softmax(self.norm(h) + x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
