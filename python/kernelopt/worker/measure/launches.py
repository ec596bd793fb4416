"""Real kernel inputs: every launch's arguments, recorded while the baseline
module runs, so a kernel can later run alone on exactly what it saw inside the
model (class indices in range, realistic value distributions, the buffers it
updates in place).

A recorded tensor keeps its whole storage (a launch may pass a view into a
larger buffer and index beyond the view's shape), copied before the launch, so
buffers the kernel writes in place are recorded as they were going in.

Records are the largest state a worker keeps (every launch's storages, twice: before and after),
so they follow the memory plan (memory.py): an argument the launch left unchanged is kept once
(its "after" is the "before"); a read-only argument in the run's own input copy is kept without a
copy; what a launch changed is copied while the device is under the soft target, else the live
buffer is kept (it is only ever compared, once; see record_launches); and a record is Spillable —
moved to the host while other requests need the room, and its arguments back
to the device when its kernel runs again (`use`; what the launch changed is not brought back).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from typing import Any

import torch

from . import memory


def snapshot(t: torch.Tensor) -> torch.Tensor:
    """A copy of `t` with its own copy of the whole underlying storage, same view."""
    storage = t.untyped_storage().clone()
    out = torch.empty(0, dtype=t.dtype, device=t.device)
    out.set_(storage, t.storage_offset(), t.size(), t.stride())
    return out


def fresh_copies(args: list) -> list:
    """Launch arguments with every tensor snapshotted (a run may write into them)."""
    return [snapshot(a) if isinstance(a, torch.Tensor) else a for a in args]


def restore(dst: torch.Tensor, src: torch.Tensor) -> None:
    """Copies the whole storage of `src` into `dst`'s (same layout, same size)."""
    dst.untyped_storage().copy_(src.untyped_storage())


@dataclass(eq=False)
class LaunchRecord(memory.Spillable):
    graph: int
    kernel: str  # the module variable the launch used
    index: int  # this kernel's n-th launch in the graph
    args: list[Any]  # tensors snapshotted before the launch; ints/floats as passed
    kwargs: dict[str, Any] = field(default_factory=dict)
    # The same arguments right after the launch: None where the launch changed nothing (the "before"
    # snapshot stands for both), else a snapshot, on the host on a GPU (it is only ever compared).
    after: list[Any] = field(default_factory=list)

    def __post_init__(self):
        memory.Spillable.__init__(self)
        self.device = next((a.device for a in self.args if isinstance(a, torch.Tensor)), None)
        self._stats: dict[int, tuple] = {}
        self.isolated: dict | None = None  # the original alone against `after` (bundle_ops.run_kernel)

    def tensors(self) -> list[torch.Tensor]:
        # The arguments wherever they are, and what the launch changed while it is on the device.
        return [a for a in self.args if isinstance(a, torch.Tensor)] + [a for a in self.after if _on_device(a)]

    def kept(self) -> list[torch.Tensor]:
        return [a for a in self.after if isinstance(a, torch.Tensor) and not _on_device(a)]

    def _place(self, tensors: list[torch.Tensor]) -> None:
        it = iter(tensors)  # in tensors()'s order, chosen before anything moved
        self.args = [next(it) if isinstance(a, torch.Tensor) else a for a in self.args]
        self.after = [next(it) if _on_device(a) else a for a in self.after]

    def trace_label(self) -> str:
        return f"{self.kernel}#{self.index}:{memory.Spillable.trace_label(self)}"

    def after_args(self) -> list[Any]:
        """The arguments as the launch left them (`after` keeps None where nothing changed)."""
        return [b if a is None else a for a, b in zip(self.after, self.args)]

    def fresh_args(self) -> list[Any]:
        """New tensors holding the recorded values (a run may write into them)."""
        return fresh_copies(self.args)

    def has_stats(self) -> bool:
        """Whether synthesis has what it draws from (then the record's values are no longer needed)."""
        return bool(self._stats)

    def take_stats(self) -> None:
        """Every tensor argument's statistics (_tensor_stats), now: synthesis then reads only the
        record's layout, and the record itself may move off the device before a seed is drawn."""
        for i, a in enumerate(self.args):
            if isinstance(a, torch.Tensor):
                self._tensor_stats(i, a)

    def _tensor_stats(self, i: int, a: torch.Tensor) -> tuple:
        """What synthesis draws from for argument `i`, computed once per record: ("float", mean, std),
        ("bool", p) or ("int", lo, hi). In fixed slices (never sized by the memory plan, so the values
        drawn do not depend on how much memory is free), whole for tensors of up to one slice."""
        if i not in self._stats:
            whole = torch.empty(0, dtype=a.dtype, device=a.device).set_(a.untyped_storage())
            flat = whole if whole.numel() else torch.ones(1, dtype=a.dtype, device=a.device)
            if a.dtype.is_floating_point:
                work = torch.float64 if a.dtype == torch.float64 else torch.float32
                self._stats[i] = ("float",) + _mean_std(flat, work) + _finite_range(flat)
            elif a.dtype == torch.bool:
                self._stats[i] = ("bool", sum(float(c.float().sum()) for c in _chunks(flat)) / flat.numel())
            else:
                self._stats[i] = ("int", min(int(c.min()) for c in _chunks(flat)),
                                  max(int(c.max()) for c in _chunks(flat)))
        return self._stats[i]

    def synthesized_args(self, seed: int, kind: str = "matched", salt: str = "") -> list[Any]:
        """Fresh random tensors shaped like the recorded ones, for correctness runs on many seeds.

        `kind` (INPUT_KINDS, docs/gates.md) says how floats are drawn: "matched" as normal samples
        scaled to the recorded spread; "symmetric" with random signs and magnitudes over four decades
        up to the recorded magnitude (inputs a model draws from torch.rand are all positive, and so
        were every matched draw: a result right only for positive inputs passed); "mirrored" the
        same draw negated, so every element is negative in one of the two; "special" a mix per
        element of +-0, tiny and huge magnitudes (the dtype's smallest normal; the fourth root of its
        largest, so squares summed over many elements stay finite), the recorded minimum and maximum,
        and matched samples. Integers stay in the recorded [min, max] (indices stay in bounds;
        "special" favours the two edges); bools keep the recorded fraction of True. The generator's
        seed mixes `seed`, `kind` and `salt` (the kernel's name): no two kernels draw the same values.
        """
        # Generated where the tensor lives: on the GPU a GB-sized input takes milliseconds, where the
        # CPU took seconds per argument and per seed (G2 spent a minute on a 64M-element softmax).
        if kind not in INPUT_KINDS:
            raise ValueError(f"inputs {kind!r}; use one of {INPUT_KINDS}")
        key = _mixed_seed(seed, "symmetric" if kind == "mirrored" else kind, salt)
        gens: dict[torch.device, torch.Generator] = {}
        out = []
        for i, a in enumerate(self.args):
            if not isinstance(a, torch.Tensor):
                out.append(a)
                continue
            dev = self.device or a.device  # the launch's device, also while the record is on the host
            gen = gens.setdefault(dev, torch.Generator(device=dev).manual_seed(key))
            n = a.untyped_storage().nbytes() // a.element_size()
            vals = torch.empty(n, dtype=a.dtype, device=dev)
            stats = self._tensor_stats(i, a)
            # Drawn in fixed slices straight into the tensor: a whole-tensor draw of a bf16 input went
            # through float32 (twice its bytes) and a bool or int one through 4 or 8 bytes an element.
            # The slices are fixed, never sized by free memory, so a seed draws the same values anywhere.
            # The other kinds hold several temporaries per element: their slices are an eighth as long.
            for part in _chunks(vals, 0 if kind == "matched" else _CHUNK // 8):
                if stats[0] == "float":
                    part.copy_(_float_draw(part.numel(), a.dtype, stats, kind, gen, dev))
                elif stats[0] == "bool":
                    part.copy_(torch.rand(part.numel(), generator=gen, device=dev) < stats[1])
                else:
                    _, lo, hi = stats
                    draw = torch.randint(lo, hi + 1, (part.numel(),), generator=gen, device=dev, dtype=torch.int64)
                    if kind == "special":
                        edge = torch.randint(0, 3, (part.numel(),), generator=gen, device=dev)
                        draw = torch.where(edge == 0, lo, torch.where(edge == 1, hi, draw))
                    part.copy_(draw)
            t = torch.empty(0, dtype=a.dtype, device=dev)
            t.set_(vals.untyped_storage(), a.storage_offset(), a.size(), a.stride())
            out.append(t)
        return out

    def describe(self) -> dict:
        return {
            "graph": self.graph,
            "kernel": self.kernel,
            "index": self.index,
            "args": [
                {"shape": list(a.shape), "stride": list(a.stride()), "dtype": str(a.dtype).removeprefix("torch.")}
                if isinstance(a, torch.Tensor)
                else {"value": a}
                for a in self.args
            ],
        }


class _Recording:
    """Stands in for a kernel object in the module's globals: records, then launches."""

    def __init__(self, real, var: str, graph: int, recorder: "record_launches", counts: dict):
        self._real, self._var, self._graph, self._recorder, self._counts = real, var, graph, recorder, counts

    def run(self, *args, **kwargs):
        n = self._counts.get(self._var, 0)
        self._counts[self._var] = n + 1
        shared = self._recorder.shareable(self._graph, self._var, args)
        copied = [a for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in shared]
        memory.reserve(memory.storage_bytes(copied), "recording launches")  # older records may move to the host
        recorded = [a if i in shared else snapshot(a) if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]
        rec = LaunchRecord(self._graph, self._var, n, recorded, {k: v for k, v in kwargs.items() if k != "stream"})
        for i in shared:
            self._recorder.watch(rec, "arg", i, args[i])
        self._recorder.sink.append(rec)
        result = self._real.run(*args, **kwargs)
        rec.after = [self._after(rec, i, a, r) if isinstance(a, torch.Tensor) else a
                     for i, (a, r) in enumerate(zip(args, recorded))]
        return result

    def _after(self, rec: LaunchRecord, i: int, a: torch.Tensor, before: torch.Tensor) -> torch.Tensor | None:
        """What the launch left in `a`: None where nothing changed, else a snapshot — or, when the
        device has no room for one, `a` itself, checked unchanged when the model's run ends."""
        if a is before or memory.same_bytes(a, before):
            return None
        if memory.fits_now(a.untyped_storage().nbytes()):
            return snapshot(a)
        self._recorder.watch(rec, "after", i, a)
        return a

    def __getattr__(self, name):
        return getattr(self._real, name)


def _on_device(a) -> bool:
    return isinstance(a, torch.Tensor) and a.is_cuda


# Elements per slice where a whole-tensor temporary would be large: a float64 slice of 32 MiB (the
# statistics' second pass), a float32 draw of 16 MiB. 64M-element slices put 1 GB of temporaries
# beside problems of a few hundred MB; 16M-element ones 60-160 MB above what a seed reserved, a third of
# the job's peak for problems of 100-300 MB (the 186 MB average pool of benchmarks/RESULTS.md, session 33:
# 536 MB at its first seed, 2.9x torch.compile's peak).
_CHUNK = 1 << 22


def draw_transient_bytes(args) -> int:
    """What drawing a seed's inputs for `args` allocates beside them, at most: a slice of the largest
    argument's statistics (a float64 copy and its finite mask) or of its draw's temporaries, whichever is
    more (9 bytes an element of a slice). The seed's reservation counts it on a GPU, so held state moves
    off for it too; in CPU mode (no soft target, tensors of a few MB) it is left to the budget's check."""
    if not memory.on_gpu():
        return 0
    largest = max((a.untyped_storage().nbytes() // a.element_size() for a in args if isinstance(a, torch.Tensor)),
                  default=0)
    return min(largest, _CHUNK) * 9


def _chunks(flat: torch.Tensor, size: int = 0):
    size = size or _CHUNK
    for start in range(0, flat.numel(), size):
        yield flat[start:start + size]


# How G2's fresh inputs are drawn (synthesized_args; docs/gates.md).
INPUT_KINDS = ("matched", "symmetric", "mirrored", "special")
_LOG2_10 = 3.321928094887362


def _mixed_seed(seed: int, kind: str, salt: str) -> int:
    digest = hashlib.blake2b(f"{salt}|{kind}|{seed}".encode(), digest_size=7).digest()
    return int.from_bytes(digest, "little")


def _float_draw(n: int, dtype: torch.dtype, stats: tuple, kind: str, gen: torch.Generator,
                dev: torch.device) -> torch.Tensor:
    """n floating values of one slice, drawn as `kind` says (synthesized_args), in the working dtype."""
    work = torch.float64 if dtype == torch.float64 else torch.float32
    _, mean, std, lo, hi = stats
    matched = torch.randn(n, generator=gen, device=dev, dtype=work).mul_(std or 1.0).add_(mean)
    if kind == "matched":
        return matched
    info = torch.finfo(dtype)
    huge = info.max ** 0.25
    if kind in ("symmetric", "mirrored"):
        scale = min(max(abs(lo), abs(hi), abs(mean) + 2 * std) or 1.0, huge)
        # 10 ** u for u uniform in [-4, 0]: magnitudes log-uniform over four decades below the scale.
        mags = torch.rand(n, generator=gen, device=dev, dtype=work).mul_(4).sub_(4).mul_(_LOG2_10).exp2_().mul_(scale)
        signs = torch.randint(0, 2, (n,), generator=gen, device=dev).mul_(2).sub_(1).to(work)
        vals = mags.mul_(signs)
        return vals.neg_() if kind == "mirrored" else vals
    # "special": each element one of eight classes, two of them matched samples.
    cls = torch.randint(0, 8, (n,), generator=gen, device=dev)
    sign = torch.randint(0, 2, (n,), generator=gen, device=dev).mul_(2).sub_(1).to(work)
    spread = torch.rand(n, generator=gen, device=dev, dtype=work)
    vals = matched
    vals = torch.where(cls == 0, torch.zeros((), dtype=work, device=dev), vals)
    vals = torch.where(cls == 1, torch.full((), -0.0, dtype=work, device=dev), vals)
    vals = torch.where(cls == 2, sign * info.tiny * (1 + 3 * spread), vals)
    vals = torch.where(cls == 3, sign * huge * (0.5 + 0.5 * spread), vals)
    vals = torch.where(cls == 4, torch.full((), lo, dtype=work, device=dev), vals)
    return torch.where(cls == 5, torch.full((), hi, dtype=work, device=dev), vals)


def _finite_range(flat: torch.Tensor) -> tuple[float, float]:
    """The least and greatest finite values (0, 0 when there are none), in fixed slices. Masked with
    where(), not gathered by a boolean index (its nonzero() made 8 bytes an element)."""
    lo, hi = float("inf"), float("-inf")
    for c in _chunks(flat):
        finite = torch.isfinite(c)
        if not bool(finite.any()):
            continue
        if bool(finite.all()):
            lo, hi = min(lo, float(c.min())), max(hi, float(c.max()))
        else:
            lo = min(lo, float(torch.where(finite, c, float("inf")).min()))
            hi = max(hi, float(torch.where(finite, c, float("-inf")).max()))
    return (lo, hi) if lo <= hi else (0.0, 0.0)


def _mean_std(flat: torch.Tensor, work: torch.dtype) -> tuple[float, float]:
    """Mean and standard deviation of the finite values (as torch computes them for one slice; for
    more, exact two-pass sums in float64, the non-finite values masked to zero)."""
    if flat.numel() <= _CHUNK:
        finite = torch.isfinite(flat)
        vals = flat if bool(finite.all()) else flat[finite]
        vals = vals.to(work)
        std = float(vals.std()) if vals.numel() > 1 else 1.0
        mean = float(vals.mean()) if vals.numel() else 0.0
        return mean, std
    # The sums' float64 slices are a quarter of a draw's (9 MiB with their mask, not 36, beside a small
    # problem's record at its peak); fixed like every slice here, so a seed draws the same values anywhere.
    total = count = 0.0
    for c in _chunks(flat, _CHUNK // 4):
        finite = torch.isfinite(c)
        count += int(finite.sum())
        total += float(c.to(torch.float64, copy=True).masked_fill_(~finite, 0.0).sum())  # never the record itself
    mean = total / count if count else 0.0
    sq = 0.0
    for c in _chunks(flat, _CHUNK // 4):
        finite = torch.isfinite(c)
        sq += float(c.to(torch.float64, copy=True).sub_(mean).pow_(2).masked_fill_(~finite, 0.0).sum())
    std = (sq / (count - 1)) ** 0.5 if count > 1 else 1.0
    return mean, std


def chosen_config(kernel) -> dict | None:
    """The launch config Inductor's autotuner settled on for `kernel` (its one launcher after the
    first run), as {"XBLOCK": 8, ..., "num_warps": 4, "num_stages": 1}; None when it has not settled
    (several launchers left, or not Inductor's kernel object, as on the CPU). A rewrite of the kernel
    runs under this config, so it keeps the baseline's reduction layout and rounding: an unpinned
    rewrite would autotune again and could settle elsewhere, on a config no gate verified."""
    launchers = getattr(kernel, "launchers", None)
    if not launchers or len(launchers) != 1:
        return None
    cfg = getattr(launchers[0], "config", None)
    kwargs = getattr(cfg, "kwargs", None)
    if not isinstance(kwargs, dict) or not all(type(v) is int for v in kwargs.values()):
        return None
    out = dict(kwargs)
    for key in ("num_warps", "num_stages"):
        v = getattr(cfg, key, None)
        if type(v) is not int:
            return None
        out[key] = v
    return out


def kernel_decls(source: str) -> dict[str, tuple[str, str]]:
    """{module variable: (kernel name, kernel source)} for every `var = async_compile.triton(name, src, ...)`."""
    out = {}
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "async_compile.triton"
                and len(node.value.args) >= 2 and all(isinstance(a, ast.Constant) for a in node.value.args[:2])):
            out[node.targets[0].id] = (node.value.args[0].value, node.value.args[1].value)
    return out


def kernel_vars(source: str) -> dict[str, str]:
    """{module variable: kernel name}."""
    return {var: name for var, (name, _) in kernel_decls(source).items()}


def kernel_globals(module) -> dict[str, Any]:
    """The module's kernel objects by variable (the loader records `__kernel_vars__`)."""
    return {var: getattr(module, var) for var in module.__kernel_vars__}


class record_launches:
    """Context manager: while active, every kernel launch of `modules` is recorded into `sink`.

    Records copy each argument before its launch. Two exceptions save a copy of several GB each at
    real sizes (docs/memory.md): an argument the kernel only reads (`read_only(graph, var)`: its
    positions, from Inductor's `in_ptr` names) that lies in one of the run's own input copies
    (`shared_inputs`, which nothing else uses) is kept as it is; and what a launch changed, when the
    device has no room for a copy, is kept as the live buffer. Either could still be written by a
    later launch of the same run: `intact()`, after the run, checks their fingerprints. A shared
    argument that changed means the records are wrong (record again, copying); a changed live
    buffer only loses the record's `after` (the isolated check is then not made)."""

    def __init__(self, modules: list, sink: list[LaunchRecord], shared_inputs=(), read_only=None):
        self.modules, self.sink, self.saved = modules, sink, []
        self._inputs = {x.untyped_storage().data_ptr() for x in shared_inputs if isinstance(x, torch.Tensor)}
        self._read_only = read_only
        self._watched: list[tuple[LaunchRecord, str, int, torch.Tensor, tuple]] = []

    def shareable(self, graph: int, var: str, args) -> set[int]:
        if not self._inputs or self._read_only is None:
            return set()
        ro = self._read_only(graph, var)
        return {i for i, a in enumerate(args)
                if i in ro and isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() in self._inputs}

    def watch(self, rec: LaunchRecord, kind: str, i: int, t: torch.Tensor) -> None:
        self._watched.append((rec, kind, i, t, memory.fingerprint(t)))

    def intact(self) -> bool:
        ok = True
        self.live: list[LaunchRecord] = []  # records whose "after" is a live buffer, checked intact
        for rec, kind, i, t, fp in self._watched:
            if memory.fingerprint(t) == fp:
                if kind == "after" and rec not in self.live:
                    self.live.append(rec)
                continue
            if kind == "arg":
                ok = False
            else:
                rec.after = []
        self.live = [rec for rec in self.live if rec.after]
        self._watched = []
        return ok

    def __enter__(self):
        for g, module in enumerate(self.modules):
            counts: dict = {}
            for var, obj in kernel_globals(module).items():
                self.saved.append((module, var, obj))
                setattr(module, var, _Recording(obj, var, g, self, counts))
        return self.sink

    def __exit__(self, *exc):
        for module, var, obj in self.saved:
            setattr(module, var, obj)
        return False
