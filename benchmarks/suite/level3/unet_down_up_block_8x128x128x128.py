"""Diffusion UNet down/up path: time-conditioned residual blocks, strided-conv downsample, nearest upsample, skip concat, fp32.

8 images, 128 channels at 128x128 (67 MB per activation). ResBlock = GroupNorm-SiLU-conv3x3, plus a
projected timestep embedding added per channel, GroupNorm-SiLU-conv3x3, residual. Convolutions are
cuDNN; group norms, SiLU, the embedding broadcast, upsampling and concat are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW, EMB, GROUPS = 8, 128, 128, 512, 32
SMALL = dict(BATCH=2, CH=8, HW=8, EMB=12, GROUPS=4)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, emb, groups):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.emb = nn.Linear(emb, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(F.silu(t))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class Model(nn.Module):
    def __init__(self, ch, emb, groups):
        super().__init__()
        torch.manual_seed(0)
        self.down_block = ResBlock(ch, ch, emb, groups)
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.mid = ResBlock(ch, 2 * ch, emb, groups)
        self.up_conv = nn.Conv2d(2 * ch, ch, 3, padding=1)
        self.up_block = ResBlock(2 * ch, ch, emb, groups)

    def forward(self, x, t):
        skip = self.down_block(x, t)
        h = self.mid(self.down(skip), t)
        h = self.up_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.up_block(torch.cat((h, skip), dim=1), t)


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW), torch.randn(BATCH, EMB)]


def get_init_inputs():
    return [CH, EMB, GROUPS]
