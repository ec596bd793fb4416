"""torch.softmax over dim 0 of a 9001 x 96 bf16 tensor stored transposed (a test fixture shrunk from the module
Inductor wrote on the H200 for 351887 x 512, draw 26206's row 09: every 351887 made 9001 and every 512 made 96 in the
module and meta.json). One looped online-softmax kernel over 96 rows of 9001 that reads each row along memory
(`r0_1 + 9001*x0`) and writes it across memory (`x0 + 96*r0_1`: the output is contiguous)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return torch.softmax(a, dim=0)


def get_inputs():
    return [torch.randn(96, 9001, dtype=torch.bfloat16).transpose(-2, -1)]


def get_init_inputs():
    return []
