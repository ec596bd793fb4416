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


# kernel path: /tmp/torchinductor_root/2y/c2yb3apbzdgvbpgref6bgbhcvoaenreqd5lehtnttu2ly3fckjld.py
# Topologically Sorted Source Nodes: [getitem, getitem_1, sub, distance, gt, scores_1, matmul, float_2, mul_1, bias, scores, softmax, probs], Original ATen: [aten.unsqueeze, aten.sub, aten._to_copy, aten.gt, aten.masked_fill, aten.view, aten.mul, aten.add, prims.prepare_softmax_online, aten.exp, aten._softmax]
# Source node to ATen node mapping:
#   bias => mul
#   distance => convert_element_type
#   float_2 => convert_element_type_3
#   getitem => unsqueeze
#   getitem_1 => unsqueeze_1
#   gt => gt
#   matmul => view_2
#   mul_1 => mul_1
#   probs => convert_element_type_4
#   scores => add
#   scores_1 => full_default, where
#   softmax => div
#   sub => sub
# Graph fragment:
#   %arg0_1 : Tensor "i64[64][1]cuda:0" = PlaceHolder[target=arg0_1]
#   %bmm : Tensor "bf16[32, 64, 64][4096, 64, 1]cuda:0" = PlaceHolder[target=bmm]
#   %arg1_1 : Tensor "f32[16, 1, 1][1, 1, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %getitem : Tensor "f32[2, 16, 64, 1][1024, 64, 1, 2048]cuda:0" = PlaceHolder[target=getitem]
#   %getitem_1 : Tensor "f32[2, 16, 64, 1][1024, 64, 1, 2048]cuda:0" = PlaceHolder[target=getitem_1]
#   %unsqueeze : Tensor "i64[1, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg0_1, 0), kwargs = {})
#   %unsqueeze_1 : Tensor "i64[64, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg0_1, 1), kwargs = {})
#   %sub : Tensor "i64[64, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%unsqueeze, %unsqueeze_1), kwargs = {})
#   %convert_element_type : Tensor "f32[64, 64][64, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%sub, torch.float32), kwargs = {})
#   %gt : Tensor "b8[64, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.gt.Scalar](args = (%convert_element_type, 0), kwargs = {})
#   %full_default : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], -inf), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %view_2 : Tensor "bf16[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm, [2, 16, 64, 64]), kwargs = {})
#   %convert_element_type_3 : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_2, torch.float32), kwargs = {})
#   %mul_1 : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_3, 0.125), kwargs = {})
#   %mul : Tensor "f32[16, 64, 64][4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg1_1, %convert_element_type), kwargs = {})
#   %add : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_1, %mul), kwargs = {})
#   %where : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.where.self](args = (%gt, %full_default, %add), kwargs = {})
#   %prepare_softmax_online_default : [num_users=2] = call_function[target=torch.ops.prims.prepare_softmax_online.default](args = (%where, -1), kwargs = {})
#   %sub_tensor : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%where, %getitem), kwargs = {})
#   %exp_default : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%sub_tensor,), kwargs = {})
#   %div : Tensor "f32[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%exp_default, %getitem_1), kwargs = {})
#   %convert_element_type_4 : Tensor "bf16[2, 16, 64, 64][65536, 4096, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%div, torch.bfloat16), kwargs = {})
#   return %getitem,%getitem_1,%expand_2
triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0 = async_compile.triton('triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 2048, 'r0_': 64},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*bf16', 'in_ptr0': '*i64', 'in_ptr1': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 6, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': False, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16384, 'r0_': 3221241856}}
)
@triton.jit
def triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0(in_out_ptr0, in_ptr0, in_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 64)
    tmp1 = tl.load(in_ptr0 + (x0), None, eviction_policy='evict_last')
    x4 = xindex
    x1 = ((xindex // 64) % 16)
    tmp10 = tl.load(in_ptr1 + (x1), None, eviction_policy='evict_last')
    _tmp16_max = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)
    _tmp16_sum = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_3 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_3), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp6 = tl.load(in_out_ptr0 + (r0_3 + 64*x4), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp2 = tmp0 - tmp1
        tmp3 = tmp2.to(tl.float32)
        tmp4 = tl.full([1, 1], 0.0, tl.float32)
        tmp5 = tmp3 > tmp4
        tmp7 = tmp6.to(tl.float32)
        tmp8 = tl.full([1, 1], 0.125, tl.float32)
        tmp9 = tmp7 * tmp8
        tmp11 = tmp10 * tmp3
        tmp12 = tmp9 + tmp11
        tmp13 = tl.full([1, 1], float("-inf"), tl.float32)
        tmp14 = tl.where(tmp5, tmp13, tmp12)
        tmp15 = tl.broadcast_to(tmp14, [XBLOCK, R0_BLOCK])

        _tmp16_max_next, _tmp16_sum_next = triton_helpers.online_softmax_combine(
            _tmp16_max, _tmp16_sum, tmp15, False
        )

        _tmp16_max = tl.where(r0_mask, _tmp16_max_next, _tmp16_max)
        _tmp16_sum = tl.where(r0_mask, _tmp16_sum_next, _tmp16_sum)

    tmp16, tmp17 = triton_helpers.online_softmax_reduce(
        _tmp16_max, _tmp16_sum, 1, False)
    tmp16 = tmp16[:, None]
    tmp17 = tmp17[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_3 = r0_index
        tmp18 = tl.load(in_ptr0 + (r0_3), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp23 = tl.load(in_out_ptr0 + (r0_3 + 64*x4), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp19 = tmp18 - tmp1
        tmp20 = tmp19.to(tl.float32)
        tmp21 = tl.full([1, 1], 0.0, tl.float32)
        tmp22 = tmp20 > tmp21
        tmp24 = tmp23.to(tl.float32)
        tmp25 = tl.full([1, 1], 0.125, tl.float32)
        tmp26 = tmp24 * tmp25
        tmp27 = tmp10 * tmp20
        tmp28 = tmp26 + tmp27
        tmp29 = tl.full([1, 1], float("-inf"), tl.float32)
        tmp30 = tl.where(tmp22, tmp29, tmp28)
        tmp31 = tmp30 - tmp16
        tmp32 = libdevice.exp(tmp31)
        tmp33 = (tmp32 / tmp17)
        tmp34 = tmp33.to(tl.float32)
        tl.store(in_out_ptr0 + (r0_3 + 64*x4), tmp34, r0_mask)
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
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1 = args
        args.clear()
        assert_size_stride(arg0_1, (64, ), (1, ))
        assert_size_stride(arg1_1, (16, 1, 1), (1, 1, 1))
        assert_size_stride(arg2_1, (2, 16, 64, 64), (65536, 4096, 64, 1))
        assert_size_stride(arg3_1, (2, 16, 64, 64), (65536, 4096, 64, 1))
        assert_size_stride(arg4_1, (2, 16, 64, 64), (65536, 4096, 64, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((32, 64, 64), (4096, 64, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [matmul, transpose], Original ATen: [aten.view, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(arg3_1, (32, 64, 64), (4096, 64, 1), 0), reinterpret_tensor(arg2_1, (32, 64, 64), (4096, 1, 64), 0), out=buf0)
            del arg2_1
            del arg3_1
            buf3 = reinterpret_tensor(buf0, (2, 16, 64, 64), (65536, 4096, 64, 1), 0); del buf0  # reuse
            # Topologically Sorted Source Nodes: [getitem, getitem_1, sub, distance, gt, scores_1, matmul, float_2, mul_1, bias, scores, softmax, probs], Original ATen: [aten.unsqueeze, aten.sub, aten._to_copy, aten.gt, aten.masked_fill, aten.view, aten.mul, aten.add, prims.prepare_softmax_online, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0.run(buf3, arg0_1, arg1_1, 2048, 64, stream=stream0)
            del arg0_1
            del arg1_1
            buf4 = empty_strided_cuda((32, 64, 64), (4096, 64, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [getitem, getitem_1, sub, distance, gt, scores_1, matmul, float_2, mul_1, bias, scores, softmax, probs, matmul_1], Original ATen: [aten.unsqueeze, aten.sub, aten._to_copy, aten.gt, aten.masked_fill, aten.view, aten.mul, aten.add, aten.exp, aten._softmax, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf3, (32, 64, 64), (4096, 64, 1), 0), reinterpret_tensor(arg4_1, (32, 64, 64), (4096, 64, 1), 0), out=buf4)
            del arg4_1
            del buf3
        return (reinterpret_tensor(buf4, (2, 16, 64, 64), (65536, 4096, 64, 1), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.int64)
    arg1_1 = rand_strided((16, 1, 1), (1, 1, 1), device='cuda:0', dtype=torch.float32)
    arg2_1 = rand_strided((2, 16, 64, 64), (65536, 4096, 64, 1), device='cuda:0', dtype=torch.bfloat16)
    arg3_1 = rand_strided((2, 16, 64, 64), (65536, 4096, 64, 1), device='cuda:0', dtype=torch.bfloat16)
    arg4_1 = rand_strided((2, 16, 64, 64), (65536, 4096, 64, 1), device='cuda:0', dtype=torch.bfloat16)
    return [arg0_1, arg1_1, arg2_1, arg3_1, arg4_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
