"""G2's fresh inputs (LaunchRecord.synthesized_args): drawn on the recorded tensors' device, the same
for the same seed, within the recorded ranges, laid out like the recorded views, never zeros."""

import torch

from kernelopt.worker.measure import launches
from kernelopt.worker.measure.launches import LaunchRecord


def record():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(64, 130, generator=g) * 3 + 5
    view = base[:, 1:129]  # a view into a larger buffer: offset 1, row stride 130
    idx = torch.randint(2, 9, (500,), generator=g)
    mask = torch.rand(1000, generator=g) < 0.25
    half = torch.randn(4096, generator=g).to(torch.bfloat16)
    return LaunchRecord(graph=0, kernel="k", index=0, args=[view, idx, mask, half, 128, 2.5])


def test_same_seed_same_values_other_seed_other_values():
    rec = record()
    a, b, c = rec.synthesized_args(3), rec.synthesized_args(3), rec.synthesized_args(4)
    for x, y, z in zip(a[:4], b[:4], c[:4]):
        assert x.device == y.device and torch.equal(x, y)
        assert not torch.equal(x, z)
    assert a[4:] == [128, 2.5]


def test_ranges_layout_and_spread_follow_the_recording():
    rec = record()
    view, idx, mask, half = rec.synthesized_args(1)[:4]
    assert view.shape == (64, 128) and view.stride() == (130, 1) and view.storage_offset() == 1
    assert abs(float(view.mean()) - 5) < 0.5 and abs(float(view.std()) - 3) < 0.5
    assert int(idx.min()) >= 2 and int(idx.max()) <= 8 and idx.dtype == torch.int64
    assert 0.15 < float(mask.float().mean()) < 0.35
    assert half.dtype == torch.bfloat16 and float(half.float().abs().sum()) > 0
    assert int((view == 0).sum()) == 0


def test_non_finite_recorded_values_do_not_poison_the_statistics():
    t = torch.randn(1000, generator=torch.Generator().manual_seed(2))
    t[::7] = float("-inf")
    t[3] = float("nan")
    out = LaunchRecord(graph=0, kernel="k", index=0, args=[t]).synthesized_args(0)[0]
    assert bool(torch.isfinite(out).all())
    assert abs(float(out.std()) - 1) < 0.2


def test_chosen_config_is_the_autotuners_one_settled_launcher():
    # Inductor's CachingAutotuner keeps one launcher after autotuning, carrying its triton.Config;
    # the worker reports that config so rewrites run under the baseline's own reduction layout.
    import types

    import triton

    from kernelopt.worker.measure.launches import chosen_config

    cfg = triton.Config({"XBLOCK": 8, "R0_BLOCK": 64}, num_warps=4, num_stages=2)
    settled = types.SimpleNamespace(launchers=[types.SimpleNamespace(config=cfg)])
    assert chosen_config(settled) == {"XBLOCK": 8, "R0_BLOCK": 64, "num_warps": 4, "num_stages": 2}
    # Not settled (several launchers before the first run), no launchers at all (the CPU's
    # interpreter launcher), or a config with a non-integer parameter: nothing to report.
    other = triton.Config({"XBLOCK": 16, "R0_BLOCK": 32}, num_warps=8, num_stages=1)
    unsettled = types.SimpleNamespace(launchers=[types.SimpleNamespace(config=cfg), types.SimpleNamespace(config=other)])
    assert chosen_config(unsettled) is None
    assert chosen_config(object()) is None
    odd = triton.Config({"XBLOCK": 8, "EVEN": True}, num_warps=4, num_stages=1)
    assert chosen_config(types.SimpleNamespace(launchers=[types.SimpleNamespace(config=odd)])) is None


def test_sliced_draws_are_the_same_for_a_seed_and_follow_the_recording(monkeypatch):
    # A large tensor is drawn in fixed slices straight into its dtype (no float32 copy of a bf16
    # input): the same seed gives the same values, each slice differs, the statistics hold.
    from kernelopt.worker.measure import launches

    monkeypatch.setattr(launches, "_CHUNK", 1000)
    src = (torch.randn(4500, generator=torch.Generator().manual_seed(5)) * 2 - 1).to(torch.bfloat16)
    rec = LaunchRecord(graph=0, kernel="k", index=0, args=[src])
    a, b = rec.synthesized_args(7)[0], rec.synthesized_args(7)[0]
    assert a.dtype == torch.bfloat16 and torch.equal(a, b)
    assert not torch.equal(a[:1000], a[1000:2000])
    assert abs(float(a.float().mean()) + 1) < 0.2 and abs(float(a.float().std()) - 2) < 0.2
    assert int((a == 0).sum()) < 10


class _Kernel:
    """A stand-in kernel object: `run` applies `fn` to its arguments (what a Triton launch does)."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, *args, **kwargs):
        self.fn(*args)


def _module(**kernels):
    import types

    m = types.SimpleNamespace(__kernel_vars__={v: v for v in kernels}, **kernels)
    return m


def test_read_only_run_inputs_are_kept_without_a_copy_and_checked():
    from kernelopt.worker.measure.launches import record_launches

    x = torch.randn(256)
    out = torch.empty(256)
    mod = _module(k0=_Kernel(lambda a, o: o.copy_(a * 2)))
    sink = []
    rec = record_launches([mod], sink, shared_inputs=[x], read_only=lambda g, v: {0})
    with rec:
        mod.k0.run(x, out)
    assert rec.intact()
    # The input is the record's argument itself (no copy); the output was copied before the launch.
    assert sink[0].args[0] is x
    assert sink[0].args[1].untyped_storage().data_ptr() != out.untyped_storage().data_ptr()
    assert torch.equal(sink[0].after_args()[1], x * 2)


def test_a_shared_input_written_later_in_the_run_is_found():
    from kernelopt.worker.measure.launches import record_launches

    x = torch.randn(256)
    out = torch.empty(256)
    mod = _module(k0=_Kernel(lambda a, o: o.copy_(a + 1)), k1=_Kernel(lambda a: a.mul_(3)))
    sink = []
    rec = record_launches([mod], sink, shared_inputs=[x], read_only=lambda g, v: {0} if v == "k0" else set())
    with rec:
        mod.k0.run(x, out)
        mod.k1.run(x)  # an in-place op on the model's input, after k0 read it
    assert not rec.intact()  # k0's record no longer holds what k0 read: record again, copying


def test_a_changed_buffer_without_room_is_kept_live_and_dropped_if_overwritten(monkeypatch):
    from kernelopt.worker.measure import launches, memory
    from kernelopt.worker.measure.launches import record_launches

    x = torch.randn(256)
    buf = torch.empty(256)
    mod = _module(k0=_Kernel(lambda a, o: o.copy_(a - 1)), k1=_Kernel(lambda o: o.add_(5)))
    monkeypatch.setattr(memory, "fits_now", lambda need: False)
    sink = []
    rec = record_launches([mod], sink)
    with rec:
        mod.k0.run(x, buf)
        after0 = sink[0].after[1]
        assert after0 is buf  # no room for a copy: the live buffer
        mod.k1.run(buf)  # a later launch writes it: k0's "after" is lost, not wrong
    assert rec.intact()
    assert sink[0].after == [] and sink[1].after[0] is buf


def positive_record():
    # A model's torch.rand input: every recorded value, and every matched draw, positive.
    g = torch.Generator().manual_seed(1)
    x = torch.rand(64, 300, generator=g) * 2 + 0.5
    idx = torch.randint(3, 11, (700,), generator=g)
    half = (torch.rand(2048, generator=g) * 4).to(torch.float16)
    return LaunchRecord(graph=0, kernel="k", index=0, args=[x, idx, half])


def test_symmetric_and_mirrored_draws_give_every_element_both_signs():
    rec = positive_record()
    matched = rec.synthesized_args(1, "matched", "k")[0]
    sym = rec.synthesized_args(1, "symmetric", "k")[0]
    mir = rec.synthesized_args(1, "mirrored", "k")[0]
    assert (matched > 0).float().mean() > 0.99  # what distribution-matched seeds could see
    assert 0.4 < (sym < 0).float().mean() < 0.6
    assert torch.equal(mir, -sym)  # each element is negative in exactly one of the two
    mags = sym.abs()
    x = rec.args[0].double()
    scale = max(float(x.abs().max()), abs(float(x.mean())) + 2 * float(x.std()))  # the recorded magnitude
    assert float(mags.max()) <= scale * 1.0001 and float(mags.min()) >= scale * 1e-4 * 0.999
    assert float(mags.max()) / float(mags.min()) > 1e3  # a wide range of magnitudes, not one scale


def test_special_draws_hold_zeros_of_both_signs_tiny_huge_and_the_recorded_edges():
    rec = positive_record()
    x, idx, half = rec.synthesized_args(2, "special", "k")
    zeros = x[x == 0]
    assert zeros.numel() > 0 and torch.signbit(zeros).any() and (~torch.signbit(zeros)).any()
    tiny = torch.finfo(torch.float32).tiny
    assert ((x != 0) & (x.abs() < 8 * tiny)).any()
    assert (x.abs() >= 0.5 * torch.finfo(torch.float32).max ** 0.25).any()
    assert (x == rec.args[0].min()).any() and (x == rec.args[0].max()).any()
    assert (x < 0).any() and torch.isfinite(x).all()
    # Integers stay in the recorded range, with both edges drawn often; fp16's huge stays finite.
    lo, hi = int(rec.args[1].min()), int(rec.args[1].max())
    assert int(idx.min()) == lo and int(idx.max()) == hi and (idx == lo).float().mean() > 0.2
    assert torch.isfinite(half.float()).all() and float(half.abs().max()) >= 8


def test_draws_differ_between_kernels_and_kinds_and_repeat_for_the_same_ones():
    rec = positive_record()
    a = rec.synthesized_args(0, "matched", "triton_a")[0]
    assert torch.equal(a, rec.synthesized_args(0, "matched", "triton_a")[0])
    assert not torch.equal(a, rec.synthesized_args(0, "matched", "triton_b")[0])
    assert not torch.equal(rec.synthesized_args(0, "special", "triton_a")[0],
                           rec.synthesized_args(0, "symmetric", "triton_a")[0])


def test_an_unknown_kind_is_an_error_naming_the_kinds():
    import pytest

    with pytest.raises(ValueError, match="symmetric"):
        positive_record().synthesized_args(0, "uniform", "k")


def test_a_seeds_reservation_counts_its_draws_slice_temporaries_on_a_gpu(monkeypatch):
    """The statistics' float64 slice and its mask (9 bytes an element) of the largest argument, at most one slice
    of it: a 16M-element slice put 60-160 MB above what a seed of a 186 MB problem reserved (2.9x its peak)."""
    from kernelopt.worker.measure import memory
    args = [torch.empty(1000), torch.empty(10, dtype=torch.bfloat16), 3]
    assert launches.draw_transient_bytes(args) == 0  # CPU mode: left to the budget's check
    monkeypatch.setattr(memory, "on_gpu", lambda: True)
    assert launches.draw_transient_bytes(args) == 1000 * 9
    monkeypatch.setattr(launches, "_CHUNK", 100)
    assert launches.draw_transient_bytes(args) == 100 * 9
    assert launches.draw_transient_bytes([5]) == 0
