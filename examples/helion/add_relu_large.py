"""Elementwise relu(x + y): a Helion kernel file (docs/inputs.md); the @helion.kernel is the launcher."""
import helion
import helion.language as hl
import torch

N = 1 << 26  # realistic size (the small file is add_relu.py)


@helion.kernel(autotune_effort="quick")
def add_relu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = torch.relu(x[tile] + y[tile])
    return out


def reference(x, y):
    return torch.relu(x + y)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]
