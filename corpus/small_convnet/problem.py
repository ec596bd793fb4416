"""Small conv net: two conv+ReLU+max-pool stages, flatten, Linear classifier head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, SIZE, CLASSES = 4, 3, 32, 10


class Model(nn.Module):
    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.head = nn.Linear(32 * (SIZE // 4) ** 2, classes)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return [CHANNELS, CLASSES]
