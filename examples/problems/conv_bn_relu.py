"""Conv2d (extern convolution) + BatchNorm2d in eval mode + ReLU (fused pointwise epilogue)."""
import torch
import torch.nn as nn

BATCH, IN_CHANNELS, OUT_CHANNELS, SIZE = 2, 16, 32, 32


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(out_channels)
        # Eval-mode BN reads running statistics; make them non-trivial.
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(1.0 + 0.1 * torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
