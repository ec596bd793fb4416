"""CPU mode (docs/cpu_mode.md): Inductor modules captured on a GPU, run on the CPU.

Triton kernels run in Triton's interpreter, which must be chosen before triton is
first imported; hence the environment line above the imports.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import math  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from kernelopt.worker.bundle_runner import BundleError, call_args, read_meta, rebuild_problem, run_bundle  # noqa: E402
from kernelopt.worker.runtime.cpu_runtime import load_kernel, load_module  # noqa: E402
from kernelopt.worker.runtime.launcher import Launcher, compute_grid, default_config  # noqa: E402
from kernelopt.worker.runtime import reductions_cpu  # noqa: E402
from kernelopt.worker.runtime.libdevice_cpu import NAMES, libdevice  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "corpus").glob("*/meta.json"))


def assert_close_to_scale(got: torch.Tensor, want: torch.Tensor, tol: float):
    """max |got - want| within tol times the largest |want| (outputs with zeros stay meaningful)."""
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = want.double().abs().max().item()
    assert scale > 0, "reference is all zeros: the comparison would prove nothing"
    err = (got.double() - want.double()).abs().max().item()
    assert err <= tol * scale, f"max error {err:.3g} > {tol} x scale {scale:.3g}"


# ---------------------------------------------------------------- whole modules


def test_inductor_like_module_matches_torch():
    path = ROOT / "engine/tests/data/inductor_like.py"
    module = load_module(path.read_text(), str(path), "cpu")
    torch.manual_seed(0)
    w, b, x = torch.randn(64, 32), torch.randn(64), torch.randn(64, 32)
    column_sums, flat = module.call([w, b, x])
    h = F.gelu(x @ w.T + b)
    assert_close_to_scale(flat, h.reshape(-1), 1e-4)
    assert_close_to_scale(column_sums, h.sum(0), 1e-4)


def test_load_kernel_runs_one_kernel_alone_with_a_pinned_config():
    import ast

    module_source = (ROOT / "engine/tests/data/inductor_like.py").read_text()
    declarations = [n.value for n in ast.parse(module_source).body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
    source = next(d.args[1].value for d in declarations if d.args and getattr(d.args[0], "value", None) == "triton_poi_fused_addmm_gelu_0")
    kernel = load_kernel("triton_poi_fused_addmm_gelu_0", source, "cpu", {"XBLOCK": 256, "num_warps": 2})
    assert kernel.config == {"XBLOCK": 256, "num_warps": 2}
    torch.manual_seed(2)
    h, b = torch.randn(64, 64), torch.randn(64)
    buf = h.clone()
    kernel.run(buf, b, 4096, stream=None)
    assert_close_to_scale(buf, F.gelu(h + b), 1e-4)


DEVICE_PROPS = (
    "DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, "
    "regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, warp_size=32)"
)
KERNEL_HEADER = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()
"""
# Kernels of the kinds inductor_like.py lacks: a persistent reduction (R0_BLOCK fixed in
# its body), a 2D pointwise kernel, and a template whose grid comes as extra run() arguments.
# The entry point is a plain `def call` with a partition, and an aten op on device('cuda').
SHAPES_MODULE = (
    '''
import torch
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
async_compile = AsyncCompile()

triton_per_fused__softmax_0 = async_compile.triton('triton_per_fused__softmax_0', """
HEADER
@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 128},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': PROPS, 'constants': {}, 'configs': []},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused__softmax_0', 'mutated_arg_names': [], 'no_x_dim': False}
)
@triton.jit
def triton_per_fused__softmax_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 8
    r0_numel = 100
    R0_BLOCK: tl.constexpr = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 100*x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(r0_mask & xmask, tmp1, float("-inf"))
    tmp4 = triton_helpers.max2(tmp3, 1)[:, None]
    tmp5 = tmp0 - tmp4
    tmp6 = tl_math.exp(tmp5)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(r0_mask & xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None]
    tmp11 = libdevice.tanh(tmp6 / tmp10)
    tl.store(out_ptr2 + (r0_1 + 100*x0), tmp11, r0_mask & xmask)
""", device_str='cuda')

triton_poi_fused_clone_1 = async_compile.triton('triton_poi_fused_clone_1', """
HEADER
@triton_heuristics.pointwise(
    size_hints={'y': 64, 'x': 32}, tile_hint=TileHint.SQUARE,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'ynumel': 'i32', 'xnumel': 'i32', 'YBLOCK': 'constexpr', 'XBLOCK': 'constexpr'}, 'device': PROPS, 'constants': {}, 'configs': []},
    inductor_meta={'grid_type': 'Grid2D', 'kernel_name': 'triton_poi_fused_clone_1', 'mutated_arg_names': []},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_clone_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK : tl.constexpr, XBLOCK : tl.constexpr):
    ynumel = 48
    xnumel = 20
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x1 = xindex
    y0 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 48*x1), xmask & ymask)
    tl.store(out_ptr0 + (x1 + 20*y0), tmp0, xmask & ymask)
""", device_str='cuda')

triton_tem_fused_scale_2 = async_compile.triton('triton_tem_fused_scale_2', """
HEADER
@triton_heuristics.template(
    num_stages=1, num_warps=4,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32'}, 'device': PROPS, 'constants': {}, 'configs': []},
    inductor_meta={'kernel_name': 'triton_tem_fused_scale_2', 'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2']},
)
@triton.jit
def triton_tem_fused_scale_2(in_ptr0, out_ptr0):
    BLOCK : tl.constexpr = 64
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < 200
    tl.store(out_ptr0 + idx, tl.load(in_ptr0 + idx, mask) * 2.0, mask)
""", device_str='cuda')

async_compile.wait(globals())
del async_compile


def partition_0(args):
    arg0_1, arg1_1 = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((8, 100), (100, 1), torch.float32)
        stream0 = get_raw_stream(0)
        triton_per_fused__softmax_0.run(arg0_1, buf0, 8, 100, stream=stream0)
        buf1 = empty_strided_cuda((48, 20), (20, 1), torch.float32)
        triton_poi_fused_clone_1.run(arg1_1, buf1, 48, 20, stream=stream0)
    return (buf0, buf1, )


def call(args):
    arg0_1, arg1_1, arg2_1 = args
    args.clear()
    (buf0, buf1, ) = partition_0([arg0_1, arg1_1])
    with torch.cuda._DeviceGuard(0):
        buf2 = empty_strided_cuda((200, ), (1, ), torch.float32)
        triton_tem_fused_scale_2.run(arg2_1, buf2, 4, 1, 1, stream=get_raw_stream(0))
    buf3 = torch.ops.aten.full.default([4], 1.5, dtype=torch.float32, layout=torch.strided, device=device(type='cuda', index=0), pin_memory=False)
    return (buf0, buf1, buf2, buf3, )
'''.replace("HEADER", KERNEL_HEADER).replace("PROPS", DEVICE_PROPS)
)


@pytest.mark.parametrize("pinned", [None, {"triton_poi_fused_clone_1": {"XBLOCK": 8, "YBLOCK": 16}}])
def test_kernel_kinds_and_cuda_shims(pinned):
    module = load_module(SHAPES_MODULE, "shapes_module.py", "cpu", configs=pinned)
    torch.manual_seed(1)
    a, b, c = torch.randn(8, 100), torch.randn(20, 48), torch.randn(200)
    softmax_tanh, transposed, doubled, full = module.call([a, b, c])
    assert_close_to_scale(softmax_tanh, torch.tanh(torch.softmax(a, dim=1)), 1e-4)
    assert torch.equal(transposed, b.T.contiguous())
    assert torch.equal(doubled, c * 2)
    assert full.device.type == "cpu" and torch.equal(full, torch.full((4,), 1.5))


# ---------------------------------------------------------------- grids


@pytest.mark.parametrize(
    "grid_type, extra_meta, config, scope, expected",
    [
        ("Grid1D", {}, {"XBLOCK": 128}, {"xnumel": 1000}, (8, 1, 1)),
        ("Grid2D", {}, {"XBLOCK": 32, "YBLOCK": 16}, {"xnumel": 100, "ynumel": 50}, (4, 4, 1)),
        ("Grid3D", {}, {"XBLOCK": 32, "YBLOCK": 16, "ZBLOCK": 4}, {"xnumel": 100, "ynumel": 50, "znumel": 9}, (4, 4, 3)),
        # y past the 65535 limit of a CUDA grid's y dimension spills into z
        ("Grid2DWithYZOverflow", {}, {"XBLOCK": 16, "YBLOCK": 1}, {"xnumel": 10, "ynumel": 200000}, (1, 50000, 4)),
        ("FixedGrid", {"fixed_grid": ["_grid_0", "_grid_1", "_grid_2"]}, {}, {"_grid_0": 5, "_grid_1": 2, "_grid_2": 1}, (5, 2, 1)),
        (
            "PrecomputedGrid",
            {"precomputed_grids": [
                {"config": {"BLOCK": 64}, "python": ["-((_launcher_s0) // -(64))", 1, 1], "cpp": []},
                {"config": {"BLOCK": 128}, "python": ["-((_launcher_s0) // -(128))", 1, 1], "cpp": []},
            ]},
            {"BLOCK": 128}, {"_launcher_s0": 1000}, (8, 1, 1),
        ),
        ("SplitScanGrid", {}, {"R0_BLOCK": 256}, {"xnumel": 7, "r0_numel": 1000}, (4, 7, 1)),
        ("CooperativeReductionGrid", {}, {"RSPLIT": 8, "XBLOCK": 2}, {"xnumel": 10}, (8, 5, 1)),
        ("MixOrderReductionGrid", {}, {"RSPLIT_SIZE": 64, "XBLOCK": 8}, {"xnumel": 1000}, (16, 1, 1)),
    ],
)
def test_grid(grid_type, extra_meta, config, scope, expected):
    assert tuple(compute_grid({"grid_type": grid_type, **extra_meta}, config, scope)) == expected


class _RecordingJit:
    """Stands in for a @triton.jit function: records the grid and arguments of a launch."""

    def __init__(self, fn):
        self.fn, self.__name__, self.launches = fn, fn.__name__, []

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launches.append((tuple(grid), args, kwargs))


def _launcher(fn, kind="pointwise", grid_type="Grid1D", constants=None, **decorator_args):
    meta = {"grid_type": grid_type, **decorator_args.pop("inductor_meta", {})}
    return Launcher(_RecordingJit(fn), kind, {"triton_meta": {"constants": constants or {}}, "inductor_meta": meta, **decorator_args})


def _pointwise(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    pass


def _looped_reduction(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    pass


def _persistent_reduction(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
    pass


def _split_scan(in_ptr0, out_ptr0, ws_ptr, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    pass


def _cooperative(in_ptr0, out_ptr0, ws_ptr, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr, RSPLIT: tl.constexpr):
    pass


def _template(in_ptr0, out_ptr0):
    pass


def _mystery(in_ptr0, xnumel, XBLOCK: tl.constexpr, UNROLL: tl.constexpr):
    pass


def test_launch_maps_arguments_config_and_grid():
    launcher = _launcher(_looped_reduction, kind="reduction")
    launcher.run("in", "out", 1000, 100000, stream=0)
    grid, args, kwargs = launcher.fn.launches[-1]
    assert args == ("in", "out", 1000, 100000)
    assert kwargs == {"XBLOCK": 1, "R0_BLOCK": 65536, "num_warps": 4, "num_stages": 1}
    assert grid == (1000, 1, 1)
    launcher.config = {"XBLOCK": 4, "R0_BLOCK": 64, "num_warps": 2}
    launcher.run("in", "out", 1000, 100000)
    assert launcher.fn.launches[-1][0] == (250, 1, 1)
    with pytest.raises(TypeError, match="arguments"):
        launcher.run("in", "out", 1000)


def test_template_grid_comes_from_extra_arguments():
    extra = {"fixed_grid": ["_grid_0", "_grid_1", "_grid_2"], "extra_launcher_args": ["_grid_0", "_grid_1", "_grid_2"]}
    launcher = _launcher(_template, kind="template", grid_type="FixedGrid", inductor_meta=extra, num_warps=4, num_stages=3)
    launcher.run("in", "out", 6, 2, 1)
    assert launcher.fn.launches[-1] == ((6, 2, 1), ("in", "out"), {"num_warps": 4, "num_stages": 3})


@pytest.mark.parametrize(
    "fn, kind, scope, expected",
    [
        (_pointwise, "pointwise", {"xnumel": 100}, {"XBLOCK": 128}),
        (_pointwise, "pointwise", {"xnumel": 10**7}, {"XBLOCK": 65536}),  # the tile budget
        # A multiple of Inductor's largest XBLOCK (4096) may be stored unmasked: the block divides it.
        (_pointwise, "pointwise", {"xnumel": 36864}, {"XBLOCK": 4096}),
        (_pointwise, "pointwise", {"xnumel": 8192 * 5}, {"XBLOCK": 8192}),
        (_pointwise, "pointwise", {"xnumel": 4096 * 16}, {"XBLOCK": 65536}),
        (_looped_reduction, "reduction", {"xnumel": 1000, "r0_numel": 100000}, {"XBLOCK": 1, "R0_BLOCK": 65536}),
        (_looped_reduction, "reduction", {"xnumel": 1000, "r0_numel": 1000}, {"XBLOCK": 64, "R0_BLOCK": 1024}),
        (_looped_reduction, "reduction", {"xnumel": 3, "r0_numel": 50}, {"XBLOCK": 4, "R0_BLOCK": 64}),
        # R0_BLOCK is fixed in the body (next_pow2(300) = 512): only XBLOCK, sized to leave room for it
        (_persistent_reduction, "persistent_reduction", {"xnumel": 10**6, "r0_numel": 300}, {"XBLOCK": 128}),
        (_split_scan, "split_scan", {"xnumel": 7, "r0_numel": 1000}, {"R0_BLOCK": 1024}),
        (_cooperative, "cooperative_reduction", {"xnumel": 2, "r0_numel": 10**6}, {"XBLOCK": 1, "R0_BLOCK": 65536, "RSPLIT": 1}),
    ],
)
def test_default_config(fn, kind, scope, expected):
    launcher = _launcher(fn, kind=kind)
    config = default_config(launcher, scope)
    assert launcher.constexpr_kwargs(config) == expected


def test_config_never_overrides_constants_or_adds_parameters():
    launcher = _launcher(_persistent_reduction, kind="persistent_reduction", constants={"XBLOCK": 1})
    # a pinned config that names a constant and a block the kernel fixes in its body
    assert launcher.constexpr_kwargs({"XBLOCK": 64, "R0_BLOCK": 512, "num_warps": 8}) == {"XBLOCK": 1}


def test_config_for_unknown_constexpr_is_an_error():
    with pytest.raises(ValueError, match="UNROLL"):
        default_config(_launcher(_mystery), {"xnumel": 10})


def test_fixed_and_user_configs_are_taken_as_given():
    fixed = _launcher(_pointwise, kind="fixed_config", config={"XBLOCK": 32, "num_warps": 2})
    assert default_config(fixed, {"xnumel": 10**6}) == {"XBLOCK": 32, "num_warps": 2}
    user = _launcher(_pointwise, kind="user_autotune", grid_type="Grid1D", configs=[{"XBLOCK": 64}, {"XBLOCK": 128}])
    assert default_config(user, {"xnumel": 10**6}) == {"XBLOCK": 64}


# ---------------------------------------------------------------- libdevice


@triton.jit
def _libdevice_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, FN: tl.constexpr, ARITY: tl.constexpr, Y_INT: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask)
    y = tl.load(y_ptr + idx, mask)
    if Y_INT:
        y = y.to(tl.int32)
    z = tl.load(z_ptr + idx, mask)
    if ARITY == 0:  # a Python scalar operand, as in libdevice.pow(tmp0, 3.0)
        tl.store(out_ptr + idx, getattr(libdevice, FN)(x, 3.0), mask)
    elif ARITY == 1:
        tl.store(out_ptr + idx, getattr(libdevice, FN)(x), mask)
    elif ARITY == 2:
        tl.store(out_ptr + idx, getattr(libdevice, FN)(x, y), mask)
    else:
        tl.store(out_ptr + idx, getattr(libdevice, FN)(x, y, z), mask)


SPECIALS = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, float("inf"), float("-inf"), float("nan")]


def _round_away(x):
    return torch.tensor([math.copysign(math.floor(abs(v) + 0.5), v) if math.isfinite(v) else v for v in x.double().tolist()])


# name -> (reference on float32 tensors, arity, (low, high) of the random inputs, extra values, output dtype)
LIBDEVICE_REFERENCES = {
    "abs": (torch.abs, 1, (-5, 5), SPECIALS, None), "fabs": (torch.abs, 1, (-5, 5), SPECIALS, None),
    "acos": (torch.acos, 1, (-1, 1), [], None), "acosh": (torch.acosh, 1, (1, 10), [], None),
    "asin": (torch.asin, 1, (-1, 1), [], None), "asinh": (torch.asinh, 1, (-5, 5), [], None),
    "atan": (torch.atan, 1, (-5, 5), [], None), "atanh": (torch.atanh, 1, (-0.99, 0.99), [], None),
    "cbrt": (lambda x: torch.sign(x) * x.double().abs() ** (1 / 3), 1, (-8, 8), [], None),
    "ceil": (torch.ceil, 1, (-5, 5), SPECIALS, None), "cos": (torch.cos, 1, (-5, 5), [], None),
    "cosh": (torch.cosh, 1, (-5, 5), [], None), "erf": (torch.erf, 1, (-3, 3), [], None),
    "erfc": (torch.erfc, 1, (-3, 3), [], None), "erfinv": (torch.erfinv, 1, (-0.99, 0.99), [], None),
    "erfcx": (lambda x: torch.exp(x.double() ** 2) * torch.erfc(x.double()), 1, (-1, 3), [], None),
    "exp": (torch.exp, 1, (-5, 5), [], None), "exp2": (lambda x: 2.0 ** x.double(), 1, (-5, 5), [], None),
    "exp10": (lambda x: 10.0 ** x.double(), 1, (-3, 3), [], None), "expm1": (torch.expm1, 1, (-1, 1), [], None),
    "floor": (torch.floor, 1, (-5, 5), SPECIALS, None), "lgamma": (torch.lgamma, 1, (0.1, 10), [], None),
    "log": (torch.log, 1, (0.01, 10), [], None), "log10": (torch.log10, 1, (0.01, 10), [], None),
    "log1p": (torch.log1p, 1, (-0.5, 5), [], None), "log2": (torch.log2, 1, (0.01, 10), [], None),
    "rsqrt": (lambda x: 1 / torch.sqrt(x.double()), 1, (0.01, 10), [], None),
    "sin": (torch.sin, 1, (-5, 5), [], None), "sinh": (torch.sinh, 1, (-5, 5), [], None),
    "sqrt": (torch.sqrt, 1, (0, 10), [], None), "tan": (torch.tan, 1, (-1.5, 1.5), [], None),
    "tanh": (torch.tanh, 1, (-5, 5), [], None), "fast_tanhf": (torch.tanh, 1, (-5, 5), [], None),
    "trunc": (torch.trunc, 1, (-5, 5), SPECIALS, None), "round": (_round_away, 1, (-5, 5), SPECIALS, None),
    "nearbyint": (lambda x: torch.tensor([round(v) if math.isfinite(v) else v for v in x.tolist()]), 1, (-5, 5), SPECIALS, None),
    "rint": (lambda x: torch.tensor([round(v) if math.isfinite(v) else v for v in x.tolist()]), 1, (-5, 5), SPECIALS, None),
    "j0": (torch.special.bessel_j0, 1, (0, 10), [], None), "j1": (torch.special.bessel_j1, 1, (0, 10), [], None),
    "y0": (torch.special.bessel_y0, 1, (0.1, 10), [], None), "y1": (torch.special.bessel_y1, 1, (0.1, 10), [], None),
    "cyl_bessel_i0": (torch.special.i0, 1, (-5, 5), [], None), "cyl_bessel_i1": (torch.special.i1, 1, (-5, 5), [], None),
    "pow": (lambda x, y: x.double() ** y.double(), 2, (0.1, 3), [], None),
    "atan2": (torch.atan2, 2, (-5, 5), [], None), "hypot": (torch.hypot, 2, (-5, 5), [], None),
    "fmod": (lambda x, y: torch.tensor([math.fmod(a, b) for a, b in zip(x.tolist(), y.tolist())]), 2, (-5, 5), [], None),
    "copysign": (torch.copysign, 2, (-5, 5), SPECIALS, None), "nextafter": (torch.nextafter, 2, (-5, 5), [], None),
    "fmax": (torch.fmax, 2, (-5, 5), SPECIALS, None), "fmin": (torch.fmin, 2, (-5, 5), SPECIALS, None),
    "ldexp": (lambda x, n: x.double() * 2.0 ** n.double(), 2, (-5, 5), [], None),
    "div_rn": (torch.div, 2, (0.5, 5), [], None), "mul_rn": (torch.mul, 2, (-5, 5), [], None),
    "add_rn": (torch.add, 2, (-5, 5), [], None), "sub_rn": (torch.sub, 2, (-5, 5), [], None),
    "fma": (lambda x, y, z: x.double() * y.double() + z.double(), 3, (-5, 5), [], None),
    "isnan": (torch.isnan, 1, (-5, 5), SPECIALS, torch.int32), "isinf": (torch.isinf, 1, (-5, 5), SPECIALS, torch.int32),
    "isfinited": (torch.isfinite, 1, (-5, 5), SPECIALS, torch.int32), "finitef": (torch.isfinite, 1, (-5, 5), SPECIALS, torch.int32),
    "signbit": (lambda x: torch.tensor([math.copysign(1, v) < 0 for v in x.tolist()]), 1, (-5, 5), SPECIALS, torch.int32),
    "ilogb": (lambda x: torch.floor(torch.log2(x.double().abs())), 1, (-100, 100), [], torch.int32),
    "llrint": (lambda x: torch.tensor([round(v) for v in x.tolist()]), 1, (-100, 100), [0.5, 1.5, 2.5, -2.5], torch.int64),
}


def test_every_libdevice_function_has_a_reference():
    assert sorted(LIBDEVICE_REFERENCES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_libdevice_matches_torch(name):
    reference, arity, (low, high), specials, out_dtype = LIBDEVICE_REFERENCES[name]
    gen = torch.Generator().manual_seed(0)
    n = 200 + len(specials)

    def sample():
        values = torch.rand(n, generator=gen) * (high - low) + low
        values[200:] = torch.tensor(specials)
        return values

    x, y, z = sample(), sample(), sample()
    if name == "ldexp":
        y = torch.randint(-10, 10, (n,), generator=gen).float()
    out = torch.empty(n, dtype=out_dtype or torch.float32)
    _libdevice_kernel[(1,)](x, y, z, out, n, FN=name, ARITY=arity, Y_INT=name == "ldexp", BLOCK=512)
    want = reference(*(x, y, z)[:arity]).to(out.dtype)
    torch.testing.assert_close(out, want, rtol=2e-6, atol=1e-6, equal_nan=True)


def test_libdevice_takes_python_scalars():
    x = torch.rand(64) + 0.5
    out = torch.empty(64)
    _libdevice_kernel[(1,)](x, x, x, out, 64, FN="pow", ARITY=0, Y_INT=False, BLOCK=64)
    torch.testing.assert_close(out, x**3)


def test_missing_libdevice_function_is_named():
    with pytest.raises(AttributeError, match="no_such_fn"):
        libdevice.no_such_fn  # noqa: B018


# ---------------------------------------------------------------- vectorized reduction helpers


@triton.jit
def _reduction_kernel(a_ptr, b_ptr, c_ptr, o0_ptr, o1_ptr, o2_ptr, HELPERS: tl.constexpr, FN: tl.constexpr, X: tl.constexpr, R: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    rows = tl.arange(0, X)
    a = tl.load(a_ptr + offsets)
    b = tl.load(b_ptr + offsets)
    c = tl.load(c_ptr + offsets)
    if FN == "welford":
        mean, m2, weight = HELPERS.welford(a, b, c, 1)
        tl.store(o0_ptr + rows, mean)
        tl.store(o1_ptr + rows, m2)
        tl.store(o2_ptr + rows, weight)
    elif FN == "max_with_index" or FN == "min_with_index":
        value, index = getattr(HELPERS, FN)(a, b.to(tl.int32), 1)
        tl.store(o0_ptr + rows, value)
        tl.store(o1_ptr + rows, index.to(tl.float32))
    elif FN == "any":
        tl.store(o0_ptr + rows, HELPERS.any(a != 0, 1).to(tl.float32))
    else:
        tl.store(o0_ptr + rows, getattr(HELPERS, FN)(a, 1))


@pytest.mark.parametrize("name", sorted(reductions_cpu.HELPERS))
def test_vectorized_reduction_equals_inductor_helper(name):
    """Each replacement against the real triton_helpers function, both run by the interpreter."""
    import torch._inductor.runtime.triton_helpers as inductor_helpers

    gen = torch.Generator().manual_seed(0)
    X, R = 4, 16
    # Few distinct values: ties, zeros of both signs and NaNs in some rows.
    a = torch.tensor([-1.0, 0.0, -0.0, 2.0, 2.0, 0.5])[torch.randint(0, 6, (X, R), generator=gen)]
    a[1, 3] = a[3, 0] = a[3, 9] = float("nan")
    b = torch.randperm(X * R, generator=gen).float().reshape(X, R)  # index values, not positions
    c = torch.randint(0, 3, (X, R), generator=gen).float()  # welford weights, zeros included
    if name == "welford":
        a, b = torch.randn(X, R, generator=gen), torch.rand(X, R, generator=gen)
    elif name == "prod":
        a = torch.rand(X, R, generator=gen) + 0.5
    results = []
    for helpers in (inductor_helpers, reductions_cpu):
        outs = [torch.full((X,), -7.0) for _ in range(3)]
        _reduction_kernel[(1,)](a, b, c, *outs, HELPERS=helpers, FN=name, X=X, R=R)
        results.append(outs)
    for want, got in zip(*results):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)


# ---------------------------------------------------------------- bundles


@pytest.fixture(scope="module")
def graph_break_bundle(tmp_path_factory):
    """examples/problems/graph_break.py captured on the CPU: C++ kernels, but the same plumbing."""
    from kernelopt.worker.capture.capture import capture

    out = tmp_path_factory.mktemp("bundles") / "graph_break"
    capture(ROOT / "examples/problems/graph_break.py", out, device="cpu")
    return out


def test_run_bundle_across_a_graph_break(graph_break_bundle, tmp_path):
    meta = read_meta(graph_break_bundle)
    assert len(meta["graphs"]) == 2 and meta["graphs"][1]["args"][2]["kind"] == "intermediate"
    model, inputs = rebuild_problem(graph_break_bundle, "cpu")
    with torch.no_grad():
        want = model(*inputs)
    assert_close_to_scale(run_bundle(graph_break_bundle, "cpu"), want, 1e-4)
    # The modules really run: make the second one return zeros and see it in the result.
    broken = tmp_path / "broken"
    shutil.copytree(graph_break_bundle, broken)
    with open(broken / "module_1.py", "a") as f:
        f.write("\n_call = call\ncall = lambda args: tuple(torch.zeros_like(o) for o in _call(args))\n")
    assert torch.count_nonzero(run_bundle(broken, "cpu")) == 0


def test_call_args(graph_break_bundle):
    model, inputs = rebuild_problem(graph_break_bundle, "cpu")
    args = call_args(graph_break_bundle, 0, model, inputs)
    assert args[0] is model.fc.weight and args[1] is model.fc.bias and args[2] is inputs[0]
    with pytest.raises(BundleError, match="run_bundle"):
        call_args(graph_break_bundle, 1, model, inputs)


def _tolerance(dtype: torch.dtype) -> float:
    return 1e-4 if dtype in (torch.float32, torch.float64) else 1e-2


@pytest.mark.parametrize("meta_path", CORPUS, ids=[p.parent.name for p in CORPUS])
def test_corpus_bundle_matches_eager(meta_path):
    bundle = meta_path.parent
    model, inputs = rebuild_problem(bundle, "cpu")
    with torch.no_grad():
        want = torch.utils._pytree.tree_leaves(model(*inputs))
    got = torch.utils._pytree.tree_leaves(run_bundle(bundle, "cpu"))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor) and w.is_floating_point():
            assert_close_to_scale(g, w, _tolerance(w.dtype))
        else:
            assert torch.equal(g, w) if isinstance(w, torch.Tensor) else g == w


def test_corpus_is_present():
    assert len(CORPUS) >= 15, "no bundles under corpus/: capture them on the GPU (python -m kernelopt.worker.capture)"
