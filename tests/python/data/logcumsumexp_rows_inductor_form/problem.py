"""torch.logcumsumexp over 4 rows of 12000 fp32, captured on the CPU with Inductor's Triton backend and the module's
multi_processor_count made 132 (an H200's). One looped scan kernel along memory whose carry update is a dozen
statements (minimum, maximum, isinf, log1p): a test fixture for the scan's segment split
(agents/coder/fusion/scan_segments.h)."""
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, a):
        return torch.logcumsumexp(a, dim=1)
def get_inputs():
    return [torch.randn(4, 12000)]
def get_init_inputs():
    return []
