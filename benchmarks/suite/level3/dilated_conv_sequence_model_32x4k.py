"""Convolutional sequence model (no recurrence): input projection, four dilated causal gated conv blocks, skip head, fp32.

32 sequences of 4096 frames of 80 features (speech-style input), 256 channels, dilations 1, 2, 4, 8,
32 output classes per frame. Each block: left-padded dilated Conv1d to 2x channels, tanh*sigmoid gate,
1x1 Conv1d, residual and skip sums. Convolutions are cuDNN; padding, gates and sums are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, STEPS, FEATURES, CH, CLASSES = 32, 4096, 80, 256, 32
DILATIONS = (1, 2, 4, 8)
SMALL = dict(BATCH=2, STEPS=24, FEATURES=6, CH=8, CLASSES=5)


class GatedBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.pad = 2 * dilation  # kernel 3: look back 2 * dilation steps, never ahead
        self.conv = nn.Conv1d(ch, 2 * ch, 3, dilation=dilation)
        self.mix = nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        f, g = self.conv(F.pad(x, (self.pad, 0))).chunk(2, dim=1)
        h = self.mix(torch.tanh(f) * torch.sigmoid(g))
        return x + h, h


class Model(nn.Module):
    def __init__(self, features, ch, classes):
        super().__init__()
        torch.manual_seed(0)
        self.inp = nn.Conv1d(features, ch, 1)
        self.blocks = nn.ModuleList([GatedBlock(ch, d) for d in DILATIONS])
        self.head1 = nn.Conv1d(ch, ch, 1)
        self.head2 = nn.Conv1d(ch, classes, 1)

    def forward(self, feats):
        x = self.inp(feats.transpose(1, 2))  # (batch, features, steps) for Conv1d
        skips = 0
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        return self.head2(F.relu(self.head1(F.relu(skips)))).transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, STEPS, FEATURES)]


def get_init_inputs():
    return [FEATURES, CH, CLASSES]
