"""Convolutional VAE encoder: conv stem, three residual stages with strided downsampling, GroupNorm+SiLU, Gaussian head, fp32.

8 RGB images of 256x256 are encoded to a 4-channel 32x32 latent; returns the posterior mean and
standard deviation (no sampling: deterministic). Channels 64, 128, 256, 256. Convolutions are cuDNN;
group norms, SiLU, residual adds, the logvar clamp and exp are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IMAGE, BASE, LATENT, GROUPS = 8, 256, 64, 4, 32
SMALL = dict(BATCH=2, IMAGE=16, BASE=8, LATENT=2, GROUPS=4)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class Model(nn.Module):
    def __init__(self, base, latent, groups):
        super().__init__()
        torch.manual_seed(0)
        chans = [base, 2 * base, 4 * base, 4 * base]
        self.stem = nn.Conv2d(3, base, 3, padding=1)
        stages = []
        for i in range(3):
            stages += [ResBlock(chans[i], chans[i + 1], groups), nn.Conv2d(chans[i + 1], chans[i + 1], 3, stride=2, padding=1)]
        self.stages = nn.Sequential(*stages)
        self.mid = ResBlock(chans[-1], chans[-1], groups)
        self.norm_out = nn.GroupNorm(groups, chans[-1])
        self.head = nn.Conv2d(chans[-1], 2 * latent, 3, padding=1)

    def forward(self, images):
        h = self.mid(self.stages(self.stem(images)))
        mean, logvar = self.head(F.silu(self.norm_out(h))).chunk(2, dim=1)
        return mean, torch.exp(0.5 * logvar.clamp(-30.0, 20.0))


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE)]


def get_init_inputs():
    return [BASE, LATENT, GROUPS]
