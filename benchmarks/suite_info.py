"""Helpers over the problem files of benchmarks/suite: load one, shrink it, measure its footprint.

Used by tests/python/test_suite_files.py and benchmarks/check_suite.py. Run it to print the README
table rows:  python benchmarks/suite_info.py [benchmarks/suite]

Footprint: the bytes every run must move at least once — the inputs, the parameters and buffers, and
the outputs — found by building the problem on the meta device, so nothing is allocated at full size.
Intermediates Inductor does not fuse away come on top of it.
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import torch

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


def footprint(module) -> dict:
    """Bytes of inputs, parameters+buffers, outputs, and the largest single tensor, at the file's sizes."""
    model, inputs = build(module, device="meta")
    with torch.no_grad():
        out = model(*inputs)
    ins = _tensors(inputs)
    state = list(model.parameters()) + list(model.buffers())
    outs = _tensors(out)
    dtypes = sorted({str(t.dtype).replace("torch.", "") for t in ins if t.is_floating_point()})
    return {
        "inputs": sum(t.nbytes for t in ins),
        "state": sum(t.nbytes for t in state),
        "outputs": sum(t.nbytes for t in outs),
        "largest": max(t.nbytes for t in ins + state + outs),
        "dtype": "/".join(dtypes),
        "input_shapes": [tuple(t.shape) for t in ins],
    }


def total(fp: dict) -> int:
    return fp["inputs"] + fp["state"] + fp["outputs"]


def main(argv):
    suite = Path(argv[1]) if len(argv) > 1 else SUITE
    for path in problem_files(suite):
        fp = footprint(load(path))
        shapes = " ".join("x".join(map(str, s)) or "scalar" for s in fp["input_shapes"])
        print(f"| {path.parent.name}/{path.stem} | {shapes} | {fp['dtype']} | {total(fp) / 2**20:.0f} MB |")


if __name__ == "__main__":
    main(sys.argv)
