"""torch.cumsum over the outer dim of a bf16 600 x 20 x 48 tensor, captured on the CPU with Inductor's Triton backend
and the module's multi_processor_count made 132 (an H200's). One looped scan kernel across memory (`x0 + 960*r0_1`:
adjacent columns adjacent in memory), bf16 loads carried in float32: a test fixture for the scan's segment split
(agents/coder/fusion/scan_segments.h)."""
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, a):
        return torch.cumsum(a, dim=0).to(torch.bfloat16)
def get_inputs():
    return [torch.randn(600, 20, 48, dtype=torch.bfloat16)]
def get_init_inputs():
    return []
