"""RMS norm over the last dimension with a weight, as a Helion kernel file (docs/inputs.md)."""
import helion
import helion.language as hl
import torch

ROWS, COLS = 64, 1024
EPS = 1e-6


@helion.kernel(config=helion.Config(block_sizes=[2], num_warps=4))
def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        rstd = torch.rsqrt(torch.mean(row * row, dim=-1, keepdim=True) + 1e-6)
        out[tile_m, :] = (row * rstd * weight[None, :].to(torch.float32)).to(out.dtype)
    return out


def reference(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.rand(COLS) + 0.5]
