import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=(1, 2), padding=1, dilation=(2, 1))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 13, 19, 23).to(memory_format=torch.channels_last)]


def get_init_inputs():
    return []
