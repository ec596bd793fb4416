"""torch.softmax over dim 0 of a 9001 x 96 bf16 tensor stored transposed, in the widened form Inductor writes once a
tensor passes 2^31 elements (the module of softmax_transposed_out_bf16_inductor_form with `xoffset`, `xindex` and
`r0_base` widened to int64 and the size parameters i64, as Inductor wrote them for a softmax over dim 0 of a transposed
1212344 x 1873 bf16 tensor, draw 33811's row 46, on the H100). One looped online-softmax kernel over 96 rows of 9001
that reads each row along memory (`r0_1 + 9001*x0`) and writes it across memory (`x0 + 96*r0_1`)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return torch.softmax(a, dim=0)


def get_inputs():
    return [torch.randn(96, 9001, dtype=torch.bfloat16).transpose(-2, -1)]


def get_init_inputs():
    return []
