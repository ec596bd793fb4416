"""RMS norm over the last dim of a 5 x 30011 float32 tensor with a weight as long as a row, a test fixture written
in Inductor's form: the H100's module of a fresh draw's RMS norm over 129 rows of 7115197 (split statistics, their
combine, then a pointwise normalize reading x[row, col], the row's statistic and weight[col]) with its constants
made 5 rows of 30011 in 5 chunks of 6003. The pointwise kernel is the one the column loop walks by columns."""
import torch
import torch.nn as nn

SHAPE = (5, 30011)
DTYPE = torch.float32
EPS = 1e-05


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.weight = nn.Parameter((1 + 0.1 * torch.randn(SHAPE[-1])).to(DTYPE))

    def forward(self, a):
        return (a.float() * torch.rsqrt(a.float().pow(2).mean(-1, keepdim=True) + EPS)).to(a.dtype) * self.weight


def get_inputs():
    return [torch.randn(SHAPE, dtype=DTYPE)]


def get_init_inputs():
    return []
