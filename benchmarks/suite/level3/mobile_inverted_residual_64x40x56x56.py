"""Mobile network stage: three inverted-residual blocks (1x1 expand x6, depthwise 3x3, squeeze-excite, 1x1 project), fp32.

64 images, 40 channels at 56x56; two stride-1 residual blocks, then a stride-2 block to 80 channels.
BatchNorm uses inference statistics; activations are hardswish and the gate hard-sigmoid. cuDNN runs
the convolutions; BN epilogues, activations, the SE pooling and gating and the residuals are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW, EXPAND = 64, 40, 56, 6
SMALL = dict(BATCH=2, CH=4, HW=8, EXPAND=2)


def _bn(ch):
    bn = nn.BatchNorm2d(ch)
    with torch.no_grad():  # non-trivial running statistics, as in a trained network
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)
    return bn


class InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, expand, stride):
        super().__init__()
        mid = in_ch * expand
        self.use_residual = stride == 1 and in_ch == out_ch
        self.expand = nn.Conv2d(in_ch, mid, 1, bias=False)
        self.bn1 = _bn(mid)
        self.dw = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, groups=mid, bias=False)
        self.bn2 = _bn(mid)
        self.se1 = nn.Conv2d(mid, max(mid // 4, 1), 1)
        self.se2 = nn.Conv2d(max(mid // 4, 1), mid, 1)
        self.project = nn.Conv2d(mid, out_ch, 1, bias=False)
        self.bn3 = _bn(out_ch)

    def forward(self, x):
        h = F.hardswish(self.bn1(self.expand(x)))
        h = F.hardswish(self.bn2(self.dw(h)))
        s = F.hardsigmoid(self.se2(F.relu(self.se1(h.mean(dim=(2, 3), keepdim=True)))))
        h = self.bn3(self.project(h * s))
        return x + h if self.use_residual else h


class Model(nn.Module):
    def __init__(self, ch, expand):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.Sequential(
            InvertedResidual(ch, ch, expand, 1),
            InvertedResidual(ch, ch, expand, 1),
            InvertedResidual(ch, 2 * ch, expand, 2),
        )
        self.eval()

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW)]


def get_init_inputs():
    return [CH, EXPAND]
