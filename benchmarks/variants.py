"""Draw fresh benchmark problems: shapes and parameters no fixed suite (and no tuning) has seen.

    python benchmarks/variants.py --seed S --n N --out DIR [--families pools,norms] [--scale small]
                                  [--min-bytes 100MB] [--max-bytes 6GB] [--max-peak 40GB] [--reuse] [--record]
    python benchmarks/variants.py --list

writes DIR/level1/*.py, problem files in the layout of benchmarks/suite (so `kernelopt bench DIR --levels 1`
runs them), and DIR/variants.json, one entry per file. The op families and their parameters are in
variant_families.py; this file draws sizes, dtypes and layouts, checks the memory bounds on the meta device
(nothing is allocated at full size) and writes the files. The same seed writes byte-identical files.

Fresh seeds: benchmarks/used_seeds.txt lists the seeds already run on the H200. A listed seed is refused
unless --reuse is given, so a run judges the optimizer on problems it was never measured on; --record
appends the seed once the draw is written (commit the file with the run's results).
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import types
import weakref
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import suite_info
from variant_families import FAMILIES, Dim, Draft, Input

HERE = Path(__file__).resolve().parent
USED_SEEDS = HERE / "used_seeds.txt"
DTYPES = {"float32": ("torch.float32", "fp32"), "bfloat16": ("torch.bfloat16", "bf16"),
          "float16": ("torch.float16", "fp16")}
DTYPE_WEIGHTS = (2, 2, 1)
LAYOUT_TAGS = {"contiguous": "", "transposed": "_t", "channels_last": "_cl"}
SMALL_BYTES = 256_000  # --scale small: inputs of a few hundred KB
UNITS = {"KB": 1e3, "MB": 1e6, "GB": 1e9}


class UsageError(Exception):
    """A one-line error naming the fix; main() prints it and exits with status 2."""


# ---------------------------------------------------------------- extents


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def _kinded(q: int, kind: str, up: bool = False) -> int:
    """q rounded to the extent kind (prime and odd round up; `up` makes every kind round up)."""
    q = max(1, q)
    if kind == "prime":
        q = max(q, 2)
        while not _is_prime(q):
            q += 1
        return q
    if kind == "odd":
        return q | 1
    if kind == "pow2":
        e = math.log2(q)
        return 1 << (math.ceil(e) if up else round(e))
    if kind == "mult8":
        return 8 * max(1, math.ceil(q / 8) if up else round(q / 8))
    return q


def _extent(d: Dim, v: float) -> int:
    """An extent near v that is legal for d: at least d.lo, a multiple of d.multiple, of d's kind."""
    q = _kinded(max(1, round(v / d.multiple)), d.kind) * d.multiple
    if q < d.lo:
        q = _kinded(math.ceil(d.lo / d.multiple), d.kind, up=True) * d.multiple
    return q


def _bounded(d: Dim, v: float) -> int:
    """_extent, kept within d.hi where d's kind allows (an extent past hi could overflow: an fp16 sum along it)."""
    q = _extent(d, min(v, d.hi))
    return q if q <= d.hi else _extent(d, 0.95 * min(v, d.hi))


def fit(dims: list[Dim], elems: float) -> list[int]:
    """Extents whose product is near `elems`, each dim taking its weight's share of the budget (in log space)."""
    cap = [math.log(d.hi / d.lo) for d in dims]
    budget = math.log(elems) - sum(math.log(d.lo) for d in dims)
    alloc = [0.0] * len(dims)
    open_ = [i for i in range(len(dims)) if cap[i] > 0]
    while budget > 1e-9 and open_:  # water-filling: a dim at its cap hands its share to the others
        total = sum(dims[i].weight for i in open_)
        share = {i: budget * dims[i].weight / total for i in open_}
        full = [i for i in open_ if alloc[i] + share[i] >= cap[i]]
        if not full:
            for i in open_:
                alloc[i] += share[i]
            break
        for i in full:
            budget -= cap[i] - alloc[i]
            alloc[i] = cap[i]
            open_.remove(i)
    shape = [_bounded(d, d.lo * math.exp(a)) for d, a in zip(dims, alloc)]
    # Rounding to kinds moves the product; the largest dims free to move take up the difference.
    movable = [i for i, d in enumerate(dims) if d.kind != "pow2"] or list(range(len(dims)))
    for i in sorted(movable, key=lambda j: -shape[j]):
        shape[i] = _bounded(dims[i], elems / (math.prod(shape) // shape[i]))
        if abs(math.prod(shape) / elems - 1) < 0.1:
            break
    return shape


def shrink(dims: list[Dim], shape: list[int], elems: float) -> list[int]:
    """--scale small: halve the largest extents until the product is near `elems`, keeping each dim's kind."""
    small = list(shape)
    while math.prod(small) > elems:
        for i in sorted(range(len(dims)), key=lambda j: -small[j]):
            half = _extent(dims[i], small[i] // 2)
            if half < small[i]:
                small[i] = half
                break
        else:  # every dim is at its smallest legal extent
            break
    return small


# ---------------------------------------------------------------- rendering

_STORAGE = {  # get_inputs' allocation (memory order) and the view giving the logical shape
    "contiguous": ("SHAPE", ""),
    "transposed": ("*SHAPE[:-2], SHAPE[-1], SHAPE[-2]", ".transpose(-2, -1)"),
}


def _storage(layout: str, rank: int) -> tuple[str, str]:
    if layout == "channels_last":  # (N, C, *S) stored as (N, *S, C)
        return "SHAPE[0], *SHAPE[2:], SHAPE[1]", f".permute(0, {rank - 1}, {', '.join(map(str, range(1, rank - 1)))})"
    return _STORAGE[layout]


def _storage_dim(layout: str, rank: int, d: int) -> int:
    d %= rank
    if layout == "transposed" and d >= rank - 2:
        return 2 * rank - 3 - d
    if layout == "channels_last" and d >= 1:
        return rank - 1 if d == 1 else d - 1
    return d


def _input_expr(inp: Input, layout: str, rank: int) -> str:
    if inp.make == "classes":
        return "torch.randint(0, SHAPE[1], (SHAPE[0], *SHAPE[2:]))"
    alloc, view = _storage(layout, rank)
    base = f"torch.{'rand' if inp.make == 'rand' else 'randn'}({alloc}, dtype=DTYPE)"
    if inp.make == "walk":
        # A random walk in log space: a product along DIM stays near 1 (log-std 0.5) at any extent.
        base = f"({base} * (0.5 / SHAPE[{inp.dim % rank}] ** 0.5)).exp()"
    elif inp.make in ("log_softmax", "softmax"):
        base += f".{inp.make}({_storage_dim(layout, rank, inp.dim)})"
    return base + view


def _literal(v):
    return repr(tuple(v)) if isinstance(v, list) else repr(v)


def render(draft: Draft, shape: list[int], small: list[int], dtype: str, layout: str, header: str) -> str:
    rank = len(shape)
    args = ", ".join("ab"[: len(draft.inputs)])
    consts = "".join(f"{k.upper()} = {_literal(v)}\n" for k, v in draft.params.items())
    init = "\n".join("        " + line for line in (draft.init or ["pass"]))
    inputs = ",\n        ".join(_input_expr(i, layout, rank) for i in draft.inputs)
    return f'''"""{header}"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = {tuple(shape)!r}
DTYPE = {DTYPES[dtype][0]}
LAYOUT = {layout!r}  # how get_inputs lays the input out in memory
{consts}SMALL = dict(SHAPE={tuple(small)!r})  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init}

    def forward(self, {args}):
        return {draft.forward}


def get_inputs():
    return [
        {inputs},
    ]


def get_init_inputs():
    return []
'''


def load_source(source: str, name: str = "variant"):
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


# ---------------------------------------------------------------- footprint on the meta device


class _LivePeak(TorchDispatchMode):
    """The most bytes eager PyTorch holds at once beyond the inputs and weights: every storage an operator
    creates counts from its creation until the last tensor on it is freed (meta tensors free like real ones)."""

    def __init__(self, pinned):
        super().__init__()
        self.refs = {self._key(t): math.inf for t in pinned}
        self.size = {}
        self.live = self.peak = 0

    @staticmethod
    def _key(t):
        return t.untyped_storage()._cdata

    def _release(self, key):
        self.refs[key] -= 1
        if self.refs[key] == 0:
            del self.refs[key]
            self.live -= self.size.pop(key)

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if not isinstance(t, torch.Tensor):
                continue
            key = self._key(t)
            if key not in self.refs:
                self.refs[key] = 0
                self.size[key] = t.untyped_storage().nbytes()
                self.live += self.size[key]
                self.peak = max(self.peak, self.live)
            self.refs[key] += 1
            weakref.finalize(t, self._release, key)
        return out


def footprint(module) -> dict:
    """Input, weight and output bytes, and the estimated eager peak (all three plus eager's temporaries)."""
    model, inputs = suite_info.build(module, device="meta")
    state = list(model.parameters()) + list(model.buffers())
    tracker = _LivePeak(inputs + state)
    with torch.no_grad(), tracker:
        out = model(*inputs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    in_bytes = sum(t.nbytes for t in inputs)
    state_bytes = sum(t.nbytes for t in state)
    return {
        "input_bytes": in_bytes,
        "state_bytes": state_bytes,
        "output_bytes": sum(t.nbytes for t in outs),
        "eager_peak_bytes": in_bytes + state_bytes + tracker.peak,
        "shapes": [list(t.shape) for t in inputs],
        "strides": [list(t.stride()) for t in inputs],
        "dtypes": [str(t.dtype).replace("torch.", "") for t in inputs],
    }


# ---------------------------------------------------------------- drawing


class NoFit(Exception):
    """The draft cannot meet the byte bounds (its dims' ranges or its eager peak); the caller redraws."""


def _sized(draft, dtype, layout, target, args):
    """Full-size extents for the draft with input bytes near `target` and an eager peak within bounds."""
    per_elem = torch.finfo(getattr(torch, dtype)).bits // 8 * len(draft.inputs)
    elems = target / per_elem
    for _ in range(8):
        shape = fit(draft.dims, elems)
        try:
            fp = footprint(load_source(render(draft, shape, shape, dtype, layout, "")))
        except RuntimeError as e:
            # A meta-device decomposition that cannot size this shape (cumprod's reference builds an n x n
            # mask: a 1-D scan of 2^31 elements overflows it); the caller draws another draft.
            raise NoFit from e
        if fp["eager_peak_bytes"] > args.max_peak:  # aim lower, keeping the peak's ratio to the inputs
            target = min(target, 0.95 * fp["input_bytes"] * args.max_peak / fp["eager_peak_bytes"])
        ok = args.min_bytes <= fp["input_bytes"] <= args.max_bytes and fp["eager_peak_bytes"] <= args.max_peak
        if ok and abs(fp["input_bytes"] / target - 1) < 0.2:
            return shape
        elems *= target / fp["input_bytes"]
    raise NoFit


def draw(seed: int, index: int, family: str, args) -> dict:
    """Problem `index` of the draw: its file name, source and manifest entry."""
    for attempt in range(20):
        rng = random.Random(f"{seed}:{index}:{family}:{attempt}")
        dtype = rng.choices(list(DTYPES), DTYPE_WEIGHTS)[0]
        draft = FAMILIES[family](rng, dtype)
        layout = rng.choices(draft.layouts, [2 if lay == "contiguous" else 1 for lay in draft.layouts])[0]
        target = math.exp(rng.uniform(math.log(args.min_bytes), math.log(args.max_bytes)))
        try:
            full = _sized(draft, dtype, layout, target, args)
            break
        except NoFit:
            continue
    else:
        raise RuntimeError(f"problem {index} ({family}) found no size within the bounds in 20 draws")
    itemsize = torch.finfo(getattr(torch, dtype)).bits // 8
    small = shrink(draft.dims, full, SMALL_BYTES / (itemsize * len(draft.inputs)))
    stem = f"{index:02d}_{draft.op}_{'x'.join(map(str, full))}_{DTYPES[dtype][1]}{LAYOUT_TAGS[layout]}"
    description = f"{draft.description}; input {'x'.join(map(str, full))} {dtype}, {layout}"
    header = (f"{description}.\n\nProblem {index} (family {family}) of a draw, not chosen by hand:\n\n"
              f"    {command(args)}\n\nThe draw's variants.json lists its bytes and estimated eager peak.\n")
    shape = small if args.scale == "small" else full
    source = render(draft, shape, small, dtype, layout, header)
    entry = {"file": f"level1/{stem}.py", "family": family, "op": draft.op, "params": draft.params,
             "dtype": dtype, "layout": layout, "description": description}
    entry.update(footprint(load_source(source)))
    return {"stem": stem, "source": source, "entry": entry}


def command(args) -> str:
    """The command that draws these problems: the options that decide them, where not the defaults."""
    words = ["python benchmarks/variants.py", f"--seed {args.seed}", f"--n {args.n}"]
    if args.families:
        words.append(f"--families {args.families}")
    for name, default in (("min_bytes", 100e6), ("max_bytes", 6e9), ("max_peak", 40e9)):
        if getattr(args, name) != default:
            words.append(f"--{name.replace('_', '-')} {getattr(args, name):.0f}")
    if args.scale != "full":
        words.append(f"--scale {args.scale}")
    return " ".join(words)


def schedule(seed: int, n: int, families: list[str]) -> list[str]:
    """Families in shuffled rounds: every family equally often, each present once n >= len(families)."""
    rng = random.Random(seed)
    order = []
    while len(order) < n:
        block = list(families)
        rng.shuffle(block)
        order += block
    return order[:n]


# ---------------------------------------------------------------- seeds and command line


def used_seeds(path: Path) -> set[int]:
    if not path.exists():
        return set()
    seeds = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            seeds.add(int(line.split()[0]))
    return seeds


def _bytes(text: str) -> float:
    for unit, scale in UNITS.items():
        if text.upper().endswith(unit):
            return float(text[: -len(unit)]) * scale
    return float(text)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, help="the draw's seed; a fresh one (not in --seeds-file) unless --reuse")
    p.add_argument("--n", type=int, default=60, help="how many problems (default 60)")
    p.add_argument("--out", type=Path, help="writes OUT/level1/*.py and OUT/variants.json")
    p.add_argument("--families", help=f"comma-separated subset of: {','.join(FAMILIES)}")
    p.add_argument("--list", action="store_true", help="print the families and exit")
    p.add_argument("--scale", choices=("full", "small"), default="full",
                   help="small: every size shrunk to inputs of a few hundred KB (CPU checks)")
    p.add_argument("--min-bytes", type=_bytes, default=100e6, help="smallest total input bytes (default 100MB)")
    p.add_argument("--max-bytes", type=_bytes, default=6e9, help="largest total input bytes (default 6GB)")
    p.add_argument("--max-peak", type=_bytes, default=40e9,
                   help="bound on the estimated eager peak: inputs, weights, outputs, temporaries (default 40GB)")
    p.add_argument("--reuse", action="store_true", help="allow a seed listed in the used-seeds file")
    p.add_argument("--record", action="store_true", help="append the seed to the used-seeds file")
    p.add_argument("--seeds-file", type=Path, default=USED_SEEDS,
                   help="the seeds already run (default benchmarks/used_seeds.txt)")
    return p.parse_args(argv)


def run(args) -> list[dict]:
    if args.list:
        print("\n".join(FAMILIES))
        return []
    if args.seed is None or args.out is None:
        raise UsageError("give --seed S and --out DIR (or --list)")
    if not 0 < args.min_bytes <= args.max_bytes <= args.max_peak:
        raise UsageError("give 0 < --min-bytes <= --max-bytes <= --max-peak")
    families = args.families.split(",") if args.families else list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise UsageError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {','.join(unknown)}; "
                         f"choose from {','.join(FAMILIES)}")
    if args.seed in used_seeds(args.seeds_file) and not args.reuse:
        raise UsageError(f"seed {args.seed} was already run on the H200 ({args.seeds_file.name}); "
                         "pick a fresh seed, or pass --reuse to draw it again")
    level = args.out / "level1"
    if level.is_dir() and any(level.glob("*.py")):
        raise UsageError(f"{level} already holds problem files; give an empty or new --out")
    level.mkdir(parents=True, exist_ok=True)
    problems = [draw(args.seed, i, fam, args) for i, fam in enumerate(schedule(args.seed, args.n, families))]
    for p in problems:
        (level / f"{p['stem']}.py").write_text(p["source"])
    manifest = {"command": command(args), "seed": args.seed, "n": args.n, "scale": args.scale,
                "families": families, "min_bytes": args.min_bytes, "max_bytes": args.max_bytes,
                "max_peak_bytes": args.max_peak, "problems": [p["entry"] for p in problems]}
    (args.out / "variants.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if args.record and args.seed not in used_seeds(args.seeds_file):
        with open(args.seeds_file, "a") as f:
            f.write(f"{args.seed}\n")
    return problems


def main(argv=None) -> int:
    args = parse(argv)
    try:
        problems = run(args)
    except UsageError as e:
        print(f"variants.py: error: {e}", file=sys.stderr)
        return 2
    if problems:
        mb = sum(p["entry"]["input_bytes"] for p in problems) / 1e6
        print(f"wrote {len(problems)} problems ({mb:,.0f} MB of inputs in all) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
