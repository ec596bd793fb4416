"""ResNet bottleneck exit: Conv2d 1x1 (64 -> 256) + BatchNorm (inference) + identity residual + ReLU, fp32.

64x64x56x56 in, 64x256x56x56 out (205 MB) plus a residual of the same size. cuDNN does the 1x1
convolution; BatchNorm, the residual add and ReLU are one Triton pointwise kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CH, OUT_CH, HW = 64, 64, 256, 56
SMALL = dict(BATCH=2, IN_CH=4, OUT_CH=16, HW=6)


def _randomize_bn(bn):
    # Non-trivial running statistics so the normalization is not an identity.
    with torch.no_grad():
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)


class Model(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        _randomize_bn(self.bn)
        self.eval()

    def forward(self, x, residual):
        return F.relu(self.bn(self.conv(x)) + residual)


def get_inputs():
    return [torch.randn(BATCH, IN_CH, HW, HW), torch.randn(BATCH, OUT_CH, HW, HW)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
