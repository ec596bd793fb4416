"""Helpers over the problem files of benchmarks/suite: load one, shrink it, measure its footprint.

Used by tests/python/test_suite_files.py and benchmarks/check_suite.py. Run it to print, per problem,
the README table's inputs, dtype, min MB and eager MB:  python benchmarks/suite_info.py [benchmarks/suite]

Footprint, found by building and running the problem on the meta device (nothing is allocated at full
size): "min" is the bytes every run must move at least once — the inputs, the parameters and buffers,
and the outputs; "eager" is what eager PyTorch moves, the bytes read and written by every non-view
operator it runs (SDPA counted as one fused kernel), a rough upper bound that fusion brings down toward
"min".
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

SUITE = Path(__file__).resolve().parent / "suite"
LEVELS = ("level1", "level2", "level3")
_counter = itertools.count()


def problem_files(suite: Path = SUITE, levels=LEVELS) -> list[Path]:
    return sorted(p for lv in levels for p in (Path(suite) / lv).glob("*.py"))


def load(path: Path):
    """Import a problem file as a fresh module (shrinking one copy never affects another)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"suite_problem_{path.stem}_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shrink(module):
    """Apply the file's SMALL size constants (the suite convention) to its module globals."""
    for name, value in module.SMALL.items():
        if not hasattr(module, name):
            raise AttributeError(f"SMALL names {name}, which the file does not define")
        setattr(module, name, value)
    return module


def build(module, device=None):
    """(model, inputs) the way capture builds them: seeded init, seeded inputs, eval mode."""
    torch.manual_seed(0)
    if device is None:
        model = module.Model(*module.get_init_inputs())
        torch.manual_seed(1)
        inputs = list(module.get_inputs())
    else:
        with torch.device(device):
            model = module.Model(*module.get_init_inputs())
            torch.manual_seed(1)
            inputs = list(module.get_inputs())
    return model.eval(), inputs


def _tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


class _Traffic(TorchDispatchMode):
    """Sums the bytes each non-view operator reads and writes (meta tensors carry sizes, no data)."""

    def __init__(self):
        super().__init__()
        self.bytes = 0
        self.largest = 0
        self.paused = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not func.is_view and not self.paused:
            ins = _tensors(list(args) + list((kwargs or {}).values()))
            outs = _tensors(out)
            self.bytes += sum(t.nbytes for t in ins + outs)
            self.largest = max([self.largest] + [t.nbytes for t in outs])
        return out


class _FusedAttention(TorchFunctionMode):
    """Counts scaled_dot_product_attention as the one fused kernel it is on a GPU.

    On the meta device SDPA decomposes into its math path (scores materialized), which no GPU run does.
    """

    def __init__(self, traffic: _Traffic):
        super().__init__()
        self.traffic = traffic

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is not torch.nn.functional.scaled_dot_product_attention:
            return func(*args, **(kwargs or {}))
        self.traffic.paused = True
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            self.traffic.paused = False
        self.traffic.bytes += sum(t.nbytes for t in _tensors(list(args) + list((kwargs or {}).values())) + [out])
        return out


def footprint(module) -> dict:
    """Bytes of inputs, parameters+buffers, outputs, eager traffic and the largest tensor, at the file's sizes."""
    model, inputs = build(module, device="meta")
    traffic = _Traffic()
    with torch.no_grad(), traffic, _FusedAttention(traffic):
        out = model(*inputs)
    ins = _tensors(inputs)
    state = list(model.parameters()) + list(model.buffers())
    outs = _tensors(out)
    dtypes = sorted({str(t.dtype).replace("torch.", "") for t in ins if t.is_floating_point()})
    return {
        "inputs": sum(t.nbytes for t in ins),
        "state": sum(t.nbytes for t in state),
        "outputs": sum(t.nbytes for t in outs),
        "eager": traffic.bytes,
        "largest": max([traffic.largest] + [t.nbytes for t in ins + state + outs]),
        "dtype": "/".join(dtypes),
        "input_shapes": [tuple(t.shape) for t in ins],
    }


def total(fp: dict) -> int:
    return fp["inputs"] + fp["state"] + fp["outputs"]


def main(argv):
    suite = Path(argv[1]) if len(argv) > 1 else SUITE
    for path in problem_files(suite):
        fp = footprint(load(path))
        shapes = ", ".join("x".join(map(str, s)) or "scalar" for s in fp["input_shapes"])
        dtype = fp["dtype"] or "int64"
        print(f"| {path.parent.name}/{path.stem} | {shapes} | {dtype} | {total(fp) / 2**20:.0f} | {fp['eager'] / 2**20:.0f} |")


if __name__ == "__main__":
    main(sys.argv)
