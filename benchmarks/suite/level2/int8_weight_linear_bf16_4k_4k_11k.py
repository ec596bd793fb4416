"""Weight-only int8 linear layer of a quantized LLM: x @ (W_int8 * per-channel scale)^T + b, bf16 activations.

4096 tokens, 4096 -> 11008. The int8 weights (45 MB) are dequantized to bf16 by a Triton kernel (or
fused into the GEMM's prologue) before the cuBLAS GEMM; the bias is a Triton epilogue.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, OUT = 4096, 4096, 11008
SMALL = dict(TOKENS=16, DIM=32, OUT=48)


class Model(nn.Module):
    def __init__(self, dim, out):
        super().__init__()
        self.register_buffer("qweight", torch.randint(-127, 128, (out, dim), dtype=torch.int8))
        # Per-output-channel scales, as a symmetric int8 quantizer would choose for ~N(0, 1/dim) weights.
        self.register_buffer("scales", ((torch.rand(out) + 0.5) * (3.0 / dim**0.5) / 127).to(torch.bfloat16))
        self.bias = nn.Parameter(torch.randn(out).to(torch.bfloat16) * 0.02)

    def forward(self, x):
        w = self.qweight.to(x.dtype) * self.scales[:, None]
        return F.linear(x, w, self.bias)


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, OUT]
