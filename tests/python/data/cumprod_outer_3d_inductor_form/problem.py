"""torch.cumprod over the outer dim of a transposed 3-D fp32 tensor (300 steps of 41 x 43 columns), captured on
the CPU with Inductor's Triton backend (`kernelopt capture ... --device cpu --cpu-kernels triton`) and the module's
multi_processor_count made 132 (an H200's). One looped scan kernel in Inductor's 3-D form: tiles of y x x columns
(Grid2D), the product carried from block to block down the outer axis; a test fixture for the scan's segment
split (agents/coder/fusion/scan_segments.h)."""
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, a):
        return torch.cumprod(a, dim=0)
def get_inputs():
    return [(torch.randn(300, 43, 41) * 0.02).exp().transpose(-2, -1)]
def get_init_inputs():
    return []
