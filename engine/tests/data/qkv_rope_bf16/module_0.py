# AOT ID: ['107_inference']
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
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

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


# kernel path: /tmp/torchinductor_root/qf/cqflgqneunxo44emk6xbcf4t2n7oehijyrb3hje2tqn4qu43js2z.py
# Topologically Sorted Source Nodes: [linear, view, unbind, chunk, chunk_1, cos, mul, neg, cat, sin, mul_1, q_1, mul_2, neg_1, cat_1, mul_3, k_1], Original ATen: [aten._unsafe_view, aten.view, aten.unbind, aten.split, aten.unsqueeze, aten.mul, aten.neg, aten.cat, aten.add]
# Source node to ATen node mapping:
#   cat => cat
#   cat_1 => cat_1
#   chunk => split
#   chunk_1 => split_1
#   cos => unsqueeze
#   k_1 => add_1
#   linear => view_1
#   mul => mul
#   mul_1 => mul_1
#   mul_2 => mul_2
#   mul_3 => mul_3
#   neg => neg
#   neg_1 => neg_1
#   q_1 => add
#   sin => unsqueeze_1
#   unbind => unbind
#   view => view_2
# Graph fragment:
#   %mm : Tensor "bf16[16384, 12288][12288, 1]cuda:0" = PlaceHolder[target=mm]
#   %arg2_1 : Tensor "bf16[2048, 128][128, 1]cuda:0" = PlaceHolder[target=arg2_1]
#   %arg3_1 : Tensor "bf16[2048, 128][128, 1]cuda:0" = PlaceHolder[target=arg3_1]
#   %view_1 : Tensor "bf16[8, 2048, 12288][25165824, 12288, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm, [8, 2048, 12288]), kwargs = {})
#   %view_2 : Tensor "bf16[8, 2048, 3, 32, 128][25165824, 12288, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%view_1, [8, 2048, 3, 32, 128]), kwargs = {})
#   %unbind : [num_users=3] = call_function[target=torch.ops.aten.unbind.int](args = (%view_2, 2), kwargs = {})
#   %split : [num_users=2] = call_function[target=torch.ops.aten.split.Tensor](args = (%getitem, 64, -1), kwargs = {})
#   %split_1 : [num_users=2] = call_function[target=torch.ops.aten.split.Tensor](args = (%getitem_1, 64, -1), kwargs = {})
#   %unsqueeze : Tensor "bf16[2048, 1, 128][128, 128, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg2_1, 1), kwargs = {})
#   %mul : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%getitem, %unsqueeze), kwargs = {})
#   %neg : Tensor "bf16[8, 2048, 32, 64][4194304, 2048, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%getitem_4,), kwargs = {})
#   %cat : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%neg, %getitem_3], -1), kwargs = {})
#   %unsqueeze_1 : Tensor "bf16[2048, 1, 128][128, 128, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg3_1, 1), kwargs = {})
#   %mul_1 : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%cat, %unsqueeze_1), kwargs = {})
#   %add : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %mul_1), kwargs = {})
#   %mul_2 : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%getitem_1, %unsqueeze), kwargs = {})
#   %neg_1 : Tensor "bf16[8, 2048, 32, 64][4194304, 2048, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%getitem_6,), kwargs = {})
#   %cat_1 : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%neg_1, %getitem_5], -1), kwargs = {})
#   %mul_3 : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%cat_1, %unsqueeze_1), kwargs = {})
#   %add_1 : Tensor "bf16[8, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_2, %mul_3), kwargs = {})
#   return %add,%add_1
triton_poi_fused__unsafe_view_add_cat_mul_neg_split_unbind_unsqueeze_view_0 = async_compile.triton('triton_poi_fused__unsafe_view_add_cat_mul_neg_split_unbind_unsqueeze_view_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 67108864}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'out_ptr0': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__unsafe_view_add_cat_mul_neg_split_unbind_unsqueeze_view_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 8, 'num_store': 2, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1343225856}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__unsafe_view_add_cat_mul_neg_split_unbind_unsqueeze_view_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, XBLOCK : tl.constexpr):
    xnumel = 67108864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x4 = (xindex % 4096)
    x5 = xindex // 4096
    x0 = (xindex % 128)
    x2 = ((xindex // 4096) % 2048)
    x1 = ((xindex // 128) % 32)
    x6 = xindex
    tmp0 = tl.load(in_ptr0 + (x4 + 12288*x5), None).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x0 + 128*x2), None, eviction_policy='evict_last').to(tl.float32)
    tmp17 = tl.load(in_ptr2 + (x0 + 128*x2), None, eviction_policy='evict_last').to(tl.float32)
    tmp20 = tl.load(in_ptr0 + (4096 + x4 + 12288*x5), None).to(tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = x0
    tmp4 = tl.full([1], 0, tl.int64)
    tmp5 = tmp3 >= tmp4
    tmp6 = tl.full([1], 64, tl.int64)
    tmp7 = tmp3 < tmp6
    tmp8 = tl.load(in_ptr0 + (64 + 128*x1 + 12288*x5 + (x0)), tmp7, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp9 = -tmp8
    tmp10 = tl.full(tmp9.shape, 0.0, tmp9.dtype)
    tmp11 = tl.where(tmp7, tmp9, tmp10)
    tmp12 = tmp3 >= tmp6
    tmp13 = tl.full([1], 128, tl.int64)
    tmp14 = tmp3 < tmp13
    tmp15 = tl.load(in_ptr0 + (128*x1 + 12288*x5 + ((-64) + x0)), tmp12, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp16 = tl.where(tmp7, tmp11, tmp15)
    tmp18 = tmp16 * tmp17
    tmp19 = tmp2 + tmp18
    tmp21 = tmp20 * tmp1
    tmp22 = tl.load(in_ptr0 + (4160 + 128*x1 + 12288*x5 + (x0)), tmp7, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp23 = -tmp22
    tmp24 = tl.full(tmp23.shape, 0.0, tmp23.dtype)
    tmp25 = tl.where(tmp7, tmp23, tmp24)
    tmp26 = tl.load(in_ptr0 + (4096 + 128*x1 + 12288*x5 + ((-64) + x0)), tmp12, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp27 = tl.where(tmp7, tmp25, tmp26)
    tmp28 = tmp27 * tmp17
    tmp29 = tmp21 + tmp28
    tl.store(out_ptr0 + (x6), tmp19, None)
    tl.store(out_ptr1 + (x6), tmp29, None)
''', device_str='cuda')


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
        arg0_1, arg1_1, arg2_1, arg3_1 = args
        args.clear()
        assert_size_stride(arg0_1, (8, 2048, 4096), (8388608, 4096, 1))
        assert_size_stride(arg1_1, (12288, 4096), (4096, 1))
        assert_size_stride(arg2_1, (2048, 128), (128, 1))
        assert_size_stride(arg3_1, (2048, 128), (128, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((16384, 12288), (12288, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(arg0_1, (16384, 4096), (4096, 1), 0), reinterpret_tensor(arg1_1, (4096, 12288), (1, 4096), 0), out=buf0)
            del arg0_1
            del arg1_1
            buf1 = empty_strided_cuda((8, 2048, 32, 128), (8388608, 4096, 128, 1), torch.bfloat16)
            buf2 = empty_strided_cuda((8, 2048, 32, 128), (8388608, 4096, 128, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [linear, view, unbind, chunk, chunk_1, cos, mul, neg, cat, sin, mul_1, q_1, mul_2, neg_1, cat_1, mul_3, k_1], Original ATen: [aten._unsafe_view, aten.view, aten.unbind, aten.split, aten.unsqueeze, aten.mul, aten.neg, aten.cat, aten.add]
            stream0 = get_raw_stream(0)
            triton_poi_fused__unsafe_view_add_cat_mul_neg_split_unbind_unsqueeze_view_0.run(buf0, arg2_1, arg3_1, buf1, buf2, 67108864, stream=stream0)
            del arg2_1
            del arg3_1
        return (reinterpret_tensor(buf1, (8, 32, 2048, 128), (8388608, 128, 4096, 1), 0), reinterpret_tensor(buf2, (8, 32, 2048, 128), (8388608, 128, 4096, 1), 0), reinterpret_tensor(buf0, (8, 32, 2048, 128), (25165824, 128, 12288, 1), 8192), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((8, 2048, 4096), (8388608, 4096, 1), device='cuda:0', dtype=torch.bfloat16)
    arg1_1 = rand_strided((12288, 4096), (4096, 1), device='cuda:0', dtype=torch.bfloat16)
    arg2_1 = rand_strided((2048, 128), (128, 1), device='cuda:0', dtype=torch.bfloat16)
    arg3_1 = rand_strided((2048, 128), (128, 1), device='cuda:0', dtype=torch.bfloat16)
    return [arg0_1, arg1_1, arg2_1, arg3_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
