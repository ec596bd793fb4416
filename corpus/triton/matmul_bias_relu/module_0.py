# Kernel file: matmul_bias_relu.py (synthesized by kernelopt capture, docs/inputs.md)
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
async_compile = AsyncCompile()

triton_matmul_bias_relu_kernel_0 = async_compile.triton('triton_matmul_bias_relu_kernel_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.user_autotune(
    configs=[{'BLOCK_M': 32, 'BLOCK_N': 32, 'BLOCK_K': 32, 'num_warps': 4, 'num_stages': 2}],
    inductor_meta={'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'kernel_name': 'triton_matmul_bias_relu_kernel_0', 'declared_constexpr_names': ['BLOCK_M', 'BLOCK_N', 'BLOCK_K']},
    triton_meta={'signature': {'a_ptr': '*fp32', 'b_ptr': '*fp32', 'bias_ptr': '*fp32', 'c_ptr': '*fp32', 'm': 'i32', 'n': 'i32', 'k': 'i32', 'stride_am': 'i32', 'stride_ak': 'constexpr', 'stride_bk': 'i32', 'stride_bn': 'constexpr', 'stride_cm': 'i32', 'stride_cn': 'constexpr', 'BLOCK_M': 'constexpr', 'BLOCK_N': 'constexpr', 'BLOCK_K': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {'stride_ak': 1, 'stride_bn': 1, 'stride_cn': 1}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]], (11,): [['tt.divisibility', 16]]}]},
    filename=__file__,
    custom_kernel=True,
)
@triton.jit
def triton_matmul_bias_relu_kernel_0(a_ptr, b_ptr, bias_ptr, c_ptr, m, n, k, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < m) & ((k0 + rk)[None, :] < k), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k0 + rk)[:, None] < k) & (rn[None, :] < n), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(bias_ptr + rn, mask=rn < n, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=(rm[:, None] < m) & (rn[None, :] < n))
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

def call(args):
    arg0_1, arg1_1, arg2_1 = args
    args.clear()
    assert_size_stride(arg0_1, (128, 128), (128, 1))
    assert_size_stride(arg1_1, (128, 128), (128, 1))
    assert_size_stride(arg2_1, (128,), (1,))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        stream0 = get_raw_stream(0)
        buf0 = empty_strided_cuda((128, 128), (128, 1), torch.float32)
        triton_matmul_bias_relu_kernel_0.run(arg0_1, arg1_1, arg2_1, buf0, 128, 128, 128, 128, 1, 128, 1, 128, 1, 4, 4, 1, stream=stream0)
    return (buf0, )
