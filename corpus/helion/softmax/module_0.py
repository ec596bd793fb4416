# Kernel file: softmax.py (synthesized by kernelopt capture, docs/inputs.md)
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

triton_helion_softmax_0 = async_compile.triton('triton_helion_softmax_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.user_autotune(
    configs=[{'num_warps': 4, 'num_stages': 1}],
    inductor_meta={'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'kernel_name': 'triton_helion_softmax_0', 'declared_constexpr_names': ['_RDIM_SIZE_1']},
    triton_meta={'signature': {'x': '*fp32', 'out': '*fp32', '_RDIM_SIZE_1': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {'_RDIM_SIZE_1': 512}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]},
    filename=__file__,
    custom_kernel=True,
)
@triton.jit
def triton_helion_softmax_0(x, out, _RDIM_SIZE_1: tl.constexpr):
    # src[softmax.py:14]: for tile_n in hl.tile(n):
    pid_0 = tl.program_id(0)
    offset_0 = pid_0
    indices_0 = offset_0 + tl.zeros([1], tl.int32)
    indices_1 = tl.arange(0, _RDIM_SIZE_1).to(tl.int32)
    # src[softmax.py:15]: out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :], dim=1)
    load = tl.load(x + (indices_0[:, None] * 512 + (0 + indices_1)[None, :] * 1), None)
    amax = tl.cast(tl.reshape(helion_triton_helpers__max_propagate_nan(load, 1), [_BLOCK_SIZE_0, 1]), tl.float32)
    v_0 = load - amax
    v_1 = libdevice.exp(v_0)
    sum_1 = tl.cast(tl.reshape(tl.sum(v_1.to(tl.float32), 1), [_BLOCK_SIZE_0, 1]), tl.float32)
    v_2 = v_1 / sum_1
    tl.store(out + (indices_0[:, None] * 512 + (0 + indices_1)[None, :] * 1), v_2, None)

@triton.jit
def helion_triton_helpers__max_propagate_nan(x: tl.tensor, dim: tl.constexpr) -> tl.tensor:
    """``tl.max`` that returns NaN when any element is NaN, as ``torch.amax`` does.

    Each combine step is one ``max.NaN``; Inductor's ``triton_helpers.max2``
    spends four or five compares and selects on it.
    """
    return tl.reduce(_promote_to_32_bits(x), dim, _maximum_propagate_nan)  # pyrefly: ignore [bad-return]

@triton.jit
def _promote_to_32_bits(x: tl.tensor) -> tl.tensor:
    # As tl.max/tl.min do: the combine's operands and result share one type,
    # and tl.maximum computes bf16 in fp32.
    if tl.constexpr(x.dtype.primitive_bitwidth) < tl.constexpr(32):
        if tl.constexpr(x.dtype.is_floating()):
            x = x.to(tl.float32)
        else:
            x = x.to(tl.int32)
    return x

@triton.jit
def _maximum_propagate_nan(a: tl.tensor, b: tl.tensor) -> tl.tensor:
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)

_BLOCK_SIZE_0 = tl.constexpr(1)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

def call(args):
    arg0_1, = args
    args.clear()
    assert_size_stride(arg0_1, (64, 512), (512, 1))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        stream0 = get_raw_stream(0)
        buf0 = empty_strided_cuda((64, 512), (512, 1), torch.float32)
        triton_helion_softmax_0.run(arg0_1, buf0, 64, 1, 1, stream=stream0)
    return (buf0, )
