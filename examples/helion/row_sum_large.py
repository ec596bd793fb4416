"""A reduction: the sum of each row, as a Helion kernel file (docs/inputs.md)."""
import helion
import helion.language as hl
import torch

ROWS, COLS = 16384, 8192  # realistic size (the small file is row_sum.py)


@helion.kernel(autotune_effort="quick")
def row_sum(x: torch.Tensor) -> torch.Tensor:
    m, _n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].sum(-1)
    return out


def reference(x):
    return x.sum(-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]
