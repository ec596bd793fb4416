"""Matmul with a bias + GELU (tanh) epilogue as a Helion kernel file (docs/inputs.md)."""
import helion
import helion.language as hl
import torch

M, N, K = 2048, 2048, 2048  # realistic size (the small file is matmul_bias_gelu.py)


@helion.kernel(autotune_effort="quick")
def matmul_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.size()
    _k, n = b.size()
    out = torch.empty([m, n], dtype=a.dtype, device=a.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        out[tile_m, tile_n] = torch.nn.functional.gelu(acc + bias[tile_n], approximate="tanh")
    return out


def reference(a, b, bias):
    return torch.nn.functional.gelu(a @ b + bias, approximate="tanh")


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(N)]
