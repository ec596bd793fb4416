"""ResNet stage of three basic blocks, the first downsampling 64x56x56 -> 128x28x28, batch 128, fp32.

Each block: conv3x3-BN-ReLU, conv3x3-BN, shortcut (1x1 stride-2 conv + BN on the first), add, ReLU.
BatchNorm uses inference statistics. cuDNN runs the convolutions; every BN/ReLU/residual epilogue is a
Triton kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CH, OUT_CH, HW, BLOCKS = 128, 64, 128, 56, 3
SMALL = dict(BATCH=2, IN_CH=4, OUT_CH=8, HW=8, BLOCKS=3)


def _bn(ch):
    bn = nn.BatchNorm2d(ch)
    with torch.no_grad():  # non-trivial running statistics, as in a trained network
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)
    return bn


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = _bn(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = _bn(out_ch)
        self.shortcut = None
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), _bn(out_ch))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class Model(nn.Module):
    def __init__(self, in_ch, out_ch, blocks):
        super().__init__()
        torch.manual_seed(0)
        layers = [BasicBlock(in_ch, out_ch, 2)] + [BasicBlock(out_ch, out_ch, 1) for _ in range(blocks - 1)]
        self.layers = nn.Sequential(*layers)
        self.eval()

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CH, HW, HW)]


def get_init_inputs():
    return [IN_CH, OUT_CH, BLOCKS]
