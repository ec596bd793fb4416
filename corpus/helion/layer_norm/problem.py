"""Layer norm over the last dimension with weight and bias, as a Helion kernel file (docs/inputs.md)."""
import helion
import helion.language as hl
import torch

ROWS, COLS = 64, 1024


@helion.kernel(config=helion.Config(block_sizes=[2], num_warps=4))
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mean = torch.mean(row, dim=-1, keepdim=True)
        centered = row - mean
        var = torch.mean(centered * centered, dim=-1, keepdim=True)
        out[tile_m, :] = (centered * torch.rsqrt(var + 1e-5) * weight[None, :] + bias[None, :]).to(out.dtype)
    return out


def reference(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, 1e-5)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.rand(COLS) + 0.5, torch.randn(COLS)]
