"""Launch one Inductor-generated Triton kernel the way Inductor's runtime would, minus autotuning.

Inductor's launch site is `kernel.run(*args, stream=stream0)`: `args` are the
kernel's non-constexpr parameters in order, then, for kernels whose inductor_meta
names `extra_launcher_args` (templates, user kernels), the grid values. The
runtime picks a config (block sizes), computes the grid from inductor_meta's
`grid_type` and that config, and launches. A Launcher does the same with one
config: pinned (`launcher.config = {...}`, as the optimizer will) or chosen by
default_config(). The grid comes from Inductor's own GridExpr classes, exactly
as Inductor's interpreter path (CachingAutotuner._interpret_args_grid) does, so
there is no second copy of the grid rules to drift.

heuristics_decorators() are what kernels find in `triton_heuristics` in CPU mode:
each records its arguments and wraps the @triton.jit function in a Launcher.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from torch._inductor.runtime import triton_heuristics as _real_heuristics
from torch._inductor.runtime.hints import TRITON_MAX_BLOCK
from torch._inductor.runtime.triton_heuristics import GridExpr
from triton.runtime.jit import _normalize_ty

# Decorator name -> the heuristic kind it declares (the IR's "heuristic kind").
KINDS = (
    "pointwise", "reduction", "persistent_reduction", "cooperative_reduction", "split_scan",
    "template", "foreach", "user_autotune", "fixed_config",
)

TILE_BUDGET = 65536
"""Most elements one program's tile may hold in the default config. The interpreter pays a
large fixed cost per program (measured on a 9-load max-pool kernel: 7.3 us per element
at XBLOCK=4096, 1.1 us at 65536), so tiles are as big as this budget allows, beyond
Inductor's GPU limits (XBLOCK <= 4096) wherever the kernel masks its blocks; each temporary
stays at a few hundred KiB. Where a numel is a multiple of Inductor's limit the kernel may have
no mask (Inductor drops it: every block it would choose divides the numel), so a block above
the limit must divide the numel too (_block_size)."""

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")

# Block constexpr -> (numel argument, size_hints key).
_DIMS = {
    "R0_BLOCK": ("r0_numel", "r0_"),
    "R1_BLOCK": ("r1_numel", "r1_"),
    "XBLOCK": ("xnumel", "x"),
    "YBLOCK": ("ynumel", "y"),
    "ZBLOCK": ("znumel", "z"),
}


class Launcher:
    """An Inductor kernel as its launch site sees it: `.run(*args, stream=None)`."""

    def __init__(self, fn, kind: str, decorator_args: dict[str, Any]):
        self.fn = fn  # the @triton.jit function (an InterpretedFunction in CPU mode)
        self.kind = kind
        self.decorator_args = decorator_args  # everything the heuristics decorator was given
        self.size_hints = decorator_args.get("size_hints") or {}
        self.triton_meta = decorator_args.get("triton_meta") or {}
        self.inductor_meta = decorator_args.get("inductor_meta") or {}
        self.constants = self.triton_meta.get("constants", {})
        params = inspect.signature(fn.fn if hasattr(fn, "fn") else fn).parameters.values()
        self.constexprs = [p.name for p in params if _normalize_ty(p.annotation) == "constexpr"]
        self.positional = [p.name for p in params if p.name not in self.constexprs]
        self.extra_args = list(self.inductor_meta.get("extra_launcher_args", ()))
        self.config: dict[str, Any] | None = None  # pinned config; None means default_config()
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, stream=None, **_launch_options):
        """Launch on the arguments Inductor's call site passes, on the current stream.

        `stream` (a raw stream handle at Inductor's call sites) is not used: compiled Triton
        launches on torch's current stream, the interpreter has none.
        """
        if len(args) != len(self.positional) + len(self.extra_args):
            raise TypeError(
                f"{self.__name__}.run() got {len(args)} arguments; the kernel takes "
                f"{self.positional} then grid arguments {self.extra_args}"
            )
        kernel_args = args[: len(self.positional)]
        scope = dict(zip(self.positional + self.extra_args, args))
        config = self.config if self.config is not None else default_config(self, scope)
        grid = compute_grid(self.inductor_meta, config, scope)
        # Launch options mean something to compiled Triton; the interpreter drops them.
        options = {k: config[k] for k in LAUNCH_OPTIONS if k in config}
        self.fn[grid](*kernel_args, **self.constexpr_kwargs(config), **options)

    def constexpr_kwargs(self, config: dict[str, Any]) -> dict[str, Any]:
        """Values for the kernel's constexpr parameters: triton_meta's constants win over the config."""
        values = {}
        for name in self.constexprs:
            if name in self.constants:
                values[name] = self.constants[name]
            elif name in config:
                values[name] = config[name]
            else:
                raise ValueError(f"{self.__name__}: config {config} gives no value for constexpr {name}; add it")
        return values


def compute_grid(inductor_meta: dict, config: dict, scope: dict[str, Any]) -> tuple[int, int, int]:
    """The launch grid for `config`, with the launch's argument values (by parameter name) in `scope`."""
    if "grid_type" not in inductor_meta:
        raise ValueError("inductor_meta has no grid_type; this runtime supports torch >= 2.6 modules only")
    return GridExpr.from_meta(inductor_meta, dict(config)).eval_slow(dict(scope))


def default_config(launcher: Launcher, scope: dict[str, Any]) -> dict[str, Any]:
    """A valid config for the kernel's kind, favouring big tiles (few interpreted programs)."""
    args = launcher.decorator_args
    if launcher.kind == "fixed_config":
        return dict(args["config"])
    if launcher.kind == "user_autotune":
        return dict(args["configs"][0]) if args.get("configs") else {}
    if launcher.kind in ("template", "foreach"):
        return {k: args[k] for k in ("num_warps", "num_stages") if k in args}
    free = [n for n in launcher.constexprs if n not in launcher.constants]
    config: dict[str, Any] = {"num_warps": 4, "num_stages": 1}
    budget = TILE_BUDGET
    # Reduction dims first (a whole row in one block means one pass), then x, y, z.
    for block, (numel_arg, hint_key) in _DIMS.items():
        numel = scope.get(numel_arg, launcher.size_hints.get(hint_key))
        if numel is None:
            continue
        size = _next_pow2(numel)
        if block in free:
            size = config[block] = _block_size(block, numel, min(size, budget))
        # A persistent reduction fixes its Rn_BLOCK (next_pow2 of the numel) in the body;
        # it still takes room in the tile.
        budget = max(1, budget // size)
    if "RSPLIT" in free:
        # Cooperative reductions synchronize their RSPLIT programs through a grid barrier;
        # the interpreter runs programs one after another, so only RSPLIT=1 cannot deadlock.
        config["RSPLIT"] = 1
    if "RSPLIT_SIZE" in free:
        # Mix-order reductions: the split comes from codegen and XBLOCK must divide it.
        config["RSPLIT_SIZE"] = split = launcher.inductor_meta["RSPLIT_SIZE"]
        config["XBLOCK"] = math.gcd(config.get("XBLOCK", 1), split)
        config["NUM_STAGES"] = 1
    missing = [n for n in free if n not in config]
    if missing:
        raise ValueError(f"{launcher.__name__}: no default for constexpr {missing}; pin a config that sets it")
    return config


def _block_size(block: str, numel, size: int) -> int:
    """`size`, halved while it exceeds Inductor's largest block for the dimension and does not divide a
    numel that is a multiple of that largest block: such a kernel may store unmasked (a group norm's
    36864-element normalize at XBLOCK=65536 wrote 28672 elements past its output and crashed the
    worker with a corrupted heap)."""
    largest = TRITON_MAX_BLOCK.get(block.removesuffix("BLOCK"))
    if largest and isinstance(numel, int) and size > largest and numel % largest == 0:
        while numel % size:
            size //= 2
    return size


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _decorator(kind: str):
    signature = inspect.signature(getattr(_real_heuristics, kind))

    def decorator_factory(*args, **kwargs):
        # Bind against the real decorator's signature, so positional and keyword uses both work.
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        recorded = {k: v for k, v in bound.arguments.items() if k != "kwargs"}
        recorded.update(bound.arguments.get("kwargs", {}))
        return lambda fn: Launcher(fn, kind, recorded)

    decorator_factory.__name__ = kind
    return decorator_factory


def heuristics_decorators() -> dict[str, Any]:
    """What replaces the decorators of `triton_heuristics` in CPU mode, by name."""
    return {kind: _decorator(kind) for kind in KINDS}
