"""Two MLP-Mixer blocks: token-mixing MLP (196 -> 384 -> 196) and channel-mixing MLP (768 -> 3072 -> 768), fp32.

64 images as 196 patches of width 768. Each block: LayerNorm, transpose, GELU MLP across patches,
residual; LayerNorm, GELU MLP across channels, residual. GEMMs are cuBLAS; LayerNorms, transposes,
bias+GELU and residuals are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, PATCHES, DIM, TOKEN_HIDDEN, CHANNEL_HIDDEN, BLOCKS = 64, 196, 768, 384, 3072, 2
SMALL = dict(BATCH=2, PATCHES=9, DIM=16, TOKEN_HIDDEN=12, CHANNEL_HIDDEN=32, BLOCKS=2)


class MixerBlock(nn.Module):
    def __init__(self, patches, dim, token_hidden, channel_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_fc1 = nn.Linear(patches, token_hidden)
        self.token_fc2 = nn.Linear(token_hidden, patches)
        self.norm2 = nn.LayerNorm(dim)
        self.channel_fc1 = nn.Linear(dim, channel_hidden)
        self.channel_fc2 = nn.Linear(channel_hidden, dim)

    def forward(self, x):
        t = self.norm1(x).transpose(1, 2)  # (batch, dim, patches)
        x = x + self.token_fc2(F.gelu(self.token_fc1(t))).transpose(1, 2)
        return x + self.channel_fc2(F.gelu(self.channel_fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, patches, dim, token_hidden, channel_hidden, blocks):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.Sequential(
            *[MixerBlock(patches, dim, token_hidden, channel_hidden) for _ in range(blocks)]
        )

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.randn(BATCH, PATCHES, DIM)]


def get_init_inputs():
    return [PATCHES, DIM, TOKEN_HIDDEN, CHANNEL_HIDDEN, BLOCKS]
