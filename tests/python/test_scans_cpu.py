"""scans_cpu: tl.associative_scan / tl.reduce with @triton.jit combine functions, vectorized
for Triton's interpreter (docs/cpu_mode.md, "Scans").

Kernels are run by the interpreter and compared with torch (float results in float64, as
the tree order rounds differently from a sequential scan) and, for exact cases, with the
interpreter's own per-element path.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import math  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from kernelopt.worker.runtime import scans_cpu  # noqa: E402
from kernelopt.worker.runtime.cpu_runtime import load_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def per_element():
    """Run the body with the interpreter's original per-element scan/reduce, then restore."""
    was_installed = bool(scans_cpu._ORIGINALS)
    scans_cpu.uninstall()
    yield
    if was_installed:
        scans_cpu.install()


@pytest.fixture(autouse=True)
def fast():
    scans_cpu.install()
    yield


# ---------------------------------------------------------------- combine functions


@triton.jit
def add_fn(a, b):
    return a + b


@triton.jit
def cummax_fn(v1, i1, v2, i2):
    # torch.cummax: on ties the later index.
    take_right = (v2 >= v1) | (v2 != v2)
    return tl.where(take_right, v2, v1), tl.where(take_right, i2, i1)


@triton.jit
def last_nonzero_fn(a, b):  # associative, not commutative
    return tl.where(b != 0, b, a)


@triton.jit
def affine_fn(a1, b1, a2, b2):
    # Composition of x -> a1 x + b1, then x -> a2 x + b2: h_i = a_i h_(i-1) + b_i.
    return a1 * a2, b1 * a2 + b2


@triton.jit
def argmin_fn(v1, i1, v2, i2):
    take_right = (v2 < v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take_right, v2, v1), tl.where(take_right, i2, i1)


@triton.jit
def _is_nan(x):
    return x != x


@triton.jit
def nan_max_not_fn(a, b):
    # Python `not` on a value, inside a nested @triton.jit call: legal on the GPU, where a
    # combine function sees scalars (triton_helpers.maximum_with_index does this).
    take_a = (a > b) | (_is_nan(a) & (not _is_nan(b)))
    return tl.where(take_a, a, b)


@triton.jit
def max_if_fn(a, b):
    if a > b:  # data-dependent Python control flow: scalars only
        return a
    return b


# ---------------------------------------------------------------- kernels


@triton.jit
def scan_kernel(x_ptr, o_ptr, X: tl.constexpr, R: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr,
                FN: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + offsets)
    if FN == "add":
        y = tl.associative_scan(x, AXIS, add_fn, reverse=REVERSE)
    elif FN == "nan_max_not":
        y = tl.associative_scan(x, AXIS, nan_max_not_fn, reverse=REVERSE)
    elif FN == "max_if":
        y = tl.associative_scan(x, AXIS, max_if_fn, reverse=REVERSE)
    else:
        y = tl.associative_scan(x, AXIS, last_nonzero_fn, reverse=REVERSE)
    tl.store(o_ptr + offsets, y)


@triton.jit
def scan_1d_kernel(x_ptr, o_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(o_ptr + offsets, tl.associative_scan(tl.load(x_ptr + offsets), 0, add_fn))


@triton.jit
def tuple_scan_kernel(a_ptr, b_ptr, o0_ptr, o1_ptr, X: tl.constexpr, R: tl.constexpr, AXIS: tl.constexpr,
                      REVERSE: tl.constexpr, FN: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    a = tl.load(a_ptr + offsets)
    b = tl.load(b_ptr + offsets)
    if FN == "cummax":
        idx = tl.broadcast_to((tl.arange(0, R)[None, :] if AXIS == 1 else tl.arange(0, X)[:, None]), [X, R])
        y0, y1 = tl.associative_scan((a, idx), AXIS, cummax_fn, reverse=REVERSE)
    else:
        y0, y1 = tl.associative_scan((a, b), AXIS, affine_fn, reverse=REVERSE)
    tl.store(o0_ptr + offsets, y0)
    tl.store(o1_ptr + offsets, y1)


@triton.jit
def reduce_kernel(x_ptr, o_ptr, X: tl.constexpr, R: tl.constexpr, AXIS: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + offsets)
    if AXIS == 2:
        tl.store(o_ptr + tl.arange(0, X), tl.reduce(x, 1, nan_max_not_fn))
    elif AXIS == 0:
        tl.store(o_ptr + tl.arange(0, R), tl.reduce(x, 0, add_fn))
    elif AXIS == 1:
        tl.store(o_ptr + tl.arange(0, X), tl.reduce(x, 1, add_fn))
    else:
        tl.store(o_ptr, tl.reduce(x, None, add_fn))


@triton.jit
def reduce_keep_dims_kernel(x_ptr, o_ptr, X: tl.constexpr, R: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    s = tl.reduce(tl.load(x_ptr + offsets), 1, add_fn, keep_dims=True)  # [X, 1]
    tl.store(o_ptr + tl.arange(0, X)[:, None] + tl.zeros([X, 1], tl.int32), s)


@triton.jit
def argmin_kernel(x_ptr, ov_ptr, oi_ptr, X: tl.constexpr, R: tl.constexpr):
    offsets = tl.arange(0, X)[:, None] * R + tl.arange(0, R)[None, :]
    x = tl.load(x_ptr + offsets)
    idx = tl.broadcast_to(tl.arange(0, R)[None, :], [X, R])
    v, i = tl.reduce((x, idx), 1, argmin_fn)
    tl.store(ov_ptr + tl.arange(0, X), v)
    tl.store(oi_ptr + tl.arange(0, X), i)


def _gen():
    return torch.Generator().manual_seed(0)


def _close64(got: torch.Tensor, want64: torch.Tensor, rtol: float = 1e-5):
    """got (any float dtype) against a float64 reference, to the reference's scale."""
    err = (got.double() - want64).abs().max().item()
    assert err <= rtol * want64.abs().max().item() + 1e-6, err


# ---------------------------------------------------------------- scans


def test_add_scan_matches_torch_cumsum_in_float64():
    n = 65536
    x = torch.randn(n, generator=_gen())
    out = torch.empty(n)
    scan_1d_kernel[(1,)](x, out, N=n)
    _close64(out, x.double().cumsum(0))


def test_scan_calls_the_combine_function_log2_n_times(monkeypatch):
    calls = []
    real = scans_cpu._combine
    monkeypatch.setattr(scans_cpu, "_combine", lambda *a: calls.append(1) or real(*a))
    n = 4096
    x = torch.randint(-100, 100, (n,), generator=_gen(), dtype=torch.int32)
    out = torch.empty_like(x)
    scan_1d_kernel[(1,)](x, out, N=n)
    assert torch.equal(out, x.cumsum(0).to(torch.int32))
    assert len(calls) == int(math.log2(n))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_add_scan_2d_any_axis_and_reverse(axis, reverse):
    X, R = 32, 64
    x = torch.randn(X, R, generator=_gen())
    xi = torch.randint(-1000, 1000, (X, R), generator=_gen(), dtype=torch.int32)
    for inp, exact in ((x, False), (xi, True)):
        out = torch.empty_like(inp)
        scan_kernel[(1,)](inp, out, X=X, R=R, AXIS=axis, REVERSE=reverse, FN="add")
        ref = inp.double() if not exact else inp.long()
        want = ref.flip(axis).cumsum(axis).flip(axis) if reverse else ref.cumsum(axis)
        assert out.dtype == inp.dtype
        if exact:
            assert torch.equal(out, want.to(torch.int32))
        else:
            _close64(out, want)


# Not bfloat16: the interpreter adds bfloat16 blocks wrongly (as their uint16 bits) on either
# path; Inductor upcasts to float32 before it scans.
@pytest.mark.parametrize("dtype", [torch.float16, torch.float64, torch.int64])
def test_add_scan_keeps_the_dtype(dtype):
    X, R = 4, 256
    x = (torch.rand(X, R, generator=_gen()) * 4).to(dtype)
    out = torch.empty_like(x)
    scan_kernel[(1,)](x, out, X=X, R=R, AXIS=1, REVERSE=False, FN="add")
    assert out.dtype == dtype
    want = x.double().cumsum(1)
    if dtype.is_floating_point:
        # Each combine rounds to the dtype, as the per-element path and the GPU do.
        _close64(out, want, rtol={torch.float16: 4e-3, torch.float64: 1e-12}[dtype])
    else:
        assert torch.equal(out, x.cumsum(1))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cummax_tuple_scan_matches_torch(axis, reverse):
    X, R = 16, 64
    # Few distinct values: ties everywhere.
    a = torch.randint(0, 5, (X, R), generator=_gen()).float()
    b = torch.zeros(X, R)
    v, i = torch.empty(X, R), torch.empty(X, R, dtype=torch.int32)
    tuple_scan_kernel[(1,)](a, b, v, i, X=X, R=R, AXIS=axis, REVERSE=reverse, FN="cummax")
    if reverse:
        wv, wi = torch.cummax(a.flip(axis), axis)
        n = a.shape[axis]
        wv, wi = wv.flip(axis), n - 1 - wi.flip(axis)
    else:
        wv, wi = torch.cummax(a, axis)
    assert torch.equal(v, wv)
    assert torch.equal(i, wi.to(torch.int32))


@pytest.mark.parametrize("reverse", [False, True])
def test_non_commutative_tuple_scan_linear_recurrence(reverse):
    X, R = 8, 128
    gen = _gen()
    a = torch.rand(X, R, generator=gen, dtype=torch.float64) * 0.5 + 0.7
    b = torch.randn(X, R, generator=gen, dtype=torch.float64)
    oa, ob = torch.empty_like(a), torch.empty_like(b)
    tuple_scan_kernel[(1,)](a, b, oa, ob, X=X, R=R, AXIS=1, REVERSE=reverse, FN="affine")
    # Sequential reference: h_j = a_j h_(j-1) + b_j along the scan order.
    order = range(R - 1, -1, -1) if reverse else range(R)
    ha, hb = torch.ones(X, dtype=torch.float64), torch.zeros(X, dtype=torch.float64)
    wa, wb = torch.empty_like(a), torch.empty_like(b)
    for j in order:
        ha, hb = ha * a[:, j], hb * a[:, j] + b[:, j]
        wa[:, j], wb[:, j] = ha, hb
    torch.testing.assert_close(oa, wa, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ob, wb, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_scan_equals_the_interpreters_per_element_path(axis, reverse, per_element):
    """A non-commutative combine on integers: bit-identical to the original generic_scan."""
    X, R = 8, 32
    x = torch.randint(0, 4, (X, R), generator=_gen(), dtype=torch.int32) * torch.randint(
        -3, 4, (X, R), generator=_gen(), dtype=torch.int32)  # many zeros
    want = torch.empty_like(x)
    scan_kernel[(1,)](x, want, X=X, R=R, AXIS=axis, REVERSE=reverse, FN="last_nonzero")  # per element
    scans_cpu.install()
    got = torch.empty_like(x)
    scan_kernel[(1,)](x, got, X=X, R=R, AXIS=axis, REVERSE=reverse, FN="last_nonzero")
    assert torch.equal(got, want)


@pytest.mark.parametrize("fn", ["nan_max_not", "max_if"])
def test_combine_functions_that_need_scalars_take_the_per_element_path(fn):
    """`not`/`if` on values would be wrong on blocks: those scans fall back, and stay right."""
    X, R = 4, 32
    x = torch.randint(0, 6, (X, R), generator=_gen()).float()
    if fn == "nan_max_not":
        x[1, 5] = x[2, 0] = float("nan")
    out = torch.empty_like(x)
    scan_kernel[(1,)](x, out, X=X, R=R, AXIS=1, REVERSE=False, FN=fn)
    torch.testing.assert_close(out, torch.cummax(x, 1).values, equal_nan=True)


def test_reduce_with_a_combine_function_that_needs_scalars():
    X, R = 4, 32
    x = torch.randint(0, 6, (X, R), generator=_gen()).float()
    x[1, 5] = x[2, 0] = float("nan")
    out = torch.empty(X)
    reduce_kernel[(1,)](x, out, X=X, R=R, AXIS=2)
    torch.testing.assert_close(out, x.amax(1), equal_nan=True)  # NaN wins, as amax


# ---------------------------------------------------------------- reductions


@pytest.mark.parametrize("axis", [0, 1, None])
def test_reduce_with_jit_add_matches_torch(axis):
    X, R = 32, 64
    x = torch.randn(X, R, generator=_gen())
    out = torch.empty(R if axis == 0 else X if axis == 1 else 1)
    reduce_kernel[(1,)](x, out, X=X, R=R, AXIS=-1 if axis is None else axis)
    want = x.double().sum() if axis is None else x.double().sum(axis)
    _close64(out, want.reshape(out.shape))


def test_reduce_keep_dims():
    X, R = 16, 32
    x = torch.randint(-50, 50, (X, R), generator=_gen(), dtype=torch.int32)
    out = torch.empty(X, dtype=torch.int32)
    reduce_keep_dims_kernel[(1,)](x, out, X=X, R=R)
    assert torch.equal(out, x.sum(1).to(torch.int32))


def test_tuple_reduce_argmin_lowest_index_on_ties():
    X, R = 16, 64
    x = torch.randint(0, 4, (X, R), generator=_gen()).float()
    v, i = torch.empty(X), torch.empty(X, dtype=torch.int32)
    argmin_kernel[(1,)](x, v, i, X=X, R=R)
    assert torch.equal(v, x.amin(1))
    assert torch.equal(i, (x == x.amin(1, keepdim=True)).int().argmax(1).int())  # first minimum


# ---------------------------------------------------------------- the hook


def test_cpu_mode_installs_the_fast_paths(per_element):
    assert interpreter.ScanOps.generic_scan is not scans_cpu.generic_scan
    module = (ROOT / "corpus/cumsum_long_large/module_0.py").read_text()
    source = re.search(r"async_compile\.triton\('triton_spl_fused_cumsum_0', '''(.*?)'''", module, re.S).group(1)
    load_kernel("triton_spl_fused_cumsum_0", source, "cpu")
    assert interpreter.ScanOps.generic_scan is scans_cpu.generic_scan
    assert interpreter.ReduceOps.generic_reduce is scans_cpu.generic_reduce
