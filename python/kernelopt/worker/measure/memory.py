"""The worker's memory plan (docs/memory.md): what it may allocate on the device, what it holds,
what it can move to the host, and the one error for what cannot fit.

A request in this worker allocates whole copies of a kernel's arguments, model outputs and float64
references. At the sizes users run (inputs of several GB on a 141 GB GPU) the sum of those copies,
not any one of them, ran the GPU out of memory. So:

- `budget()` is the device bytes the worker may use: the device's total less a margin, or
  `KERNELOPT_WORKER_MEMORY` (bytes, or with a K/M/G/T suffix) when set — the tests cap it far below
  what whole-tensor copies need, and the same code then takes its sliced paths in CPU mode too;
- `free()` is what is left of it now; comparisons size their slices from it (compare.py) and a
  request asks `fits_now()` before it picks its whole-copy path over its lean one;
- objects the worker keeps between requests (recorded launch storages, the problem's inputs) are
  `Spillable`: `reserve()` moves the least recently used of them to host memory until a request's
  need fits, and each comes back to the device when it is next used. State the worker can make
  again on the device (inputs drawn there under a seed, the eager model's output) is dropped instead
  and made again when next used: milliseconds of GPU work against seconds of host copies. The soft
  target is
  `TARGET_RATIO` times torch.compile's own peak for the model, once that is measured
  (`set_compiled_peak`): held state is spilled to stay under it, and only the hard budget fails;
- what cannot fit raises `WorkerOOM`, which names the stage, the bytes needed and the bytes free,
  and becomes a reply with `failure: "oom"` (protocol.py). A torch out-of-memory error becomes the
  same record.

In CPU mode the "device" is host memory: nothing is spilled, but the budget and the accounting
(`held_bytes()`, the bytes of every tensor the worker keeps) are the same, so CI exercises the
plan's decisions.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import weakref

import torch

GiB = 1 << 30
# The share of the device the worker leaves to others (the CUDA context, Triton's and cuBLAS's
# workspaces, the allocator's fragmentation) when no budget is given.
DEVICE_MARGIN = 0.06
# The soft target: held state is spilled to keep the device under this many times torch.compile's
# own peak. The goal is 2.5 (docs/memory.md); the plan aims below it, for what it does not count
# (the allocator's rounding, a comparison's slices, Triton's and cuBLAS's workspaces).
TARGET_RATIO = 2.3
# The target never comes closer to torch.compile's peak than fixed_headroom(): timing's L2 flush buffer
# plus this much for a comparison's, a seed draw's or a fingerprint's slices. What a job needs whatever
# the problem's size is a fixed cost, not a multiple of the problem: below a peak of about 130 MiB (on
# an H100) the job's peak is the problem's plus this headroom. Every timing reserves its flush buffer,
# so held state moves off for it. (A floor of 4 GiB left nothing spilled below a 1.7 GiB problem and
# let fixed 64M-element slices set peaks of 6-10x; 512 MiB, with the flush buffer not reserved,
# 3.4-3.6x for problems of 0.25-0.3 GiB; a fixed 320 MiB, 2.6-4.0x for problems of 100-200 MiB on an
# H100 whose flush buffer is 100 MiB, benchmarks/RESULTS.md session 32.)
SLICE_HEADROOM = 64 << 20
# Objects below this size are never worth a transfer: they stay where they are.
SPILL_MIN_BYTES = 64 << 20
# Model outputs kept as references (compared with every candidate) and what a recorded launch
# changed stay on the device while the device is under the soft target (a copy to the host of a
# several-GB output took seconds, most of the baseline stage); above it, leaves from this size go to
# the host at once. Either way they are Spillable, and a comparison reads host ones in slices.
HOST_REFERENCE_BYTES = 256 << 20


class WorkerOOM(Exception):
    """A request that does not fit: `stage`, bytes `needed` and bytes `free` (None: not known)."""

    def __init__(self, stage: str, needed: int | None, free: int | None, detail: str = ""):
        self.stage, self.needed, self.free = stage, needed, free
        parts = [f"out of memory in {stage}"]
        if needed is not None:
            parts.append(f"needs {gib(needed)}")
        if free is not None:
            parts.append(f"{gib(free)} free (budget {gib(budget())})")
        text = ": ".join(parts[:2]) + (", " + parts[2] if len(parts) > 2 else "")
        super().__init__(text + (f"; {detail}" if detail else ""))

    def record(self) -> dict:
        return {"stage": self.stage, "needed_bytes": self.needed, "free_bytes": self.free}


def gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB // 10 else f"{n / (1 << 20):.1f} MiB"


def on_gpu() -> bool:
    """Whether this process plans device memory on a CUDA GPU (else CPU mode: host memory)."""
    return os.environ.get("KERNELOPT_DEVICE", "cuda") == "cuda" and torch.cuda.is_available()


def parse_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, flags=re.I)
    if not m:
        raise ValueError(f"KERNELOPT_WORKER_MEMORY={text!r}: give bytes, e.g. 64G or 68719476736")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


_budget_override: int | None = None


def set_budget(nbytes: int | None) -> None:
    """The budget from now on (the `memory` op's `budget_bytes`; None: the default again)."""
    global _budget_override
    if nbytes is not None and (not isinstance(nbytes, int) or nbytes <= 0):
        raise ValueError(f"budget_bytes={nbytes!r}: give a positive number of bytes, or null for the default")
    _budget_override = nbytes


def budget() -> int:
    if _budget_override is not None:
        return _budget_override
    env = os.environ.get("KERNELOPT_WORKER_MEMORY")
    if env:
        return parse_bytes(env)
    if on_gpu():
        return int(torch.cuda.get_device_properties(0).total_memory * (1 - DEVICE_MARGIN))
    return 1 << 62  # CPU mode without a cap: the host's own limits apply


def in_use() -> int:
    """Device bytes in use now: the allocator's count on CUDA, the held bytes' accounting on the CPU."""
    return torch.cuda.memory_allocated() if on_gpu() else held_bytes()


def free() -> int:
    """Bytes a request may still allocate: the budget less what is in use, and on CUDA no more than
    the device has free (memory the allocator caches counts as free: it is reused first)."""
    room = budget() - in_use()
    if on_gpu():
        device_free, _ = torch.cuda.mem_get_info()
        cached = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
        room = min(room, device_free + cached)
    return max(0, room)


# ---------------------------------------------------------------- held state


_holders: "weakref.WeakSet[Spillable]" = weakref.WeakSet()
_tick = 0
_compiled_peak: int | None = None


class Spillable:
    """A set of tensors the worker keeps between requests and may move to host memory.

    Subclasses list their tensors in `tensors()` and put new ones in place in `_place(tensors)`;
    `use()` brings them back to the device (making room first) and marks them recently used."""

    device: torch.device | None = None

    def __init__(self):
        _holders.add(self)
        self.on_host = False
        self.touch()

    def tensors(self) -> list[torch.Tensor]:
        raise NotImplementedError

    def kept(self) -> list[torch.Tensor]:
        """Tensors counted as held but never moved (already on the host, or small)."""
        return []

    def _place(self, tensors: list[torch.Tensor]) -> None:
        raise NotImplementedError

    def touch(self) -> None:
        global _tick
        _tick += 1
        self.last_used = _tick

    def device_bytes(self) -> int:
        return 0 if self.on_host else storage_bytes(self.tensors())

    def trace_label(self) -> str:
        """For the trace: the holder's kind, its device bytes and whether it is made again when dropped."""
        return f"{type(self).__name__}:{self.device_bytes()}{':remake' if self.recomputable() else ''}"

    def recomputable(self) -> bool:
        """Whether spilling drops the tensors (made again on the device when next used) rather than
        copying them to the host: such objects are spilled first."""
        return False

    def spill(self) -> int:
        """Frees the device: moves every tensor to host memory (views and shared storages kept), or
        drops what can be made again; the bytes freed."""
        n = self.device_bytes()
        if n and on_gpu():
            self._release()
            self.on_host = True
        return n if self.on_host else 0

    def _release(self) -> None:
        self._place(moved(self.tensors(), torch.device("cpu")))

    def use(self, stage: str, keep: tuple = ()) -> None:
        """Back on the device; `keep`: other holders the caller is about to read, never spilled for it."""
        self.touch()
        if self.on_host:
            need = storage_bytes(self.tensors())
            reserve(need, stage, keep=(self, *keep))
            self._place(moved(self.tensors(), self.device))
            self.on_host = False


class HeldTree(Spillable):
    """A pytree of tensors held between requests (a reference output): its device leaves move to the
    host together when room is needed, its host leaves are counted and stay. Readers take `get()`
    when they use it and drop it before the next request's allocation, so a spill frees the device.

    With `remake` (a callable giving the same value again, on the device, in milliseconds) a spill
    drops the value instead, and `get()` makes it again. The first remake is checked against the
    original's fingerprints: a value that comes out different (a nondeterministic model) is kept
    from then on, spilled to the host like any other."""

    def __init__(self, value, remake=None):
        self.value, self.remake = value, remake
        self._spilled_prints: list = []  # (leaf index, device fingerprint) of leaves moved to the host
        self._prints = [fingerprint(t) for t in self._leaves()] if remake is not None else None
        super().__init__()

    def recomputable(self) -> bool:
        return self.remake is not None

    def _release(self) -> None:
        if self.remake is None:
            # Each big leaf's fingerprint on the device, read again from the host copy by intact():
            # a spilled baseline output once read 0.96 away from a fresh run of the same modules.
            self._print_before_moving({id(t) for t in self.tensors()})
            super()._release()
        else:
            self.value = None

    def _print_before_moving(self, moving: set) -> None:
        """Fingerprints (on the device) of the leaves of HOST_REFERENCE_BYTES or more among `moving`
        (ids), about to move to the host: what intact() reads again from the host copies."""
        self._spilled_prints += [(i, fingerprint(t)) for i, t in enumerate(self._leaves())
                                 if id(t) in moving and t.untyped_storage().nbytes() >= HOST_REFERENCE_BYTES]

    def intact(self, compute: torch.device | None = None) -> bool:
        """Whether the leaves moved to the host still hold what they held on the device (their
        fingerprints worked on the GPU from host slices); True when nothing was moved."""
        prints = self._spilled_prints
        if not prints or not on_gpu():
            return True
        leaves = self._leaves()
        compute = compute or torch.device("cuda")
        return all(leaves[i].is_cuda or fingerprint(leaves[i], 1 << 23, compute) == fp for i, fp in prints)

    def not_remade(self) -> None:
        """From now on spilled to the host like any other, never made again."""
        self.remake = self._prints = None

    def get(self):
        self.touch()
        if self.value is None and self.on_host:
            self.on_host = False
            self.value = self.remake()
            if self._prints is not None:
                if [fingerprint(t) for t in self._leaves()] != self._prints:
                    self.remake = None  # not reproducible: kept as made now, spilled to the host later
                self._prints = None
        return self.value

    def _leaves(self) -> list:
        from torch.utils._pytree import tree_leaves

        return [t for t in tree_leaves(self.value) if isinstance(t, torch.Tensor)]

    def tensors(self) -> list[torch.Tensor]:
        return [t for t in self._leaves() if t.is_cuda]

    def kept(self) -> list[torch.Tensor]:
        return [t for t in self._leaves() if not t.is_cuda]

    def _place(self, tensors: list[torch.Tensor]) -> None:
        from torch.utils._pytree import tree_map

        it = iter(tensors)
        self.value = tree_map(lambda t: next(it) if isinstance(t, torch.Tensor) and t.is_cuda else t, self.value)


def kept_tree(value, remake=None) -> HeldTree:
    """`value` held as a HeldTree: on the device while the device is under the soft target, else
    with its leaves of HOST_REFERENCE_BYTES or more moved to the host now (one that can be made
    again stays: a later spill drops it)."""
    held = HeldTree(value, remake if on_gpu() else None)
    if on_gpu() and in_use() > target() and remake is None:
        big = [t for t in held.tensors() if t.untyped_storage().nbytes() >= HOST_REFERENCE_BYTES]
        if big:
            held._print_before_moving({id(t) for t in big})
            placed = dict(zip(map(id, big), moved(big, torch.device("cpu"))))
            held._place([placed.get(id(t), t) for t in held.tensors()])
    return held


def flat_view(t: torch.Tensor) -> torch.Tensor | None:
    """The span of storage `t`'s elements fill, as one 1-D tensor, when they fill it exactly once
    (dense, non-overlapping: any permutation of strides); None otherwise. Slicing it visits every
    element of `t` once, in storage order."""
    n = t.numel()
    span = 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) if n else 0
    if span != n or any(s < 0 for s in t.stride()):
        return None
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage(), t.storage_offset(), (n,), (1,))


def bounded_parts(tensors: tuple, n: int):
    """Matching views of same-shaped `tensors`, together every element once, each of at most `n`
    elements where one index of the innermost dimension allows: ranges of the largest dimension, or,
    when even one index of it is too many, each index in turn (recursively). For layouts flat_view
    refuses (a padded buffer, whose rows end in gaps): a whole-tensor temporary beside a 2 GB padded
    bf16 buffer (the garbage fill's float32 draw) put a reversed scan's G2 at 3.0x torch.compile's peak
    (benchmarks/RESULTS.md, session 33). Comparisons slice the same way (compare.slices)."""
    t = tensors[0]
    total = t.numel()
    if total <= n or t.dim() == 0:
        yield tensors
        return
    dim = max(range(t.dim()), key=lambda d: t.shape[d])
    inner = total // t.shape[dim]
    if inner > n and t.dim() > 1:
        for i in range(t.shape[dim]):
            yield from bounded_parts(tuple(x.select(dim, i) for x in tensors), n)
        return
    step = max(1, n // max(1, inner))
    for start in range(0, t.shape[dim], step):
        length = min(step, t.shape[dim] - start)
        yield tuple(x.narrow(dim, start, length) for x in tensors)


def upcast_in_slices(x: torch.Tensor, dev: str, dtype: torch.dtype, slice_elements: int = 1 << 24) -> torch.Tensor:
    """`x` (on the host) as `dtype` on `dev`, with its strides, copied over in slices: the device
    holds the result and one slice, never a whole copy of `x` beside it (a tensor whose elements do
    not fill one span of its storage, with gaps, in slices along its dimensions, bounded_parts)."""
    out = torch.empty_like(x, dtype=dtype, device=dev)
    flat_in, flat_out = flat_view(x), flat_view(out)
    if flat_in is None or flat_out is None or out.stride() != x.stride():
        for src, dst in bounded_parts((x, out), slice_elements):
            dst.copy_(src)
        return out
    n = x.numel()
    for i in range(0, n, slice_elements):
        flat_out[i:i + slice_elements].copy_(flat_in[i:i + slice_elements])
    return out


def moved(tensors: list, dev: torch.device) -> list:
    """The tensors on `dev`, each storage moved once: views of one storage stay views of one storage."""
    done: dict[int, torch.UntypedStorage] = {}
    out = []
    for t in tensors:
        if not isinstance(t, torch.Tensor) or t.device == dev:
            out.append(t)
            continue
        key = id(t.untyped_storage()) if t.untyped_storage().data_ptr() == 0 else t.untyped_storage().data_ptr()
        if key not in done:
            src = t.untyped_storage()
            dst = _host_buffer(src.nbytes()) if dev.type == "cpu" and src.device.type == "cuda" else None
            if dst is None:
                dst = torch.empty(src.nbytes(), dtype=torch.uint8, device=dev)
            raw = torch.empty(0, dtype=torch.uint8, device=src.device).set_(src)
            dst.copy_(raw)
            if dev.type == "cpu" and src.device.type == "cuda":
                dst = _intact_host_copy(dst, raw)
            done[key] = dst.untyped_storage()
        moved = torch.empty(0, dtype=t.dtype, device=dev)
        moved.set_(done[key], t.storage_offset(), t.size(), t.stride())
        out.append(moved)
    return out


_copy_mismatches = [0]


def _intact_host_copy(dst: torch.Tensor, raw: torch.Tensor) -> torch.Tensor:
    """`dst`, the host copy of the device bytes `raw`, once read back equal to them; else a second copy
    into pageable memory, read back too. A reference kept on the host that differs from what it was
    on the device decides every later comparison wrongly: the baseline's spilled output of one
    problem (5.2 GB, transposed) later read 0.96 away from a fresh run of the same modules (H100,
    session 29). Reading back costs a host-to-device pass, a tenth of a second for GBs pinned."""
    if same_bytes(raw, dst):
        return dst
    note_copy_mismatch("a copy to the host came back different", bytes=raw.numel(), pinned=dst.is_pinned())
    again = torch.empty(raw.numel(), dtype=torch.uint8)
    again.copy_(raw)
    if not same_bytes(raw, again):
        raise RuntimeError(f"a copy of {gib(raw.numel())} from the device to host memory came back different twice; "
                           "rerun with KERNELOPT_WORKER_MEMORY set above the problem's needs to keep it on the device")
    return again


def note_copy_mismatch(what: str, **fields) -> None:
    """Counted in the `memory` reply (`host_copy_mismatches`) and traced: where a host copy went wrong."""
    _copy_mismatches[0] += 1
    if _TRACE:
        trace(stage=what, **fields)


def same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the whole storages under `a` and `b` hold the same bytes (compared in slices on `a`'s
    device: a host copy is read back to the GPU its original lives on)."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() != sb.nbytes():
        return False
    ua = torch.empty(0, dtype=torch.uint8, device=a.device).set_(sa)
    ub = torch.empty(0, dtype=torch.uint8, device=b.device).set_(sb)
    # Small slices, read as 8-byte words where they can be: a slice's copy to `a`'s device and
    # torch.equal's bool per element are all this puts on the device. It runs while a spill is under
    # way, when the device is at its fullest: 64 MiB byte slices (128 MiB with their bools) were the
    # whole of a 0.25 GiB instance norm's peak above its target (2.6x torch.compile's peak; session 30).
    return all(_equal_words(ua[i:i + _SAME_STEP], ub[i:i + _SAME_STEP].to(a.device))
               for i in range(0, ua.numel(), _SAME_STEP))


_SAME_STEP = 1 << 24  # bytes a slice of same_bytes: 16 MiB, and 2 MiB of bools as words


def _equal_words(x: torch.Tensor, y: torch.Tensor) -> bool:
    """torch.equal of two 1-D byte tensors, compared as int64 words when both are 8-byte aligned."""
    if x.numel() % 8 == 0 and x.storage_offset() % 8 == 0 and y.storage_offset() % 8 == 0 \
            and x.data_ptr() % 8 == 0 and y.data_ptr() % 8 == 0:
        x, y = x.view(torch.int64), y.view(torch.int64)
    return torch.equal(x, y)


# Spills go to pinned host memory: a copy into fresh pageable memory ran at about 1.2 GB/s (the
# kernel faulting in every page), into reused pinned memory at 55 GB/s (tools/host_copy_bench.py on
# the H200). Pinned blocks come from torch's caching host allocator, so a block freed when its
# object came back to the device is reused by the next spill; forget() returns them. Pinned memory
# cannot be paged out, so it is capped at this share of the host's memory; past it, pageable.
PINNED_SHARE = 0.5


def _host_buffer(nbytes: int) -> torch.Tensor | None:
    if nbytes < SPILL_MIN_BYTES or not on_gpu():
        return None
    try:
        stats = torch.cuda.host_memory_stats()
        reserved = int(stats.get("reserved_bytes.all.current", stats.get("reserved_bytes.current", 0)))
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if reserved + nbytes > PINNED_SHARE * total:
            return None
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    except (RuntimeError, ValueError, OSError, AttributeError):
        return None  # pinning failed or is not measurable here: pageable memory does the same, slower


def release_host_cache() -> None:
    """Returns the caching host allocator's free pinned blocks to the system."""
    for owner, name in ((torch._C, "_host_emptyCache"), (torch._C, "_accelerator_emptyHostCache")):
        fn = getattr(owner, name, None)
        if fn is not None:
            try:
                fn()
            except RuntimeError:
                pass
            return


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages under `tensors` (views of one buffer count once)."""
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor):
            s = t.untyped_storage()
            key = (str(t.device), s.data_ptr() or id(s))
            if key not in seen:
                seen.add(key)
                total += s.nbytes()
    return total


def held_bytes() -> int:
    """Bytes of every tensor the worker keeps between requests, wherever it lives (the accounting
    CPU mode plans with, and what must return to its level when a bundle is forgotten)."""
    return storage_bytes(t for h in list(_holders) for t in h.tensors() + h.kept())


def device_held_bytes() -> int:
    return sum(h.device_bytes() for h in list(_holders))


_ratio_override: float | None = None


def set_target_ratio(ratio: float | None) -> None:
    """The soft target's ratio from now on (the `memory` op's `target_ratio`; None: TARGET_RATIO)."""
    global _ratio_override
    if ratio is not None and (not isinstance(ratio, (int, float)) or ratio <= 0):
        raise ValueError(f"target_ratio={ratio!r}: give a positive number, or null for the default")
    _ratio_override = ratio


def target() -> int:
    """The soft ceiling: TARGET_RATIO times torch.compile's peak once measured (at least that peak
    plus fixed_headroom()), never above the budget."""
    cap = budget()
    if _compiled_peak:
        ratio = _ratio_override if _ratio_override is not None else TARGET_RATIO
        cap = min(cap, max(int(ratio * _compiled_peak), _compiled_peak + fixed_headroom()))
    return cap


def fixed_headroom() -> int:
    """What every job needs above the problem's own peak: the L2 flush buffer (twice this GPU's L2;
    256 MiB where it is not known, as in CPU mode) and SLICE_HEADROOM."""
    from . import timing

    return timing.flush_bytes() + SLICE_HEADROOM


def set_compiled_peak(nbytes: int | None) -> None:
    global _compiled_peak
    _compiled_peak = nbytes


def reserve(need: int, stage: str, keep: tuple = ()) -> None:
    """Makes room for `need` more bytes: spills held objects (least recently used first, never those
    in `keep`) while the device is over the soft target, then requires the need to fit the budget."""
    if not on_gpu():
        if need > free():
            raise WorkerOOM(stage, need, free())
        return
    # What can be made again goes first (dropping it costs nothing now), then least recently used.
    victims = sorted((h for h in list(_holders) if h not in keep and not h.on_host
                      and h.device_bytes() >= SPILL_MIN_BYTES), key=lambda h: (not h.recomputable(), h.last_used))
    before, spilled = in_use(), []
    while victims and in_use() + need > target():
        spilled.append(victims[0].trace_label())
        victims.pop(0).spill()
    if spilled and _sections:
        _sections[-1] = min(_sections[-1], in_use())
    if _TRACE:
        trace(stage=stage, need=need, in_use=before, target=target(), spilled=spilled,
              kept=[h.trace_label() for h in keep], holders=[h.trace_label() for h in list(_holders) if h.device_bytes()])
    if need > free():
        release_cache()
        while victims and need > free():
            victims.pop(0).spill()
        if need > free():
            raise WorkerOOM(stage, need, free())


def fits_now(need: int) -> bool:
    """Whether `need` bytes fit under the soft target (and the budget) with nothing moved."""
    return need <= free() and in_use() + need <= target()


def unmovable_bytes() -> int:
    """Device bytes in use that no spill frees: what the worker does not hold (the CUDA context's
    allocations aside, a running request's own tensors, the model's weights) and held objects too
    small to move."""
    movable = sum(b for b in (h.device_bytes() for h in list(_holders)) if b >= SPILL_MIN_BYTES)
    return max(0, in_use() - movable)


def fits_after_spill(need: int) -> bool:
    """Whether `need` more bytes would fit under the soft target (and the budget) once every held
    object that can move had moved off the device. Nothing is moved here: a step that would pass the
    target anyway (the eager model's float32 temporaries of a half-precision norm) goes elsewhere
    without first emptying the device for nothing."""
    if not on_gpu():
        return need <= free()
    floor = unmovable_bytes()
    return floor + need <= min(target(), budget())


def room() -> int:
    """What a step may allocate without passing the soft target (nor the budget)."""
    return max(0, min(free(), target() - in_use()))


def release_cache() -> None:
    gc.collect()
    if on_gpu():
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- peaks

# KERNELOPT_MEMORY_TRACE=FILE: one JSON line per reservation (its need, the device in use, the soft
# target, what it spilled, what was held) and per request (its peak), with the peak reached so far in
# the request: where a job's peak above its goal comes from, read off a GPU run (docs/memory.md).
_TRACE = os.environ.get("KERNELOPT_MEMORY_TRACE")


def trace(**fields) -> None:
    if on_gpu():
        fields["peak_so_far"] = torch.cuda.max_memory_allocated()
    fields["pid"] = os.getpid()
    with open(_TRACE, "a") as f:
        f.write(json.dumps(fields) + "\n")



def reset_peak() -> None:
    global _peak_accounted, _peak_carried, _peak_request
    _peak_accounted, _peak_carried, _peak_request = held_bytes(), 0, None
    if on_gpu():
        torch.cuda.reset_peak_memory_stats()


# The request during which the job's peak was reached, and that peak: where to look when a job's
# peak is above its goal (report.json's memory.peak_request).
_peak_request: tuple[str, int] | None = None


# The highest peak of the running request before a section reset the allocator's statistics
# (measured_peak): the request's own peak still counts it.
_request_carried = 0


def request_started() -> None:
    """Each request's own peak is measured from its start (what came before it stays counted)."""
    global _request_carried
    _request_carried = 0
    if on_gpu():
        try:
            carry_peak(torch.cuda.max_memory_allocated())
            torch.cuda.reset_peak_memory_stats()
        except RuntimeError:  # a broken context: the request itself reports it
            pass


def request_ended(name: str) -> None:
    global _peak_request
    if on_gpu():
        try:
            p = max(torch.cuda.max_memory_allocated(), _request_carried)
        except RuntimeError:
            return
        if _TRACE:
            trace(request=name, peak=p, in_use=in_use(), target=target())
        if _peak_request is None or p > _peak_request[1]:
            _peak_request = (name, p)


_peak_accounted = 0


def note_accounted(extra: int = 0) -> None:
    """CPU mode has no allocator statistics: the plan's own accounting (held bytes plus a request's
    declared working bytes) stands in for the peak."""
    global _peak_accounted
    _peak_accounted = max(_peak_accounted, held_bytes() + extra)


_peak_carried = 0


def carry_peak(nbytes: int) -> None:
    """A peak from before an allocator reset (a measurement that needed its own peak) still counts."""
    global _peak_carried
    _peak_carried = max(_peak_carried, nbytes)


@contextlib.contextmanager
def measured_peak(needs: dict, key) -> None:
    """Records in needs[key] the most the section ever allocated above what was in use at its start.
    A run's need as read off the model (its inputs and outputs) misses what the run allocates
    inside: eager temporaries (a max pool's int64 indices, a norm's squared copy). The next run of
    the same kind reserves what this one really took (BundleState.run_needs)."""
    global _request_carried
    if not on_gpu():
        yield
        return
    p = torch.cuda.max_memory_allocated()
    carry_peak(p)
    _request_carried = max(_request_carried, p)
    _sections.append(in_use())
    torch.cuda.reset_peak_memory_stats()
    try:
        yield
    finally:
        start = _sections.pop()
        taken = torch.cuda.max_memory_allocated()
        carry_peak(taken)
        _request_carried = max(_request_carried, taken)
        needs[key] = max(needs.get(key, 0), taken - start)


# The device in use at the start of each open measured_peak section, lowered by what reserve()
# spills inside it: the section's need is counted from what was left after the spill.
_sections: list[int] = []


def peak() -> int:
    if on_gpu():
        return max(_peak_carried, torch.cuda.max_memory_allocated())
    return max(_peak_accounted, held_bytes())


def report() -> dict:
    total = torch.cuda.get_device_properties(0).total_memory if on_gpu() else None
    return {"measured": on_gpu(), "device": "cuda" if on_gpu() else "cpu", "in_use_bytes": in_use(),
            "held_bytes": held_bytes(), "device_held_bytes": device_held_bytes(), "peak_bytes": peak(),
            "free_bytes": free(), "budget_bytes": budget(), "total_bytes": total,
            "compiled_peak_bytes": _compiled_peak, "host_copy_mismatches": _copy_mismatches[0],
            "peak_request": None if _peak_request is None else {"op": _peak_request[0], "peak_bytes": _peak_request[1]}}


# ---------------------------------------------------------------- an exact-enough content check


def fingerprints(tensors: list, positions) -> dict[int, tuple[int, int]]:
    """{position: fingerprint} of `tensors` at `positions`: what changed_since checks after a run that may
    write tensors it shares (G2's lean path, timing under pressure)."""
    return {i: fingerprint(tensors[i]) for i in positions}


def changed_since(tensors: list, prints: dict) -> list[int]:
    """The positions whose tensor's bytes differ from their fingerprint in `prints`."""
    return [i for i, fp in prints.items() if fingerprint(tensors[i]) != fp]


def fingerprint(t: torch.Tensor, slice_words: int = 1 << 20, compute: torch.device | None = None) -> tuple[int, int]:
    """Two 64-bit sums over the storage's 32-bit words (plain, and position-weighted), in slices.

    A read-only argument the lean G2 path shares between the original's and the candidate's runs is
    fingerprinted before and after: a candidate that writes it anyway (G1 should have refused it)
    changes the sums, and its run then counts as a mismatch, as a whole-copy run would find.
    Both sums are exact modulo 2**64, so any slicing gives the same pair; the slices are small and
    worked in place (two int64 temporaries of 8 MiB): 64M-word slices with a fresh tensor per step
    took 2 GB, which set the peak of every job under 1 GB, and 4M-word ones (64 MiB) were a fifth of a
    126 MB problem's peak (docs/memory.md). `compute`: where the sums
    are worked (a host tensor's slices streamed to the GPU: the same pair, far sooner)."""
    compute = compute or t.device
    s = t.untyped_storage()
    raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(s)
    n = raw.numel()
    words = raw[: n - n % 4].view(torch.int32) if n >= 4 else raw[:0].view(torch.int32)
    tail = raw[n - n % 4:]
    plain = weighted = 0
    mask = (1 << 64) - 1
    for start in range(0, words.numel(), slice_words):
        w = words[start:start + slice_words].to(compute).to(torch.int64)
        plain = (plain + int(w.sum())) & mask
        idx = torch.arange(start, start + w.numel(), device=compute, dtype=torch.int64)
        idx.mul_(2654435761).remainder_(2147483647).add_(1).mul_(w)
        weighted = (weighted + int(idx.sum())) & mask
        del w, idx
    if tail.numel():
        plain = (plain + int(tail.to(torch.int64).sum())) & mask
    return plain, weighted
