# AOT ID: ['0_inference']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph

def get_raw_stream(_):
    return 0


aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


# kernel path: /tmp/torchinductor_root/6c/c6ce4aulbgtvrloh6xyvej6ozufymvjz7mghng4zbq3u7suu2wi6.py
# Topologically Sorted Source Nodes: [max_pool2d], Original ATen: [aten.max_pool2d_with_indices]
# Source node to ATen node mapping:
#   max_pool2d => _low_memory_max_pool_with_offsets, getitem
# Graph fragment:
#   %arg0_1 : Tensor "f32[2, 13, 19, 23][5681, 1, 299, 13]cpu" = PlaceHolder[target=arg0_1]
#   %_low_memory_max_pool_with_offsets : [num_users=1] = call_function[target=torch.ops.prims._low_memory_max_pool_with_offsets.default](args = (%arg0_1, [3, 3], [1, 2], [1, 1], [2, 1], False), kwargs = {})
#   %getitem : Tensor "f32[2, 13, 17, 12][2652, 1, 156, 13]cpu"[num_users=1] = call_function[target=operator.getitem](args = (%_low_memory_max_pool_with_offsets, 0), kwargs = {})
#   return %getitem
triton_poi_fused_max_pool2d_with_indices_0 = async_compile.triton('triton_poi_fused_max_pool2d_with_indices_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_cpu()

@triton_heuristics.pointwise(
    size_hints={'x': 8192}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cpu', index=None, multi_processor_count=2, cc='', major=None, regs_per_multiprocessor=None, max_threads_per_multi_processor=None, max_threads_per_block=1024, warp_size=None), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(1,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_poi_fused_max_pool2d_with_indices_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 9, 'num_store': 1, 'num_reduction': 0, 'autotune_hints': set(), 'tiling_scores': {'x': 233376}, 'backend_hash': 'kernelopt-cpu-interpreter', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_max_pool2d_with_indices_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 5304
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = ((xindex // 156) % 17)
    x1 = ((xindex // 13) % 12)
    x0 = (xindex % 13)
    x3 = xindex // 2652
    x6 = xindex
    tmp0 = ((-1) + x2).to(tl.int32)
    tmp1 = tl.full([1], 0, tl.int64)
    tmp2 = tmp0 >= tmp1
    tmp3 = tl.full([1], 19, tl.int64)
    tmp4 = tmp0 < tmp3
    tmp5 = tmp2 & tmp4
    tmp6 = ((-1) + 2*x1).to(tl.int32)
    tmp7 = tmp6 >= tmp1
    tmp8 = tl.full([1], 23, tl.int64)
    tmp9 = tmp6 < tmp8
    tmp10 = tmp7 & tmp9
    tmp11 = tmp5 & tmp10
    tmp12 = tl.load(in_ptr0 + ((-312) + x0 + 26*x1 + 299*x2 + 5681*x3), tmp11 & xmask, other=float("-inf"))
    tmp13 = (2*x1).to(tl.int32)
    tmp14 = tmp13 >= tmp1
    tmp15 = tmp13 < tmp8
    tmp16 = tmp14 & tmp15
    tmp17 = tmp5 & tmp16
    tmp18 = tl.load(in_ptr0 + ((-299) + x0 + 26*x1 + 299*x2 + 5681*x3), tmp17 & xmask, other=float("-inf"))
    tmp19 = triton_helpers.maximum(tmp12, tmp18)
    tmp20 = (1 + 2*x1).to(tl.int32)
    tmp21 = tmp20 >= tmp1
    tmp22 = tmp20 < tmp8
    tmp23 = tmp21 & tmp22
    tmp24 = tmp5 & tmp23
    tmp25 = tl.load(in_ptr0 + ((-286) + x0 + 26*x1 + 299*x2 + 5681*x3), tmp24 & xmask, other=float("-inf"))
    tmp26 = triton_helpers.maximum(tmp19, tmp25)
    tmp27 = (1 + x2).to(tl.int32)
    tmp28 = tmp27 >= tmp1
    tmp29 = tmp27 < tmp3
    tmp30 = tmp28 & tmp29
    tmp31 = tmp30 & tmp10
    tmp32 = tl.load(in_ptr0 + (286 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp31 & xmask, other=float("-inf"))
    tmp33 = triton_helpers.maximum(tmp26, tmp32)
    tmp34 = tmp30 & tmp16
    tmp35 = tl.load(in_ptr0 + (299 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp34 & xmask, other=float("-inf"))
    tmp36 = triton_helpers.maximum(tmp33, tmp35)
    tmp37 = tmp30 & tmp23
    tmp38 = tl.load(in_ptr0 + (312 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp37 & xmask, other=float("-inf"))
    tmp39 = triton_helpers.maximum(tmp36, tmp38)
    tmp40 = (3 + x2).to(tl.int32)
    tmp41 = tmp40 >= tmp1
    tmp42 = tmp40 < tmp3
    tmp43 = tmp41 & tmp42
    tmp44 = tmp43 & tmp10
    tmp45 = tl.load(in_ptr0 + (884 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp44 & xmask, other=float("-inf"))
    tmp46 = triton_helpers.maximum(tmp39, tmp45)
    tmp47 = tmp43 & tmp16
    tmp48 = tl.load(in_ptr0 + (897 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp47 & xmask, other=float("-inf"))
    tmp49 = triton_helpers.maximum(tmp46, tmp48)
    tmp50 = tmp43 & tmp23
    tmp51 = tl.load(in_ptr0 + (910 + x0 + 26*x1 + 299*x2 + 5681*x3), tmp50 & xmask, other=float("-inf"))
    tmp52 = triton_helpers.maximum(tmp49, tmp51)
    tl.store(out_ptr0 + (x6), tmp52, xmask)
''', device_str='cpu')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        arg0_1, = args
        args.clear()
        assert_size_stride(arg0_1, (2, 13, 19, 23), (5681, 1, 299, 13), 'input')
        buf0 = empty_strided_cpu((2, 13, 17, 12), (2652, 1, 156, 13), torch.float32)
        # Topologically Sorted Source Nodes: [max_pool2d], Original ATen: [aten.max_pool2d_with_indices]
        raw_streamNone = get_raw_stream(None)
        triton_poi_fused_max_pool2d_with_indices_0.run(arg0_1, buf0, 5304, stream=raw_streamNone)
        del arg0_1
        return (buf0, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((2, 13, 19, 23), (5681, 1, 299, 13), device='cpu', dtype=torch.float32)
    return [arg0_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
