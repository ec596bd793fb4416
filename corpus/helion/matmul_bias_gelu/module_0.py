# Kernel file: matmul_bias_gelu.py (synthesized by kernelopt capture, docs/inputs.md)
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

triton_helion_matmul_bias_gelu_0 = async_compile.triton('triton_helion_matmul_bias_gelu_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.user_autotune(
    configs=[{'num_warps': 4, 'num_stages': 1}],
    inductor_meta={'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'kernel_name': 'triton_helion_matmul_bias_gelu_0', 'declared_constexpr_names': []},
    triton_meta={'signature': {'a': '*fp32', 'b': '*fp32', 'bias': '*fp32', 'out': '*fp32'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    filename=__file__,
    custom_kernel=True,
)
@triton.jit
def triton_helion_matmul_bias_gelu_0(a, b, bias, out):
    # src[matmul_bias_gelu.py:14]: for tile_m, tile_n in hl.tile([m, n]):
    num_blocks_0 = tl.cdiv(128, _BLOCK_SIZE_0)
    pid_0 = tl.program_id(0) % num_blocks_0
    pid_1 = tl.program_id(0) // num_blocks_0
    offset_0 = pid_0 * _BLOCK_SIZE_0
    indices_0 = (offset_0 + tl.arange(0, _BLOCK_SIZE_0)).to(tl.int32)
    offset_1 = pid_1 * _BLOCK_SIZE_1
    indices_1 = (offset_1 + tl.arange(0, _BLOCK_SIZE_1)).to(tl.int32)
    # src[matmul_bias_gelu.py:15]: acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
    acc = tl.full([_BLOCK_SIZE_0, _BLOCK_SIZE_1], 0.0, tl.float32)
    # src[matmul_bias_gelu.py:16]: for tile_k in hl.tile(k):
    # src[matmul_bias_gelu.py:17]:     acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
    for offset_2 in tl.range(0, 128, _BLOCK_SIZE_2):
        indices_2 = offset_2 + tl.arange(0, _BLOCK_SIZE_2).to(tl.int32)
        acc_copy = acc
        acc_copy_0 = acc_copy
        # src[matmul_bias_gelu.py:17]: acc = torch.addmm(acc, a[tile_m, tile_k], b[tile_k, tile_n])
        load = tl.load(a + (indices_0[:, None] * 128 + indices_2[None, :] * 1), None)
        load_1 = tl.load(b + (indices_2[:, None] * 128 + indices_1[None, :] * 1), None)
        acc = tl.dot(tl.cast(load, tl.float32), tl.cast(load_1, tl.float32), acc=acc_copy_0, input_precision='tf32', out_dtype=tl.float32)
    # src[matmul_bias_gelu.py:18]: out[tile_m, tile_n] = torch.nn.functional.gelu(acc + bias[tile_n], approximate="tanh")
    load_2 = tl.load(bias + indices_1 * 1, None)
    v_0 = load_2[None, :]
    v_1 = acc + v_0
    _gelu_tanh_approx = 0.5 * v_1 * (1.0 + libdevice.tanh(0.7978845608028654 * (v_1 + 0.044715 * (v_1 * v_1 * v_1))))
    tl.store(out + (indices_0[:, None] * 128 + indices_1[None, :] * 1), _gelu_tanh_approx, None)

_BLOCK_SIZE_0 = tl.constexpr(32)

_BLOCK_SIZE_1 = tl.constexpr(32)

_BLOCK_SIZE_2 = tl.constexpr(32)
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
        triton_helion_matmul_bias_gelu_0.run(arg0_1, arg1_1, arg2_1, buf0, 16, 1, 1, stream=stream0)
    return (buf0, )
